// Interest policy in the replicator (docs/architecture.md, "Interest policy"): tiers of
// update rate by distance, crowds and the view cone. Replicator + World end to end
// without a network (tests/replication/loopback.hpp), each tick compared with the
// world's ground truth.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "loopback.hpp"

using namespace zone;
using test::check_clean;
using test::Loopback;
using test::LoopClient;

namespace {

replication::ReplicationParams params_with(replication::InterestParams interest,
                                           std::uint32_t bandwidth = 1000000) {
  replication::ReplicationParams p;
  p.tick_rate = 20;
  p.max_packet_bytes = 1200;
  p.client_bandwidth = bandwidth;
  p.snapshot_interval = 1;
  p.history_ticks = 32;
  p.max_deferral_ticks = 10;
  p.interest = interest;
  return p;
}

replication::InterestParams distance_tiers() {
  replication::InterestParams i;
  i.tiers = true;
  i.near_fraction = 0.4;
  i.far_fraction = 0.7;
  i.middle_divisor = 2;
  i.far_divisor = 4;
  return i;
}

// 100 m square, NPCs that never rest, one player standing in the middle with a 40 m view.
world::WorldParams busy_world(std::uint32_t npcs = 200) {
  world::WorldParams wp = test::small_world(npcs, world::NpcBehaviour::kWander);
  wp.grid.bounds = {{0.0, 0.0}, {100.0, 100.0}};
  wp.grid.cell_size = 10.0;
  wp.player_view_radius = 40.0;
  wp.npcs.idle_fraction = 0.0;
  return wp;
}

// What one run saw: per tier, entity-ticks held and how many of them were not current;
// the oldest values held against the bound the entity's tier allowed.
struct TierRun {
  std::array<std::uint64_t, 3> held{};
  std::array<std::uint64_t, 3> behind_truth{};  // values older than this tick
  std::array<std::uint32_t, 3> oldest{};
  std::uint64_t over_bound = 0;  // older than the tier's slack (+ deferral) allows
  std::uint64_t missing = 0;     // within the view radius but not held (spawn late)
  std::uint64_t bytes = 0;
  std::uint64_t spawns = 0, despawns = 0, tier_held = 0, crowded = 0, behind = 0;
  std::string first;
};

// Runs `ticks` ticks with one client standing at `at`, optionally walking a square.
// `extra_wait`: ticks of budget deferral allowed on top of the tier's slack (0: every
// due update must be sent at once, i.e. an ample budget).
TierRun run_tiers(const world::WorldParams& wp, const replication::ReplicationParams& rp, int ticks,
                  std::uint32_t extra_wait, bool walk = false) {
  Loopback lb(wp, rp);
  LoopClient& a = lb.connect("watcher");
  TierRun run;
  std::map<std::uint32_t, std::unordered_map<std::uint32_t, std::vector<std::int32_t>>> truth;
  const double mid = (wp.grid.bounds.min.x + wp.grid.bounds.max.x) / 2.0;
  for (int t = 1; t <= ticks; ++t) {
    const world::Entity& me = lb.world.entity(a.slot);
    // Stand in the middle (or walk a square around it); heading follows movement.
    const double tx = walk ? mid + 20.0 * std::cos(t / 40.0) : mid;
    const double ty = walk ? mid + 20.0 * std::sin(t / 40.0) : mid;
    const double dx = tx - me.x, dy = ty - me.y, len = std::hypot(dx, dy);
    if (len > 0.2) {
      lb.world.set_intent(a.slot, dx / len, dy / len);
    } else {
      lb.world.set_intent(a.slot, 0.0, 0.0);
    }
    lb.step();
    auto& now = truth[lb.tick];
    lb.world.for_each_entity(
        [&](std::uint32_t slot, const world::Entity& e) { now[e.id] = lb.values_of(slot); });
    while (truth.size() > 64) truth.erase(truth.begin());
    if (t < 40) continue;  // the first spawns settle
    const replication::ClientView& view = lb.rep.client(a.id);
    const replica::Frame& f = a.replica.current();
    if (f.tick != lb.tick) continue;  // no complete frame this tick
    for (const replica::EntityView e : f.entities) {
      auto in = std::lower_bound(
          view.interest.begin(), view.interest.end(), e.id,
          [](const replication::InterestEntry& x, world::EntityId id) { return x.id < id; });
      if (in == view.interest.end() || in->id != e.id) continue;  // leaving the view
      const std::uint8_t tier = in->tier;
      const std::uint32_t allowed = in->slack_ticks + extra_wait;
      std::uint32_t age = 0;
      for (; age < 60; ++age) {
        auto it = truth.find(lb.tick - age);
        if (it == truth.end()) break;
        auto v = it->second.find(e.id);
        if (v != it->second.end() && test::same(v->second, e.values)) break;
      }
      ++run.held[tier];
      if (age > 0) ++run.behind_truth[tier];
      run.oldest[tier] = std::max(run.oldest[tier], age);
      if (age > allowed && run.over_bound++ == 0) {
        run.first =
            fmt::format("tick {}: entity {} in tier {} holds values {} ticks old (allowed {})",
                        lb.tick, e.id, tier, age, allowed);
      }
    }
    const std::string geometry = lb.geometry(a);
    if (!geometry.empty() && extra_wait == 0) {
      ++run.missing;
      if (run.first.empty()) run.first = geometry;
    }
  }
  check_clean(lb, a);
  const replication::ReplicationStats& s = lb.rep.stats();
  run.bytes = s.bytes;
  run.spawns = s.spawns;
  run.despawns = s.despawns;
  run.tier_held = s.tier_held;
  run.crowded = s.crowded;
  run.behind = s.behind;
  return run;
}

}  // namespace

