// The one error type of the script host: where (file and line) and what, from a failed
// load or call. The host API returns it; nothing throws across it.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace zone::script {

enum class ScriptErrorKind : std::uint8_t {
  kSyntax,             // the file does not compile
  kRuntime,            // error(), a bad operation, a bad argument to a bound function
  kInstructionBudget,  // the call (or the tick) ran out of instructions
  kMemory,             // an allocation would have passed the memory budget
};

struct ScriptError {
  std::string file;  // the ScriptFile's path_for_messages; empty when unknown
  int line = 0;      // 1-based; 0 when unknown
  std::string message;
  ScriptErrorKind kind = ScriptErrorKind::kRuntime;

  // "file:line: message" (just the message when the place is unknown).
  std::string what() const;
};

// A location at the start of a Lua message ("path:12: rest"), as Lua writes it for
// chunks named "@path": the path is one of `files`, or its tail after "..." when Lua
// shortened a long one.
struct MessageLocation {
  std::string_view file;  // the full path, from `files`
  int line = 0;
  std::string_view rest;  // the message without the location
};
std::optional<MessageLocation> parse_message_location(std::string_view message,
                                                      std::span<const std::string> files);

}  // namespace zone::script
