// Replicator + World end to end without a network (tests/replication/loopback.hpp): the
// bytes the replicator sends go through the verified parser into a FrameReplica, and
// the replica is compared with the world's ground truth every tick.
#include <doctest/doctest.h>

#include "protocol/quantize.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "loopback.hpp"

using namespace zone;
using test::Loopback;
using test::LoopClient;

namespace {

replication::ReplicationParams rparams(std::uint32_t bandwidth = 16000,
                                       std::uint32_t max_packet = 1200) {
  replication::ReplicationParams p;
  p.tick_rate = 20;
  p.max_packet_bytes = max_packet;
  p.client_bandwidth = bandwidth;
  p.snapshot_interval = 1;
  p.history_ticks = 32;
  return p;
}

// A world small enough that one view radius covers all of it.
world::WorldParams open_world(std::uint32_t npcs, double size = 60.0, double radius = 100.0) {
  world::WorldParams p = test::small_world(npcs);
  p.grid.bounds = {{0.0, 0.0}, {size, size}};
  p.player_view_radius = radius;
  return p;
}

// Walks a player through a fixed tour of the world at full speed.
struct Tour {
  std::vector<std::pair<double, double>> points;
  std::size_t next = 0;
  void steer(world::World& w, std::uint32_t slot) {
    const world::Entity& e = w.entity(slot);
    auto [tx, ty] = points[next % points.size()];
    double dx = tx - e.x, dy = ty - e.y;
    if (std::hypot(dx, dy) < 1.0) {
      ++next;
      std::tie(tx, ty) = points[next % points.size()];
      dx = tx - e.x;
      dy = ty - e.y;
    }
    const double len = std::max(1e-9, std::hypot(dx, dy));
    w.set_intent(slot, dx / len, dy / len);
  }
};

Tour square_tour(double lo, double hi) {
  return Tour{{{lo, lo}, {hi, lo}, {hi, hi}, {lo, hi}}};
}

std::size_t bytes_sent(const LoopClient& c) {
  std::size_t n = 0;
  for (const std::size_t s : c.sizes) n += s;
  return n;
}

std::string violations_of(const LoopClient& c) {
  std::string s;
  for (const auto& v : c.replica.violations()) {
    s += std::string(replica::to_string(v.kind)) + " tick " + std::to_string(v.server_tick) +
         " id " + std::to_string(v.entity_id) + "; ";
  }
  return s;
}

// The checks every scenario ends with.
void check_clean(const Loopback& lb, const LoopClient& c) {
  CHECK_MESSAGE(c.replica.violations().empty(), violations_of(c));
  CHECK(c.max_packet <= lb.params.max_packet_bytes);
  CHECK(c.malformed == 0);
  CHECK(c.bad_acks == 0);
  CHECK(lb.stray_packets == 0);
}

}  // namespace

TEST_CASE("replicator: replica converges to exactly the AOI view with quantised positions") {
  Loopback lb(test::small_world(400), rparams(64000));
  LoopClient& a = lb.connect("alice");
  LoopClient& b = lb.connect("bob");
  lb.world.spawn_player("observer-without-client");
  Tour ta = square_tour(20.0, 180.0);
  Tour tb = square_tour(60.0, 140.0);
  tb.next = 2;
  int mismatched_ticks = 0;
  std::string first_mismatch;
  for (int t = 1; t <= 300; ++t) {
    ta.steer(lb.world, a.slot);
    tb.steer(lb.world, b.slot);
    lb.step();
    if (t < 5) continue;  // the first full frames may be spread over a few ticks
    for (const LoopClient* c : {&a, &b}) {
      const std::string d = lb.diff(*c);
      const std::string g = lb.geometry(*c);
      if (!d.empty() || !g.empty() || c->replica.ack_tick() != lb.tick || !lb.self_ok(*c)) {
        if (mismatched_ticks++ == 0) first_mismatch = d + g;
      }
    }
  }
  CHECK_MESSAGE(mismatched_ticks == 0, first_mismatch);
  for (const LoopClient* c : {&a, &b}) {
    check_clean(lb, *c);
    // The tour really changed the view many times.
    CHECK(c->replica.enters() > 50);
    CHECK(c->replica.leaves() > 30);
    CHECK(c->replica.find(c->entity) == nullptr);
    for (const auto& e : c->replica.current().entities) {
      const world::Entity* we = lb.world.find(e.id());
      REQUIRE(we != nullptr);
      CHECK(c->replica.name_of(e.id()) == we->name);
    }
  }
  CHECK(lb.rep.stats().deferred == 0);
}

