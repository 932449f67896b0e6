// Replicator + World end to end without a network (tests/replication/loopback.hpp): the
// bytes the replicator sends go through the parser into a FrameReplica, and the replica
// is compared with the world's ground truth every tick.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "loopback.hpp"
#include "protocol/quantize.hpp"

using namespace zone;
using test::check_clean;
using test::Loopback;
using test::LoopClient;
using test::rparams;
using test::SentPart;
using test::square_tour;
using test::Tour;
using test::violations_of;

namespace {

// A world small enough that one view radius covers all of it.
world::WorldParams open_world(std::uint32_t npcs, double size = 60.0, double radius = 100.0,
                              world::NpcBehaviour behaviour = world::NpcBehaviour::kIdle) {
  world::WorldParams p = test::small_world(npcs, behaviour);
  p.grid.bounds = {{0.0, 0.0}, {size, size}};
  p.player_view_radius = radius;
  return p;
}

// The parts of one tick are numbered 0..n-1 in order, agree on their header, and each
// fits max_packet_bytes. "" when they do.
std::string parts_problem(const std::vector<SentPart>& sent, std::uint32_t tick,
                          std::uint32_t max_bytes) {
  if (sent.empty()) return "";
  const protocol::SnapshotHeader& h0 = sent[0].part.header;
  for (std::size_t p = 0; p < sent.size(); ++p) {
    const protocol::SnapshotHeader& h = sent[p].part.header;
    const std::string where = "tick " + std::to_string(tick) + " part " + std::to_string(p) + ": ";
    if (h.part != p) return where + "numbered " + std::to_string(h.part);
    if (h.part_count != sent.size()) {
      return where + "part_count " + std::to_string(h.part_count) + " but " +
             std::to_string(sent.size()) + " parts sent";
    }
    if (h.server_tick != tick || h.baseline_age != h0.baseline_age ||
        h.last_input_sequence != h0.last_input_sequence) {
      return where + "header differs from part 0's";
    }
    if (p > 0 && sent[p].part.has_self()) return where + "self record outside part 0";
    if (sent[p].size > max_bytes) return where + std::to_string(sent[p].size) + " bytes";
    if (sent.size() > 1 && sent[p].part.records() == 0) return where + "empty part";
  }
  return "";
}

std::set<std::uint32_t> ids_of(const std::vector<replica::EntityState>& entities) {
  std::set<std::uint32_t> ids;
  for (const auto& e : entities) ids.insert(e.id);
  return ids;
}
std::set<std::uint32_t> ids_of(const replica::EntityList& entities) {
  std::set<std::uint32_t> ids;
  for (const replica::EntityView e : entities) ids.insert(e.id);
  return ids;
}

}  // namespace

TEST_CASE("replicator: replica converges to exactly the AOI view with quantised values") {
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
      const world::Entity* we = lb.world.find(e.id);
      REQUIRE(we != nullptr);
      const replica::EntityInfo* info = c->replica.info(e.id);
      REQUIRE(info != nullptr);
      CHECK(info->name == we->name);
      CHECK(info->type == we->type);
      CHECK(info->kind == (we->kind == world::EntityKind::kPlayer ? protocol::EntityKind::kPlayer
                                                                  : protocol::EntityKind::kNpc));
      // max_health is a row of the values now (it was a spawn field).
      CHECK(e.values[test::kMaxHealth] == lb.world.properties(we->aoi.index)[1]);
    }
  }
  CHECK(lb.rep.stats().deferred == 0);
}

TEST_CASE("replicator: other players are replicated as players with their names") {
  Loopback lb(open_world(5), rparams());
  LoopClient& a = lb.connect("alice");
  LoopClient& b = lb.connect("bob");
  lb.run(3);
  REQUIRE(a.replica.find(b.entity) != nullptr);
  REQUIRE(b.replica.find(a.entity) != nullptr);
  REQUIRE(a.replica.info(b.entity) != nullptr);
  CHECK(a.replica.info(b.entity)->kind == protocol::EntityKind::kPlayer);
  CHECK(a.replica.info(b.entity)->type == lb.world.game().player_type);
  CHECK(a.replica.info(b.entity)->name == "bob");
  CHECK(b.replica.info(a.entity)->name == "alice");
  CHECK(a.replica.current().entities.size() == 6);
  for (const auto& e : a.replica.current().entities) {
    if (e.id == b.entity) continue;
    CHECK(a.replica.info(e.id)->kind == protocol::EntityKind::kNpc);
    CHECK(a.replica.info(e.id)->type == lb.world.game().npc_type);
    CHECK(a.replica.info(e.id)->name.rfind("npc-", 0) == 0);
  }
  CHECK(lb.self_ok(a));
  CHECK(a.replica.self()[protocol::kMoveState] == 0);
  lb.world.set_intent(b.slot, 1.0, 0.0);
  lb.step();
  CHECK(a.replica.find(b.entity)->values[protocol::kMoveState] == 1);
  CHECK(b.replica.self()[protocol::kMoveState] == 1);
  CHECK(lb.diff(a).empty());
  CHECK(lb.self_ok(b));
  check_clean(lb, a);
  check_clean(lb, b);
}

