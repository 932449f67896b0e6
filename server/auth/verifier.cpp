#include "auth/verifier.hpp"

#include <sodium.h>

#include <utility>

namespace zone::auth {

const char* to_string(TicketError e) {
  switch (e) {
    case TicketError::kNone:
      return "ok";
    case TicketError::kMalformed:
      return "malformed";
    case TicketError::kUnknownVersion:
      return "unknown_version";
    case TicketError::kBadSignature:
      return "bad_signature";
    case TicketError::kWrongWorld:
      return "wrong_world";
    case TicketError::kExpired:
      return "expired";
  }
  return "unknown";
}

TicketVerifier::TicketVerifier(const PublicKey& key, std::string world)
    : key_(key), world_(std::move(world)) {
  ensure_sodium();  // before any network thread verifies
}

TicketError TicketVerifier::verify(std::span<const std::uint8_t> ticket, std::uint64_t now_unix,
                                   TicketClaims& out) const {
  TicketLayout layout;
  const LayoutError e = read_ticket(ticket, layout);
  if (e == LayoutError::kUnknownVersion) return TicketError::kUnknownVersion;
  if (e != LayoutError::kNone) return TicketError::kMalformed;
  if (crypto_sign_verify_detached(layout.signature.data(), layout.signed_bytes.data(),
                                  layout.signed_bytes.size(), key_.data()) != 0) {
    return TicketError::kBadSignature;
  }
  if (layout.claims.world != world_) return TicketError::kWrongWorld;
  if (now_unix >= layout.claims.expires_at) return TicketError::kExpired;
  out = std::move(layout.claims);
  return TicketError::kNone;
}

}  // namespace zone::auth
