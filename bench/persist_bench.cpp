// persist-bench: the character store's throughput and what it costs the tick
// (docs/persistence.md, docs/benchmarks.md "Character store").
//
// 1. Saves per second: `--players` characters saved `--rounds` times over, each round
//    queued at once and flushed: the writer thread's rate into SQLite (WAL, synchronous
//    FULL), one transaction per batch. With `--postgres CONNINFO` the same rounds into
//    PostgreSQL too, in the same run (every row claimed first, each save conditional on
//    the claim), and the ratio of the two rates.
// 2. The tick's cost: a real World of `--players` players, CharacterStore::checkpoint at
//    `--rate` Hz with a checkpoint every `--checkpoint` seconds (the zone's own call),
//    timed per tick: (a) with the writer committing, (b) with the writer stuck on a lock
//    another connection holds (a database that stopped answering). If the tick waited on
//    the writer, (b) would show it.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <random>
#include <thread>
#include <vector>

#include "config/game_data.hpp"
#include "persist/sqlite_store.hpp"
#include "persist/writer.hpp"
#include "zone/character_store.hpp"
#include "zone/game_params.hpp"
#include "zone/zone_params.hpp"

using Clock = std::chrono::steady_clock;
using namespace zone;

namespace {

struct Options {
  std::uint32_t players = 5000;
  std::uint32_t rounds = 10;
  std::uint32_t rate = 20;
  std::uint32_t checkpoint = 1;
  double seconds = 5.0;
  std::string dir;
  std::string postgres;  // a libpq connection string; empty: SQLite only
  bool saves_only = false;
};

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * (v.size() - 1) + 0.5))];
}

persist::CharacterRecord record(std::uint32_t i, std::uint32_t round) {
  persist::CharacterRecord r;
  r.key = persist::character_key(i + 1, "");
  r.type = "player";
  r.x = i * 0.25 + round;
  r.y = round * 0.5;
  r.properties = {{"health", 100 - static_cast<std::int64_t>(round)}, {"level", 3}, {"xp", i}};
  r.party_key = i / 5 + 1;
  return r;
}

// Saves per second into the store `params` opens: every character written once first
// (untimed: with PostgreSQL that claims the rows), then `rounds` timed rounds of updates.
double saves_per_second(const Options& o, const persist::WriterParams& params, const char* name) {
  std::string error;
  auto w = persist::Writer::start(params, error);
  if (!w) throw std::runtime_error(error);
  for (std::uint32_t i = 0; i < o.players; ++i) w->arrive(record(i, 0));
  w->flush(Clock::now() + std::chrono::minutes(5));
  const persist::WriterStats before = w->stats();
  const auto start = Clock::now();
  for (std::uint32_t round = 1; round <= o.rounds; ++round) {
    for (std::uint32_t i = 0; i < o.players; ++i) w->save(record(i, round), false);
    w->flush(Clock::now() + std::chrono::minutes(5));
  }
  const double took = std::chrono::duration<double>(Clock::now() - start).count();
  const persist::WriterStats s = w->stats();
  const std::uint64_t saves = s.saves_committed - before.saves_committed;
  const std::uint64_t flushes = s.flushes - before.flushes;
  if (s.saves_stale != 0 || s.save_failures != 0) {
    throw std::runtime_error(fmt::format("{}: {} stale saves, {} failed transactions", name,
                                         s.saves_stale, s.save_failures));
  }
  fmt::print(
      "saves ({}): {} committed in {} transactions, {:.2f} s: {:.0f} saves/s ({:.1f} per "
      "transaction)\n",
      name, saves, flushes, took, saves / took,
      static_cast<double>(saves) / std::max<std::uint64_t>(1, flushes));
  return saves / took;
}

void saves_per_second(const Options& o) {
  persist::WriterParams sqlite{.path = o.dir + "/throughput.sqlite3", .max_queue = o.players * 2};
  const double lite = saves_per_second(o, sqlite, "SQLite");
  if (o.postgres.empty()) return;
  persist::WriterParams pg{.backend = persist::Backend::kPostgres,
                           .conninfo = o.postgres,
                           .owner = "persist-bench",
                           .max_queue = o.players * 2};
  const double post = saves_per_second(o, pg, "PostgreSQL");
  fmt::print("saves: PostgreSQL / SQLite = {:.2f}\n", post / lite);
}

double thread_cpu_us() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

struct TickCosts {
  std::vector<double> wall;     // microseconds per tick
  std::vector<double> off_cpu;  // wall less the thread's CPU time: blocked or preempted
};