TEST_CASE("replicator: a client that never acknowledges gets correct full frames") {
  // Crowded enough (about a hundred entities in view) that full frames need parts.
  Loopback lb(test::small_world(1500), rparams(100'000'000));
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
    for (const SentPart& s : a.sent) {
      if (s.part.baseline() != 0 || !s.part.changes.empty()) {
        ++bad;
        if (first.empty()) first = "tick " + std::to_string(t) + ": not a full frame";
      }
      spawns += s.part.spawns.size();
    }
    const std::string parts = parts_problem(a.sent, lb.tick, lb.params.max_packet_bytes);
    const std::string d = lb.diff(a);
    if (spawns != lb.truth(a).size() || !d.empty() || !parts.empty() ||
        a.replica.ack_tick() != lb.tick || !lb.self_ok(a)) {
      ++bad;
      if (first.empty()) first = "tick " + std::to_string(t) + ": " + d + parts;
    }
  }
  CHECK_MESSAGE(bad == 0, first);
  CHECK(multi_part > 0);
  CHECK(a.replica.frames_completed() == 150);
  CHECK(lb.rep.client(a.id).acked_tick == 0);
  CHECK(lb.rep.stats().full_resyncs == 0);  // never had a baseline to lose
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
    full = f.bytes_this_tick();
  }
  REQUIRE(full > 0);
  for (int t = 0; t < 20; ++t) {
    lb.step();
    REQUIRE(a.sent.size() == 1);
    const test::Decoded& s = a.sent[0].part;
    CHECK(s.baseline() == a.acked_before_tick);
    CHECK(s.baseline() == lb.tick - 1);
    CHECK(s.records() == 0);  // nothing changed
    CHECK_FALSE(s.has_self());
    CHECK(a.sent[0].size == protocol::kSnapshotHeaderBytes + 2);
    CHECK(a.sent[0].size * 4 < full);
  }
  // One entity starts walking: only its changes are sent.
  const world::EntityId walker = lb.world.entity(other).id;
  lb.world.set_intent(other, 1.0, 0.0);
  for (int t = 0; t < 10; ++t) {
    lb.step();
    REQUIRE(a.sent.size() == 1);
    const SentPart& s = a.sent[0];
    CHECK(s.part.baseline() == lb.tick - 1);
    CHECK(s.part.spawns.empty());
    CHECK(s.part.despawns() == 0);
    if (lb.world.entity(other).x < 59.0) {
      REQUIRE(s.part.changes.size() == 1);
      CHECK(s.changed == std::vector<std::uint32_t>{walker});
      const test::DecodedChange& c = s.part.changes[0];
      // 7 m/s for 50 ms: +35 cm in x, one byte; the first move also carries the
      // Idle -> Walking change, later ones only x.
      CHECK((c.mask & (1u << protocol::kX)) != 0);
      CHECK(c.wire_of(protocol::kX) == protocol::zigzag(35));
      CHECK((c.mask & (1u << protocol::kY)) == 0);
      if (t == 0) {
        CHECK((c.mask & (1u << protocol::kMoveState)) != 0);
      } else {
        CHECK(c.mask == 1u << protocol::kX);
        CHECK(s.size == protocol::kSnapshotHeaderBytes + 2 + 3);
      }
    }
    CHECK(s.size <= protocol::kSnapshotHeaderBytes + 2 + 8);
    CHECK(lb.diff(a).empty());
  }
  check_clean(lb, a);
  CHECK(lb.rep.stats().full_resyncs == 0);
}

namespace {

// Three moving clients among wandering NPCs; 30% of packets lost for 400 ticks, then
// none. Returns the share of frames that needed several parts.
double lossy_run(std::uint64_t seed, std::uint32_t npcs, double view_radius,
                 std::uint32_t bandwidth, std::uint32_t max_packet) {
  CAPTURE(seed);
  CAPTURE(view_radius);
  world::WorldParams wp = test::small_world(npcs, world::NpcBehaviour::kWander);
  wp.player_view_radius = view_radius;
  Loopback lb(wp, rparams(bandwidth, max_packet), seed);
  std::vector<LoopClient*> cs = {&lb.connect("p1"), &lb.connect("p2"), &lb.connect("p3")};
  std::vector<Tour> tours = {square_tour(20.0, 180.0), square_tour(50.0, 150.0),
                             square_tour(80.0, 120.0)};
  lb.loss = 0.3;
  int bad_baselines = 0;
  std::string bad_parts;
  std::size_t frames = 0, split = 0;
  for (int t = 1; t <= 400; ++t) {
    for (std::size_t k = 0; k < cs.size(); ++k) tours[k].steer(lb.world, cs[k]->slot);
    lb.step();
    for (const LoopClient* c : cs) {
      if (c->sent.empty()) continue;
      ++frames;
      if (c->sent.size() > 1) ++split;
      // Every snapshot is built on the client's acknowledged frame, or on nothing.
      const std::uint32_t b = c->sent[0].part.baseline();
      if (b != 0 && b != c->acked_before_tick) ++bad_baselines;
      if (bad_parts.empty()) bad_parts = parts_problem(c->sent, lb.tick, max_packet);
    }
  }
  CHECK(bad_baselines == 0);
  CHECK_MESSAGE(bad_parts.empty(), bad_parts);
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
  return static_cast<double>(split) / static_cast<double>(std::max<std::size_t>(1, frames));
}

}  // namespace

