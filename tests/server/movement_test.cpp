// Movement and replication over time: NPC deltas, despawns when walking away, and the
// server's authority over player movement (speed clamp, bad values, world bounds).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <map>
#include <vector>

#include "harness.hpp"
#include "test_util.hpp"

using namespace std::chrono_literals;
using namespace zone;

namespace {

struct Sample {
  std::uint32_t tick;
  std::int32_t x, y;  // self_state, cm
};

// Records the bot's own authoritative position on every frame it completes.
void record_self(test::Clients& clients, const client::Bot& bot, std::vector<Sample>& out) {
  clients.set_frame_observer([&bot, &out](client::Bot& b) {
    if (&b != &bot) return;
    const auto& s = test::self_of(b);
    out.push_back({b.replica().current().tick, s.x(), s.y()});
  });
}

void check_npc_deltas(config::NpcBehaviour behaviour) {
  net::EnetLibrary enet;
  config::ZoneConfig cfg = test::tiny_zone();
  cfg.npcs.count = 20;
  cfg.npcs.behaviour = behaviour;
  cfg.npcs.speed = 3.0;
  cfg.npcs.patrol_length = 8.0;
  cfg.npcs.idle_fraction = 0.2;
  cfg.network.client_bandwidth = 200'000;
  test::ServerThread server(cfg);
  test::Clients clients;
  client::Bot& bot = clients.add("watcher", server.port());

  std::map<std::uint32_t, replica::EntityState> first_seen;
  std::map<std::uint32_t, int> moved;  // frames in which the entity's position changed
  std::map<std::uint32_t, replica::EntityState> last;
  std::uint64_t frames = 0;
  clients.set_frame_observer([&](client::Bot& b) {
    ++frames;
    for (const replica::EntityState& e : b.replica().current().entities) {
      first_seen.emplace(e.id, e);
      auto it = last.find(e.id);
      if (it != last.end() && (it->second.x() != e.x() || it->second.y() != e.y())) ++moved[e.id];
      last.insert_or_assign(e.id, e);
    }
  });
  REQUIRE(clients.pump_until([&] { return bot.replica().frames_completed() > 0; }, 5s));
  clients.pump(3s);
  // Three seconds are 60 ticks; on a loaded machine (the whole suite on two cores) the
  // frames can lag behind: wait for them rather than count on the clock.
  clients.pump_until([&] { return frames > 60; }, 5s);

  const replica::FrameReplica& r = bot.replica();
  CHECK(frames > 60);
  for (const auto& v : r.violations()) {
    FAIL_CHECK("violation: ", replica::to_string(v.kind), " tick ", v.server_tick, " entity ",
               v.entity_id);
  }
  // Every NPC is always in view here: each enters exactly once and never leaves.
  CHECK(first_seen.size() == cfg.npcs.count);
  CHECK(r.current().entities.size() == cfg.npcs.count);
  CHECK(r.enters() == cfg.npcs.count);
  CHECK(r.leaves() == 0);
  // They walk, and the client sees them walk: most change position over many frames.
  std::size_t movers = 0;
  for (const auto& [id, n] : moved) {
    if (n >= 10) ++movers;
  }
  CHECK(movers >= cfg.npcs.count / 2);
  std::size_t displaced = 0;
  for (const auto& [id, s] : first_seen) {
    const auto now = r.find(id);
    if (now != nullptr && test::distance_m(s, *now) > 1.0) ++displaced;
  }
  CHECK(displaced >= cfg.npcs.count / 2);

  const std::uint32_t frame_tick = r.current().tick;
  ZoneServer& zone = server.stop();
  // Deltas applied on the client add up to the server's positions: each replicated NPC is
  // within what it can have walked since the client's newest frame.
  const std::uint32_t behind = zone.current_tick() - frame_tick;
  const double tolerance = cfg.npcs.speed * (behind + 1) / cfg.tick.rate_hz + 0.02;
  for (const replica::EntityState& e : r.current().entities) {
    const world::Entity* truth = zone.world().find(e.id);
    REQUIRE(truth != nullptr);
    const double err = std::hypot(test::metres(e.x()) - truth->x, test::metres(e.y()) - truth->y);
    CHECK_MESSAGE(err <= tolerance, "entity ", e.id, " off by ", err, " m (", behind,
                  " ticks behind)");
  }
  // Spawns are not repeated once acknowledged: no full resyncs, and the number of spawn
  // records sent stays a small multiple of the NPCs (re-sent only until acknowledged).
  CHECK(zone.replicator().stats().full_resyncs == 0);
  CHECK(zone.replicator().stats().spawns <= 10 * cfg.npcs.count);
  CHECK(zone.replicator().stats().updates > 20 * cfg.npcs.count);
}

}  // namespace

