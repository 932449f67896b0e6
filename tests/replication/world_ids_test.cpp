// Entity ids unique across a world of zones: the zone's index in the top bits, a
// per-zone counter below, and such ids replicate like any others.
#include <doctest/doctest.h>

#include <string>

#include "loopback.hpp"

using namespace zone;
using test::Loopback;
using test::LoopClient;

TEST_CASE("world ids: a zone on its own numbers its entities 1, 2, 3...") {
  world::World w(test::small_world(3));
  w.spawn_npcs();
  std::vector<world::EntityId> ids;
  w.for_each_entity([&](std::uint32_t, const world::Entity& e) { ids.push_back(e.id); });
  CHECK(ids == std::vector<world::EntityId>{1, 2, 3});
  CHECK(world::zone_of(3) == 0);
}

TEST_CASE("world ids: zone k's ids carry k in their top 6 bits, and never meet another zone's") {
  for (std::uint32_t zone : {1u, 5u, 63u}) {
    world::WorldParams p = test::small_world(4);
    p.zone_index = zone;
    world::World w(p);
    w.spawn_npcs();
    const std::uint32_t slot = w.spawn_player("p");
    CHECK(w.entity(slot).id == (zone << 26) + 5);
    w.for_each_entity([&](std::uint32_t, const world::Entity& e) {
      CHECK(world::zone_of(e.id) == zone);
      CHECK((e.id & world::kLocalIdMask) != 0);
    });
    CHECK(w.can_spawn());
  }
  CHECK(world::first_entity_id(0) == 1);
  CHECK(world::first_entity_id(63) == 0xFC000001u);
}

TEST_CASE("world ids: ids from the top of the id space replicate exactly") {
  // Zone 63: every id is above 4.2 billion, so spawns carry 5-byte id gaps.
  world::WorldParams wp = test::small_world(50);
  wp.zone_index = 63;
  Loopback lb(wp, test::rparams(64000));
  LoopClient& a = lb.connect("alice");
  CHECK(world::zone_of(a.entity) == 63);
  lb.run(40);
  CHECK(lb.diff(a).empty());
  CHECK(a.replica.violations().empty());
  CHECK(a.malformed == 0);
  CHECK(a.replica.enters() > 0);
  for (const auto& e : a.replica.current().entities) CHECK(world::zone_of(e.id) == 63);
}
