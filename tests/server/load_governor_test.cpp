// interest.load_adaptive's controller: smoothing, thresholds, hysteresis, hold time.
#include <doctest/doctest.h>

#include "zone/load_governor.hpp"

using zone::LoadGovernor;
using zone::LoadParams;

namespace {

LoadParams params() {
  LoadParams p;
  p.enabled = true;
  p.budget_seconds = 0.050;
  p.raise_share = 0.8;
  p.lower_share = 0.5;
  p.smoothing_ticks = 4;
  p.hold_ticks = 10;
  p.max_level = 3;
  return p;
}

}  // namespace

TEST_CASE("load governor: overload raises the level one step per hold period, up to the top") {
  LoadGovernor g;
  g.configure(params());
  int changes = 0;
  for (int t = 0; t < 9; ++t) changes += g.observe(0.060);
  CHECK(changes == 0);  // not before the hold time
  CHECK(g.level() == 0);
  CHECK(g.share() > 1.0);
  changes += g.observe(0.060);
  CHECK(g.level() == 1);
  for (int t = 0; t < 9; ++t) g.observe(0.060);
  CHECK(g.level() == 1);
  g.observe(0.060);
  CHECK(g.level() == 2);
  for (int t = 0; t < 100; ++t) g.observe(0.060);
  CHECK(g.level() == 3);  // capped
  CHECK(g.changes() == 3);
}

TEST_CASE("load governor: between the two shares the level holds, below the lower it falls") {
  LoadGovernor g;
  g.configure(params());
  for (int t = 0; t < 40; ++t) g.observe(0.060);
  REQUIRE(g.level() == 3);
  // 65% of the budget: inside the hysteresis band, nothing moves.
  for (int t = 0; t < 200; ++t) g.observe(0.0325);
  CHECK(g.level() == 3);
  // One slow tick is smoothed away: no reaction to a spike.
  LoadGovernor calm;
  calm.configure(params());
  for (int t = 0; t < 40; ++t) calm.observe(0.010);
  calm.observe(0.100);
  for (int t = 0; t < 9; ++t) calm.observe(0.010);
  CHECK(calm.level() == 0);
  // Light load: down one step per hold period, to 0.
  for (int t = 0; t < 10; ++t) g.observe(0.010);
  CHECK(g.level() == 2);
  for (int t = 0; t < 100; ++t) g.observe(0.010);
  CHECK(g.level() == 0);
}

TEST_CASE("load governor: switched off it stays at level 0 and drops what it had") {
  LoadGovernor g;
  g.configure(params());
  for (int t = 0; t < 40; ++t) g.observe(0.060);
  REQUIRE(g.level() == 3);
  LoadParams off = params();
  off.enabled = false;
  g.configure(off);
  CHECK(g.level() == 0);
  for (int t = 0; t < 100; ++t) CHECK_FALSE(g.observe(0.060));
  LoadParams fewer = params();
  fewer.max_level = 1;
  g.configure(fewer);
  for (int t = 0; t < 100; ++t) g.observe(0.060);
  CHECK(g.level() == 1);
}
