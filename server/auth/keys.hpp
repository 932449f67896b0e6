// Ed25519 keys of login tickets (libsodium). The login service holds the secret key and
// signs; zones hold only the public key (auth.public_key) and verify.
//
// Keys are written as 64 hexadecimal digits (32 bytes): the public key as Ed25519 defines
// it, the secret key as its 32-byte seed (RFC 8032's private key, from which the key pair
// is derived), so that any Ed25519 library can issue tickets for a zone.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace zone::auth {

inline constexpr std::size_t kKeyBytes = 32;
using PublicKey = std::array<std::uint8_t, kKeyBytes>;
struct SecretKey {
  std::array<std::uint8_t, kKeyBytes> seed{};
};
struct KeyPair {
  SecretKey secret;
  PublicKey public_key{};
};

// Initialises libsodium once (thread-safe, idempotent); throws std::runtime_error if it
// cannot (no entropy source). Every function here that needs it calls it.
void ensure_sodium();

// A fresh key pair from the system's random source.
KeyPair generate_key_pair();
// The public key belonging to a secret key.
PublicKey public_key_of(const SecretKey& secret);

// Exactly 64 hexadecimal digits (either case), nothing else.
std::optional<std::array<std::uint8_t, kKeyBytes>> parse_hex_key(std::string_view text);
std::string to_hex(std::span<const std::uint8_t> bytes);
// Any even number of hexadecimal digits (a ticket as zone-ticket prints it).
std::optional<std::string> hex_to_bytes(std::string_view text);

// 64 hexadecimal digits naming a point of the curve that is not of small order: what a
// zone accepts as auth.public_key.
std::optional<PublicKey> parse_public_key(std::string_view text);

}  // namespace zone::auth
