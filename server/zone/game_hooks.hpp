// What the sessions ask of the game's rules: a player came or is going, and an action a
// client asked for (already checked against the schema: a known action, its arguments,
// its target held by the client). The zone implements it over game::GameRules (in a world
// of zones through ActionRouter, which forwards an action on a ghost to its owner); a zone
// without rules answers every action NotAllowed.
#pragma once

#include <cstdint>
#include <span>

#include "protocol/zone_generated.h"
#include "world/entity.hpp"

namespace zone {

class GameHooks {
 public:
  virtual ~GameHooks() = default;
  virtual void player_joined(std::uint32_t slot) = 0;
  // The player's entity still exists during the call; `handed_over`: it goes on in
  // another zone (its state travels with it).
  virtual void player_leaving(std::uint32_t slot, bool handed_over) = 0;
  virtual protocol::ActionStatus act(std::uint32_t slot, std::uint16_t action,
                                     world::EntityId target,
                                     std::span<const std::int32_t> args) = 0;
};

}  // namespace zone
