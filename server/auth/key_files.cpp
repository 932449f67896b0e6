#include "auth/key_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace zone::auth {

namespace {

// A key file's one line of text, white space around it removed; nullopt if unreadable.
std::optional<std::string> read_key_text(const std::string& path, std::string& error) {
  std::ifstream in(path);
  if (!in) {
    error = path + ": cannot read it";
    return std::nullopt;
  }
  std::ostringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) {
    error = path + ": empty, expected 64 hexadecimal digits";
    return std::nullopt;
  }
  s = s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1);
  return s;
}

bool write_new_file(const std::string& path, const std::string& text, mode_t mode,
                    std::string& error) {
  // O_EXCL: never replace a key; the mode applies from creation, so the secret is never
  // readable by others, not even for a moment.
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) {
    error = path + ": " + std::strerror(errno);
    return false;
  }
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
                  ::fchmod(fd, mode) == 0;  // the umask may have taken bits of a 0644
  if (!ok) error = path + ": " + std::strerror(errno);
  return ::close(fd) == 0 && ok;
}

}  // namespace

std::optional<SecretKey> read_secret_key_file(const std::string& path, std::string& error) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    error = path + ": " + std::strerror(errno);
    return std::nullopt;
  }
  if ((st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%03o", static_cast<unsigned>(st.st_mode & 0777));
    error = path + ": readable by others than its owner (mode " + mode + "); chmod 600 it";
    return std::nullopt;
  }
  const auto text = read_key_text(path, error);
  if (!text) return std::nullopt;
  const auto seed = parse_hex_key(*text);
  if (!seed) {
    error = path + ": expected a secret key of 64 hexadecimal digits";
    return std::nullopt;
  }
  return SecretKey{*seed};
}

std::optional<PublicKey> read_public_key_file(const std::string& path, std::string& error) {
  const auto text = read_key_text(path, error);
  if (!text) return std::nullopt;
  const auto key = parse_public_key(*text);
  if (!key) error = path + ": expected an Ed25519 public key of 64 hexadecimal digits";
  return key;
}

bool write_key_files(const std::string& dir, const KeyPair& keys, std::string& error) {
  const std::string secret = to_hex(keys.secret.seed) + "\n";
  const std::string pub = to_hex(keys.public_key) + "\n";
  return write_new_file(dir + "/" + kSecretKeyFile, secret, 0600, error) &&
         write_new_file(dir + "/" + kPublicKeyFile, pub, 0644, error);
}

}  // namespace zone::auth
