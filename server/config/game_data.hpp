// The game's data file (game.data_file): the entity types a zone's game has and the
// properties every entity carries beyond the engine's rows, each with its width,
// audience, update tier and whether it is saved. This is the one schema: the zone sends it
// to every client in its Welcome, and replication, the codecs between zones and the truth
// check all follow it (docs/protocol.md, "The schema"). configs/game/README.md describes
// the format; configs/game/game.yaml is the sample game's. The loader is as strict as the
// zone config's: every problem is reported as FILE:LINE: KEY: MESSAGE, and a file that
// loads is one the zone can run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "config/config_loader.hpp"
#include "protocol/schema.hpp"

namespace zone::config {

inline constexpr std::size_t kMaxGameDataBytes = 1024 * 1024;

struct GameTypeData {
  std::string name;
  protocol::EntityKind kind = protocol::EntityKind::kNpc;
  // The values an entity of this type starts with, one per game property (the schema's
  // rows from protocol::kEngineFieldCount on), each within its property's range.
  std::vector<std::int32_t> defaults;
};

struct GameData {
  protocol::Schema schema;          // the engine's rows, then the game's properties
  std::vector<GameTypeData> types;  // in the schema's type order
  // Players spawn as the first type of kind player, the zone's configured NPCs (npcs.*) as
  // the first of kind npc (or, when there is none, as the player type).
  std::size_t player_type() const;
  std::size_t npc_type() const;
  const GameTypeData* find_type(std::string_view name) const;
};

// The game of a zone without a data file: health (16 bits, immediate, persistent) and
// max_health (16 bits) at 100, types "player" and "npc".
GameData builtin_game_data();

struct GameDataResult {
  GameData data;                    // valid only when ok()
  std::vector<ConfigError> errors;  // in line order
  std::string source;

  bool ok() const { return errors.empty(); }
  std::string error_report() const;  // one format_error() line per error
};

// Reads and checks a file (at most kMaxGameDataBytes; anything but a regular file is
// refused without reading).
GameDataResult load_game_data_file(const std::string& path);
GameDataResult load_game_data_string(std::string_view yaml, std::string source_name);

}  // namespace zone::config
