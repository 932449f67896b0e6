// Reading a configuration file and parsing it as one YAML document, safely (internal to
// the config library). Shared by the zone config (config_loader.cpp) and the world map
// (world_map.cpp), so both refuse the same bad files with the same messages.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <yaml-cpp/yaml.h>

#include "config/config_loader.hpp"
#include "config/config_schema.hpp"

namespace zone::config {

// Reads a regular file of at most max_bytes into `text`. On failure returns the
// message, without the path (e.g. "cannot open config file: No such file or directory";
// a directory, a FIFO or a device is refused without reading, never waited on).
std::optional<std::string> read_config_text(const std::string& path, std::string& text,
                                            std::size_t max_bytes = kMaxConfigFileBytes);

// Parses `yaml` as exactly one YAML document (none: a null root). On failure returns the
// error (a syntax error with its line and column, or a second document).
std::optional<ConfigError> parse_one_document(std::string_view yaml, YAML::Node& root);

// A YAML node as the schema's checks read it: its kind, its text and whether it was
// quoted (a quoted "3" is a string, never a number).
RawValue to_raw(const YAML::Node& node);

// 1-based line of a node, 0 when it has none.
int line_of(const YAML::Node& node);

}  // namespace zone::config
