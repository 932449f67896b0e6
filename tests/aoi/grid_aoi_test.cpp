#include <doctest/doctest.h>

#include "aoi/grid_aoi.hpp"

using namespace zone::aoi;

TEST_CASE("two observers within radius see each other after update") {
  GridAoi aoi(GridConfig{});
  const auto a = aoi.add({100, 100}, 30, true);
  const auto b = aoi.add({120, 100}, 30, true);
  const auto events = aoi.update();
  CHECK(events.size() == 2);
  CHECK(aoi.sees(a, b));
  CHECK(aoi.sees(b, a));
}