TEST_CASE(
    "replicator: 30% packet loss with acks of complete frames only converges without violations") {
  for (const std::uint64_t seed : {4242u, 1u, 77u}) lossy_run(seed, 300, 30.0, 16000, 1200);
  // A wide view and small packets: most frames are split into parts, so losing any part
  // loses the frame.
  CHECK(lossy_run(2025, 600, 70.0, 2'000'000, 576) > 0.5);
}

TEST_CASE("replicator: a tiny budget spreads spawns over ticks nearest first and loses none") {
  constexpr std::uint32_t kBandwidth = 4000;  // 200 bytes per tick at 20 Hz
  constexpr std::uint32_t kNpcs = 100;
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
    total_bytes += a.bytes_this_tick();
    const world::Entity& self = lb.world.entity(a.slot);
    auto dist = [&](std::uint32_t id) {
      const world::Entity* e = lb.world.find(id);
      return std::hypot(e->x - self.x, e->y - self.y);
    };
    std::vector<std::uint32_t> fresh;
    for (const auto& e : a.replica.current().entities) {
      if (!have.count(e.id)) fresh.push_back(e.id);
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
  CHECK(lb.rep.stats().forced == 0);  // all went within budget, none had to be forced
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
  lb.run(40);
  CHECK(lb.diff(a).empty());
  // Over the whole run the client got about what its budget allows (plus the first
  // packet and what had to be forced through).
  const double seconds = (ticks + 40) / 20.0;
  CHECK(static_cast<double>(lb.rep.client(a.id).bytes_sent) <= 1000.0 * seconds + 2 * 576);
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
  CHECK(lb.rep.client(a.id).first_sent_tick == 1);
  CHECK_FALSE(lb.rep.acknowledge(a.id, 6));
  CHECK_FALSE(lb.rep.acknowledge(a.id, 1000));
  CHECK(lb.rep.client(a.id).acked_tick == 0);
  CHECK(lb.rep.acknowledge(a.id, 4));
  CHECK(lb.rep.client(a.id).acked_tick == 4);
  CHECK(lb.rep.acknowledge(a.id, 3));  // older: harmless, ignored
  CHECK(lb.rep.acknowledge(a.id, 4));  // repeated
  CHECK(lb.rep.acknowledge(a.id, 0));  // 0 after a newer one: ignored too (docs/protocol.md)
  CHECK(lb.rep.client(a.id).acked_tick == 4);
  lb.step();
  REQUIRE(!a.sent.empty());
  CHECK(a.sent[0].part.baseline() == 4);
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

TEST_CASE("replicator: acknowledge() refuses a tick held back inside the history window") {
  // The smallest budget and players with long names (spawns of over 200 bytes): a
  // snapshot that would carry nothing while a spawn waits for budget is held back, so
  // some ticks are never sent at all.
  Loopback lb(open_world(0), rparams(1000, 576));
  for (int k = 0; k < 10; ++k) lb.world.spawn_player(std::string(200, static_cast<char>('a' + k)));
  LoopClient& a = lb.connect("saver");
  std::vector<std::uint32_t> skipped;
  int sent = 0, inside = 0;
  for (int t = 0; t < 40; ++t) {
    lb.step();
    if (a.sent.empty()) {
      skipped.push_back(lb.tick);
      continue;
    }
    ++sent;
    // Between the acknowledged frame and this one: ticks never sent, though inside the
    // history window (and not older than the acknowledged tick).
    const replication::ClientView& v = lb.rep.client(a.id);
    for (const std::uint32_t s : skipped) {
      // At or below the acknowledged tick an acknowledgement is not checked further:
      // accepted, and ignored (docs/protocol.md, Input).
      if (s <= v.acked_tick && s >= v.first_sent_tick) {
        const std::uint32_t acked = v.acked_tick;
        CHECK(lb.rep.acknowledge(a.id, s));
        CHECK(lb.rep.client(a.id).acked_tick == acked);
      }
      if (s <= v.acked_tick || s >= v.last_sent_tick) continue;
      ++inside;
      CHECK_MESSAGE(!lb.rep.acknowledge(a.id, s), "tick " << s << " was never sent");
    }
  }
  CHECK(sent > 3);
  CHECK(inside > 3);
  CHECK(lb.diff(a).empty());  // every spawn arrived in the end
  check_clean(lb, a);
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
    for (const SentPart& s : a.sent) {
      CHECK_MESSAGE((s.part.baseline() == 0 || s.part.baseline() == 2),
                    "tick " << lb.tick << " sent on baseline " << s.part.baseline() << " with "
                            << s.part.spawns.size() << " spawns and " << s.part.despawns()
                            << " despawns");
    }
    CHECK_MESSAGE(a.replica.ack_tick() == lb.tick, violations_of(a));
  }
  CHECK(lb.rep.stats().full_resyncs > 0);
  REQUIRE(!a.sent.empty());
  CHECK(a.sent[0].part.baseline() == 0);
  CHECK(lb.diff(a).empty());  // a full frame is still the whole truth
  a.acks = true;
  lb.run(3);
  REQUIRE(!a.sent.empty());
  CHECK(a.sent[0].part.baseline() == lb.tick - 1);
  CHECK(lb.diff(a).empty());
  check_clean(lb, a);
}

TEST_CASE("replicator: a long history never offers a baseline the client has discarded") {
  // network.history_ticks is at most kFrameHistory (64) by the config schema, and the
  // replicator clamps it there too; a FrameReplica keeps kFrameHistory frames. A client
  // whose acknowledgments stop arriving keeps receiving and completing frames; the
  // server must never build on a frame the client can no longer hold.
  replication::ReplicationParams rp = rparams(1'000'000);
  rp.history_ticks = 128;
  Loopback lb(open_world(10), rp);
  LoopClient& a = lb.connect("acks-lost");
  CHECK(lb.rep.params().history_ticks == replica::FrameReplica::kFrameHistory);
  lb.run(3);
  a.acks = false;  // the server's acked_tick stays at 2
  for (std::uint32_t t = 0; t < replica::FrameReplica::kFrameHistory + 10; ++t) lb.step();
  CHECK_MESSAGE(a.replica.violations().empty(), violations_of(a));
  CHECK(a.replica.ack_tick() == lb.tick);
  CHECK(lb.diff(a).empty());
  check_clean(lb, a);
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
  CHECK(lb.rep.client(c.id).acked_tick == 0);
  CHECK(lb.rep.client(c.id).last_sent_tick == 0);
  lb.step();
  REQUIRE(!c.sent.empty());
  CHECK(c.sent[0].part.baseline() == 0);
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
    for (const SentPart& s : a.sent) {
      spawns_sent += s.part.spawns.size();
      despawns_sent += s.despawned.size();
      despawned.insert(s.despawned.begin(), s.despawned.end());
    }
    const std::set<std::uint32_t> now = ids_of(a.replica.current().entities);
    for (const std::uint32_t id : prev) {
      if (!now.count(id) && !despawned.count(id)) ++unexplained_leaves;
    }
    for (const std::uint32_t id : despawned) {
      if (now.count(id)) ++resurrected;
    }
    prev = now;
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
  const std::uint32_t victim = a.replica.current().entities.front().id;
  std::uint32_t victim_slot = 0;
  lb.world.for_each_entity([&](std::uint32_t slot, const world::Entity& e) {
    if (e.id == victim) victim_slot = slot;
  });
  lb.world.despawn(victim_slot);
  lb.step();
  REQUIRE(a.sent.size() >= 1);
  bool sent_despawn = false;
  for (const SentPart& s : a.sent) {
    sent_despawn |= std::count(s.despawned.begin(), s.despawned.end(), victim) > 0;
  }
  CHECK(sent_despawn);
  CHECK(a.replica.find(victim) == nullptr);
  CHECK(lb.world.find(victim) == nullptr);
  lb.run(3);
  CHECK(a.replica.find(victim) == nullptr);
  CHECK(lb.diff(a).empty());
  check_clean(lb, a);
}

// ---- Held entities, deferral bounds, fairness ---------------------------------------

TEST_CASE("replicator: an entity the client displays never vanishes while it is still in view") {
  // A crowded view on a default-sized budget, and a client whose acknowledgments arrive
  // four ticks late: every frame is encoded against an older baseline that lacks the
  // latest spawns. Those spawns the client already displays must be sent again, budget
  // or not; otherwise the entity disappears from one frame and pops back in a later one.
  world::WorldParams wp = test::small_world(300, world::NpcBehaviour::kWander);
  wp.grid.bounds = {{0.0, 0.0}, {80.0, 80.0}};
  wp.grid.cell_size = 10.0;
  wp.player_view_radius = 30.0;
  Loopback lb(wp, rparams(16000));
  LoopClient& a = lb.connect("late-acker");
  a.ack_delay = 4;
  Tour tour = square_tour(10.0, 70.0);
  int vanished = 0, left = 0, frames = 0;
  std::string first;
  for (int t = 1; t <= 400; ++t) {
    const std::set<std::uint32_t> before = ids_of(a.replica.current().entities);
    const std::uint32_t before_tick = a.replica.ack_tick();
    tour.steer(lb.world, a.slot);
    lb.step();
    if (a.replica.ack_tick() == before_tick) continue;  // no new frame displayed
    ++frames;
    const std::set<std::uint32_t> now = ids_of(a.replica.current().entities);
    const std::set<std::uint32_t> view = ids_of(lb.truth(a));
    for (const std::uint32_t id : before) {
      if (now.count(id)) continue;
      if (view.count(id)) {
        if (vanished++ == 0) {
          first = "tick " + std::to_string(lb.tick) + ": entity " + std::to_string(id) +
                  " vanished from frame " + std::to_string(a.replica.ack_tick()) + " while in view";
        }
      } else {
        ++left;
      }
    }
  }
  CHECK_MESSAGE(vanished == 0, first);
  CHECK(frames > 300);
  CHECK(left > 20);                                      // the view really changed
  CHECK(lb.rep.stats().deferred > 200);                  // the budget really was short
  CHECK(lb.rep.client(a.id).acked_tick + 4 <= lb.tick);  // and the acks late
  check_clean(lb, a);
}

namespace {

// A budget far too small for a crowded, moving view. A record waits at most
// max_deferral_ticks, rounded up to the client's next snapshot tick: at any tick, the
// values a client holds are the world's of at most max_deferral + interval - 2 ticks
// ago, and an entity in view that long is in its frame.
void check_bounded_deferral(std::uint32_t interval, std::uint32_t max_deferral,
                            std::uint32_t bandwidth) {
  CAPTURE(interval);
  CAPTURE(max_deferral);
  world::WorldParams wp = test::small_world(250, world::NpcBehaviour::kWander);
  wp.grid.bounds = {{0.0, 0.0}, {100.0, 100.0}};
  wp.grid.cell_size = 10.0;
  wp.player_view_radius = 40.0;
  replication::ReplicationParams rp = rparams(bandwidth, 576);
  rp.max_deferral_ticks = max_deferral;
  rp.snapshot_interval = interval;
  const std::uint32_t bound = max_deferral + interval - 2;
  Loopback lb(wp, rp);
  LoopClient& a = lb.connect("starved");
  Tour tour = square_tour(20.0, 80.0);
  // The world's quantised values of every entity, per tick, for the last ticks.
  std::map<std::uint32_t, std::unordered_map<std::uint32_t, std::vector<std::int32_t>>> truth;
  int stale = 0, late_spawns = 0, inconsistent = 0, checked = 0;
  std::uint32_t oldest = 0;
  std::string first;
  for (int t = 1; t <= 400; ++t) {
    tour.steer(lb.world, a.slot);
    lb.step();
    auto& now = truth[lb.tick];
    lb.world.for_each_entity(
        [&](std::uint32_t slot, const world::Entity& e) { now[e.id] = lb.values_of(slot); });
    while (truth.size() > bound + 2 * interval + 4) truth.erase(truth.begin());
    // From the first tick on: the initial flood of spawns strains the budget most.
    const replica::Frame& f = a.replica.current();
    for (std::size_t k = 0; k < f.entities.size(); ++k) {
      const replica::EntityState& e = f.entities[k];
      ++checked;
      // Its values are the world's at some tick of the last `bound`...
      std::uint32_t age = 0;
      for (; age <= bound + interval + 1; ++age) {
        auto it = truth.find(lb.tick - age);
        if (it == truth.end()) continue;
        auto v = it->second.find(e.id);
        if (v != it->second.end() && test::same(v->second, e.values)) break;
      }
      oldest = std::max(oldest, age);
      if (age > bound && stale++ == 0) {
        first = "tick " + std::to_string(lb.tick) + ": entity " + std::to_string(e.id) +
                " holds values " + std::to_string(age) + " ticks old";
      }
      // ... and exactly the world's at the tick the replica says they were set.
      auto it = truth.find(f.updated[k]);
      if (it != truth.end() && it->second.at(e.id) != e.values) ++inconsistent;
    }
    // No entity waits in view longer than the bound without being spawned.
    for (const replication::InterestEntry& in : lb.rep.client(a.id).interest) {
      if (lb.tick > in.entered_tick + bound && a.replica.find(in.id) == nullptr) ++late_spawns;
    }
  }
  CHECK_MESSAGE(stale == 0, first);
  CHECK(late_spawns == 0);
  CHECK(inconsistent == 0);
  CHECK(checked > 10000);
  // The bound was really reached: records waited and had to be forced over budget.
  CHECK(oldest == bound);
  CHECK(lb.rep.stats().deferred > 1000);
  CHECK(lb.rep.stats().forced > 0);
  // The stat counts from the first snapshot that held a record back until the snapshot
  // that sent it: at most the bound rounded up to a snapshot tick, and at least the
  // bound less the interval in which the record first became due.
  CHECK(lb.rep.stats().oldest_deferral_ticks >= max_deferral - interval);
  CHECK(lb.rep.stats().oldest_deferral_ticks <= max_deferral + interval - 1);
  check_clean(lb, a);
}

}  // namespace

TEST_CASE("replicator: deferral is bounded: a client's values are never older than allowed") {
  check_bounded_deferral(1, 8, 3000);
  check_bounded_deferral(3, 7, 1000);
}

TEST_CASE("replicator: far entities do not starve: priorities accumulate while they wait") {
  // Everything in view always moves (no rests), and the budget carries only a fraction
  // of the updates each tick. Nearer entities rank higher, but a waiting entity's
  // priority grows every tick, so even the farthest are refreshed about as often as the
  // budget allows on average, long before max_deferral_ticks forces them through.
  constexpr std::uint32_t kNpcs = 150;
  world::WorldParams wp = open_world(kNpcs, 100.0, 150.0, world::NpcBehaviour::kWander);
  wp.grid.cell_size = 20.0;
  wp.npcs.idle_fraction = 0.0;
  replication::ReplicationParams rp = rparams(3000, 576);
  rp.max_deferral_ticks = 100;
  Loopback lb(wp, rp);
  LoopClient& a = lb.connect("observer");
  // Warm up until everything is spawned and updates are the only records.
  int warm = 0;
  while (a.replica.current().entities.size() < kNpcs && warm++ < 400) lb.step();
  REQUIRE(a.replica.current().entities.size() == kNpcs);
  lb.run(50);

  std::unordered_map<std::uint32_t, std::uint32_t> last_update;
  std::unordered_map<std::uint32_t, std::uint32_t> longest;
  std::unordered_map<std::uint32_t, double> distance_sum;
  const std::uint64_t updates_before = lb.rep.stats().updates;
  const std::uint32_t start = lb.tick;
  constexpr int kTicks = 400;
  for (int t = 0; t < kTicks; ++t) {
    lb.step();
    const replica::Frame& f = a.replica.current();
    REQUIRE(f.tick == lb.tick);
    const world::Entity& self = lb.world.entity(a.slot);
    for (std::size_t k = 0; k < f.entities.size(); ++k) {
      const std::uint32_t id = f.entities[k].id;
      const world::Entity* e = lb.world.find(id);
      distance_sum[id] += std::hypot(e->x - self.x, e->y - self.y);
      if (f.updated[k] != f.tick) continue;
      auto [it, inserted] = last_update.try_emplace(id, start);
      longest[id] = std::max(longest[id], f.tick - it->second);
      it->second = f.tick;
    }
  }
  // Entities not updated since: their wait so far counts too.
  for (const auto& [id, last] : last_update) longest[id] = std::max(longest[id], lb.tick - last);
  REQUIRE(longest.size() == kNpcs);

  // The round-robin share of the budget: how many ticks apart each entity's updates
  // would be if every update went to the entities in turn.
  const double updates_per_tick =
      static_cast<double>(lb.rep.stats().updates - updates_before) / kTicks;
  const double fair_interval = kNpcs / updates_per_tick;
  CAPTURE(updates_per_tick);
  CAPTURE(fair_interval);
  REQUIRE(fair_interval > 4.0);  // the budget really is far too small for everything
  // The farthest quarter, by mean distance over the run.
  std::vector<std::pair<double, std::uint32_t>> by_distance;
  for (const auto& [id, sum] : distance_sum) by_distance.push_back({sum, id});
  std::sort(by_distance.rbegin(), by_distance.rend());
  std::uint32_t far_longest = 0, all_longest = 0;
  for (std::size_t i = 0; i < by_distance.size(); ++i) {
    const std::uint32_t l = longest[by_distance[i].second];
    all_longest = std::max(all_longest, l);
    if (i < by_distance.size() / 4) far_longest = std::max(far_longest, l);
  }
  CAPTURE(far_longest);
  CAPTURE(all_longest);
  // Without accumulation the nearest would win every tick and the farthest would only
  // ever go when forced, max_deferral_ticks apart.
  const double bound = 3.0 * fair_interval + 2.0;
  REQUIRE(bound < rp.max_deferral_ticks / 2.0);
  CHECK(far_longest <= bound);
  CHECK(all_longest <= bound);
  CHECK(lb.rep.stats().forced == 0);
  check_clean(lb, a);
}

// ---- Parts ------------------------------------------------------------------------

TEST_CASE("replicator: a huge view is split into numbered parts the replica reassembles") {
  // Two thousand wandering entities in view, 576-byte packets, parts delivered to the
  // replica in random order.
  constexpr std::uint32_t kNpcs = 2000;
  Loopback lb(open_world(kNpcs, 100.0, 150.0, world::NpcBehaviour::kWander),
              rparams(100'000'000, 576), 3);
  lb.shuffle_parts = true;
  LoopClient& a = lb.connect("crowded");
  std::string problem;
  std::size_t max_parts = 0, frames = 0;
  for (int t = 1; t <= 15; ++t) {
    lb.step();
    const std::string p = parts_problem(a.sent, lb.tick, 576);
    if (problem.empty()) problem = p;
    max_parts = std::max(max_parts, a.sent.size());
    // Parts are packed: all but the last are at least half full.
    for (std::size_t k = 0; k + 1 < a.sent.size(); ++k) CHECK(a.sent[k].size > 576 / 2);
    std::set<std::uint32_t> named;  // every entity at most once across the parts
    std::size_t records = 0;
    for (const SentPart& s : a.sent) {
      for (const auto& sp : s.part.spawns) named.insert(sp.id);
      named.insert(s.changed.begin(), s.changed.end());
      named.insert(s.despawned.begin(), s.despawned.end());
      records += s.part.records();
    }
    CHECK(named.size() == records);
    CHECK(a.replica.ack_tick() == lb.tick);
    CHECK(lb.diff(a).empty());
    if (a.sent.size() > 1) ++frames;
  }
  CHECK_MESSAGE(problem.empty(), problem);
  CHECK(max_parts > 40);  // the first, full frame
  CHECK(frames == 15);    // and the deltas of two thousand moving entities too
  check_clean(lb, a);
}

TEST_CASE("replicator: a frame needing more than 255 parts sends 255 and the rest later") {
  // Eight thousand entities in view and 576-byte packets: the first full frame needs
  // over 300 parts; part numbers are one byte.
  constexpr std::uint32_t kNpcs = 8000;
  world::WorldParams wp = open_world(kNpcs, 100.0, 150.0);
  wp.grid.cell_size = 25.0;
  Loopback lb(wp, rparams(100'000'000, 576));
  LoopClient& a = lb.connect("swamped");
  lb.step();
  // Nearly 255 parts: the spawns it did not hold take no more than the next frame is sure
  // to carry again (each part may then be short by up to one record: about 25 of 558
  // bytes).
  CHECK(a.sent.size() > 240);
  CHECK(a.sent.size() <= 255);
  const std::string p = parts_problem(a.sent, lb.tick, 576);
  CHECK_MESSAGE(p.empty(), p);
  CHECK(a.replica.ack_tick() == lb.tick);  // what was sent is a complete frame
  const std::size_t first = a.replica.current().entities.size();
  CHECK(first > 5000);
  CHECK(first < kNpcs);
  // What did not fit follows in the next frames, and nothing is lost on the way.
  int ticks = 1;
  while (a.replica.current().entities.size() < kNpcs && ticks < 10) {
    lb.step();
    ++ticks;
    const std::string q = parts_problem(a.sent, lb.tick, 576);
    CHECK_MESSAGE(q.empty(), q);
    CHECK(a.sent.size() <= 255);
  }
  CHECK(ticks == 2);
  CHECK(lb.diff(a).empty());
  // A client that never acknowledges gets nearly 255 parts of spawns every tick and always
  // the same entities: those it already holds go first, it never loses any.
  LoopClient& b = lb.connect("swamped-silent");
  b.acks = false;
  lb.step();
  const std::set<std::uint32_t> held = ids_of(b.replica.current().entities);
  for (int t = 0; t < 3; ++t) {
    lb.step();
    CHECK(b.sent.size() > 240);
    CHECK(b.sent.size() <= 255);
    CHECK(b.replica.ack_tick() == lb.tick);
    const std::set<std::uint32_t> now = ids_of(b.replica.current().entities);
    CHECK(std::includes(now.begin(), now.end(), held.begin(), held.end()));
  }
  check_clean(lb, a);
  check_clean(lb, b);
}

TEST_CASE("replicator: past 255 parts, what the client displays still goes first") {
  // A client whose acknowledgments never arrive gets every frame whole, as spawns, in a
  // crowd that needs more than 255 parts. As it walks, entities enter its view; those
  // with low ids must not push an entity it already displays out of the 255 parts sent
  // (it would vanish from its view without a despawn), and a frame must never take in so
  // many that the next, packing them in another order, cannot carry them all again.
  world::WorldParams wp = test::small_world(6000);
  wp.grid.bounds = {{0.0, 0.0}, {200.0, 100.0}};
  wp.grid.cell_size = 25.0;
  wp.player_view_radius = 60.0;
  Loopback lb(wp, rparams(100'000'000, 200));
  LoopClient& a = lb.connect("silent-in-a-crowd");
  a.acks = false;
  Tour tour{{{40.0, 50.0}, {160.0, 50.0}}};
  int vanished = 0, truncated = 0, entered = 0;
  std::string first;
  for (int t = 1; t <= 40; ++t) {
    const std::set<std::uint32_t> before = ids_of(a.replica.current().entities);
    tour.steer(lb.world, a.slot);
    lb.step();
    // Cut short: the view holds more than 255 parts can carry.
    if (lb.truth(a).size() > a.replica.current().entities.size()) ++truncated;
    const std::string p = parts_problem(a.sent, lb.tick, 200);
    CHECK_MESSAGE(p.empty(), p);
    REQUIRE(a.replica.ack_tick() == lb.tick);
    const std::set<std::uint32_t> now = ids_of(a.replica.current().entities);
    const std::set<std::uint32_t> view = ids_of(lb.truth(a));
    for (const std::uint32_t id : now) entered += before.count(id) ? 0 : 1;
    for (const std::uint32_t id : before) {
      if (now.count(id) || !view.count(id)) continue;
      if (vanished++ == 0) {
        first = "tick " + std::to_string(lb.tick) + ": entity " + std::to_string(id) +
                " vanished while in view";
      }
    }
  }
  CHECK(truncated == 40);
  CHECK(entered > 1800);  // the first frame, and many entering since
  CHECK_MESSAGE(vanished == 0, first);
  check_clean(lb, a);
}

// ---- Workers --------------------------------------------------------------------

namespace {

struct RunLog {
  std::vector<std::vector<std::pair<std::uint32_t, test::Bytes>>> packets;  // per client
  replication::ReplicationStats stats;
};

// A scripted world: seven touring clients (one acknowledging late, one never), 10% loss,
// a tight budget, snapshots every other tick, a client leaving and another taking its
// id. `workers` 0: Replicator::replicate(); else begin_tick + replicate_clients on that
// many threads over disjoint client ranges.
RunLog scripted_run(std::size_t workers, const replication::InterestParams& interest = {}) {
  world::WorldParams wp = test::small_world(400, world::NpcBehaviour::kWander);
  wp.player_view_radius = 40.0;
  replication::ReplicationParams rp = rparams(8000, 576);
  rp.snapshot_interval = 2;
  rp.max_deferral_ticks = 10;
  rp.interest = interest;
  Loopback lb(wp, rp, 99);
  lb.workers.resize(workers);
  lb.loss = 0.1;
  std::vector<LoopClient*> cs;
  std::vector<Tour> tours;
  for (int k = 0; k < 7; ++k) {
    cs.push_back(&lb.connect(fmt::format("p{}", k)));
    cs.back()->keep_bytes = true;
    const double lo = 20.0 + 10.0 * k;
    tours.push_back(square_tour(lo, 200.0 - lo));
  }
  cs[3]->ack_delay = 3;
  cs[5]->acks = false;
  for (int t = 1; t <= 200; ++t) {
    if (t == 80) lb.disconnect(*cs[2]);
    if (t == 120) {
      cs[2] = &lb.connect("p7");
      cs[2]->keep_bytes = true;
    }
    for (std::size_t k = 0; k < cs.size(); ++k) {
      if (cs[k]->connected) tours[k].steer(lb.world, cs[k]->slot);
    }
    lb.step();
  }
  RunLog log;
  for (const LoopClient& c : lb.clients) {
    CHECK_MESSAGE(c.replica.violations().empty(), violations_of(c));
    log.packets.push_back(c.log);
  }
  log.stats = lb.rep.stats();
  return log;
}

void check_same_run(const RunLog& one, const RunLog& three) {
  REQUIRE(one.packets.size() == 8);
  REQUIRE(three.packets.size() == one.packets.size());
  std::size_t packets = 0, split = 0;
  for (std::size_t c = 0; c < one.packets.size(); ++c) {
    CAPTURE(c);
    REQUIRE(three.packets[c].size() == one.packets[c].size());
    for (std::size_t i = 0; i < one.packets[c].size(); ++i) {
      REQUIRE(three.packets[c][i].first == one.packets[c][i].first);
      REQUIRE(three.packets[c][i].second == one.packets[c][i].second);
      if (i > 0 && one.packets[c][i].first == one.packets[c][i - 1].first) ++split;
    }
    packets += one.packets[c].size();
  }
  CHECK(packets > 500);
  CHECK(split > 10);  // some frames were split into parts
  CHECK(three.stats.snapshots == one.stats.snapshots);
  CHECK(three.stats.packets == one.stats.packets);
  CHECK(three.stats.bytes == one.stats.bytes);
  CHECK(three.stats.spawns == one.stats.spawns);
  CHECK(three.stats.updates == one.stats.updates);
  CHECK(three.stats.despawns == one.stats.despawns);
  CHECK(three.stats.deferred == one.stats.deferred);
  CHECK(three.stats.forced == one.stats.forced);
  CHECK(three.stats.full_resyncs == one.stats.full_resyncs);
  CHECK(three.stats.tier_entities == one.stats.tier_entities);
  CHECK(three.stats.tier_held == one.stats.tier_held);
  CHECK(three.stats.crowded == one.stats.crowded);
  CHECK(three.stats.behind == one.stats.behind);
  CHECK(one.stats.deferred > 0);
  CHECK(one.stats.packets == packets);
}

}  // namespace

TEST_CASE("replicator: replication on three workers sends exactly what one thread sends") {
  check_same_run(scripted_run(0), scripted_run(3));
}

TEST_CASE("replicator: with the interest policy on, three workers send what one thread sends") {
  replication::InterestParams all;
  all.tiers = true;
  all.crowd_threshold = 12;
  all.cone = true;
  all.cone_radius = 8.0;
  all.far_slowdown = 2;
  const RunLog one = scripted_run(0, all);
  check_same_run(one, scripted_run(3, all));
  CHECK(one.stats.tier_held > 0);
  CHECK(one.stats.tier_entities[1] > 0);
  CHECK(one.stats.tier_entities[2] > 0);
}

TEST_CASE("replicator: the interest policy switched off sends exactly today's bytes") {
  // Switched off, its other settings change nothing: byte for byte the same packets as
  // parameters never touched.
  replication::InterestParams off;
  off.near_fraction = 0.1;
  off.far_fraction = 0.2;
  off.middle_divisor = 7;
  off.far_divisor = 9;
  off.far_slowdown = 3;
  off.cone_fov_degrees = 10.0;
  const RunLog plain = scripted_run(0);
  const RunLog switched_off = scripted_run(0, off);
  check_same_run(plain, switched_off);
  CHECK(plain.stats.tier_entities[1] + plain.stats.tier_entities[2] == 0);
}

TEST_CASE(
    "replicator: a teleport is told by move_state's count, and no client takes it for a jump") {
  world::WorldParams p = test::small_world(0);
  Loopback lb(p, test::rparams(64000));
  LoopClient& a = lb.connect("alice");
  LoopClient& b = lb.connect("bob");
  // Both see each other: walk bob next to alice.
  const world::Entity& ea = lb.world.entity(a.slot);
  const double ax = ea.x, ay = ea.y;
  REQUIRE(lb.world.teleport(b.slot, std::min(ax + 5.0, 195.0), ay));
  lb.run(10);
  REQUIRE(a.replica.find(b.entity) != nullptr);
  const std::int32_t before = a.replica.find(b.entity)->values[protocol::kMoveState];
  // 20 m in one tick: far beyond max_speed, within alice's view.
  REQUIRE(lb.world.teleport(b.slot, std::max(ax - 15.0, 5.0), ay));
  lb.run(5);
  const auto seen = a.replica.find(b.entity);
  REQUIRE(seen != nullptr);
  CHECK(protocol::teleports_of(seen->values[protocol::kMoveState]) ==
        protocol::teleports_of(before) + 1);
  CHECK(protocol::teleports_of(b.replica.self()[protocol::kMoveState]) == 2);
  CHECK(lb.diff(a).empty());
  CHECK_MESSAGE(a.replica.violations().empty(), test::violations_of(a));
  CHECK_MESSAGE(b.replica.violations().empty(), test::violations_of(b));
}