TEST_CASE("movement: wandering NPCs in view are replicated as deltas, each spawned once") {
  check_npc_deltas(config::NpcBehaviour::kWander);
}

TEST_CASE("movement: patrolling NPCs in view are replicated as deltas, each spawned once") {
  check_npc_deltas(config::NpcBehaviour::kPatrol);
}

TEST_CASE("movement: walking away despawns entities, and nothing far away is ever held") {
  net::EnetLibrary enet;
  config::ZoneConfig cfg = test::small_zone();
  cfg.world = {0.0, 0.0, 400.0, 100.0};
  cfg.npcs.count = 200;
  cfg.npcs.behaviour = config::NpcBehaviour::kIdle;
  cfg.players.max_speed = 20.0;
  test::ServerThread server(cfg);
  test::Clients clients;
  client::Bot& bot = clients.add("walker", server.port());
  REQUIRE(clients.pump_until([&] { return bot.replica().frames_completed() > 5; }, 5s));

  const double max_step = cfg.players.max_speed / cfg.tick.rate_hz;
  const double limit = cfg.aoi.view_radius + cfg.aoi.hysteresis + 2.0 * max_step + 0.03;
  std::uint64_t frames_checked = 0;
  double worst = 0.0;
  clients.set_frame_observer([&](client::Bot& b) {
    ++frames_checked;
    const replica::EntityState& self = test::self_of(b);
    for (const replica::EntityState& e : b.replica().current().entities) {
      const double d = test::distance_m(e, self);
      worst = std::max(worst, d);
      if (d > limit) {
        FAIL_CHECK("tick ", b.replica().current().tick, ": entity ", e.id, " held at ", d,
                   " m (limit ", limit, " m)");
      }
    }
  });

  const double start_x = test::metres(test::self_of(bot).x());
  const float dir = start_x < 200.0 ? 1.0f : -1.0f;  // toward the far side: 200 m of room
  // 50 m at 20 m/s: about 2.5 s.
  CHECK(clients.pump_until(
      [&] { return std::abs(test::metres(test::self_of(bot).x()) - start_x) >= 50.0; }, 6s,
      [&](client::Bot&) {
        return std::pair{dir, 0.0f};
      }));
  const double end_x = test::metres(test::self_of(bot).x());
  CHECK(frames_checked > 60);
  CHECK(bot.replica().leaves() > 0);
  CHECK(bot.replica().enters() > bot.replica().leaves());
  CHECK(bot.replica().violations().empty());
  MESSAGE("walked ", std::abs(end_x - start_x), " m; enters ", bot.replica().enters(), " leaves ",
          bot.replica().leaves(), "; farthest entity held ", worst, " m");

  // Standing still, the replica settles on exactly the server's view.
  clients.pump(500ms);
  clients.set_frame_observer(nullptr);
  ZoneServer& zone = server.stop();
  const world::Entity* self = zone.world().find(bot.welcome().entity_id);
  REQUIRE(self != nullptr);
  CHECK(test::self_of(bot).x() == protocol::quantize_position(self->x));
  zone.world().for_each_entity([&](std::uint32_t, const world::Entity& e) {
    if (e.id == self->id) return;
    const double d = std::hypot(e.x - self->x, e.y - self->y);
    const bool held = bot.replica().find(e.id) != nullptr;
    if (d <= cfg.aoi.view_radius) CHECK_MESSAGE(held, "entity ", e.id, " at ", d, " m missing");
    if (d > cfg.aoi.view_radius + cfg.aoi.hysteresis) {
      CHECK_MESSAGE(!held, "entity ", e.id, " at ", d, " m still held");
    }
  });
}

