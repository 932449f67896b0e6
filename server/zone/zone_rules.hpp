// The game's rules in the zone: a game::GameRules made from the zone's config (the
// scripts of game.scripts_dir, the budgets of script.*), met by the sessions through
// GameHooks, its scripts' print() and errors in the zone's log (errors rate-limited: a
// handler that fails every tick must not flood it).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "config/zone_config.hpp"
#include "game/game_rules.hpp"
#include "zone/game_hooks.hpp"
#include "zone/logger.hpp"

namespace zone {

// The budgets of script.*.
script::ScriptLimits script_limits(const config::ScriptConfig& config);

// --check-config: whether the rules load (read, compile, run their top level and
// on_load) over an empty world of this config and game; the error (file:line), if not.
std::optional<std::string> check_rules(const config::ZoneConfig& config,
                                       const world::GameTypes& game);

class ZoneRules final : public GameHooks {
 public:
  // Loads `files` (read_script_dir of game.scripts_dir); throws std::runtime_error with
  // the first error (file:line) when they do not load.
  ZoneRules(world::World& world, const config::ZoneConfig& config,
            std::vector<script::ScriptFile> files, Logger& log);

  void player_joined(std::uint32_t slot) override { rules_.player_joined(slot); }
  void player_leaving(std::uint32_t slot, bool handed_over) override {
    rules_.player_leaving(slot, handed_over);
  }
  protocol::ActionStatus act(std::uint32_t slot, std::uint16_t action, world::EntityId target,
                             std::span<const std::int32_t> args) override {
    const Timed timed(time_);
    return rules_.act({slot, action, target, args});
  }
  // A neighbour's player, this zone's ghost of it at `slot`, acts on this zone's entity
  // (docs/world.md, "Actions across borders").
  protocol::ActionStatus act_remote(std::uint32_t slot, std::uint16_t action,
                                    world::EntityId target, std::span<const std::int32_t> args) {
    const Timed timed(time_);
    return rules_.act({slot, action, target, args, true});
  }
  void npc_arrived(std::uint32_t slot) { rules_.npc_arrived(slot); }
  void tick(std::uint32_t tick, double dt) {
    const Timed timed(time_);
    rules_.tick(tick, dt);
  }
  // Time the tick thread spent in the rules (actions, ticks, timers, NPC thinking).
  std::chrono::nanoseconds time() const { return time_; }

  // A config reload: the new scripts take over (or the old ones stay: the error, with
  // file:line, is returned and logged) and game.tick_hz applies.
  std::optional<std::string> reload(const config::ZoneConfig& config,
                                    std::vector<script::ScriptFile> files);
  game::RulesStats stats() const { return rules_.stats(); }

 private:
  // Adds the time from its construction to its destruction to `sum`.
  struct Timed {
    explicit Timed(std::chrono::nanoseconds& sum)
        : sum_(sum), start_(std::chrono::steady_clock::now()) {}
    ~Timed() { sum_ += std::chrono::steady_clock::now() - start_; }
    Timed(const Timed&) = delete;
    Timed& operator=(const Timed&) = delete;
    std::chrono::nanoseconds& sum_;
    std::chrono::steady_clock::time_point start_;
  };
  std::chrono::nanoseconds time_{0};
  Logger& log_;
  // Both called on the tick thread only (the rules run there).
  LogRateLimiter errors_limit_;
  LogRateLimiter print_limit_;
  game::GameRules rules_;
};

}  // namespace zone