TEST_CASE("replicator: other players are replicated as players with their names") {
  Loopback lb(open_world(5), rparams());
  LoopClient& a = lb.connect("alice");
  LoopClient& b = lb.connect("bob");
  lb.run(3);
  const protocol::EntityState* seen_b = a.replica.find(b.entity);
  const protocol::EntityState* seen_a = b.replica.find(a.entity);
  REQUIRE(seen_b != nullptr);
  REQUIRE(seen_a != nullptr);
  CHECK(seen_b->kind() == protocol::EntityKind::Player);
  CHECK(a.replica.name_of(b.entity) == "bob");
  CHECK(b.replica.name_of(a.entity) == "alice");
  CHECK(a.replica.current().entities.size() == 6);
  CHECK(a.replica.self_state().id() == a.entity);
  CHECK(a.replica.self_state().kind() == protocol::EntityKind::Player);
  lb.world.set_intent(b.slot, 1.0, 0.0);
  lb.step();
  CHECK(a.replica.find(b.entity)->move_state() == protocol::MoveState::Walking);
  CHECK(b.replica.self_state().move_state() == protocol::MoveState::Walking);
  CHECK(lb.diff(a).empty());
  CHECK(lb.self_ok(b));
  check_clean(lb, a);
  check_clean(lb, b);
}

TEST_CASE("replicator: a client that never acknowledges gets correct full frames") {
  Loopback lb(test::small_world(400), rparams(100'000'000));
  LoopClient& a = lb.connect("silent");
  a.acks = false;
  Tour tour = square_tour(30.0, 170.0);
  int bad = 0;
  std::string first;
  std::size_t multi_part = 0;
  for (int t = 1; t <= 150; ++t) {
    tour.steer(lb.world, a.slot);
    lb.step();
    REQUIRE(!a.sent.empty());
    if (a.sent.size() > 1) ++multi_part;
    std::size_t spawns = 0;
    for (const test::SnapshotSpec& s : a.sent) {
      if (s.baseline != 0 || !s.moves.empty() || !s.teleports.empty() || !s.headings.empty() ||
          !s.healths.empty() || !s.despawns.empty() || s.part_count != a.sent.size()) {
        ++bad;
        if (first.empty()) first = "tick " + std::to_string(t) + ": not a full frame";
      }
      spawns += s.spawns.size();
    }
    const std::string d = lb.diff(a);
    if (spawns != lb.truth(a).size() || !d.empty() || a.replica.ack_tick() != lb.tick) {
      ++bad;
      if (first.empty()) first = "tick " + std::to_string(t) + ": " + d;
    }
  }
  CHECK_MESSAGE(bad == 0, first);
  CHECK(multi_part > 0);  // crowded enough that full frames need several parts
  CHECK(a.replica.frames_completed() == 150);
  CHECK(lb.rep.client(a.id).acked_tick == 0);
  check_clean(lb, a);
}

TEST_CASE("replicator: acknowledged baselines make snapshots small deltas") {
  Loopback lb(open_world(40), rparams());
  LoopClient& a = lb.connect("acker");
  const std::uint32_t other = lb.world.spawn_player("walker");
  lb.run(10);
  REQUIRE(lb.diff(a).empty());
  // Size of a full frame of this view, for comparison.
  std::size_t full = 0;
  {
    Loopback fresh(open_world(40), rparams());
    LoopClient& f = fresh.connect("acker");
    fresh.world.spawn_player("walker");
    f.acks = false;
    fresh.step();
    full = bytes_sent(f);
  }
  REQUIRE(full > 0);
  for (int t = 0; t < 20; ++t) {
    lb.step();
    REQUIRE(a.sent.size() == 1);
    const test::SnapshotSpec& s = a.sent[0];
    CHECK(s.baseline == a.acked_before_tick);
    CHECK(s.baseline == lb.tick - 1);
    CHECK(s.records() == 0);  // nothing changed
    CHECK(a.sizes[0] <= replication::SnapshotWriter::kPartOverhead);
    CHECK(a.sizes[0] * 4 < full);
  }
  // One entity starts walking: only its changes are sent.
  const world::EntityId walker = lb.world.entity(other).id;
  lb.world.set_intent(other, 1.0, 0.0);
  for (int t = 0; t < 10; ++t) {
    lb.step();
    REQUIRE(a.sent.size() == 1);
    const test::SnapshotSpec& s = a.sent[0];
    CHECK(s.baseline == lb.tick - 1);
    CHECK(s.spawns.empty());
    CHECK(s.despawns.empty());
    if (lb.world.entity(other).x < 59.0) {
      REQUIRE(s.moves.size() == 1);
      CHECK(s.moves[0].id() == walker);
      CHECK(s.moves[0].dx() == 35);  // 7 m/s for 50 ms
      CHECK(s.moves[0].dy() == 0);
      // The move carries the heading and the Idle -> Walking change with it.
      CHECK(s.moves[0].move_state() == protocol::MoveState::Walking);
      CHECK(s.moves[0].heading() == protocol::quantize_heading(0.0));
    }
    CHECK(s.headings.empty());
    CHECK(a.sizes[0] <= replication::SnapshotWriter::kPartOverhead + 16);
    CHECK(lb.diff(a).empty());
  }
  check_clean(lb, a);
  CHECK(lb.rep.stats().full_resyncs == 0);
}

