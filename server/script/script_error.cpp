// ScriptError's text and the parsing of the "path:line: " Lua puts before its messages.
#include "script/script_error.hpp"

#include <charconv>

namespace zone::script {

std::string ScriptError::what() const {
  if (file.empty()) return message;
  return file + ":" + std::to_string(line) + ": " + message;
}

namespace {

// After the path: ":<digits>: ". Returns the line and the rest, or nothing.
std::optional<MessageLocation> parse_after_path(std::string_view after, std::string_view file) {
  if (after.empty() || after.front() != ':') return std::nullopt;
  after.remove_prefix(1);
  int line = 0;
  const auto [end, ec] = std::from_chars(after.data(), after.data() + after.size(), line);
  if (ec != std::errc{} || end == after.data() || line <= 0) return std::nullopt;
  after.remove_prefix(static_cast<std::size_t>(end - after.data()));
  if (!after.starts_with(": ")) return std::nullopt;
  after.remove_prefix(2);
  return MessageLocation{file, line, after};
}

}  // namespace

std::optional<MessageLocation> parse_message_location(std::string_view message,
                                                      std::span<const std::string> files) {
  for (const std::string& file : files) {
    if (!file.empty() && message.starts_with(file)) {
      if (auto found = parse_after_path(message.substr(file.size()), file)) return found;
    }
  }
  // Lua keeps at most LUA_IDSIZE characters of a chunk name: a long path reads
  // ".../tail/of/the/path.lua:12: ...". Find the file whose path ends with that tail.
  constexpr std::string_view kEllipsis = "...";
  if (!message.starts_with(kEllipsis)) return std::nullopt;
  const std::string_view shortened = message.substr(kEllipsis.size());
  for (const std::string& file : files) {
    for (std::size_t colon = shortened.find(':'); colon != std::string_view::npos;
         colon = shortened.find(':', colon + 1)) {
      const std::string_view tail = shortened.substr(0, colon);
      if (tail.empty() || !std::string_view(file).ends_with(tail)) continue;
      if (auto found = parse_after_path(shortened.substr(colon), file)) return found;
    }
  }
  return std::nullopt;
}

}  // namespace zone::script