TEST_CASE("movement: an intent longer than 1 is clamped to the maximum speed") {
  net::EnetLibrary enet;
  config::ZoneConfig cfg = test::small_zone();
  cfg.world = {0.0, 0.0, 400.0, 400.0};
  cfg.npcs.count = 0;
  cfg.players.max_speed = 7.0;
  test::ServerThread server(cfg);
  test::Clients clients;
  client::Bot& bot = clients.add("runner", server.port());
  REQUIRE(clients.pump_until([&] { return bot.replica().frames_completed() > 5; }, 5s));
  clients.pump(100ms);

  const auto& s0 = test::self_of(bot);
  const std::int32_t x0 = s0.x(), y0 = s0.y();
  const float dx = test::metres(x0) < 200.0 ? 1.0f : -1.0f;  // toward the middle
  const float dy = test::metres(y0) < 200.0 ? 1.0f : -1.0f;
  const double per_tick = cfg.players.max_speed / cfg.tick.rate_hz;

  // Checks the samples taken while the intent was held: from the first frame that shows
  // movement on, displacement is max_speed per tick (it is clamped, not 5x faster, and
  // not slower either).
  const auto check_speed = [&](const std::vector<Sample>& samples, std::int32_t fx,
                               std::int32_t fy) {
    std::size_t k0 = 0;
    while (k0 < samples.size() && samples[k0].x == fx && samples[k0].y == fy) ++k0;
    REQUIRE(k0 + 20 < samples.size());
    for (std::size_t k = k0 + 1; k < samples.size(); ++k) {
      const double step =
          std::hypot(samples[k].x - samples[k - 1].x, samples[k].y - samples[k - 1].y) *
          protocol::kPositionStep;
      const std::uint32_t ticks = samples[k].tick - samples[k - 1].tick;
      CHECK_MESSAGE(step <= per_tick * ticks + 0.03, "tick ", samples[k].tick, ": moved ", step,
                    " m in ", ticks, " ticks");
    }
    const Sample& a = samples[k0];
    const Sample& b = samples.back();
    const double moved = std::hypot(b.x - a.x, b.y - a.y) * protocol::kPositionStep;
    const double expected = per_tick * (b.tick - a.tick);
    CHECK(std::abs(moved - expected) <= 0.03);
  };

  std::vector<Sample> samples;
  record_self(clients, bot, samples);
  const auto t0 = std::chrono::steady_clock::now();
  clients.pump(1500ms, [&](client::Bot&) { return std::pair{5.0f * dx, 0.0f}; });
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  {
    const auto& s = test::self_of(bot);
    const double moved = std::abs(test::metres(s.x()) - test::metres(x0));
    // At most max_speed for the time the intent was held, plus a tick of slack.
    CHECK(moved <= cfg.players.max_speed * wall + per_tick + 0.02);
    CHECK(moved >= 0.5 * cfg.players.max_speed * 1.5);
    CHECK(s.y() == y0);  // straight along x
    check_speed(samples, x0, y0);
  }

  // A diagonal intent of length 5: the speed along the diagonal is clamped as well.
  clients.pump(200ms);  // stop
  const std::int32_t x1 = test::self_of(bot).x(), y1 = test::self_of(bot).y();
  samples.clear();
  clients.pump(1000ms, [&](client::Bot&) { return std::pair{3.0f * dx, 4.0f * dy}; });
  check_speed(samples, x1, y1);
  const auto& s2 = test::self_of(bot);
  // Direction kept: (0.6, 0.8).
  const double mx = (s2.x() - x1) * dx, my = (s2.y() - y1) * dy;
  CHECK(mx > 0.0);
  CHECK(my / mx == doctest::Approx(4.0 / 3.0).epsilon(0.02));
  CHECK(bot.replica().violations().empty());
  clients.set_frame_observer(nullptr);
  server.stop();
}