namespace {

// Three moving clients among wandering NPCs; 30% of packets lost for 400 ticks, then
// none. Returns the share of frames that needed several parts.
double lossy_run(std::uint64_t seed, double view_radius, std::uint32_t bandwidth) {
  CAPTURE(seed);
  CAPTURE(view_radius);
  world::WorldParams wp = test::small_world(300, world::NpcBehaviour::kWander);
  wp.player_view_radius = view_radius;
  Loopback lb(wp, rparams(bandwidth), seed);
  std::vector<LoopClient*> cs = {&lb.connect("p1"), &lb.connect("p2"), &lb.connect("p3")};
  std::vector<Tour> tours = {square_tour(20.0, 180.0), square_tour(50.0, 150.0),
                             square_tour(80.0, 120.0)};
  lb.loss = 0.3;
  int bad_baselines = 0;
  std::size_t frames = 0, split = 0;
  for (int t = 1; t <= 400; ++t) {
    for (std::size_t k = 0; k < cs.size(); ++k) tours[k].steer(lb.world, cs[k]->slot);
    lb.step();
    for (const LoopClient* c : cs) {
      ++frames;
      if (c->sent.size() > 1) ++split;
      for (const test::SnapshotSpec& s : c->sent) {
        // Every snapshot is built on the client's acknowledged frame, or on nothing.
        if (s.baseline != 0 && s.baseline != c->acked_before_tick) ++bad_baselines;
      }
    }
  }
  CHECK(bad_baselines == 0);
  for (const LoopClient* c : cs) {
    CHECK(c->dropped > c->packets / 5);  // the loss really happened
    CHECK(c->replica.frames_completed() > 100);
  }
  lb.loss = 0.0;
  std::vector<int> clean_streak(cs.size(), 0);
  for (int t = 0; t < 60; ++t) {
    for (std::size_t k = 0; k < cs.size(); ++k) tours[k].steer(lb.world, cs[k]->slot);
    lb.step();
    for (std::size_t k = 0; k < cs.size(); ++k) {
      const bool ok = lb.diff(*cs[k]).empty() && lb.geometry(*cs[k]).empty() &&
                      cs[k]->replica.ack_tick() == lb.tick && lb.self_ok(*cs[k]);
      clean_streak[k] = ok ? clean_streak[k] + 1 : 0;
    }
  }
  for (std::size_t k = 0; k < cs.size(); ++k) {
    CAPTURE(k);
    CHECK_MESSAGE(clean_streak[k] >= 40, lb.diff(*cs[k]));
    check_clean(lb, *cs[k]);
  }
  return static_cast<double>(split) / static_cast<double>(frames);
}

}  // namespace

TEST_CASE(
    "replicator: 30% packet loss with acks of complete frames only converges without violations") {
  for (const std::uint64_t seed : {4242u, 1u, 77u}) lossy_run(seed, 30.0, 16000);
  // A wide view: most frames are split into parts, so losing any part loses the frame.
  CHECK(lossy_run(2025, 70.0, 2'000'000) > 0.5);
}

