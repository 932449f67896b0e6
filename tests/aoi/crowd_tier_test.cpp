// CrowdTier against the visibility rule itself: every tick's events and every pair's state
// compared with an all-pairs model, on random walks that change cells, teleports, inserts
// and erases, crowds of more than 64 members per cell, and pairs exactly at the thresholds.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <span>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "aoi/cell_index.hpp"
#include "aoi/crowd_tier.hpp"
#include "aoi/simd.hpp"
#include "util/splitmix64.hpp"

namespace {

using zone::aoi::CrowdTier;
using zone::aoi::EventKind;
using zone::aoi::Vec2;
using Pair = std::pair<std::uint32_t, std::uint32_t>;  // (lower id, higher id)

Pair ordered(std::uint32_t a, std::uint32_t b) {
  return a < b ? Pair{a, b} : Pair{b, a};
}

// The rule over all pairs of members, with the pairs in view kept between steps.
class Model {
 public:
  Model(double r, double h) : r_(r), h_(h) {}
  void set(std::uint32_t id, Vec2 p) { pos_[id] = p; }
  // Removes a member; its pairs in view leave (returned).
  std::set<std::tuple<std::uint32_t, std::uint32_t, bool>> erase(std::uint32_t id) {
    std::set<std::tuple<std::uint32_t, std::uint32_t, bool>> out;
    pos_.erase(id);
    for (auto it = visible_.begin(); it != visible_.end();) {
      if (it->first == id || it->second == id) {
        out.insert({it->first, it->second, true});
        it = visible_.erase(it);
      } else {
        ++it;
      }
    }
    return out;
  }
  // One step: the events as (lower, higher, is_leave).
  std::set<std::tuple<std::uint32_t, std::uint32_t, bool>> step() {
    std::set<std::tuple<std::uint32_t, std::uint32_t, bool>> out;
    for (auto a = pos_.begin(); a != pos_.end(); ++a) {
      for (auto b = std::next(a); b != pos_.end(); ++b) {
        const double dx = b->second.x - a->second.x;
        const double dy = b->second.y - a->second.y;
        const double d2 = dx * dx + dy * dy;
        const Pair p{a->first, b->first};
        if (visible_.count(p) != 0) {
          if (d2 > (r_ + h_) * (r_ + h_)) {
            visible_.erase(p);
            out.insert({p.first, p.second, true});
          }
        } else if (d2 <= r_ * r_) {
          visible_.insert(p);
          out.insert({p.first, p.second, false});
        }
      }
    }
    return out;
  }
  const std::set<Pair>& visible() const { return visible_; }
  // The partners of id in view, ascending.
  std::vector<std::uint32_t> partners(std::uint32_t id) const {
    std::vector<std::uint32_t> out;
    for (const Pair& q : visible_) {
      if (q.first == id) out.push_back(q.second);
      if (q.second == id) out.push_back(q.first);
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  const std::map<std::uint32_t, Vec2>& members() const { return pos_; }

 private:
  double r_;
  double h_;
  std::map<std::uint32_t, Vec2> pos_;
  std::set<Pair> visible_;
};

// The tier's events of one update, as a set; each pair at most once.
std::set<std::tuple<std::uint32_t, std::uint32_t, bool>> as_set(
    std::span<const CrowdTier::Event> events) {
  std::set<std::tuple<std::uint32_t, std::uint32_t, bool>> out;
  for (const auto& e : events) {
    const Pair p = ordered(e.a, e.b);
    const bool fresh = out.insert({p.first, p.second, e.kind == EventKind::kLeave}).second;
    CHECK_MESSAGE(fresh, "pair " << p.first << "," << p.second << " twice in one update");
  }
  return out;
}

void check_state(const CrowdTier& tier, const Model& model) {
  REQUIRE(tier.check_invariants() == "");
  CHECK(tier.visible_pairs() == model.visible().size());
  CHECK(tier.members() == model.members().size());
  std::vector<std::uint32_t> got;
  for (const auto& [id, p] : model.members()) {
    got.clear();
    tier.partners(id, got);
    std::sort(got.begin(), got.end());
    CHECK(got == model.partners(id));
  }
}

struct Walk {
  double radius;
  double hysteresis;
  double cell;
  double side;      // members walk in [0, side]^2
  double step;      // most a member moves per tick
  double teleport;  // per member and tick
  double churn;     // per tick: the chance of one erase and one insert
  std::uint32_t members;
  std::uint32_t ticks;
  std::uint64_t seed;
};

// Random walks (with teleports and churn) compared with the model tick by tick.
void run_walk(const Walk& w) {
  CAPTURE(w.cell);
  CAPTURE(w.seed);
  zone::util::SplitMix64 rng(w.seed);
  auto u01 = [&] { return rng.u01(); };
  CrowdTier tier(w.cell, w.radius, w.hysteresis);
  Model model(w.radius, w.hysteresis);
  std::vector<Vec2> pos;
  std::vector<bool> alive;
  auto place = [&](std::uint32_t id) {
    const Vec2 p{u01() * w.side, u01() * w.side};
    pos[id] = p;
    alive[id] = true;
    tier.insert(id, p);
    model.set(id, p);
  };
  pos.resize(w.members);
  alive.resize(w.members);
  for (std::uint32_t i = 0; i < w.members; ++i) place(i);
  CHECK(as_set(tier.update()) == model.step());
  check_state(tier, model);
  for (std::uint32_t t = 0; t < w.ticks; ++t) {
    std::set<std::tuple<std::uint32_t, std::uint32_t, bool>> want;
    for (std::uint32_t i = 0; i < w.members; ++i) {
      if (!alive[i]) continue;
      Vec2 p = pos[i];
      if (u01() < w.teleport) {
        p = {u01() * w.side * 1.5 - w.side * 0.25, u01() * w.side * 1.5 - w.side * 0.25};
      } else {
        const double a = u01() * 6.283185307179586;
        const double d = u01() * w.step;
        p = {p.x + std::cos(a) * d, p.y + std::sin(a) * d};
      }
      pos[i] = p;
      tier.move(i, p);
      model.set(i, p);
    }
    if (u01() < w.churn) {
      const auto id = static_cast<std::uint32_t>(u01() * w.members);
      if (alive[id]) {
        tier.erase(id);
        for (const auto& e : model.erase(id)) want.insert(e);
        alive[id] = false;
      } else {
        place(id);
      }
    }
    for (const auto& e : model.step()) want.insert(e);
    CAPTURE(t);
    REQUIRE(as_set(tier.update()) == want);
    if (t % 10 == 9 || t + 1 == w.ticks) check_state(tier, model);
  }
}

}  // namespace

TEST_CASE("crowd tier: random walks across cells of several sizes match the rule") {
  for (const double cell : {2.0, 4.5, 9.0, 25.0}) {
    run_walk({.radius = 8.0,
              .hysteresis = 1.0,
              .cell = cell,
              .side = 50.0,
              .step = 1.2,
              .teleport = 0.01,
              .churn = 0.5,
              .members = 220,
              .ticks = 60,
              .seed = 7});
  }
}

TEST_CASE("crowd tier: more than 64 members per cell (several words per row)") {
  run_walk({.radius = 3.0,
            .hysteresis = 0.5,
            .cell = 6.0,
            .side = 12.0,
            .step = 0.6,
            .teleport = 0.02,
            .churn = 0.5,
            .members = 400,
            .ticks = 40,
            .seed = 11});
}

TEST_CASE("crowd tier: no hysteresis and radius 0") {
  run_walk({.radius = 0.0,
            .hysteresis = 0.0,
            .cell = 1.0,
            .side = 3.0,
            .step = 0.5,
            .teleport = 0.0,
            .churn = 0.0,
            .members = 60,
            .ticks = 30,
            .seed = 3});
  run_walk({.radius = 5.0,
            .hysteresis = 0.0,
            .cell = 3.0,
            .side = 30.0,
            .step = 1.0,
            .teleport = 0.05,
            .churn = 0.3,
            .members = 150,
            .ticks = 40,
            .seed = 5});
}

TEST_CASE("crowd tier: enter at exactly r, leave only beyond r + h, far from the origin") {
  const double r = 30.0;
  const double h = 2.0;
  CrowdTier tier(12.0, r, h);
  const Vec2 base{999'983.25, -654'321.5};
  tier.insert(0, base);
  tier.insert(1, {base.x + r + 0.5, base.y});
  CHECK(tier.update().empty());
  // Exactly r apart in double (the difference of the coordinates is exactly r).
  tier.move(1, {base.x + r, base.y});
  auto events = tier.update();
  REQUIRE(events.size() == 1);
  CHECK(events[0].kind == EventKind::kEnter);
  CHECK(tier.sees(0, 1));
  CHECK(tier.sees(1, 0));
  // Exactly r + h: still in view; the next double beyond it: leaves.
  tier.move(1, {base.x + r + h, base.y});
  CHECK(tier.update().empty());
  tier.move(1, {std::nextafter(base.x + r + h, 2e6), base.y});
  events = tier.update();
  REQUIRE(events.size() == 1);
  CHECK(events[0].kind == EventKind::kLeave);
  CHECK_FALSE(tier.sees(0, 1));
  // The next double beyond r does not enter; r itself does.
  tier.move(1, {std::nextafter(base.x + r, 2e6), base.y});
  CHECK(tier.update().empty());
  tier.move(1, {base.x, base.y + r});
  CHECK(tier.update().size() == 1);
  CHECK(tier.check_invariants() == "");
}

TEST_CASE("crowd tier: erase and teleports") {
  CrowdTier tier(4.0, 5.0, 1.0);
  tier.insert(0, {0.0, 0.0});
  tier.insert(1, {1.0, 0.0});
  tier.insert(2, {0.0, 2.0});
  CHECK(tier.update().size() == 3);
  CHECK(tier.visible_pairs() == 3);
  // An erased member's pairs leave at the next update, with nothing else.
  tier.erase(2);
  CHECK_FALSE(tier.contains(2));
  auto events = tier.update();
  CHECK(events.size() == 2);
  for (const auto& e : events) {
    CHECK(e.kind == EventKind::kLeave);
    CHECK(e.a == 2);
  }
  // A teleport far away: the cells are out of reach, the pair leaves.
  tier.move(1, {500.0, 500.0});
  events = tier.update();
  REQUIRE(events.size() == 1);
  CHECK(events[0].kind == EventKind::kLeave);
  // A teleport and back before the update: nothing happens.
  tier.move(1, {0.5, 0.0});
  CHECK(tier.update().size() == 1);  // back within r: enters
  tier.move(1, {-400.0, 0.0});
  tier.move(1, {0.5, 0.5});
  CHECK(tier.update().empty());
  CHECK(tier.sees(0, 1));
  // The id of an erased member can be inserted again; its pairs start out of view.
  tier.insert(2, {0.0, 1.0});
  events = tier.update();
  CHECK(events.size() == 2);
  CHECK(tier.check_invariants() == "");
  CHECK_THROWS_AS(tier.insert(2, {0.0, 0.0}), std::logic_error);
  CHECK_THROWS_AS(tier.move(7, {0.0, 0.0}), std::logic_error);
  CHECK_THROWS_AS(tier.move(0, {std::nan(""), 0.0}), std::invalid_argument);
  CHECK_THROWS_AS(CrowdTier(0.5, 30.0, 2.0), std::invalid_argument);  // cells below (r+h)/16
}

TEST_CASE("crowd tier: members released and handed back keep their pairs") {
  // A crowd walking; each tick some members are released (their partners in view returned,
  // no events) and inserted again with those pairs set in view: the tier must then go on
  // exactly as the model, which never saw them leave.
  const double r = 6.0;
  const double h = 1.5;
  CrowdTier tier(3.0, r, h);
  Model model(r, h);
  zone::util::SplitMix64 rng(77);
  std::vector<Vec2> pos(150);
  for (std::uint32_t id = 0; id < pos.size(); ++id) {
    pos[id] = {rng.u01() * 40.0, rng.u01() * 40.0};
    tier.insert(id, pos[id]);
    model.set(id, pos[id]);
  }
  std::uint64_t handed = 0;
  std::vector<std::uint32_t> partners;
  for (int tick = 0; tick < 60; ++tick) {
    for (std::uint32_t id = 0; id < pos.size(); ++id) {
      pos[id].x = std::clamp(pos[id].x + (rng.u01() - 0.5) * 1.2, 0.0, 40.0);
      pos[id].y = std::clamp(pos[id].y + (rng.u01() - 0.5) * 1.2, 0.0, 40.0);
      tier.move(id, pos[id]);
      model.set(id, pos[id]);
    }
    CAPTURE(tick);
    REQUIRE(as_set(tier.update()) == model.step());
    for (int k = 0; k < 8; ++k) {
      const auto id = static_cast<std::uint32_t>(rng.next() % pos.size());
      partners.clear();
      tier.release(id, partners);
      CHECK_FALSE(tier.contains(id));
      std::vector<std::uint32_t> sorted = partners;
      std::sort(sorted.begin(), sorted.end());
      REQUIRE(sorted == model.partners(id));
      tier.insert(id, pos[id]);
      for (const std::uint32_t p : partners) tier.set_in_view(p, id);
      handed += partners.size();
    }
    check_state(tier, model);
  }
  CHECK(handed > 1000);
  // Refused: a pair in view already, a pair whose cells are out of reach, non-members.
  tier.insert(500, {0.0, 0.0});
  tier.insert(501, {1.0, 0.0});
  tier.insert(502, {300.0, 0.0});
  tier.set_in_view(500, 501);
  CHECK_THROWS_AS(tier.set_in_view(501, 500), std::logic_error);
  CHECK_THROWS_AS(tier.set_in_view(500, 502), std::logic_error);
  CHECK_THROWS_AS(tier.set_in_view(500, 503), std::logic_error);
  CHECK_THROWS_AS(tier.set_in_view(500, 500), std::logic_error);
  CHECK_THROWS_AS(tier.release(503, partners), std::logic_error);
  CHECK(tier.check_invariants() == "");
}

TEST_CASE("crowd tier: the pass kernel matches its definition") {
  zone::util::SplitMix64 rng(99);
  // Another cell, looking for far and near rows or not; the cell itself (near rows).
  for (const int kind : {0, 1, 2}) {
    const bool self = kind == 2;
    const bool far_rows = kind == 0;
    const bool near_rows = kind != 1;
    CAPTURE(far_rows);
    CAPTURE(near_rows);
    for (const std::uint32_t count : {1u, 7u, 8u, 63u, 64u, 65u, 130u}) {
      CAPTURE(count);
      CAPTURE(self);
      const std::uint32_t lanes = (count + 7) & ~7u;
      const std::uint32_t words = std::max(1u, (count + 63) / 64) + 1;  // one to spare
      std::vector<float> ax(lanes, 1e9f), ay(lanes, 1e9f);
      for (std::uint32_t i = 0; i < count; ++i) {
        ax[i] = static_cast<float>(rng.u01() * 10.0);
        ay[i] = static_cast<float>(rng.u01() * 10.0);
      }
      const std::uint32_t rows = self ? count : 37;
      // The other cell's rows reach 12 m beyond this one's square of 10 m (some far rows).
      const std::uint32_t padded = (rows + 7) & ~7u;  // read up to 8 rows at a time
      std::vector<float> bx(padded, 1e9f), by(padded, 1e9f);
      for (std::uint32_t j = 0; j < rows; ++j) {
        bx[j] = self ? ax[j] : static_cast<float>(rng.u01() * 20.0);
        by[j] = self ? ay[j] : static_cast<float>(rng.u01() * 20.0);
      }
      // About a quarter of the bits set, but none in one row of three.
      std::vector<std::uint64_t> old(std::size_t{padded} * words);
      for (std::size_t k = 0; k < std::size_t{rows} * words; ++k) {
        old[k] = k / words % 3 == 0 ? 0 : rng.next() & rng.next();
      }
      const zone::aoi::simd::CrowdPass p{.ax = ax.data(),
                                         .ay = ay.data(),
                                         .count = count,
                                         .lanes = lanes,
                                         .bx = bx.data(),
                                         .by = by.data(),
                                         .rows = rows,
                                         .words = words,
                                         .old = old.data(),
                                         .sx = self ? 0.0f : -4.0f,
                                         .sy = self ? 0.0f : 3.0f,
                                         .enter2 = 30.0f,
                                         .stay2 = 42.0f,
                                         .extent = 10.0f,
                                         .inner2 = 120.0f,
                                         .far_rows = far_rows,
                                         .near_rows = near_rows,
                                         .self = self};
      std::uint32_t far_row_count = 0;
      std::uint32_t near_row_count = 0;
      for (const auto& version : zone::aoi::simd::crowd_pass_versions()) {
        CAPTURE(version.name);
        std::vector<zone::aoi::simd::CrowdChange> got(std::size_t{rows} * words);
        got.resize(version.run(p, got.data()));
        std::vector<std::pair<std::uint32_t, std::uint64_t>> want;
        for (std::uint32_t j = 0; j < rows; ++j) {
          // A far row (no bit set, its point beyond sqrt(enter2) of the square): left out.
          const float px = bx[j] + p.sx;
          const float py = by[j] + p.sy;
          const float qx = std::max(std::max(-px, px - p.extent), 0.0f);
          const float qy = std::max(std::max(-py, py - p.extent), 0.0f);
          const float qx2 = qx * qx;
          const float qy2 = qy * qy;
          bool clear = true;
          for (std::uint32_t w = 0; w < words; ++w) clear = clear && old[j * words + w] == 0;
          if (far_rows && clear && qx2 + qy2 > p.enter2) {
            ++far_row_count;
            continue;
          }
          // A near row (its point within sqrt(inner2) of all the square): all enter, untested.
          const float fx = std::max(px, p.extent - px);
          const float fy = std::max(py, p.extent - py);
          const float fx2 = fx * fx;
          const float fy2 = fy * fy;
          if (near_rows && fx2 + fy2 <= p.inner2) {
            ++near_row_count;
            for (std::uint32_t w = 0; w < words; ++w) {
              std::uint64_t change = 0;
              for (std::uint32_t k = 0; k < 64; ++k) {
                const std::uint32_t i = 64 * w + k;
                if (i >= count || (self && i >= j)) continue;
                if ((old[std::size_t{j} * words + w] >> k & 1u) == 0)
                  change |= std::uint64_t{1} << k;
              }
              if (change != 0) want.push_back({j * words + w, change});
            }
            continue;
          }
          for (std::uint32_t w = 0; w < words; ++w) {
            std::uint64_t change = 0;
            for (std::uint32_t k = 0; k < 64; ++k) {
              const std::uint32_t i = 64 * w + k;
              if (i >= count || (self && i >= j)) continue;
              const float dx = ax[i] - (bx[j] + p.sx);
              const float dy = ay[i] - (by[j] + p.sy);
              const float dx2 = dx * dx;
              const float dy2 = dy * dy;
              const float d2 = dx2 + dy2;
              const bool in = (old[std::size_t{j} * words + w] >> k & 1u) != 0;
              if (in ? !(d2 <= p.stay2) : d2 <= p.enter2) change |= std::uint64_t{1} << k;
            }
            if (change != 0) want.push_back({j * words + w, change});
          }
        }
        REQUIRE(got.size() == want.size());
        for (std::size_t k = 0; k < want.size(); ++k) {
          CHECK(got[k].word == want[k].first);
          CHECK(got[k].bits == want[k].second);
        }
      }
      CHECK((far_row_count > 0) == far_rows);
      CHECK((near_row_count > 0) == near_rows);
    }
  }
}

TEST_CASE("crowd tier: the cell index against a std::map under churn") {
  zone::aoi::CellIndex index;
  std::map<std::uint64_t, std::uint32_t> model;
  zone::util::SplitMix64 rng(5);
  // Keys from a small range (many collisions of home slots as the table fills and empties),
  // including the all-ones key.
  auto pick = [&] {
    const std::uint64_t k = rng.next() % 3000;
    return k == 0 ? ~std::uint64_t{0} : (k << 32) | (k * 7 % 11);
  };
  for (int step = 0; step < 200'000; ++step) {
    const std::uint64_t k = pick();
    const auto found = model.find(k);
    if (found == model.end()) {
      const auto v = static_cast<std::uint32_t>(step);
      index.insert(k, v);
      model.emplace(k, v);
    } else if (rng.next() % 3 != 0) {
      index.erase(k);
      model.erase(found);
    }
    if (step % 997 == 0) {
      REQUIRE(index.size() == model.size());
      for (std::uint64_t j = 0; j < 3000; ++j) {
        const std::uint64_t key = j == 0 ? ~std::uint64_t{0} : (j << 32) | (j * 7 % 11);
        const auto m = model.find(key);
        CHECK(index.find(key) == (m == model.end() ? zone::aoi::CellIndex::kNone : m->second));
      }
    }
  }
}
