#include "persist/record.hpp"

#include <charconv>

namespace zone::persist {

std::string character_key(std::uint64_t character_id, std::string_view name) {
  // Two prefixes keep the two modes' rows apart in one file: a name can never read as an
  // id.
  if (character_id != 0) return "character:" + std::to_string(character_id);
  return "name:" + std::string(name);
}

std::string encode_properties(const std::vector<Property>& properties) {
  std::string text;
  for (const Property& p : properties) {
    text += p.name;
    text += '=';
    text += std::to_string(p.value);
    text += '\n';
  }
  return text;
}

std::optional<std::vector<Property>> decode_properties(std::string_view text) {
  std::vector<Property> out;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    if (end == std::string_view::npos) return std::nullopt;
    const std::string_view line = text.substr(0, end);
    text.remove_prefix(end + 1);
    const std::size_t eq = line.find('=');
    if (eq == 0 || eq == std::string_view::npos) return std::nullopt;
    Property p;
    p.name = std::string(line.substr(0, eq));
    const std::string_view digits = line.substr(eq + 1);
    const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), p.value);
    if (ec != std::errc{} || ptr != digits.data() + digits.size()) return std::nullopt;
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace zone::persist