TEST_CASE("replicator: a tiny budget spreads spawns over ticks nearest first and loses none") {
  constexpr std::uint32_t kBandwidth = 4000;  // 200 bytes per tick at 20 Hz
  constexpr std::uint32_t kNpcs = 60;
  Loopback lb(open_world(kNpcs), rparams(kBandwidth, 576));
  LoopClient& a = lb.connect("poor");
  std::set<std::uint32_t> have;
  std::vector<std::size_t> per_tick;
  int order_violations = 0;
  std::string first;
  std::size_t total_bytes = 0;
  int ticks = 0;
  for (; ticks < 300 && have.size() < kNpcs; ++ticks) {
    lb.step();
    total_bytes += bytes_sent(a);
    const world::Entity& self = lb.world.entity(a.slot);
    auto dist = [&](std::uint32_t id) {
      const world::Entity* e = lb.world.find(id);
      return std::hypot(e->x - self.x, e->y - self.y);
    };
    std::vector<std::uint32_t> fresh;
    for (const auto& e : a.replica.current().entities) {
      if (!have.count(e.id())) fresh.push_back(e.id());
    }
    if (fresh.empty()) continue;
    per_tick.push_back(fresh.size());
    double farthest_new = 0.0;
    for (const std::uint32_t id : fresh) farthest_new = std::max(farthest_new, dist(id));
    for (const std::uint32_t id : fresh) have.insert(id);
    // Nothing still waiting is nearer than what was just sent.
    lb.world.for_each_entity([&](std::uint32_t slot, const world::Entity& e) {
      if (slot == a.slot || have.count(e.id)) return;
      if (dist(e.id) + 1e-6 < farthest_new) {
        if (order_violations++ == 0) {
          first = "tick " + std::to_string(lb.tick) + ": entity " + std::to_string(e.id) + " at " +
                  std::to_string(dist(e.id)) + " m waits while one at " +
                  std::to_string(farthest_new) + " m was sent";
        }
      }
    });
  }
  CHECK(have.size() == kNpcs);  // none lost
  REQUIRE(!per_tick.empty());
  CHECK(per_tick.front() < kNpcs);  // not all at once
  CHECK(per_tick.size() >= 4);      // spread over several ticks
  CHECK_MESSAGE(order_violations == 0, first);
  CHECK(lb.diff(a).empty());
  CHECK(lb.rep.stats().deferred > 0);
  // The budget held: what was sent is what the tokens allowed (the initial packet's
  // worth plus the per-tick refill), give or take one packet.
  CHECK(total_bytes <= 576 + static_cast<std::size_t>(ticks) * kBandwidth / 20 + 576);
  check_clean(lb, a);
}

TEST_CASE("replicator: a tiny budget and 30% loss together: every spawn still arrives") {
  constexpr std::uint32_t kNpcs = 60;
  Loopback lb(open_world(kNpcs, 60.0, 100.0), rparams(4000, 576), 9);
  LoopClient& a = lb.connect("poor-and-lossy");
  lb.loss = 0.3;
  lb.run(200);
  lb.loss = 0.0;
  int ticks = 0;
  for (; ticks < 200 && !lb.diff(a).empty(); ++ticks) lb.step();
  CHECK_MESSAGE(lb.diff(a).empty(), lb.diff(a));
  CHECK(a.replica.current().entities.size() == kNpcs);
  CHECK(a.dropped > 0);
  check_clean(lb, a);
}

TEST_CASE("replicator: the smallest configurable budget still delivers every spawn") {
  // network.client_bandwidth may be as low as 1000 bytes/s (config_schema.cpp) with
  // max_packet_bytes 576 at 20 Hz: 50 bytes per tick. Deferred spawns must still arrive
  // eventually ("deferred to a later tick, never dropped").
  constexpr std::uint32_t kNpcs = 20;
  Loopback lb(open_world(kNpcs), rparams(1000, 576));
  LoopClient& a = lb.connect("modem");
  int ticks = 0;
  for (; ticks < 1200 && a.replica.current().entities.size() < kNpcs; ++ticks) lb.step();
  CHECK_MESSAGE(a.replica.current().entities.size() == kNpcs,
                "after " << ticks << " ticks (" << ticks / 20 << " s) the client holds "
                         << a.replica.current().entities.size() << " of " << kNpcs
                         << " entities; token balance " << lb.rep.client(a.id).tokens);
  check_clean(lb, a);
}

