// The NPCs the scripts made think (game.think): on_npc_think runs for each at the rules'
// rate, spread over the zone's ticks by slot, and for one that thinks "near" only while
// a player this zone owns stands within its radius (a grid query, in C++). NPCs nobody
// marked never reach Lua.
#pragma once

#include <cstdint>
#include <vector>

#include "world/entity.hpp"

namespace zone::game {

struct Thinker {
  std::uint32_t slot = 0;
  world::EntityId id = world::kNoEntity;  // the NPC it was set for (slots are reused)
  double radius = 0.0;                    // > 0: only while a player is this near; 0: always
  bool active = true;                     // false: stopped, dropped at the next compact()
};

class Thinkers {
 public:
  // Marks the NPC at `slot` as thinking (radius as in Thinker), replacing its earlier mark.
  void set(std::uint32_t slot, world::EntityId id, double radius);
  // Stops it (kept in the list until compact(), so that a loop over it stays valid).
  void stop(std::uint32_t slot);
  const Thinker* find(std::uint32_t slot) const;
  // The list, in the order the NPCs were first marked; entries may be inactive.
  std::vector<Thinker>& list() { return list_; }
  std::size_t size() const { return list_.size(); }
  // Drops the inactive entries, keeping the order of the others.
  void compact();

 private:
  static constexpr std::uint32_t kNone = 0xFFFFFFFFu;
  std::vector<Thinker> list_;
  std::vector<std::uint32_t> index_of_slot_;
  bool dirty_ = false;
};

}  // namespace zone::game
