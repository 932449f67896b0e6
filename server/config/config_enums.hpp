// Names of the configuration's enumerations, as written in YAML and on the command line.
//
// One table per enum; parsing is exact (lower case), so a typo is an error rather than a
// silent fallback.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

#include "config/zone_config.hpp"

namespace zone::config {

template <typename E>
struct EnumName {
  std::string_view name;
  E value;
};

inline constexpr std::array<EnumName<NpcBehaviour>, 3> kNpcBehaviourNames{{
    {"idle", NpcBehaviour::kIdle},
    {"wander", NpcBehaviour::kWander},
    {"patrol", NpcBehaviour::kPatrol},
}};

inline constexpr std::array<EnumName<LogLevel>, 5> kLogLevelNames{{
    {"trace", LogLevel::kTrace},
    {"debug", LogLevel::kDebug},
    {"info", LogLevel::kInfo},
    {"warn", LogLevel::kWarn},
    {"error", LogLevel::kError},
}};

inline constexpr std::array<EnumName<AuthMode>, 2> kAuthModeNames{{
    {"open", AuthMode::kOpen},
    {"ticket", AuthMode::kTicket},
}};

inline constexpr std::array<EnumName<PersistBackend>, 2> kPersistBackendNames{{
    {"sqlite", PersistBackend::kSqlite},
    {"postgres", PersistBackend::kPostgres},
}};

// Generic look-ups over a name table.
template <typename E, std::size_t N>
constexpr std::optional<E> enum_from_name(const std::array<EnumName<E>, N>& names,
                                          std::string_view text) {
  for (const auto& n : names) {
    if (n.name == text) return n.value;
  }
  return std::nullopt;
}

// Empty for a value outside the table (e.g. a bad static_cast).
template <typename E, std::size_t N>
constexpr std::string_view enum_name(const std::array<EnumName<E>, N>& names, E value) {
  for (const auto& n : names) {
    if (n.value == value) return n.name;
  }
  return {};
}

// The allowed names joined by `separator`, e.g. "idle|wander|patrol".
template <typename E, std::size_t N>
std::string enum_choices(const std::array<EnumName<E>, N>& names, std::string_view separator) {
  std::string out;
  for (const auto& n : names) {
    if (!out.empty()) out += separator;
    out += n.name;
  }
  return out;
}

// "idle" | "wander" | "patrol"
std::optional<NpcBehaviour> parse_npc_behaviour(std::string_view text);
std::string_view to_string(NpcBehaviour b);

// "trace" | "debug" | "info" | "warn" | "error"
std::optional<LogLevel> parse_log_level(std::string_view text);
std::string_view to_string(LogLevel level);

}  // namespace zone::config
