#include "auth/issue.hpp"

#include <sodium.h>

#include <array>

namespace zone::auth {

LayoutError issue_ticket(const TicketClaims& claims, const SecretKey& secret,
                         std::vector<std::uint8_t>& out) {
  out.clear();
  const LayoutError e = encode_claims(claims, out);
  if (e != LayoutError::kNone) {
    out.clear();
    return e;
  }
  ensure_sodium();
  std::array<std::uint8_t, crypto_sign_PUBLICKEYBYTES> pk{};
  std::array<std::uint8_t, crypto_sign_SECRETKEYBYTES> sk{};
  crypto_sign_seed_keypair(pk.data(), sk.data(), secret.seed.data());
  const std::size_t body = out.size();
  out.resize(body + kSignatureBytes);
  crypto_sign_detached(out.data() + body, nullptr, out.data(), body, sk.data());
  sodium_memzero(sk.data(), sk.size());
  return LayoutError::kNone;
}

}  // namespace zone::auth
