// Values crossing the host boundary: a handler's arguments (ScriptArg, non-owning) and
// the result of a call (CallResult: a status, an error or up to kMaxResults values).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>

#include "script/script_error.hpp"

namespace zone::script {

// An argument to a handler. Strings are views: they need to live only during the call.
using ScriptArg = std::variant<bool, std::int64_t, double, std::string_view>;

// bool stays a boolean, other integers become Lua integers (an unsigned value above
// INT64_MAX wraps), floating point becomes a Lua float, anything that converts to
// std::string_view a string. Other types do not compile.
template <typename T>
ScriptArg make_script_arg(const T& value) {
  if constexpr (std::is_same_v<T, bool>) {
    return ScriptArg{std::in_place_type<bool>, value};
  } else if constexpr (std::is_integral_v<T>) {
    return ScriptArg{std::in_place_type<std::int64_t>, static_cast<std::int64_t>(value)};
  } else if constexpr (std::is_floating_point_v<T>) {
    return ScriptArg{std::in_place_type<double>, static_cast<double>(value)};
  } else {
    static_assert(std::is_convertible_v<const T&, std::string_view>,
                  "a handler argument is a bool, an integer, a floating-point number or a string");
    return ScriptArg{std::in_place_type<std::string_view>, std::string_view(value)};
  }
}

// A value a handler returned. Lua integers and floats stay apart (3 and 3.0); tables,
// functions, threads and userdata read as nil (monostate): handlers return plain values.
using ScriptValue = std::variant<std::monostate, bool, std::int64_t, double, std::string>;

enum class CallStatus : std::uint8_t {
  kOk,                 // the handler ran and returned
  kMissingHandler,     // no global of that name (nil): nothing ran, not an error
  kSkippedOverBudget,  // the tick's instruction budget is spent: nothing ran
  kError,              // the handler ran and failed: see error
};

struct CallResult {
  static constexpr std::size_t kMaxResults = 4;  // further results are dropped

  CallStatus status = CallStatus::kOk;
  std::optional<ScriptError> error;  // set exactly when status == kError
  std::array<ScriptValue, kMaxResults> values{};
  std::size_t count = 0;  // results kept (at most kMaxResults)

  bool ok() const { return status == CallStatus::kOk; }
  // Result i; nil past the end.
  const ScriptValue& value(std::size_t i) const;
  bool is_nil(std::size_t i) const { return std::holds_alternative<std::monostate>(value(i)); }
  // An integer, or a float with an exact integer value; nothing otherwise.
  std::optional<std::int64_t> integer(std::size_t i) const;
  // An integer or a float.
  std::optional<double> number(std::size_t i) const;
  std::optional<bool> boolean(std::size_t i) const;
  // Valid as long as this CallResult is.
  std::optional<std::string_view> string(std::size_t i) const;
};

}  // namespace zone::script
