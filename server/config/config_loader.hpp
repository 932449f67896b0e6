// Reads configs/zone.yaml (or any YAML text) into a ZoneConfig, strictly.
//
// Every problem in a file is reported, not just the first: YAML syntax errors, unknown
// keys (with a "did you mean" hint), sections that are not maps, duplicate keys, values
// of the wrong type or out of range, bad enum names, and checks across keys. Keys the
// file leaves out keep the defaults in zone_config.hpp. The accepted range of each key is
// documented in configs/zone.yaml and enforced by the table in config_schema.cpp.
//
// Typical start-up:
//   auto loaded = load_config_file(path);
//   if (!loaded.ok()) { fputs(loaded.error_report().c_str(), stderr); return 2; }
//   ZoneConfig cfg = loaded.config;
//   // command-line overrides: set fields directly, or by key for --set key=value
//   if (auto e = set_value(cfg, "aoi.cell_size", "16")) report(format_error(*e, "<command line>"));
//   for (const auto& e : validate(cfg)) report(format_error(e, "<effective config>"));
//   log(describe(cfg));
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "config/config_enums.hpp"
#include "config/zone_config.hpp"

namespace zone::config {

struct ConfigError {
  std::string key;      // dotted path, e.g. "aoi.cell_size"; empty for file-level errors
  int line = 0;         // 1-based line in the source; 0 when there is none
  std::string message;  // what was expected and what was found
};

// "FILE:LINE: KEY: MESSAGE"; the LINE part is left out when line == 0, the KEY part when
// key is empty, the FILE part when source is empty.
//   "configs/zone.yaml:14: aoi.cell_size: expected a number > 0 and <= 10000, got -5"
std::string format_error(const ConfigError& error, std::string_view source);
// Every error through format_error(), one per line, each ending in '\n' (the
// error_report() of the loaders' results).
std::string format_errors(std::span<const ConfigError> errors, std::string_view source);

struct LoadResult {
  ZoneConfig config;                // valid only when ok(); defaults where the file is silent
  std::vector<ConfigError> errors;  // in line order; checks across keys last
  std::string source;               // the file path (or source name) errors refer to
  // The dotted keys the text sets, in file order, and how many lines it has; nullopt for
  // a result built in code (its config says nothing about which keys were written).
  std::optional<std::vector<std::string>> keys_set;
  int lines = 0;

  bool ok() const { return errors.empty(); }
  // Every error through format_error(), one per line, each ending in '\n'.
  std::string error_report() const;
};

// Config files are small (configs/zone.yaml, every key documented, is about 10 KiB).
// Anything larger than this is refused before it is parsed.
inline constexpr std::size_t kMaxConfigFileBytes = 1024 * 1024;

// Reads and checks a file. A missing or unreadable file is one error naming the path;
// so is anything but a regular file (a directory, a FIFO, /dev/zero: refused without
// reading, never waited on) and a file larger than kMaxConfigFileBytes.
LoadResult load_config_file(const std::string& path);
// Same for YAML text; `source_name` is used in messages (e.g. "<command line>").
LoadResult load_config_string(std::string_view yaml, std::string source_name);

// Range checks of every key plus the checks across keys, for a config built or changed in
// code (e.g. after command-line overrides). Errors name the key path; line is 0.
std::vector<ConfigError> validate(const ZoneConfig& config);

// Sets one key from text as it would be written in YAML ("16", "true", "patrol",
// "127.0.0.1"), with the same type and range checks as the loader; for --set key=value.
// Returns the error (unknown key with suggestion, or bad value) and leaves the config
// untouched on failure. Checks across keys are validate()'s job.
std::optional<ConfigError> set_value(ZoneConfig& config, std::string_view key,
                                     std::string_view value);

// The config as YAML text: every key, one section per block, in configs/zone.yaml order.
// load_config_string(describe(c)) gives back c exactly.
std::string describe(const ZoneConfig& config);

// Keys whose values differ between two configs, in file order, with both values as they
// would be written in YAML. For config reloads.
struct KeyChange {
  std::string key;
  std::string before;
  std::string after;
};
std::vector<KeyChange> diff(const ZoneConfig& before, const ZoneConfig& after);

// Reload safety: a file cut short (a truncated copy, an editor that died mid-write, a
// full disk) is often still valid YAML, and every key after the cut would silently go
// back to its default. So a reload is refused when its file leaves out a key that the
// running config holds at a value other than the default: one error per such key,
// naming it, both values and where the file ends. A key can still be put back to its
// default on purpose by writing the default value. Results built in code (keys_set is
// nullopt) are not checked. Returns `next` with these errors added (only when `next` is
// otherwise valid, so one mistake gets one set of messages).
LoadResult refuse_dropped_keys(const ZoneConfig& running, LoadResult next);

// Every dotted key with what it accepts (as in the "expected ..." of error messages), in
// file order. For documentation checks and --help text.
struct KeyInfo {
  std::string_view key;
  std::string_view expected;
};
std::vector<KeyInfo> config_keys();

}  // namespace zone::config
