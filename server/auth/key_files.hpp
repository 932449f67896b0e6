// Key files, as `zone-ticket keygen` writes them: one line of 64 hexadecimal digits.
//   ticket.key  the secret key (its Ed25519 seed); mode 0600, for the login service only
//   ticket.pub  the public key; what zones are configured with (auth.public_key)
#pragma once

#include <optional>
#include <string>

#include "auth/keys.hpp"

namespace zone::auth {

inline constexpr const char* kSecretKeyFile = "ticket.key";
inline constexpr const char* kPublicKeyFile = "ticket.pub";

// Reads a secret key file. Refused (nullopt, with the reason in `error`) when it cannot
// be read, does not hold exactly one key (white space around it is ignored), or can be
// read by anyone but its owner (group or other permission bits set), as ssh refuses.
std::optional<SecretKey> read_secret_key_file(const std::string& path, std::string& error);
// Reads a public key file: one key, a valid curve point.
std::optional<PublicKey> read_public_key_file(const std::string& path, std::string& error);

// Writes kSecretKeyFile (0600) and kPublicKeyFile (0644) into `dir` (which must exist).
// Never overwrites: an existing file is an error, so a key in use cannot be lost.
bool write_key_files(const std::string& dir, const KeyPair& keys, std::string& error);

}  // namespace zone::auth