TEST_CASE("interest tiers: near every snapshot, middle every 2nd, far every 4th") {
  const replication::ReplicationParams rp = params_with(distance_tiers());
  const TierRun on = run_tiers(busy_world(), rp, 400, 0);
  INFO(on.first);
  // Every entity is as fresh as its tier allows and no fresher is needed: near entities
  // are always current, middle ones at most 1 tick old, far ones at most 3.
  CHECK(on.over_bound == 0);
  CHECK(on.missing == 0);
  CHECK(on.behind_truth[0] == 0);
  CHECK(on.oldest[1] == 1);
  CHECK(on.oldest[2] == 3);
  // All three tiers were populated, and the slower tiers really were held back.
  CHECK(on.held[0] > 1000);
  CHECK(on.held[1] > 1000);
  CHECK(on.held[2] > 1000);
  CHECK(on.behind_truth[1] * 3 > on.held[1]);  // about half of the middle tier
  CHECK(on.behind_truth[2] * 2 > on.held[2]);  // about three quarters of the far tier
  CHECK(on.tier_held > 0);

  // The same world without the policy: the same spawns and despawns (tiers never
  // delay them), every entity current every tick, and more bytes.
  const TierRun off = run_tiers(busy_world(), params_with({}), 400, 0);
  CHECK(off.over_bound == 0);
  CHECK(off.behind_truth[0] == 0);
  CHECK(off.held[1] + off.held[2] == 0);
  CHECK(off.tier_held == 0);
  CHECK(on.spawns == off.spawns);
  CHECK(on.despawns == off.despawns);
  CHECK(on.bytes * 10 < off.bytes * 8);  // at least 20% fewer bytes
  MESSAGE("bytes with tiers / without: ", static_cast<double>(on.bytes) / off.bytes);
}

TEST_CASE("interest tiers: with snapshots every 3 ticks the divisors count snapshots") {
  replication::ReplicationParams rp = params_with(distance_tiers());
  rp.snapshot_interval = 3;
  CHECK(replication::tier_slack_ticks(rp, 0) == 0);
  CHECK(replication::tier_slack_ticks(rp, 1) == 3);
  CHECK(replication::tier_slack_ticks(rp, 2) == 9);
  rp.interest.far_slowdown = 2;
  CHECK(replication::tier_slack_ticks(rp, 2) == 21);
}

TEST_CASE("interest tiers under a starved budget: deferral stays bounded per tier") {
  // A budget far too small: records wait for it, but never longer than max_deferral on
  // top of their tier's slack, and nothing is lost.
  const replication::ReplicationParams rp = params_with(distance_tiers(), 3000);
  const TierRun run = run_tiers(busy_world(250), rp, 400, rp.max_deferral_ticks - 1, true);
  INFO(run.first);
  CHECK(run.over_bound == 0);
  CHECK(run.oldest[2] > 3);  // the budget really held far records beyond their slack
}

namespace {

// A crowd: 300 NPCs that never rest on 60 x 60 m around one player whose 40 m view holds
// nearly all of them.
world::WorldParams crowd_world() {
  world::WorldParams wp = busy_world(300);
  wp.grid.bounds = {{0.0, 0.0}, {60.0, 60.0}};
  return wp;
}

}  // namespace

