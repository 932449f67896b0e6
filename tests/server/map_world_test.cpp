// The live map's data in a world of zones (docs/world.md, "Live map"): the area the AOI
// covers around the zone, ghosts with their own kind codes and owners, the neighbours'
// rectangles and names with the ghosts each has here; and a zone alone, whose JSON has
// none of it. Also the selection's view, in both directions of the AOI's mutual pairs.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "world/ghosts.hpp"
#include "world/world.hpp"
#include "zone/map_publisher.hpp"

using namespace zone;

namespace {

// The kind code of every entity in the frame ([id, kind, x, y, ...]), by id.
std::map<std::uint32_t, int> kinds_of(const nlohmann::json& frame) {
  std::map<std::uint32_t, int> kinds;
  const nlohmann::json& e = frame.at("entities");
  REQUIRE(e.size() % 4 == 0);
  for (std::size_t i = 0; i < e.size(); i += 4) {
    kinds[e[i].get<std::uint32_t>()] = e[i + 1].get<int>();
  }
  return kinds;
}

std::uint32_t cell_total(const nlohmann::json& frame) {
  std::uint32_t total = 0;
  for (const nlohmann::json& n : frame.at("cells").at("counts")) total += n.get<std::uint32_t>();
  return total;
}

// West, a 40 m square at index 0 with a 40 m ghost distance; east beside it (index 1),
// north above it (index 2) and north-east at its corner (index 3).
world::WorldParams west_params() {
  world::WorldParams wp;
  wp.grid.bounds = {{0.0, 0.0}, {40.0, 40.0}};
  wp.grid.cell_size = 10.0;
  wp.zone_index = 0;
  wp.ghost_margin = 40.0;
  return wp;
}

// One entity of zone `source`'s, listed alone in that zone's ghost list to this zone's
// ghosts (world::Ghosts places it as a ghost that follows `source`).
void list_alone(world::Ghosts& ghosts, std::uint32_t source, std::uint32_t id,
                world::EntityKind kind, std::string name, double x, double y) {
  world::GhostState g;
  g.id = id;
  g.kind = kind;
  g.x = x;
  g.y = y;
  g.properties.type = kind == world::EntityKind::kPlayer ? 0 : 1;
  g.name = std::move(name);
  REQUIRE(ghosts.apply(source, 1, {&g, 1}, world::Ghosts::Clock::now()));
}

MapWorld west_world() {
  return {.name = "west",
          .index = 0,
          .neighbours = {{1, "east", {{40.0, 0.0}, {140.0, 40.0}}},
                         {2, "north", {{0.0, 40.0}, {40.0, 120.0}}},
                         {3, "north-east", {{40.0, 40.0}, {140.0, 120.0}}}}};
}

}  // namespace

TEST_CASE("live map: in a world, the covered area, ghosts by kind and owner, and neighbours") {
  world::World w(west_params());
  const std::uint32_t own = w.entity(w.spawn_player("walker")).id;
  // An NPC of east's and a player of north's, both in the band around west.
  const std::uint32_t east_npc = world::first_entity_id(1) + 6;
  const std::uint32_t north_player = world::first_entity_id(2) + 2;
  // world::Ghosts keeps the zone whose lists each ghost follows: its owner on the map.
  world::Ghosts ghosts(w, 0);
  list_alone(ghosts, 1, east_npc, world::EntityKind::kNpc, "wolf", 50.0, 20.0);
  list_alone(ghosts, 2, north_player, world::EntityKind::kPlayer, "scout", 20.0, 55.0);
  REQUIRE(w.ghost_count() == 2);

  MapPublisher map(1);
  map.set_world(west_world());
  map.select(east_npc);
  map.publish(1, w, MapStats{}, &ghosts);
  const nlohmann::json j = nlohmann::json::parse(map.frame_json(MapWindow{}));
  INFO(j.dump());

  // The zone's own rectangle stays "world"; the AOI covers the ghost distance around it.
  CHECK(j.at("world") == nlohmann::json::array({0.0, 0.0, 40.0, 40.0}));
  REQUIRE(j.contains("zone"));
  const nlohmann::json& z = j.at("zone");
  CHECK(z.at("name") == "west");
  CHECK(z.at("index") == 0);
  CHECK(z.at("covered") == nlohmann::json::array({-40.0, -40.0, 80.0, 80.0}));
  CHECK(z.at("ghosts") == 2);
  CHECK(z.at("ghosts_in_window") == 2);

  // Neighbours in the world map's order, each with its rectangle, name and ghosts here.
  const nlohmann::json& n = z.at("neighbours");
  REQUIRE(n.size() == 3);
  CHECK(n[0] ==
        nlohmann::json{
            {"index", 1}, {"name", "east"}, {"rect", {40.0, 0.0, 140.0, 40.0}}, {"ghosts", 1}});
  CHECK(n[1] ==
        nlohmann::json{
            {"index", 2}, {"name", "north"}, {"rect", {0.0, 40.0, 40.0, 120.0}}, {"ghosts", 1}});
  CHECK(n[2] == nlohmann::json{{"index", 3},
                               {"name", "north-east"},
                               {"rect", {40.0, 40.0, 140.0, 120.0}},
                               {"ghosts", 0}});

  // Ghosts have their own kind codes: 3 a ghost player, 4 a ghost NPC.
  const std::map<std::uint32_t, int> kinds = kinds_of(j);
  CHECK(kinds == std::map<std::uint32_t, int>{{own, 0}, {east_npc, 4}, {north_player, 3}});
  // Cell shading counts the zone's own entities, not the ghosts in the band.
  CHECK(cell_total(j) == 1);

  // The selected ghost: its kind as its owner has it, and the zone that owns it.
  const nlohmann::json& sel = j.at("selected");
  CHECK(sel.at("id") == east_npc);
  CHECK(sel.at("kind") == 1);
  CHECK(sel.at("owner") == nlohmann::json{{"index", 1}, {"name", "east"}});

  // A window over the zone's rectangle only: no ghost in it.
  const nlohmann::json inside =
      nlohmann::json::parse(map.frame_json(MapWindow{0.0, 0.0, 40.0, 40.0}));
  CHECK(inside.at("entities_in_window") == 1);
  CHECK(inside.at("zone").at("ghosts_in_window") == 0);
  CHECK(inside.at("zone").at("ghosts") == 2);

  // The zone's own entity selected: no owner. A ghost gone: its neighbour's count drops.
  // North's lists stop naming its player: its ghost goes once the grace is over.
  map.select(own);
  REQUIRE(ghosts.apply(2, 1, {}, world::Ghosts::Clock::now()));
  for (std::uint32_t t = 0; t < world::kUnlistedGraceTicks; ++t) ghosts.follow(1.0);
  REQUIRE(w.ghost_count() == 1);
  map.publish(2, w, MapStats{}, &ghosts);
  const nlohmann::json later = nlohmann::json::parse(map.frame_json(MapWindow{}));
  CHECK(later.at("selected").at("id") == own);
  CHECK_FALSE(later.at("selected").contains("owner"));
  CHECK(later.at("zone").at("ghosts") == 1);
  CHECK(later.at("zone").at("neighbours")[0].at("ghosts") == 1);
  CHECK(later.at("zone").at("neighbours")[1].at("ghosts") == 0);
}

