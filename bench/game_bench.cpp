// game-bench: what the game rules (server/game, the sample game's Lua in configs/game/)
// cost a zone: per action (GameRules::act) and per tick (GameRules::tick: timers,
// on_tick, NPC thinking), with thousands of wandering players fighting each other and
// the NPCs. No network: the world, the AOI and the rules, as the zone's tick runs them.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <map>
#include <numbers>
#include <sstream>
#include <string>
#include <vector>

#include "config/game_data.hpp"
#include "game/game_rules.hpp"
#include "util/splitmix64.hpp"
#include "zone/game_params.hpp"

using namespace zone;
using Clock = std::chrono::steady_clock;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const auto i = static_cast<std::size_t>(std::min<double>(v.size() - 1, p * v.size()));
  return v[i];
}

// This thread's CPU time (ms): unlike the wall clock, it leaves out the time the thread
// waited for a core, which the benchmark's neighbours on a shared machine would add.
double cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
}

double mean(const std::vector<double>& v) {
  double s = 0.0;
  for (const double x : v) s += x;
  return v.empty() ? 0.0 : s / static_cast<double>(v.size());
}

const char* status_name(protocol::ActionStatus s) {
  return protocol::EnumNameActionStatus(s);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"game-bench: the game rules' cost per action and per tick"};
  int players = 5000, npcs = 500, ticks = 600, seed = 1;
  double tick_hz = 20.0, rules_hz = 5.0, actions_per_second = 1.0, side = 2000.0;
  std::string game_dir = ZONE_SOURCE_DIR "/configs/game";
  app.add_option("--players", players, "players, wandering");
  app.add_option("--npcs", npcs, "NPCs of the game's first NPC type, wandering");
  app.add_option("--ticks", ticks, "zone ticks measured");
  app.add_option("--tick-hz", tick_hz, "the zone's tick rate");
  app.add_option("--rules-hz", rules_hz, "on_tick's and NPC thinking's rate");
  app.add_option("--actions-per-second", actions_per_second, "per player");
  app.add_option("--side", side, "the zone's side (metres)");
  app.add_option("--game-dir", game_dir, "game.yaml, combat.lua and npc.lua");
  app.add_option("--seed", seed);
  CLI11_PARSE(app, argc, argv);

  const config::GameDataResult data = config::load_game_data_file(game_dir + "/game.yaml");
  if (!data.ok()) {
    std::fprintf(stderr, "%s\n", data.error_report().c_str());
    return 1;
  }
  world::WorldParams wp;
  wp.grid.bounds = {{0.0, 0.0}, {side, side}};
  wp.grid.cell_size = 32.0;
  wp.player_view_radius = 30.0;
  wp.npcs.count = static_cast<std::uint32_t>(npcs);
  wp.npcs.behaviour = world::NpcBehaviour::kWander;
  wp.npcs.seed = static_cast<std::uint64_t>(seed);
  wp.spawn_seed = static_cast<std::uint64_t>(seed);
  wp.game = make_game_types(data.data);
  world::World world(wp);
  world.spawn_npcs();
  std::vector<std::uint32_t> slots;
  for (int i = 0; i < players; ++i) {
    std::string name = "p";  // not "p" + ...: GCC 12 -O3 warns falsely (-Wrestrict)
    name += std::to_string(i);
    slots.push_back(world.spawn_player(name));
  }
  world.update_aoi();

  game::RulesParams rp;
  rp.files = {{"configs/game/combat.lua", read_file(game_dir + "/combat.lua")},
              {"configs/game/npc.lua", read_file(game_dir + "/npc.lua")}};
  rp.tick_hz = rules_hz;
  rp.random_seed = seed;
  std::uint64_t errors = 0;
  std::string first_error;
  rp.on_error = [&](const script::ScriptError& e) {
    if (errors++ == 0) first_error = e.what();
  };
  game::GameRules rules(world, rp);
  for (const std::uint32_t s : slots) rules.player_joined(s);

  const double dt = 1.0 / tick_hz;
  util::SplitMix64 rng(static_cast<std::uint64_t>(seed) * 7919);
  std::vector<double> heading(slots.size());
  for (double& h : heading) h = rng.u01() * 2.0 * std::numbers::pi;
  const auto attack = static_cast<std::uint16_t>(*wp.game.schema.find_action("attack"));
  const auto shoot = static_cast<std::uint16_t>(*wp.game.schema.find_action("shoot"));
  const auto respawn = static_cast<std::uint16_t>(*wp.game.schema.find_action("respawn"));
  const auto state_row = *wp.game.schema.find_field("state") - protocol::kEngineFieldCount;
  // Each player acts every `every` ticks, players spread over them.
  const int every = std::max(1, static_cast<int>(std::lround(tick_hz / actions_per_second)));

  std::vector<double> act_us, tick_ms, step_ms;
  // Per tick, CPU time: all of the tick's actions, rules.tick, and both.
  std::vector<double> acts_cpu, tick_cpu, script_cpu;
  std::map<std::string, std::uint64_t> statuses;
  std::vector<aoi::EntityHandle> near;
  std::uint64_t events = 0;
  const game::RulesStats before = rules.stats();
  // A warm-up second (the rules meet the NPCs on their first tick), then the measure.
  const int warmup = static_cast<int>(tick_hz);
  for (int t = 0; t < warmup + ticks; ++t) {
    const bool measured = t >= warmup;
    world.events().clear();
    double acts_ms = 0.0;
    for (std::size_t i = 0; i < slots.size(); ++i) {
      // Wander: a new heading now and then.
      if (rng.u01() < dt / 3.0) heading[i] = rng.u01() * 2.0 * std::numbers::pi;
      world.set_intent(slots[i], std::cos(heading[i]), std::sin(heading[i]));
      if (static_cast<int>(i % static_cast<std::size_t>(every)) != t % every) continue;
      // The nearest other entity within a shot's range: attack in reach, else shoot.
      const world::Entity& me = world.entity(slots[i]);
      game::ActionRequest request{
          .player_slot = slots[i], .action = respawn, .target = world::kNoEntity, .args = {}};
      if (world.properties(slots[i])[state_row] == 0) {
        near.clear();
        world.aoi().query_radius({me.x, me.y}, 25.0, near);
        double best = 1e18;
        for (const aoi::EntityHandle h : near) {
          if (h.index == slots[i]) continue;
          const world::Entity& e = world.entity(h.index);
          const double d = std::hypot(e.x - me.x, e.y - me.y);
          if (d < best) {
            best = d;
            request.target = e.id;
          }
        }
        if (request.target == world::kNoEntity) continue;
        request.action = best <= 3.0 ? attack : shoot;
      }
      const double cpu0 = cpu_ms();
      const auto start = Clock::now();
      const protocol::ActionStatus status = rules.act(request);
      const double us = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
      acts_ms += cpu_ms() - cpu0;
      if (measured) {
        act_us.push_back(us);
        ++statuses[status_name(status)];
      }
    }
    const double cpu0 = cpu_ms();
    const auto start = Clock::now();
    rules.tick(static_cast<std::uint32_t>(t), dt);
    const auto ruled = Clock::now();
    const double ruled_cpu = cpu_ms() - cpu0;
    world.step(dt);
    world.update_aoi();
    const auto stepped = Clock::now();
    if (measured) {
      tick_ms.push_back(std::chrono::duration<double, std::milli>(ruled - start).count());
      acts_cpu.push_back(acts_ms);
      tick_cpu.push_back(ruled_cpu);
      script_cpu.push_back(acts_ms + ruled_cpu);
      step_ms.push_back(std::chrono::duration<double, std::milli>(stepped - ruled).count());
      events += world.events().events().size();
    }
  }
  const game::RulesStats after = rules.stats();
  const double seconds = ticks * dt;
  const double per_tick_instr =
      static_cast<double>(after.script.instructions - before.script.instructions) / ticks;

  std::printf(
      "game-bench: %d players, %d NPCs, %.0f m square, zone %.0f Hz, rules %.0f Hz, "
      "%.1f actions/s per player, %d ticks (%.0f s)\n",
      players, npcs, side, tick_hz, rules_hz, actions_per_second, ticks, seconds);
  std::printf(
      "actions: %zu (%.0f/s), wall time per action mean %.2f us, p50 %.2f, p99 %.2f, max %.1f\n",
      act_us.size(), act_us.size() / seconds, mean(act_us), percentile(act_us, 0.5),
      percentile(act_us, 0.99), percentile(act_us, 1.0));
  std::printf("  statuses:");
  for (const auto& [name, n] : statuses)
    std::printf(" %s %llu", name.c_str(), static_cast<unsigned long long>(n));
  std::printf("\n");
  std::printf("rules.tick wall time: mean %.3f ms, p50 %.3f, p99 %.3f, max %.3f\n", mean(tick_ms),
              percentile(tick_ms, 0.5), percentile(tick_ms, 0.99), percentile(tick_ms, 1.0));
  std::printf(
      "CPU time per zone tick: actions mean %.3f ms (%.2f us each), rules.tick mean "
      "%.3f ms p99 %.3f, both mean %.3f ms p50 %.3f p99 %.3f max %.3f\n",
      mean(acts_cpu), 1000.0 * mean(acts_cpu) * ticks / std::max<std::size_t>(1, act_us.size()),
      mean(tick_cpu), percentile(tick_cpu, 0.99), mean(script_cpu), percentile(script_cpu, 0.5),
      percentile(script_cpu, 0.99), percentile(script_cpu, 1.0));
  std::printf("world.step + update_aoi (context): mean %.3f ms, p99 %.3f\n", mean(step_ms),
              percentile(step_ms, 0.99));
  std::printf(
      "npc thinks %.1f/tick, thinking NPCs %llu, timers fired %.1f/tick, events %.1f/tick, "
      "Lua instructions %.0f/tick, API refusals %llu, errors %llu, memory %.1f MiB\n",
      static_cast<double>(after.npc_thinks - before.npc_thinks) / ticks,
      static_cast<unsigned long long>(after.thinking_npcs),
      static_cast<double>(after.timers_fired - before.timers_fired) / ticks,
      static_cast<double>(events) / ticks, per_tick_instr,
      static_cast<unsigned long long>(after.api_refusals), static_cast<unsigned long long>(errors),
      static_cast<double>(after.script.memory_in_use) / (1 << 20));
  if (errors > 0) std::printf("first error: %s\n", first_error.c_str());
  return errors > 0 ? 1 : 0;
}
