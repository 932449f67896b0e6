// replication-bench: the replicator's own cost, without a network.
//
// N players wander a square world sized for a constant density (about 10 entities in
// view at 1,000 players on 530 x 530 m with a 30 m radius, as configs/bench-1000.yaml),
// every client acknowledges what it received `--ack-lag` ticks earlier, the budget is
// uncapped. Prints one JSON line per N: nanoseconds of Replicator work per client per
// tick and per snapshot, and payload bytes per snapshot. World movement and the AOI
// update are outside the timed section.
//
//   replication-bench --players 1000,5000 --ticks 200
#include <chrono>
#include <cmath>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "replication/replicator.hpp"
#include "util/splitmix64.hpp"
#include "world/world.hpp"
#include "zone/game_params.hpp"

namespace {

using namespace zone;

struct Result {
  double ns_per_client_tick = 0.0;
  double ns_per_snapshot = 0.0;
  double bytes_per_snapshot = 0.0;
  double records_per_snapshot = 0.0;
};

Result run(std::uint32_t players, std::uint32_t ticks, std::uint32_t warmup, std::uint32_t lag,
           std::uint32_t interval, const replication::InterestParams& interest) {
  const double side = 530.0 * std::sqrt(players / 1000.0);
  world::WorldParams wp;
  wp.grid.bounds = {{0.0, 0.0}, {side, side}};
  wp.grid.cell_size = 32.0;
  wp.grid.hysteresis = 2.0;
  wp.player_view_radius = 30.0;
  wp.player_max_speed = 7.0;
  wp.npcs.count = 0;
  // The zone's built-in game (health and max_health), as a zone without a data file runs.
  wp.game = zone::make_game_types(zone::config::builtin_game_data());
  world::World world(wp);

  replication::ReplicationParams rp;
  rp.tick_rate = 20;
  rp.max_packet_bytes = 1200;
  rp.client_bandwidth = 100'000'000;
  rp.snapshot_interval = interval;
  rp.history_ticks = 32;
  rp.interest = interest;
  replication::Replicator replicator(rp, world);

  util::SplitMix64 rng(7);
  std::vector<std::uint32_t> slots;
  std::vector<replication::ClientId> clients;
  std::vector<double> heading;
  for (std::uint32_t i = 0; i < players; ++i) {
    slots.push_back(world.spawn_player(fmt::format("bot-{}", i)));
    clients.push_back(replicator.add_client(slots.back()));
    heading.push_back(rng.u01() * 6.283185307179586);
  }
  // What each client received, by tick, so it can acknowledge it `lag` ticks later.
  std::deque<std::vector<std::uint32_t>> received;
  std::vector<std::uint32_t> got(players, 0);

  using clock = std::chrono::steady_clock;
  clock::duration timed{};
  std::uint64_t snapshots = 0, bytes = 0, records0 = 0;
  const replication::ReplicationStats& stats = replicator.stats();
  for (std::uint32_t t = 1; t <= warmup + ticks; ++t) {
    for (std::uint32_t i = 0; i < players; ++i) {
      if (rng.u01() < 0.05) heading[i] += rng.range(-1.5, 1.5);
      world.set_intent(slots[i], std::cos(heading[i]), std::sin(heading[i]));
    }
    world.step(0.05);
    const auto events = world.update_aoi();
    if (received.size() > lag) {
      const std::vector<std::uint32_t>& acks = received.front();
      for (std::uint32_t i = 0; i < players; ++i) {
        if (acks[i] != 0) replicator.acknowledge(clients[i], acks[i]);
      }
      received.pop_front();
    }
    std::fill(got.begin(), got.end(), 0);
    const bool measure = t > warmup;
    const std::uint64_t before_records = stats.spawns + stats.updates + stats.despawns;
    const auto start = clock::now();
    replicator.apply_events(t, events);
    replicator.replicate(t, [&](replication::ClientId c, std::span<const std::uint8_t> b) {
      got[c] = t;
      if (measure) bytes += b.size();
    });
    const auto end = clock::now();
    if (measure) {
      timed += end - start;
      records0 += stats.spawns + stats.updates + stats.despawns - before_records;
      for (std::uint32_t i = 0; i < players; ++i) snapshots += got[i] != 0;
    }
    received.push_back(got);
  }
  const double ns = static_cast<double>(std::chrono::nanoseconds(timed).count());
  Result r;
  r.ns_per_client_tick = ns / (static_cast<double>(players) * ticks);
  r.ns_per_snapshot = snapshots ? ns / static_cast<double>(snapshots) : 0.0;
  r.bytes_per_snapshot = snapshots ? static_cast<double>(bytes) / snapshots : 0.0;
  r.records_per_snapshot = snapshots ? static_cast<double>(records0) / snapshots : 0.0;
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"replication-bench: replicator cost per client, no network"};
  std::vector<std::uint32_t> players{1000, 2000, 5000, 8000};
  std::uint32_t ticks = 200, warmup = 100, lag = 2, interval = 2;
  app.add_option("--players", players, "player counts (comma separated)")->delimiter(',');
  replication::InterestParams interest;
  app.add_flag("--tiers", interest.tiers, "interest policy: distance tiers");
  app.add_option("--crowd", interest.crowd_threshold, "interest policy: crowd threshold K");
  app.add_flag("--cone", interest.cone, "interest policy: view cone");
  app.add_option("--ticks", ticks, "timed ticks")->capture_default_str();
  app.add_option("--warmup", warmup, "untimed ticks first")->capture_default_str();
  app.add_option("--ack-lag", lag, "ticks between receiving a snapshot and acknowledging it")
      ->capture_default_str();
  app.add_option("--interval", interval, "ticks between snapshots to one client")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  for (const std::uint32_t n : players) {
    const Result r = run(n, ticks, warmup, lag, interval, interest);
    fmt::print(
        "{{\"players\":{},\"ns_per_client_tick\":{:.0f},\"ns_per_snapshot\":{:.0f},"
        "\"bytes_per_snapshot\":{:.1f},\"records_per_snapshot\":{:.2f}}}\n",
        n, r.ns_per_client_tick, r.ns_per_snapshot, r.bytes_per_snapshot, r.records_per_snapshot);
  }
  return 0;
}
