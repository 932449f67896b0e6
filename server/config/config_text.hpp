// Reading a configuration file and parsing it as one YAML document, safely (internal to
// the config library). Shared by the zone config (config_loader.cpp) and the world map
// (world_map.cpp), so both refuse the same bad files with the same messages.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

// Key names of a map, checked once each: calls fn(key, value, line) for every known key,
// reports unknown ones (with a suggestion) and duplicates (yaml-cpp keeps only one of
// duplicate keys, silently). `path` is the map's own dotted path ("" at the top,
// "zones[1]" for an entry). Used by the files beside the zone config (the world map, the
// game's data).
class KeyWalker {
 public:
  explicit KeyWalker(std::vector<ConfigError>& errors) : errors_(errors) {}

  void error(std::string key, int line, std::string message) {
    errors_.push_back({std::move(key), line, std::move(message)});
  }

  // Returns false (after reporting) when `node` is not a map.
  bool map(
      const YAML::Node& node, const std::string& path, int line,
      const std::vector<std::string_view>& keys,
      const std::function<void(const std::string& key, const YAML::Node& value, int line)>& fn);
  // The same for a map whose keys are names the file chooses (any key accepted once, in
  // file order, each checked for duplicates).
  bool named_map(
      const YAML::Node& node, const std::string& path, int line,
      const std::function<void(const std::string& key, const YAML::Node& value, int line)>& fn);

 private:
  // Records `key` as given on `line`; false (after reporting the duplicate) if it was
  // given before.
  bool first_time(std::map<std::string, int, std::less<>>& seen, const std::string& key,
                  const std::string& full, int line);
  std::vector<ConfigError>& errors_;
};

}  // namespace zone::config
