// The game's data (config/game_data.hpp) as the world holds it (world/game_types.hpp):
// the zone's translation, kept apart from zone_params.hpp so that tools that build a world
// without a zone (replication-bench) can use it.
#pragma once

#include <cstdint>

#include "config/game_data.hpp"
#include "world/game_types.hpp"

namespace zone {

// The game's entity types and properties (game.data_file, or the built-in game) as the
// world holds them.
inline world::GameTypes make_game_types(const config::GameData& data) {
  world::GameTypes game;
  game.schema = data.schema;
  for (const config::GameTypeData& t : data.types) game.defaults.push_back({t.defaults});
  game.player_type = static_cast<std::uint16_t>(data.player_type());
  game.npc_type = static_cast<std::uint16_t>(data.npc_type());
  return game;
}

}  // namespace zone
