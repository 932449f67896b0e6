// GameRules: the game's rules, written in Lua (configs/game/*.lua), over the world. It
// owns the script host (server/script), binds the game API onto it (docs/scripting.md,
// "The game API"), and calls the scripts' handlers: on_join, on_leave, on_action, on_tick
// at game.tick_hz, timers, NPC thinking. Scripts speak to the world only through the API
// (read and change properties, move, spawn and despawn NPCs, emit events, query who is
// near); movement, the AOI and replication stay in C++.
//
// Threads: everything here runs on the simulation thread, between the world's steps.
// Budgets: every handler call and every tick is bounded by script.* (instructions,
// memory): a script that errors, loops or allocates without bound costs only its own
// handler, and the tick keeps its rate.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/zone_generated.h"
#include "script/script_config.hpp"
#include "script/script_error.hpp"
#include "world/world.hpp"

namespace zone::game {

struct RulesParams {
  // The scripts, loaded in this order into one VM (empty: no rules; every action is
  // answered NotAllowed).
  std::vector<script::ScriptFile> files;
  script::ScriptLimits limits;
  std::int64_t random_seed = 1;
  double tick_hz = 10.0;  // on_tick's and NPC thinking's rate (at most the zone's tick rate)
  // Where the scripts' print() goes, and every handler error (file:line), for the zone's
  // log (rate-limited there). Either may be empty; neither may throw.
  std::function<void(std::string_view)> log;
  std::function<void(const script::ScriptError&)> on_error;
};

// One Action message, checked by the zone against the schema already (a known action,
// no more arguments than declared, the target rule).
struct ActionRequest {
  std::uint32_t player_slot = 0;  // the acting player's world slot
  std::uint16_t action = 0;       // index into the schema's actions
  world::EntityId target = world::kNoEntity;
  std::span<const std::int32_t> args;
  // The actor is a neighbour zone's player acting on this zone's entity across a border
  // (docs/world.md, "Actions across borders"): `player_slot` is this zone's ghost of it,
  // which the scripts can read but not change (game.owned(player) is false).
  bool remote = false;
};

struct RulesStats {
  script::ScriptStats script;         // the VMs' counters (calls, errors, budgets, memory)
  std::uint64_t reloads = 0;          // successful
  std::uint64_t reload_failures = 0;  // the old rules kept
  std::uint64_t timers_fired = 0;
  std::uint64_t timers_pending = 0;
  std::uint64_t api_refusals = 0;   // API calls refused (bad entity, bad property, ...)
  std::uint64_t bad_answers = 0;    // on_action results naming no status (NotAllowed)
  std::uint64_t npc_thinks = 0;     // on_npc_think calls
  std::uint64_t thinking_npcs = 0;  // NPCs marked to think (game.think), now
};

class GameRules {
 public:
  // Loads params.files; an error (file:line) is thrown as std::runtime_error at start-up.
  GameRules(world::World& world, RulesParams params);
  ~GameRules();

  // Hot reload (the config reload): the new scripts take over now, which the zone calls
  // at a tick boundary; on failure the old ones stay and the error is returned.
  std::optional<script::ScriptError> reload(std::vector<script::ScriptFile> files);

  // A player entered the zone (joined, or arrived from another zone) / is leaving (its
  // entity still exists during the call).
  // `handed_over`: it goes on in a neighbour zone (its properties travel with it), passed
  // to on_leave(player, handed_over).
  void player_joined(std::uint32_t slot);
  void player_leaving(std::uint32_t slot, bool handed_over = false);
  // An NPC the rules have not met yet: one handed over by a neighbour zone (after
  // World::adopt). The NPCs the zone owns when the rules start (or reload) are met at
  // the next tick() without this. Calls on_npc_init(npc).
  void npc_arrived(std::uint32_t slot);

  // The rules' answer to an action: Ok, or the reason it was refused (RulesFailed when
  // the handler errored or ran out of budget; nothing it did before is undone).
  protocol::ActionStatus act(const ActionRequest& request);

  // Once per zone tick, before the world steps: runs due timers, NPC thinking and
  // on_tick at tick_hz. `tick` is the zone's tick number, dt its period in seconds.
  void tick(std::uint32_t tick, double dt);

  // The rate of on_tick and NPC thinking (config reload), from the next tick on.
  void set_tick_hz(double tick_hz);

  RulesStats stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace zone::game
