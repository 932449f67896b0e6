// What the session layer asks of the GM commands (docs/operations.md): whether an
// account is banned (its Hello is refused) and whether a player is muted (its chat lines
// are answered Muted). An interface, so the sessions know nothing of how bans are kept.
#pragma once

#include <chrono>
#include <cstdint>

#include "world/entity.hpp"

namespace zone {

class Moderation {
 public:
  virtual ~Moderation() = default;
  // Tick thread, at a ticketed Hello (account is never 0 there).
  virtual bool banned(std::uint64_t account) const = 0;
  // Tick thread, at each chat line of a playing player.
  virtual bool muted(const world::Entity& player,
                     std::chrono::steady_clock::time_point now) const = 0;
};

}  // namespace zone
