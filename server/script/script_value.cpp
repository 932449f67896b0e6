// CallResult's typed readers.
#include "script/script_value.hpp"

#include <cmath>

namespace zone::script {

const ScriptValue& CallResult::value(std::size_t i) const {
  static const ScriptValue kNil{};
  return i < count ? values[i] : kNil;
}

std::optional<std::int64_t> CallResult::integer(std::size_t i) const {
  const ScriptValue& v = value(i);
  if (const auto* n = std::get_if<std::int64_t>(&v)) return *n;
  if (const auto* d = std::get_if<double>(&v)) {
    // The same rule as Lua's math.tointeger: integral and inside [-2^63, 2^63).
    constexpr double kTwo63 = 9223372036854775808.0;
    if (std::floor(*d) == *d && *d >= -kTwo63 && *d < kTwo63) {
      return static_cast<std::int64_t>(*d);
    }
  }
  return std::nullopt;
}

std::optional<double> CallResult::number(std::size_t i) const {
  const ScriptValue& v = value(i);
  if (const auto* n = std::get_if<std::int64_t>(&v)) return static_cast<double>(*n);
  if (const auto* d = std::get_if<double>(&v)) return *d;
  return std::nullopt;
}

std::optional<bool> CallResult::boolean(std::size_t i) const {
  if (const auto* b = std::get_if<bool>(&value(i))) return *b;
  return std::nullopt;
}

std::optional<std::string_view> CallResult::string(std::size_t i) const {
  if (const auto* s = std::get_if<std::string>(&value(i))) return std::string_view(*s);
  return std::nullopt;
}

}  // namespace zone::script
