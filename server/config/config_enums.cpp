#include "config/config_enums.hpp"

namespace zone::config {

std::optional<NpcBehaviour> parse_npc_behaviour(std::string_view text) {
  return enum_from_name(kNpcBehaviourNames, text);
}

std::string_view to_string(NpcBehaviour b) {
  return enum_name(kNpcBehaviourNames, b);
}

std::optional<LogLevel> parse_log_level(std::string_view text) {
  return enum_from_name(kLogLevelNames, text);
}

std::string_view to_string(LogLevel level) {
  return enum_name(kLogLevelNames, level);
}

}  // namespace zone::config
