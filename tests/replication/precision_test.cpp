// Precision tiers (docs/architecture.md, "Precision tiers"): the units on the wire, the
// world's engaged rule with its hysteresis, and Replicator + World end to end without a
// network (tests/replication/loopback.hpp): clients hold every entity at exactly its
// tier's quantised values, a tier change arrives with its new units, and coarse units
// cost fewer bytes.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <numbers>
#include <string>

#include "loopback.hpp"

using namespace zone;
using test::check_clean;
using test::Loopback;
using test::LoopClient;

namespace {

constexpr world::Precision kFine{1, 0};
constexpr world::Precision kPlayerTier{2, 4};  // 2 cm, 1/4096 turn
constexpr world::Precision kAmbient{10, 8};    // 10 cm, 1/256 turn

world::PrecisionParams tiers(double engage_radius) {
  return {kPlayerTier, kAmbient, engage_radius};
}

test::FieldValues with_units(std::uint32_t position_cm, std::uint32_t heading_shift) {
  test::FieldValues v{};
  v[protocol::kPositionUnit] = static_cast<std::int32_t>(position_cm - 1);
  v[protocol::kHeadingUnit] = static_cast<std::int32_t>(heading_shift);
  return v;
}

}  // namespace

TEST_CASE("precision: positions and headings in an entity's own units") {
  for (const std::uint32_t unit : {1u, 2u, 10u, 256u}) {
    CAPTURE(unit);
    test::FieldValues v = with_units(unit, 0);
    CHECK(protocol::position_unit_cm(v) == unit);
    for (const double m : {0.0, 0.004, 0.05, 123.456, -77.77, 1999.999}) {
      CAPTURE(m);
      v[protocol::kX] = protocol::quantize_position(m, unit);
      v[protocol::kY] = protocol::quantize_position(-m, unit);
      // Rounded to the nearest unit: never more than half a unit off.
      CHECK(std::abs(protocol::position_metres(v, protocol::kX) - m) <= unit * 0.005 + 1e-9);
      CHECK(std::abs(protocol::position_metres(v, protocol::kY) + m) <= unit * 0.005 + 1e-9);
    }
  }
  // One centimetre is the unit of protocol version 4: the same numbers.
  CHECK(protocol::quantize_position(12.345, 1) == protocol::quantize_position(12.345));
  for (const std::uint32_t shift : {0u, 4u, 8u}) {
    CAPTURE(shift);
    test::FieldValues v = with_units(1, shift);
    const std::uint32_t units = 65536u >> shift;
    for (const double r : {0.0, 0.3, 1.0, 3.14159, -2.0, 6.2831}) {
      CAPTURE(r);
      v[protocol::kHeading] = protocol::quantize_heading(r, shift);
      CHECK(static_cast<std::uint32_t>(v[protocol::kHeading]) < units);
      // The nearest unit on the circle.
      const double turn = 2.0 * std::numbers::pi;
      double err = std::fmod(protocol::heading_radians(v) - r, turn);
      if (err > turn / 2) err -= turn;
      if (err < -turn / 2) err += turn;
      CHECK(std::abs(err) <= turn / units / 2 + 1e-9);
    }
  }
  // A heading unit beyond what the protocol allows is read as the coarsest.
  test::FieldValues odd = with_units(1, 200);
  CHECK(protocol::heading_shift(odd) == protocol::kMaxHeadingShift);
  // The default record (both fields 0) is the finest.
  CHECK(protocol::position_unit_cm(test::FieldValues{}) == 1);
  CHECK(protocol::heading_shift(test::FieldValues{}) == 0);
}