TEST_CASE("interest crowd: past K in view, only the K nearest keep their tier") {
  replication::InterestParams crowd;
  crowd.crowd_threshold = 24;
  Loopback lb(crowd_world(), params_with(crowd));
  LoopClient& a = lb.connect("in-the-crowd");
  int crowded_ticks = 0, wrong = 0;
  std::string first;
  for (int t = 1; t <= 200; ++t) {
    lb.step();
    const replication::ClientView& view = lb.rep.client(a.id);
    if (view.interest.size() <= crowd.crowd_threshold) continue;
    ++crowded_ticks;
    // Rank the view by the distance the server used (quantised positions), ties by id.
    const protocol::Values self = lb.rep.current_values(a.slot);
    std::vector<std::pair<double, world::EntityId>> ranked;
    for (const replication::InterestEntry& e : view.interest) {
      const protocol::Values p = lb.rep.current_values(e.slot);
      const double dx = p[protocol::kX] - self[protocol::kX];
      const double dy = p[protocol::kY] - self[protocol::kY];
      ranked.push_back({dx * dx + dy * dy, e.id});
    }
    std::sort(ranked.begin(), ranked.end());
    std::unordered_map<world::EntityId, std::size_t> rank;
    for (std::size_t k = 0; k < ranked.size(); ++k) rank[ranked[k].second] = k;
    for (const replication::InterestEntry& e : view.interest) {
      const std::uint8_t want = rank[e.id] < crowd.crowd_threshold ? 0 : 2;
      if (e.tier != want && wrong++ == 0) {
        first = fmt::format("tick {}: entity {} ranked {} is in tier {}", lb.tick, e.id, rank[e.id],
                            e.tier);
      }
    }
  }
  CHECK_MESSAGE(wrong == 0, first);
  CHECK(crowded_ticks > 150);
  CHECK(lb.rep.stats().crowded > 150);
  check_clean(lb, a);
}

TEST_CASE("interest crowd: never more than the budget, never starved, fewer bytes") {
  // The crowd moves all the time; at 16,000 B/s the budget cannot carry every update.
  replication::InterestParams crowd;
  crowd.crowd_threshold = 24;
  crowd.tiers = true;
  const replication::ReplicationParams rp = params_with(crowd, 16000);
  const TierRun on = run_tiers(crowd_world(), rp, 400, rp.max_deferral_ticks - 1, true);
  INFO(on.first);
  // Never starved: nothing older than max_deferral on top of its tier's slack.
  CHECK(on.over_bound == 0);
  CHECK(on.crowded > 300);
  CHECK(on.held[2] > on.held[0]);  // most of the crowd is in the lowest tier
  // Within budget: 400 ticks at 800 B per tick, plus the bucket's starting packet and
  // its cap (what a client may have saved up).
  CHECK(on.bytes <= 400 * 800 + 1200 + 1600);
  const TierRun off =
      run_tiers(crowd_world(), params_with({}, 16000), 400, rp.max_deferral_ticks - 1, true);
  CHECK(off.over_bound == 0);
  // Without the policy the same budget is spent on the whole crowd: more records wait
  // (older values), and the forced ones go over budget.
  MESSAGE("oldest values held, near tier: crowd policy ", on.oldest[0], " ticks, none ",
          off.oldest[0], " ticks");
  CHECK(on.oldest[0] < off.oldest[0]);
}

TEST_CASE("interest cone: entities behind the player, beyond the short radius, are far") {
  replication::InterestParams cone;
  cone.cone = true;
  cone.cone_fov_degrees = 120.0;
  cone.cone_radius = 8.0;
  Loopback lb(busy_world(), params_with(cone));
  LoopClient& a = lb.connect("looking");
  int ahead = 0, behind = 0, close_behind = 0, wrong = 0;
  std::string first;
  for (int t = 1; t <= 300; ++t) {
    // Walk a slow circle so that the heading turns all the way round.
    const double angle = t / 30.0;
    lb.world.set_intent(a.slot, std::cos(angle) * 0.3, std::sin(angle) * 0.3);
    lb.step();
    const protocol::Values self = lb.rep.current_values(a.slot);
    const double h = self[protocol::kHeading] * (2.0 * 3.14159265358979323846 / 65536.0);
    for (const replication::InterestEntry& e : lb.rep.client(a.id).interest) {
      const protocol::Values p = lb.rep.current_values(e.slot);
      const double dx = (p[protocol::kX] - self[protocol::kX]) / 100.0;
      const double dy = (p[protocol::kY] - self[protocol::kY]) / 100.0;
      const double d = std::hypot(dx, dy);
      const double off =
          std::acos(std::clamp((dx * std::cos(h) + dy * std::sin(h)) / d, -1.0, 1.0));
      // Clear of the boundary (float rounding), the angle decides.
      if (std::abs(off - 60.0 * 3.14159265358979323846 / 180.0) < 1e-6) continue;
      if (std::abs(d - 8.0) < 1e-6) continue;
      const bool out = d > 8.0 && off > 60.0 * 3.14159265358979323846 / 180.0;
      if (out) ++behind;
      if (!out && d > 8.0) ++ahead;
      if (d <= 8.0 && off > 60.0 * 3.14159265358979323846 / 180.0) ++close_behind;
      if (e.tier != (out ? 2 : 0) && wrong++ == 0) {
        first = fmt::format("tick {}: entity {} at {:.2f} m, {:.1f} deg off the heading, tier {}",
                            lb.tick, e.id, d, off * 180.0 / 3.14159265358979323846, e.tier);
      }
    }
  }
  CHECK_MESSAGE(wrong == 0, first);
  CHECK(ahead > 1000);
  CHECK(behind > 1000);
  CHECK(close_behind > 10);
  CHECK(lb.rep.stats().behind > 1000);
  check_clean(lb, a);
}