TEST_CASE("live map: a ghost of a zone that is not a neighbour is counted, its owner unnamed") {
  world::World w(west_params());
  const std::uint32_t stray = world::first_entity_id(5) + 1;
  world::Ghosts ghosts(w, 0);
  list_alone(ghosts, 5, stray, world::EntityKind::kNpc, "stray", -10.0, 10.0);
  MapPublisher map(1);
  map.set_world(west_world());
  map.select(stray);
  map.publish(1, w, MapStats{}, &ghosts);
  const nlohmann::json j = nlohmann::json::parse(map.frame_json(MapWindow{}));
  INFO(j.dump());
  CHECK(j.at("zone").at("ghosts") == 1);
  for (const nlohmann::json& n : j.at("zone").at("neighbours")) CHECK(n.at("ghosts") == 0);
  CHECK(j.at("selected").at("owner") == nlohmann::json{{"index", 5}, {"name", ""}});
}

TEST_CASE("live map: a zone alone has no zone object, no ghost kinds and no owner") {
  world::WorldParams wp;
  wp.grid.bounds = {{0.0, 0.0}, {200.0, 200.0}};
  wp.npcs.count = 5;
  world::World w(wp);
  w.spawn_npcs();
  const std::uint32_t own = w.entity(w.spawn_player("walker")).id;
  MapPublisher map(1);
  map.select(own);
  map.publish(1, w, MapStats{});
  const std::string text = map.frame_json(MapWindow{});
  const nlohmann::json j = nlohmann::json::parse(text);
  INFO(text);
  CHECK_FALSE(j.contains("zone"));
  CHECK(text.find("ghost") == std::string::npos);
  CHECK_FALSE(j.at("selected").contains("owner"));
  const std::map<std::uint32_t, int> kinds = kinds_of(j);
  CHECK(kinds.size() == 6);
  for (const auto& [id, kind] : kinds) CHECK(kind <= 2);
  CHECK(cell_total(j) == 6);
}

TEST_CASE("live map: a ghost handed over between zones names its owner now, not its maker") {
  world::World w(west_params());
  // Made by north (its id's top bits), handed over to east, seen from west.
  const std::uint32_t id = world::first_entity_id(2) + 9;
  world::Ghosts ghosts(w, 0);
  list_alone(ghosts, 1, id, world::EntityKind::kPlayer, "traveller", 45.0, 30.0);
  MapPublisher map(1);
  map.set_world(west_world());
  map.select(id);
  map.publish(1, w, MapStats{}, &ghosts);
  const nlohmann::json j = nlohmann::json::parse(map.frame_json(MapWindow{}));
  INFO(j.dump());
  CHECK(j.at("selected").at("owner").at("index") == 1);
  CHECK(j.at("zone").at("neighbours")[0].at("ghosts") == 1);
}

TEST_CASE("live map: the selection's view lists everyone it sees, whichever slot is lower") {
  // Players share one view radius, so the AOI holds each pair in the lower slot's view
  // alone; the map must still list both directions.
  world::WorldParams wp;
  wp.grid.bounds = {{0.0, 0.0}, {20.0, 20.0}};
  wp.grid.cell_size = 8.0;
  wp.player_view_radius = 100.0;  // everyone sees everyone
  world::World w(wp);
  const std::uint32_t a = w.spawn_player("a"), b = w.spawn_player("b"), c = w.spawn_player("c");
  w.update_aoi();
  MapPublisher map(1);
  const std::uint32_t slots[] = {a, b, c};
  for (const std::uint32_t s : slots) {
    map.select(w.entity(s).id);
    map.publish(1, w, MapStats{});
    const nlohmann::json j = nlohmann::json::parse(map.frame_json(MapWindow{}));
    std::vector<std::uint32_t> view = j.at("selected").at("view").get<std::vector<std::uint32_t>>();
    std::sort(view.begin(), view.end());
    std::vector<std::uint32_t> others;
    for (const std::uint32_t t : slots) {
      if (t != s) others.push_back(w.entity(t).id);
    }
    std::sort(others.begin(), others.end());
    CHECK(view == others);
  }
}
