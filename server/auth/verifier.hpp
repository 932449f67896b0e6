// Verifying a ticket: what a zone does with the ticket of every Hello in ticket mode
// (auth.mode: ticket), on its network threads. Immutable once built, so one verifier
// serves every thread.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "auth/keys.hpp"
#include "auth/ticket.hpp"

namespace zone::auth {

// In the order they are checked: nothing a ticket claims is looked at before its
// signature is known good, so a forged ticket is only ever "bad signature" (or malformed).
enum class TicketError : std::uint8_t {
  kNone,
  kMalformed,       // not the layout (truncated, trailing bytes, lengths, an id 0)
  kUnknownVersion,  // a format version this zone does not read
  kBadSignature,    // not signed by the key the zone trusts (forged or altered)
  kWrongWorld,      // issued for another world
  kExpired,         // at or after its expiry
};
inline constexpr std::size_t kTicketErrors = 6;
// Stable lower-case words, the label values of zone_auth_refused_total.
const char* to_string(TicketError e);

class TicketVerifier {
 public:
  // `world`: the world name tickets must carry (auth.world).
  TicketVerifier(const PublicKey& key, std::string world);

  // kNone, with the claims in `out`, for a ticket signed by the key, issued for this
  // world and not expired at `now_unix` (seconds). `out` is unspecified otherwise.
  TicketError verify(std::span<const std::uint8_t> ticket, std::uint64_t now_unix,
                     TicketClaims& out) const;

  const std::string& world() const { return world_; }

 private:
  PublicKey key_;
  std::string world_;
};

}  // namespace zone::auth