TEST_CASE("replicator: acknowledge() accepts sent ticks and refuses ticks never sent") {
  Loopback lb(open_world(10), rparams());
  LoopClient& a = lb.connect("acker");
  a.acks = false;  // acknowledgments by hand below
  CHECK(lb.rep.acknowledge(a.id, 0));
  CHECK_FALSE(lb.rep.acknowledge(a.id, 1));  // nothing sent yet
  lb.run(5);
  CHECK(lb.rep.client(a.id).last_sent_tick == 5);
  CHECK_FALSE(lb.rep.acknowledge(a.id, 6));
  CHECK_FALSE(lb.rep.acknowledge(a.id, 1000));
  CHECK(lb.rep.client(a.id).acked_tick == 0);
  CHECK(lb.rep.acknowledge(a.id, 4));
  CHECK(lb.rep.client(a.id).acked_tick == 4);
  CHECK(lb.rep.acknowledge(a.id, 3));  // older: harmless, ignored
  CHECK(lb.rep.acknowledge(a.id, 4));  // repeated
  CHECK(lb.rep.client(a.id).acked_tick == 4);
  lb.step();
  REQUIRE(!a.sent.empty());
  CHECK(a.sent[0].baseline == 4);
  CHECK(lb.diff(a).empty());
  check_clean(lb, a);
}

TEST_CASE("replicator: acknowledge() refuses a tick from before the client joined") {
  Loopback lb(open_world(10), rparams());
  lb.connect("early");
  lb.run(10);
  LoopClient& late = lb.connect("late");
  late.acks = false;
  lb.run(3);  // ticks 11..13 are the only ones sent to this client
  CHECK(lb.rep.client(late.id).last_sent_tick == 13);
  CHECK(lb.rep.acknowledge(late.id, 12));
  CHECK_MESSAGE(!lb.rep.acknowledge(late.id, 5),
                "tick 5 was never sent to a client that joined at tick 11");
  CHECK(lb.rep.acknowledge(late.id, 13));
}

TEST_CASE("replicator: an acknowledged frame older than the history means a full resync") {
  // Ample bandwidth: a full frame of this view fits in every tick's budget.
  Loopback lb(open_world(30), rparams(1'000'000));
  LoopClient& a = lb.connect("laggy");
  lb.run(3);
  a.acks = false;  // its inputs stop arriving; the server keeps acked_tick == 2
  CHECK(lb.rep.client(a.id).acked_tick == 2);
  for (std::uint32_t t = 0; t < lb.params.history_ticks + 2; ++t) {
    lb.step();
    // Built on the acknowledged tick 2 while the history holds it, then on nothing;
    // in particular never on the history slot the new frame itself is written to.
    for (const test::SnapshotSpec& s : a.sent) {
      CHECK_MESSAGE((s.baseline == 0 || s.baseline == 2),
                    "tick " << s.tick << " sent on baseline " << s.baseline << " with "
                            << s.spawns.size() << " spawns and " << s.despawns.size()
                            << " despawns");
    }
    CHECK_MESSAGE(a.replica.ack_tick() == lb.tick, violations_of(a));
  }
  CHECK(lb.rep.stats().full_resyncs > 0);
  REQUIRE(!a.sent.empty());
  CHECK(a.sent[0].baseline == 0);
  CHECK(lb.diff(a).empty());  // a full frame is still the whole truth
  a.acks = true;
  lb.run(3);
  REQUIRE(!a.sent.empty());
  CHECK(a.sent[0].baseline == lb.tick - 1);
  CHECK(lb.diff(a).empty());
  check_clean(lb, a);
}

TEST_CASE("replicator: a long history never offers a baseline the client has discarded") {
  // network.history_ticks may be up to 256 (config_schema.cpp) while a FrameReplica keeps
  // kFrameHistory (64) frames. A client whose acknowledgments stop arriving (here: are
  // not sent) keeps receiving and completing frames; the server must never build on a
  // frame the client can no longer hold.
  replication::ReplicationParams rp = rparams(1'000'000);
  rp.history_ticks = 128;
  Loopback lb(open_world(10), rp);
  LoopClient& a = lb.connect("acks-lost");
  lb.run(3);
  a.acks = false;  // the server's acked_tick stays at 2
  for (std::uint32_t t = 0; t < replica::FrameReplica::kFrameHistory + 10; ++t) lb.step();
  CHECK_MESSAGE(a.replica.violations().empty(), violations_of(a));
  CHECK(a.replica.ack_tick() == lb.tick);
  CHECK(lb.diff(a).empty());
}

