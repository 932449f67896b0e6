// Secrets the zone reads from files at start-up (and --check-config checks): the NATS
// password and key (world_map.hpp, load_bus_secrets) and the PostgreSQL connection string
// of the character store.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "config/config_loader.hpp"
#include "config/zone_config.hpp"

namespace zone::config {

inline constexpr std::size_t kMaxConninfoBytes = 4096;

// Reads a file that must be a regular file; `secret`: also not readable or writable by
// others (mode o-rw). At most `limit` bytes. Returns the problem, or nullopt.
std::optional<std::string> read_secret_file(const std::string& path, bool secret, std::size_t limit,
                                            std::string& text);

// persist.backend postgres: reads persist.conninfo_file, which must be a regular file
// that other users cannot read or write (chmod 600) holding one line, a libpq connection
// string (a final newline ignored). Other backends: nothing to read, `conninfo` empty.
// Errors name persist.conninfo_file.
std::vector<ConfigError> read_conninfo_file(const ZoneConfig& config, std::string& conninfo);

}  // namespace zone::config
