#pragma once
// Reads a small file the zone is configured with (a token, a password, a connection
// string): it must be a regular file (a FIFO or a device would block or never end), at
// most `limit` bytes, and, when `private_only`, not readable or writable by other users.
// The one reader of such files, so that each kind is checked alike.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <optional>
#include <string>

#include <fmt/format.h>

namespace zone::util {

// Appends the file's bytes to `text`; returns the problem (naming the path), or nullopt.
inline std::optional<std::string> read_small_file(const std::string& path, bool private_only,
                                                  std::size_t limit, std::string& text) {
  // O_NONBLOCK: a FIFO must not block start-up; it is refused below anyway.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return fmt::format("cannot read {}: {}", path, std::strerror(errno));
  std::optional<std::string> problem;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    problem = fmt::format("{} is not a regular file", path);
  } else if (private_only && (st.st_mode & (S_IROTH | S_IWOTH)) != 0) {
    problem = fmt::format(
        "{} is readable or writable by other users (mode {:04o}); expected "
        "it readable by the server's user only (chmod 600, or 400)",
        path, st.st_mode & 07777);
  } else {
    std::array<char, 4096> buf{};
    for (;;) {
      const ssize_t n = ::read(fd, buf.data(), buf.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        problem = fmt::format("cannot read {}: {}", path, std::strerror(errno));
        break;
      }
      if (n == 0) break;
      text.append(buf.data(), static_cast<std::size_t>(n));
      if (text.size() > limit) {
        problem = fmt::format("{} is too large (more than {} bytes)", path, limit);
        break;
      }
    }
  }
  ::close(fd);
  return problem;
}

}  // namespace zone::util