TEST_CASE("precision: an NPC is engaged within the radius - released beyond radius + hysteresis") {
  world::WorldParams wp = test::small_world(1);
  wp.precision = tiers(8.0);
  world::World w(wp);
  w.spawn_npcs();
  const std::uint32_t player = w.spawn_player("p");
  const std::uint32_t npc = 0;
  REQUIRE(w.entity(npc).kind == world::EntityKind::kNpc);
  const double r = 8.0, outer = 8.0 + wp.grid.hysteresis;
  bool expected = false;
  int engaged_ticks = 0, released_after_engaged = 0, in_hysteresis_band = 0;
  bool was_engaged = false;
  // Walk to the NPC, wait beside it, walk away 60 ticks (42 m), and again: three times.
  int away_left = 0, trips = 0;
  for (int t = 0; t < 3000 && trips < 3; ++t) {
    const world::Entity& p = w.entity(player);
    const world::Entity& n = w.entity(npc);
    const double dx = n.x - p.x, dy = n.y - p.y;
    const double len = std::max(1e-9, std::hypot(dx, dy));
    if (away_left > 0) {
      w.set_intent(player, -dx / len, -dy / len);
      if (--away_left == 0) ++trips;
    } else if (len > 2.0) {
      w.set_intent(player, dx / len, dy / len);
    } else {
      w.set_intent(player, 0.0, 0.0);
      away_left = 60;
    }
    w.step(0.05);
    w.update_aoi();
    const double d =
        std::hypot(w.entity(npc).x - w.entity(player).x, w.entity(npc).y - w.entity(player).y);
    expected = expected ? d <= outer : d <= r;
    CAPTURE(t);
    CAPTURE(d);
    REQUIRE(w.entity(npc).engaged == expected);
    CHECK(w.entity(npc).precision == (expected ? kPlayerTier : kAmbient));
    CHECK(w.entity(player).precision == kPlayerTier);
    CHECK(w.engaged_npc_count() == (expected ? 1u : 0u));
    CHECK(w.ambient_count() == (expected ? 0u : 1u));
    if (expected) ++engaged_ticks;
    if (expected && d > r) ++in_hysteresis_band;
    if (was_engaged && !expected) ++released_after_engaged;
    was_engaged = expected;
  }
  CHECK(engaged_ticks > 100);
  CHECK(in_hysteresis_band > 0);  // held engaged between r and r + hysteresis
  CHECK(released_after_engaged >= 2);
  CHECK(w.engagements() >= 2);
  // engage_radius 0: never engaged; the ambient tier for every NPC.
  world::WorldParams never = wp;
  never.precision.engage_radius = 0.0;
  world::World w0(never);
  w0.spawn_npcs();
  w0.spawn_player("p");
  w0.update_aoi();
  CHECK(w0.entity(npc).precision == kAmbient);
  CHECK_FALSE(w0.entity(npc).engaged);
  // The same tier for all: nothing is ambient, nothing counted.
  world::WorldParams same = wp;
  same.precision = {kFine, kFine, 8.0};
  world::World w1(same);
  w1.spawn_npcs();
  w1.spawn_player("p");
  w1.update_aoi();
  CHECK(w1.ambient_count() == 0);
  CHECK(w1.engaged_npc_count() == 0);
}

TEST_CASE("precision replication: clients hold each tier's exact values - through loss too") {
  world::WorldParams wp = test::small_world(120, world::NpcBehaviour::kWander);
  wp.npcs.idle_fraction = 0.1;
  wp.precision = tiers(10.0);
  for (const double loss : {0.0, 0.2}) {
    CAPTURE(loss);
    Loopback lb(wp, test::rparams(64000), 3);
    lb.loss = loss;
    LoopClient& a = lb.connect("a");
    LoopClient& b = lb.connect("b");
    test::Tour wa = test::square_tour(15, 185), wb = test::square_tour(60, 140);
    wb.next = 2;
    int compared = 0, mismatched = 0, ambient_held = 0, engaged_held = 0;
    std::string first;
    for (int t = 1; t <= 400; ++t) {
      wa.steer(lb.world, a.slot);
      wb.steer(lb.world, b.slot);
      lb.step();
      for (const LoopClient* c : {&a, &b}) {
        if (c->replica.ack_tick() != lb.tick) continue;  // frame of this tick incomplete
        ++compared;
        const std::string diff = lb.diff(*c);
        if ((!diff.empty() || !lb.self_ok(*c)) && mismatched++ == 0) first = diff;
        for (const replica::EntityState& e : c->replica.current().entities) {
          const world::Entity* we = lb.world.find(e.id);
          if (we == nullptr || we->kind != world::EntityKind::kNpc) continue;
          const std::uint32_t unit = protocol::position_unit_cm(e.values);
          if (unit == kAmbient.position_cm) ++ambient_held;
          if (unit == kPlayerTier.position_cm) ++engaged_held;
        }
        CHECK(protocol::position_unit_cm(c->replica.current().self) == kPlayerTier.position_cm);
        CHECK(protocol::heading_shift(c->replica.current().self) == kPlayerTier.heading_shift);
      }
    }
    CHECK_MESSAGE(mismatched == 0, first);
    CHECK(compared > 400);
    CHECK(ambient_held > 1000);
    CHECK(engaged_held > 50);  // NPCs met on the way switched tier, and back
    CHECK(lb.world.engagements() > 5);
    check_clean(lb, a);  // no impossible jump across a change of units
    check_clean(lb, b);
  }
}

TEST_CASE("precision replication: the ambient tier costs fewer bytes than the finest") {
  world::WorldParams wp = test::small_world(150, world::NpcBehaviour::kWander);
  wp.npcs.idle_fraction = 0.0;
  auto bytes_with = [&](const world::PrecisionParams& precision) {
    world::WorldParams p = wp;
    p.precision = precision;
    Loopback lb(p, test::rparams(200000));
    LoopClient& a = lb.connect("a");
    test::Tour tour = test::square_tour(20, 180);
    std::uint64_t bytes = 0;
    for (int t = 1; t <= 300; ++t) {
      tour.steer(lb.world, a.slot);
      lb.step();
      bytes += a.bytes_this_tick();
    }
    check_clean(lb, a);
    return bytes;
  };
  const std::uint64_t fine = bytes_with({kFine, kFine, 0.0});
  const std::uint64_t coarse = bytes_with({kFine, kAmbient, 0.0});
  CAPTURE(fine);
  CAPTURE(coarse);
  // Same world, same walk (precision changes nothing in the simulation): fewer bytes.
  CHECK(coarse < fine);
}
