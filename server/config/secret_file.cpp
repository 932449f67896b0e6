#include "config/secret_file.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "util/read_file.hpp"

namespace zone::config {

std::optional<std::string> read_secret_file(const std::string& path, bool secret, std::size_t limit,
                                            std::string& text) {
  return util::read_small_file(path, secret, limit, text);
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
