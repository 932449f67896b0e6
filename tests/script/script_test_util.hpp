// Shared by the script host's tests: a VM with test-sized budgets and one-file loading.
#pragma once

#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

#include "script/script_vm.hpp"

namespace zone::script::test {

// Budgets small enough for runaway scripts to stop fast, large enough for the tests'
// ordinary handlers.
inline ScriptLimits small_limits() {
  return ScriptLimits{
      .memory_bytes = 8u << 20, .instructions_per_call = 200'000, .instructions_per_tick = 0};
}

// Loads one file into `vm`; the test fails with the error's text if it does not load.
inline void load_ok(ScriptVm& vm, const std::string& path, const std::string& source) {
  const std::vector<ScriptFile> files{{path, source}};
  const std::optional<ScriptError> error = vm.load_files(files);
  INFO((error ? error->what() : std::string()));
  REQUIRE_FALSE(error.has_value());
}

inline std::string error_text(const CallResult& result) {
  return result.error ? result.error->what() : std::string("(no error)");
}

}  // namespace zone::script::test
