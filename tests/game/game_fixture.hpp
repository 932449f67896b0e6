// Shared by the game layer's tests: a real World with the sample game's data
// (configs/game/game.yaml), GameRules over it, and a zone's tick in miniature (rules,
// movement, AOI, the event log collected and cleared).
#pragma once

#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "config/game_data.hpp"
#include "game/game_rules.hpp"
#include "zone/game_params.hpp"

namespace zone::game::test {

inline std::string read_source(const std::string& relative) {
  std::ifstream in(std::string(ZONE_SOURCE_DIR) + "/" + relative);
  if (!in) throw std::runtime_error("cannot read " + relative);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

inline world::GameTypes sample_game_types() {
  const config::GameDataResult data =
      config::load_game_data_file(std::string(ZONE_SOURCE_DIR) + "/configs/game/game.yaml");
  if (!data.ok()) throw std::runtime_error(data.error_report());
  return make_game_types(data.data);
}

// The sample game's scripts, in the order the zone loads them.
inline std::vector<script::ScriptFile> sample_scripts() {
  return {{"configs/game/combat.lua", read_source("configs/game/combat.lua")},
          {"configs/game/npc.lua", read_source("configs/game/npc.lua")}};
}

// A 200 m square, idle NPCs (they move only when the rules steer them), no static
// objects unless a test gives some.
inline world::WorldParams game_world_params(std::vector<world::StaticObject> objects = {}) {
  world::WorldParams wp;
  wp.grid.bounds = {{0.0, 0.0}, {200.0, 200.0}};
  wp.grid.cell_size = 16.0;
  wp.npcs.behaviour = world::NpcBehaviour::kIdle;
  wp.game = sample_game_types();
  if (!objects.empty()) {
    wp.statics.objects = std::make_shared<std::vector<world::StaticObject>>(std::move(objects));
    wp.statics.cell_size = 16.0;
  }
  return wp;
}

inline script::ScriptLimits test_limits() {
  return {.memory_bytes = 16u << 20,
          .instructions_per_call = 200'000,
          .instructions_per_tick = 2'000'000};
}

struct GameFixture {
  explicit GameFixture(std::vector<script::ScriptFile> files = sample_scripts(),
                       world::WorldParams wp = game_world_params(), double tick_hz = 20.0,
                       std::int64_t seed = 1)
      : world(wp), rules(world, params(std::move(files), tick_hz, seed)) {}

  RulesParams params(std::vector<script::ScriptFile> files, double tick_hz, std::int64_t seed) {
    RulesParams p;
    p.files = std::move(files);
    p.limits = test_limits();
    p.random_seed = seed;
    p.tick_hz = tick_hz;
    p.log = [this](std::string_view line) { printed.emplace_back(line); };
    p.on_error = [this](const script::ScriptError& e) { errors.push_back(e.what()); };
    return p;
  }

  // A player standing at (x, y), joined to the rules.
  std::uint32_t player_at(double x, double y, const std::string& name = "p") {
    const std::uint32_t slot = world.spawn_player(name);
    REQUIRE(world.teleport(slot, x, y));
    world.update_aoi();
    rules.player_joined(slot);
    return slot;
  }
  // An NPC of `type` standing at (x, y); the rules meet it at the next tick.
  std::uint32_t npc_at(double x, double y, const std::string& type = "wolf") {
    const auto t = world.game().schema.find_type(type);
    REQUIRE(t.has_value());
    const std::uint32_t slot = world.spawn_npc(static_cast<std::uint16_t>(*t), x, y, 0.0);
    REQUIRE(slot != world::World::kNoSlot);
    world.update_aoi();
    return slot;
  }
  world::EntityId id(std::uint32_t slot) const { return world.entity(slot).id; }

  protocol::ActionStatus act(std::uint32_t player, const std::string& action,
                             world::EntityId target = world::kNoEntity,
                             std::vector<std::int32_t> args = {}) {
    const auto a = world.game().schema.find_action(action);
    REQUIRE(a.has_value());
    const protocol::ActionStatus status = rules.act({.player_slot = player,
                                                     .action = static_cast<std::uint16_t>(*a),
                                                     .target = target,
                                                     .args = args});
    drain();
    return status;
  }

  // One zone tick: the rules, movement, the AOI; the tick's events kept in `events`.
  void step(int ticks = 1) {
    for (int i = 0; i < ticks; ++i) {
      rules.tick(tick, dt);
      world.step(dt);
      world.update_aoi();
      drain();
      ++tick;
    }
  }
  void drain() {
    for (const world::WorldEvent& e : world.events().events()) events.push_back(e);
    world.events().clear();
  }
  // Events of one kind, by name.
  std::vector<world::WorldEvent> of_kind(const std::string& name) const {
    const auto kind = world.game().schema.find_event(name);
    REQUIRE(kind.has_value());
    std::vector<world::WorldEvent> out;
    for (const world::WorldEvent& e : events) {
      if (e.kind == *kind) out.push_back(e);
    }
    return out;
  }
  std::int64_t get(std::uint32_t slot, const std::string& property) const {
    const auto row = world.game().schema.find_field(property);
    REQUIRE(row.has_value());
    return world.properties(slot)[*row - protocol::kEngineFieldCount];
  }
  std::string all_errors() const {
    std::string out;
    for (const std::string& e : errors) out += e + "\n";
    return out;
  }

  world::World world;
  std::vector<std::string> printed;
  std::vector<std::string> errors;
  GameRules rules;
  std::uint32_t tick = 0;
  double dt = 0.05;
  std::vector<world::WorldEvent> events;
};

}  // namespace zone::game::test
