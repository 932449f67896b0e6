// The static layer's map file (config/static_map.hpp): what loads, and every refusal
// named by line and object; configs/maps/sample.yaml loads for the default world.
#include <doctest/doctest.h>

#include <string>

#include "config/static_map.hpp"
#include "config/zone_config.hpp"
#include "config_test_util.hpp"

using namespace zone::config;

namespace {

ZoneConfig world_200() {
  ZoneConfig c;
  c.world = {0.0, 0.0, 200.0, 200.0};
  c.statics.cell_size = 50.0;
  return c;
}

StaticMapResult load_map(std::string_view yaml, const ZoneConfig& c = world_200()) {
  return load_static_map_string(yaml, "map.yaml", c);
}

bool reports(const StaticMapResult& r, const std::string& text) {
  return r.error_report().find(text) != std::string::npos;
}

}  // namespace

TEST_CASE("static map: objects load in file order with their kinds") {
  const StaticMapResult r = load_map(
      "# a comment\n"
      "objects:\n"
      "  - [tree, 10, 20.5, 0.5]\n"
      "  - [rock, 199.99, 0, 4]\n"
      "  - [resource, 100, 100, 1.25]\n");
  REQUIRE_MESSAGE(r.ok(), r.error_report());
  REQUIRE(r.objects.size() == 3);
  CHECK(r.objects[0].kind == StaticKind::kTree);
  CHECK(r.objects[0].x == 10.0);
  CHECK(r.objects[0].y == 20.5);
  CHECK(r.objects[0].radius == 0.5);
  CHECK(r.objects[1].kind == StaticKind::kRock);
  CHECK(r.objects[2].kind == StaticKind::kResource);
  CHECK(load_map("objects: []\n").ok());
}

TEST_CASE("static map: each bad object is named by its line and index, and nothing loads") {
  const StaticMapResult r = load_map(
      "objects:\n"
      "  - [tree, 10, 20, 1]\n"
      "  - [bush, 10, 20, 1]\n"
      "  - [rock, 10, \"20\", 1]\n"
      "  - [rock, 10, 20]\n"
      "  - [rock, 500, 20, 1]\n"
      "  - [rock, 10, 20, 0]\n"
      "  - {kind: rock}\n"
      "  - [rock, 10, 20, .nan]\n");
  CHECK_FALSE(r.ok());
  CHECK(r.objects.empty());
  CHECK(r.errors.size() == 7);
  CHECK(reports(r, "map.yaml:3: objects[1]: expected the kind tree, rock or resource, got 'bush'"));
  CHECK(reports(r, "map.yaml:4: objects[2]: expected x, y and radius as numbers"));
  CHECK(reports(r, "map.yaml:5: objects[3]: expected [kind, x, y, radius]"));
  CHECK(reports(r,
                "map.yaml:6: objects[4]: expected the centre inside the world (x 0 .. 200, "
                "y 0 .. 200), got (500, 20)"));
  CHECK(reports(r, "map.yaml:7: objects[5]: expected a radius >= 0.01 and <= 1000 metres, got 0"));
  CHECK(reports(r, "map.yaml:8: objects[6]: expected [kind, x, y, radius]"));
  CHECK(reports(r, "map.yaml:9: objects[7]: expected x, y and radius as numbers"));
}

TEST_CASE("static map: the shape of the file") {
  CHECK(
      reports(load_map("- [tree, 1, 1, 1]\n"), "map.yaml:1: expected a map with the key objects"));
  CHECK(reports(load_map("trees: []\n"), "map.yaml:1: trees: unknown key; expected objects"));
  CHECK(reports(load_map("trees: []\n"), "objects: missing"));
  CHECK(reports(load_map("objects: 7\n"), "map.yaml:1: objects: expected a list, got 7"));
  CHECK(reports(load_map("objects: [\n"), "YAML syntax error"));
  CHECK(reports(load_static_map_file("/nonexistent/map.yaml", world_200()),
                "/nonexistent/map.yaml: cannot open config file"));
  CHECK(reports(load_static_map_file("/dev/zero", world_200()), "expected a regular file"));
}

TEST_CASE("static map: a duplicate objects key is refused, like any duplicate key") {
  // yaml-cpp keeps both entries and a lookup finds the first: the second list would be
  // silently ignored (issue 32).
  const StaticMapResult r =
      load_map("objects:\n  - [tree, 10, 10, 1]\nobjects:\n  - [rock, 20, 20, 2]\n");
  INFO(r.error_report());
  CHECK_FALSE(r.ok());
  CHECK(r.objects.empty());
  CHECK(reports(r, "map.yaml:3: objects: duplicate key (first given on line 1)"));
  // Three times: two errors, each naming the first.
  const StaticMapResult three = load_map("objects: []\nobjects: []\nobjects: []\n");
  CHECK(three.errors.size() == 2);
  CHECK(reports(three, "map.yaml:3: objects: duplicate key (first given on line 1)"));
}

