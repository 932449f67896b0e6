#include "config/secret_file.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

namespace zone::config {

std::optional<std::string> read_secret_file(const std::string& path, bool secret, std::size_t limit,
                                            std::string& text) {
  // O_NONBLOCK: a FIFO must not block start-up; it is refused below anyway.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return fmt::format("cannot read {}: {}", path, std::strerror(errno));
  std::optional<std::string> problem;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    problem = fmt::format("{} is not a regular file", path);
  } else if (secret && (st.st_mode & (S_IROTH | S_IWOTH)) != 0) {
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
        problem = fmt::format("{} is larger than {} bytes", path, limit);
        break;
      }
    }
  }
  ::close(fd);
  return problem;
}

std::vector<ConfigError> read_conninfo_file(const ZoneConfig& config, std::string& conninfo) {
  conninfo.clear();
  const PersistConfig& p = config.persist;
  if (!p.enabled || p.backend != PersistBackend::kPostgres) return {};
  std::string text;
  if (auto problem = read_secret_file(p.conninfo_file, true, kMaxConninfoBytes, text)) {
    return {{"persist.conninfo_file", 0, std::move(*problem)}};
  }
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  // One line: libpq reads keywords or a URI; a line break would be a second setting the
  // operator did not mean, and a control character is a damaged file.
  const bool one_line = std::none_of(text.begin(), text.end(), [](char ch) {
    const auto c = static_cast<unsigned char>(ch);
    return c < 0x20 || c == 0x7f;
  });
  if (text.empty() || !one_line) {
    return {{"persist.conninfo_file", 0,
             fmt::format("{}: expected one line, a libpq connection string (e.g. host=db "
                         "dbname=world user=zone password=...; or postgresql://...)",
                         p.conninfo_file)}};
  }
  conninfo = std::move(text);
  return {};
}

}  // namespace zone::config
