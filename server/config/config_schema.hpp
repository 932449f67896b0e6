// The configuration schema: one row per YAML key (internal to the config library).
//
// Each row names the dotted key, says in words what it accepts, and knows how to convert
// a raw value into its ZoneConfig member, check the member's current value, and print it
// back as YAML. The loader, validate(), set_value() and describe() are all driven by this
// table, so adding a key is one row in config_schema.cpp (a new section needs nothing
// more: sections are the first component of the dotted paths).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/zone_config.hpp"

namespace zone::config {

// A value as found in YAML (or on the command line), before conversion.
struct RawValue {
  enum class Kind : std::uint8_t { kNull, kScalar, kSequence, kMap };
  Kind kind = Kind::kNull;
  std::string text;     // kScalar only
  bool quoted = false;  // kScalar written in quotes (or tagged !!str): always a string
};

// How a raw value is named in "got ..." (e.g. "-5", "'abc'", "the quoted string \"7\"",
// "a list", "a map", "an empty value").
std::string describe_found(const RawValue& value);

// A YAML number: decimal with optional sign, fraction and exponent; not .inf or .nan.
std::optional<double> to_real(std::string_view text);

struct KeySpec {
  std::string_view path;  // "aoi.cell_size"
  std::string expected;   // "a number > 0 and <= 10000"
  // Converts and range-checks `value`; on success stores it and returns true. On failure
  // the config is untouched and the error reads "expected <expected>, got <found>".
  std::function<bool(const RawValue& value, ZoneConfig& config)> assign;
  // Whether the member's current value is acceptable (for validate()).
  std::function<bool(const ZoneConfig& config)> valid;
  // The member's current value as a YAML scalar that assign() accepts back.
  std::function<std::string(const ZoneConfig& config)> show;

  std::string_view section() const { return path.substr(0, path.find('.')); }
  std::string_view leaf() const { return path.substr(path.find('.') + 1); }
};

// A check spanning several keys. Reported under keys[0]; skipped when any of its keys
// already has an error of its own (one mistake, one message).
struct CrossCheck {
  std::vector<std::string_view> keys;
  std::function<std::optional<std::string>(const ZoneConfig& config)> check;
};

// Every key, grouped by section in file order.
const std::vector<KeySpec>& schema();
const KeySpec* find_key(std::string_view path);
// Section names in order of first appearance in schema().
const std::vector<std::string_view>& sections();
const std::vector<CrossCheck>& cross_checks();

}  // namespace zone::config