TEST_CASE("replicator: remove_client stops output and the id is reused cleanly") {
  Loopback lb(open_world(20), rparams());
  LoopClient& a = lb.connect("leaver");
  LoopClient& b = lb.connect("stayer");
  lb.run(10);
  REQUIRE(lb.rep.client_count() == 2);
  const replication::ClientId old_id = a.id;
  const auto snapshots_before = lb.rep.stats().snapshots;
  lb.disconnect(a);
  CHECK(lb.rep.client_count() == 1);
  CHECK_FALSE(lb.rep.client(old_id).active);
  lb.run(10);
  CHECK(lb.stray_packets == 0);  // nothing more for the removed client
  CHECK(lb.rep.stats().snapshots == snapshots_before + 10);
  // The player entity stays in the world (only the client went), so b still sees it.
  CHECK(b.replica.find(a.entity) != nullptr);
  CHECK(lb.diff(b).empty());
  // A new client gets the free id and starts from scratch.
  LoopClient& c = lb.connect("newcomer");
  CHECK(c.id == old_id);
  CHECK(lb.rep.client_count() == 2);
  lb.step();
  REQUIRE(!c.sent.empty());
  CHECK(c.sent[0].baseline == 0);
  lb.run(3);
  CHECK(lb.diff(c).empty());
  CHECK(c.replica.find(a.entity) != nullptr);  // the old player is just another entity
  check_clean(lb, b);
  check_clean(lb, c);
  // Removing twice is harmless.
  lb.disconnect(b);
  lb.rep.remove_client(b.id);
  CHECK(lb.rep.client_count() == 1);
  lb.run(2);
  CHECK(lb.stray_packets == 0);
}

TEST_CASE("replicator: entities leaving the view are despawned and gone from the replica") {
  Loopback lb(test::small_world(400), rparams(64000));
  LoopClient& a = lb.connect("traveller");
  Tour tour{{{10.0, 10.0}, {190.0, 190.0}, {10.0, 190.0}, {190.0, 10.0}}};
  std::uint64_t spawns_sent = 0, despawns_sent = 0;
  int unexplained_leaves = 0, resurrected = 0;
  std::set<std::uint32_t> prev;
  for (int t = 1; t <= 250; ++t) {
    tour.steer(lb.world, a.slot);
    lb.step();
    std::set<std::uint32_t> despawned;
    for (const test::SnapshotSpec& s : a.sent) {
      spawns_sent += s.spawns.size();
      despawns_sent += s.despawns.size();
      despawned.insert(s.despawns.begin(), s.despawns.end());
    }
    std::set<std::uint32_t> now;
    for (const auto& e : a.replica.current().entities) now.insert(e.id());
    for (const std::uint32_t id : prev) {
      if (!now.count(id) && !despawned.count(id)) ++unexplained_leaves;
    }
    for (const std::uint32_t id : despawned) {
      if (now.count(id)) ++resurrected;
    }
    prev = std::move(now);
  }
  CHECK(despawns_sent > 30);
  CHECK(unexplained_leaves == 0);
  CHECK(resurrected == 0);
  CHECK(a.replica.leaves() == despawns_sent);
  CHECK(a.replica.enters() == spawns_sent);
  CHECK(lb.diff(a).empty());
  CHECK(lb.geometry(a).empty());

  // An entity despawned from the world while in view.
  REQUIRE(!a.replica.current().entities.empty());
  const std::uint32_t victim = a.replica.current().entities.front().id();
  std::uint32_t victim_slot = 0;
  lb.world.for_each_entity([&](std::uint32_t slot, const world::Entity& e) {
    if (e.id == victim) victim_slot = slot;
  });
  lb.world.despawn(victim_slot);
  lb.step();
  REQUIRE(a.sent.size() >= 1);
  bool sent_despawn = false;
  for (const test::SnapshotSpec& s : a.sent) {
    sent_despawn |= std::count(s.despawns.begin(), s.despawns.end(), victim) > 0;
  }
  CHECK(sent_despawn);
  CHECK(a.replica.find(victim) == nullptr);
  CHECK(lb.world.find(victim) == nullptr);
  lb.run(3);
  CHECK(a.replica.find(victim) == nullptr);
  CHECK(lb.diff(a).empty());
  check_clean(lb, a);
}