TEST_CASE("movement: non-finite and absurd intents are dropped and do not move the player") {
  net::EnetLibrary enet;
  config::ZoneConfig cfg = test::small_zone();
  cfg.world = {0.0, 0.0, 400.0, 400.0};
  cfg.npcs.count = 0;
  cfg.limits.max_bad_packets = 100;
  cfg.log.level = config::LogLevel::kError;
  test::ServerThread server(cfg);
  test::Clients clients;
  client::Bot& bot = clients.add("cheater", server.port());
  REQUIRE(clients.pump_until([&] { return bot.replica().frames_completed() > 5; }, 5s));
  clients.pump(100ms);
  // From here on the test sends this bot's inputs itself, reliably, so none is lost.
  clients.mute(bot);
  clients.pump(100ms);
  const std::int32_t x0 = test::self_of(bot).x(), y0 = test::self_of(bot).y();
  const float dir = test::metres(x0) < 200.0 ? 1.0f : -1.0f;

  constexpr float kInf = std::numeric_limits<float>::infinity();
  const float kNaN = std::numeric_limits<float>::quiet_NaN();
  const std::vector<std::pair<float, float>> bad = {
      {kNaN, 0.0f},        {0.0f, kNaN},   {kInf, 0.0f},        {0.0f, -kInf},
      {17.0f * dir, 0.0f}, {0.0f, -16.5f}, {1e30f * dir, 0.0f}, {-kNaN, kInf},
  };
  std::uint32_t seq = bot.input_sequence() + 1000;
  for (const auto& [mx, my] : bad) {
    REQUIRE(test::send_bytes(clients, bot.peer(),
                             test::input_packet(++seq, mx, my, bot.replica().ack_tick()),
                             net::Delivery::kReliable, test::kInputChannel));
  }
  clients.pump(500ms);
  CHECK(test::self_of(bot).x() == x0);
  CHECK(test::self_of(bot).y() == y0);
  CHECK(bot.phase() == client::Bot::Phase::kPlaying);
  CHECK(bot.replica().last_input_sequence() < bot.input_sequence() + 1000);

  // The same channel carries a legal intent fine: a component of exactly 16 is accepted
  // (and clamped), so the absence of movement above was the server's doing.
  REQUIRE(test::send_bytes(clients, bot.peer(),
                           test::input_packet(++seq, 16.0f * dir, 0.0f, bot.replica().ack_tick()),
                           net::Delivery::kReliable, test::kInputChannel));
  CHECK(clients.pump_until([&] { return test::self_of(bot).x() != x0; }, 2s));
  CHECK(bot.replica().last_input_sequence() == seq);

  ZoneServer& zone = server.stop();
  CHECK(test::drops(zone, DropReason::kBadValue) == bad.size());
  CHECK(zone.players() == 1);
}

TEST_CASE("movement: a player pushing against the world's edge stays inside it") {
  net::EnetLibrary enet;
  config::ZoneConfig cfg = test::small_zone();
  cfg.world = {-20.0, 10.0, 20.0, 50.0};
  cfg.npcs.count = 0;
  cfg.players.max_speed = 100.0;  // crosses the 40 x 40 m world diagonally in 0.6 s
  test::ServerThread server(cfg);
  test::Clients clients;
  client::Bot& bot = clients.add("pusher", server.port());
  REQUIRE(clients.pump_until([&] { return bot.replica().frames_completed() > 5; }, 5s));

  const std::int32_t min_x = protocol::quantize_position(cfg.world.min_x);
  const std::int32_t max_x = protocol::quantize_position(cfg.world.max_x);
  const std::int32_t min_y = protocol::quantize_position(cfg.world.min_y);
  const std::int32_t max_y = protocol::quantize_position(cfg.world.max_y);
  std::uint64_t outside = 0;
  clients.set_frame_observer([&](client::Bot& b) {
    const auto& s = test::self_of(b);
    if (s.x() < min_x || s.x() > max_x || s.y() < min_y || s.y() > max_y) {
      ++outside;
      FAIL_CHECK("tick ", b.replica().current().tick, ": player at (", s.x(), ", ", s.y(),
                 ") cm, outside the world");
    }
  });
  // Pushes toward a corner until the player stands in it, then keeps pushing a while.
  const auto push = [&](float mx, float my, std::int32_t cx, std::int32_t cy) {
    const auto intent = [&](client::Bot&) { return std::pair{mx, my}; };
    const bool reached = clients.pump_until(
        [&] { return test::self_of(bot).x() == cx && test::self_of(bot).y() == cy; }, 3s, intent);
    clients.pump(300ms, intent);
    return reached;
  };
  CHECK(push(-1.0f, -1.0f, min_x, min_y));
  CHECK(push(1.0f, 1.0f, max_x, max_y));
  CHECK(push(-1.0f, 0.0f, min_x, max_y));  // along the north edge into the corner
  // Huge but legal intents (clamped to length 1) do not overshoot either.
  CHECK(push(16.0f, -16.0f, max_x, min_y));
  CHECK(test::self_of(bot).x() == max_x);
  CHECK(test::self_of(bot).y() == min_y);
  CHECK(outside == 0);
  CHECK(bot.replica().violations().empty());

  clients.set_frame_observer(nullptr);
  ZoneServer& zone = server.stop();
  const world::Entity* self = zone.world().find(bot.welcome().entity_id);
  REQUIRE(self != nullptr);
  CHECK(self->x >= cfg.world.min_x);
  CHECK(self->x <= cfg.world.max_x);
  CHECK(self->y >= cfg.world.min_y);
  CHECK(self->y <= cfg.world.max_y);
}