// Times CharacterStore::checkpoint per tick for o.seconds at o.rate Hz.
TickCosts tick_costs(const Options& o, CharacterStore& store, const world::World& w) {
  TickCosts costs;
  const auto period = std::chrono::nanoseconds(1'000'000'000LL / o.rate);
  auto next = Clock::now();
  const auto end = next + std::chrono::duration<double>(o.seconds);
  for (std::uint32_t tick = 1; Clock::now() < end; ++tick) {
    const auto t0 = Clock::now();
    const double cpu0 = thread_cpu_us();
    store.checkpoint(w, tick);
    const double wall = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    costs.wall.push_back(wall);
    costs.off_cpu.push_back(std::max(0.0, wall - (thread_cpu_us() - cpu0)));
    next += period;
    std::this_thread::sleep_until(next);
  }
  return costs;
}

void report(const char* what, const TickCosts& t, const CharacterStore& store) {
  const persist::WriterStats s = store.stats();
  const std::vector<double>& c = t.wall;
  fmt::print(
      "tick cost of the checkpoint, {}: {} ticks, p50 {:.1f} us, p99 {:.1f} us, max "
      "{:.1f} us; off the CPU (blocked or preempted) p50 {:.1f} us, p99 {:.1f} us | "
      "saves committed {}, queue {}, failures {}\n",
      what, c.size(), percentile(c, 0.5), percentile(c, 0.99),
      c.empty() ? 0.0 : *std::max_element(c.begin(), c.end()), percentile(t.off_cpu, 0.5),
      percentile(t.off_cpu, 0.99), s.saves_committed, s.queue_depth, s.save_failures);
}

void tick_cost(const Options& o) {
  config::ZoneConfig c;
  c.npcs.count = 0;
  c.players.max_players = o.players;
  c.world = {0.0, 0.0, 4000.0, 4000.0};
  c.tick.rate_hz = o.rate;
  c.persist.path = o.dir + "/tick.sqlite3";
  c.persist.checkpoint_seconds = o.checkpoint;
  c.persist.max_queue = o.players * 2;
  world::WorldParams p = make_world_params(c, 0, 0.0, {});
  const config::GameDataResult game =
      config::load_game_data_file(ZONE_SOURCE_DIR "/configs/game/game.yaml");
  if (!game.ok()) throw std::runtime_error(game.error_report());
  p.game = make_game_types(game.data);
  world::World w(p);
  for (std::uint32_t i = 0; i < o.players; ++i) {
    const std::uint32_t slot = w.spawn_player("p" + std::to_string(i));
    w.set_login(slot, i + 1, i + 1);
  }
  Logger log(config::LogLevel::kWarn);
  auto store = CharacterStore::open(c, w, log);
  report("writer committing", tick_costs(o, *store, w), *store);
  // Another connection takes the write lock: every flush now waits its busy timeout and
  // fails; the queue fills with the checkpoints (coalesced per character).
  std::string error;
  auto holder = persist::SqliteStore::open(c.persist.path, 10, error);
  if (!holder || !persist::hold_write_lock_for_test(*holder, true).ok) {
    throw std::runtime_error("cannot lock: " + error);
  }
  report("writer stuck on a locked database", tick_costs(o, *store, w), *store);
  persist::hold_write_lock_for_test(*holder, false);
  store->flush(Clock::now() + std::chrono::minutes(1));
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"persist-bench: the character store's saves per second and its cost to the tick"};
  app.add_option("--players", o.players, "characters");
  app.add_option("--rounds", o.rounds, "rounds of saves of every character (throughput)");
  app.add_option("--rate", o.rate, "tick rate (Hz)");
  app.add_option("--checkpoint", o.checkpoint, "checkpoint interval (seconds)");
  app.add_option("--seconds", o.seconds, "seconds of ticks per tick-cost run");
  app.add_option("--postgres", o.postgres,
                 "a libpq connection string: measure saves per second into PostgreSQL too");
  app.add_flag("--saves-only", o.saves_only, "only the saves per second, not the tick's cost");
  CLI11_PARSE(app, argc, argv);
  std::random_device rd;
  o.dir =
      (std::filesystem::temp_directory_path() / ("persist-bench-" + std::to_string(rd()))).string();
  std::filesystem::create_directories(o.dir);
  try {
    saves_per_second(o);
    if (!o.saves_only) tick_cost(o);
  } catch (const std::exception& e) {
    fmt::print(stderr, "persist-bench: {}\n", e.what());
    std::filesystem::remove_all(o.dir);
    return 1;
  }
  std::filesystem::remove_all(o.dir);
  return 0;
}