TEST_CASE("static map: room to spawn, and a bounded message per cell") {
  // 200 x 200 m = 40,000 m^2; a rock of radius 80 m covers 20,106 m^2 (over half).
  const StaticMapResult big = load_map("objects:\n  - [rock, 100, 100, 80]\n");
  CHECK(reports(big, "objects: the objects cover 20106 m^2, more than 50% of the world"));
  std::string crowded = "objects:\n";
  for (std::size_t i = 0; i <= kMaxStaticObjectsPerCell; ++i)
    crowded += "  - [tree, 10, 10, 0.01]\n";
  const StaticMapResult full = load_map(crowded);
  CHECK(reports(full,
                "more than 2048 objects have their centre in one static cell (column 0, row 0"));
  // On the world's far corner: the last cell (column 3, row 3 of 50 m), as the grid files it.
  std::string corner = "objects:\n";
  for (std::size_t i = 0; i <= kMaxStaticObjectsPerCell; ++i) {
    corner += i % 2 ? "  - [tree, 200, 200, 0.01]\n" : "  - [tree, 170, 180, 0.01]\n";
  }
  CHECK(reports(load_map(corner), "one static cell (column 3, row 3"));
  // The same objects spread over two cells load.
  std::string spread = "objects:\n";
  for (std::size_t i = 0; i <= kMaxStaticObjectsPerCell; ++i) {
    spread += i % 2 ? "  - [tree, 10, 10, 0.01]\n" : "  - [tree, 60, 10, 0.01]\n";
  }
  CHECK(load_map(spread).ok());
}

TEST_CASE("static map: positions are whole centimetres, and checked as such") {
  const StaticMapResult r = load_map(
      "objects:\n"
      "  - [tree, 10.004, 20.006, 0.504]\n"
      "  - [rock, 200.004, 0, 1]\n");  // rounds onto the world's edge: inside
  REQUIRE_MESSAGE(r.ok(), r.error_report());
  CHECK(r.objects[0].x == 10.0);
  CHECK(r.objects[0].y == 20.01);
  CHECK(r.objects[0].radius == 0.5);
  CHECK(r.objects[1].x == 200.0);
  // 49.996 m rounds to 50.00 m: the second cell (of 50 m), where the cap is counted.
  std::string edge = "objects:\n";
  for (std::size_t i = 0; i <= kMaxStaticObjectsPerCell; ++i) {
    edge += i % 2 ? "  - [tree, 49.996, 10, 0.01]\n" : "  - [tree, 60, 10, 0.01]\n";
  }
  CHECK(reports(load_map(edge), "one static cell (column 1, row 0"));
}

TEST_CASE("static map: huge objects on small cells, and a flood of bad lines, are bounded") {
  ZoneConfig c = world_200();
  c.world = {0.0, 0.0, 2000.0, 2000.0};
  c.statics.cell_size = 8.0;
  // Radius 300 m on 8 m cells: 76 x 76 = 5,776 cells each; 800 of them > 4 Mi entries.
  std::string huge = "objects:\n";
  for (int i = 0; i < 800; ++i) huge += "  - [rock, 1000, 1000, 300]\n";
  c.world.max_x = c.world.max_y = 2000.0;
  const StaticMapResult r = load_static_map_string(huge, "map.yaml", c);
  CHECK(reports(r, "static cells in all"));
  std::string bad = "objects:\n";
  for (int i = 0; i < 500; ++i) bad += "  - [bush, 1, 1, 1]\n";
  const StaticMapResult flood = load_map(bad);
  CHECK(flood.errors.size() == kMaxStaticMapErrors + 1);
  CHECK(reports(flood, "stopped after 100 refused objects"));
}

TEST_CASE("static map: configs/maps/sample.yaml loads for the default world") {
  const StaticMapResult r = load_static_map_file(
      std::string(ZONE_SOURCE_DIR) + "/configs/maps/sample.yaml", ZoneConfig{});
  REQUIRE_MESSAGE(r.ok(), r.error_report());
  CHECK(r.objects.size() == 3000);
}

TEST_CASE("static map: the static grid's cell size is checked with the config") {
  ZoneConfig c;
  c.statics.map_file = "map.yaml";
  c.statics.cell_size = 12.5;
  auto errors = validate(c);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].key == "static.cell_size");
  CHECK(errors[0].message == "expected a whole number of metres, got 12.5");
  // 4 x 2 km at 8 m: 500 x 250 = 125,000 cells, more than 65,536.
  c.world.max_x = 4000.0;
  c.statics.cell_size = 8.0;
  errors = validate(c);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].message.find("the static grid would have 125000 cells over the world, more "
                               "than 65536") == 0);
  // Without a map the cell count does not matter.
  c.statics.map_file.clear();
  CHECK(validate(c).empty());
  // With a map: whole-metre world edges, and a bounded number of cells in view.
  c = ZoneConfig{};
  c.statics.map_file = "map.yaml";
  c.world.min_x = -0.5;
  errors = validate(c);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].message.find("with a static map (static.map_file) the world's edges must be "
                               "whole numbers of metres") == 0);
  c = ZoneConfig{};
  c.statics.map_file = "map.yaml";
  c.statics.cell_size = 8.0;
  c.statics.view_radius = 200.0;  // (50 + 2)^2 = 2,704 cells
  errors = validate(c);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].key == "static.view_radius");
  CHECK(errors[0].message.find("a player could have 2704 static cells in view, more than 1024") !=
        std::string::npos);
}
