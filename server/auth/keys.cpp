#include "auth/keys.hpp"

#include <sodium.h>

#include <stdexcept>

namespace zone::auth {

namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

void ensure_sodium() {
  // sodium_init() is safe to call from several threads and more than once (1: already).
  if (sodium_init() < 0) throw std::runtime_error("libsodium could not be initialised");
}

KeyPair generate_key_pair() {
  ensure_sodium();
  KeyPair pair;
  randombytes_buf(pair.secret.seed.data(), pair.secret.seed.size());
  pair.public_key = public_key_of(pair.secret);
  return pair;
}

PublicKey public_key_of(const SecretKey& secret) {
  ensure_sodium();
  PublicKey pk{};
  std::array<std::uint8_t, crypto_sign_SECRETKEYBYTES> sk{};
  crypto_sign_seed_keypair(pk.data(), sk.data(), secret.seed.data());
  sodium_memzero(sk.data(), sk.size());
  return pk;
}

std::optional<std::string> hex_to_bytes(std::string_view text) {
  if (text.size() % 2 != 0) return std::nullopt;
  std::string out;
  out.reserve(text.size() / 2);
  for (std::size_t i = 0; i < text.size(); i += 2) {
    const int hi = hex_digit(text[i]), lo = hex_digit(text[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out.push_back(static_cast<char>(hi * 16 + lo));
  }
  return out;
}

std::optional<std::array<std::uint8_t, kKeyBytes>> parse_hex_key(std::string_view text) {
  if (text.size() != 2 * kKeyBytes) return std::nullopt;
  const auto bytes = hex_to_bytes(text);
  if (!bytes) return std::nullopt;
  std::array<std::uint8_t, kKeyBytes> key{};
  for (std::size_t i = 0; i < kKeyBytes; ++i) key[i] = static_cast<std::uint8_t>((*bytes)[i]);
  return key;
}

std::string to_hex(std::span<const std::uint8_t> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const std::uint8_t b : bytes) {
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 15]);
  }
  return out;
}

std::optional<PublicKey> parse_public_key(std::string_view text) {
  const auto key = parse_hex_key(text);
  if (!key) return std::nullopt;
  ensure_sodium();
  // A small-order point (the all-zero key, for one) verifies signatures nobody made.
  if (crypto_core_ed25519_is_valid_point(key->data()) != 1) return std::nullopt;
  return key;
}

}  // namespace zone::auth
