// Edit distance and "did you mean" suggestions.
#include <doctest/doctest.h>

#include <string_view>
#include <vector>

#include "config/key_suggest.hpp"

using namespace zone::config;

TEST_CASE("edit_distance") {
  CHECK(edit_distance("", "") == 0);
  CHECK(edit_distance("abc", "") == 3);
  CHECK(edit_distance("", "abc") == 3);
  CHECK(edit_distance("cell_size", "cell_size") == 0);
  CHECK(edit_distance("cel_size", "cell_size") == 1);  // insertion
  CHECK(edit_distance("cellsize", "cell_size") == 1);
  CHECK(edit_distance("cell_sise", "cell_size") == 1);  // substitution
  CHECK(edit_distance("veiw", "view") == 1);            // adjacent swap
  CHECK(edit_distance("kitten", "sitting") == 3);
}

TEST_CASE("suggest_keys") {
  const std::vector<std::string_view> known = {
      "aoi",         "world",       "aoi.cell_size", "aoi.view_radius",
      "world.min_x", "world.max_x", "npcs.speed",    "players.max_speed"};
  using V = std::vector<std::string_view>;
  CHECK(suggest_keys("aoi.cel_size", known) == V{"aoi.cell_size"});
  CHECK(suggest_keys("ao", known) == V{"aoi"});
  CHECK(suggest_keys("wrold", known) == V{"world"});
  CHECK(suggest_keys("world.min_z", known) == V{"world.min_x"});  // best only, not max_x
  CHECK(suggest_keys("world.cell_size", known) == V{"aoi.cell_size"});
  CHECK(suggest_keys("speed", known) == V{"npcs.speed"});
  CHECK(suggest_keys("aoi.colour", known).empty());
  CHECK(suggest_keys("x", known).empty());
  CHECK(suggest_keys("", known).empty());
}
