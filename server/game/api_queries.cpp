// The game API, queries: who is within a radius (the AOI's grid), distances, and line of
// sight through the static layer.
#include <algorithm>
#include <cmath>

#include "game/api.hpp"
#include "game/api_util.hpp"
#include "script/script_binding.hpp"

namespace zone::game {
namespace {

using api::world_of;

constexpr double kMaxQueryRadius = 1000.0;  // metres
constexpr lua_Integer kDefaultResults = 32;
constexpr lua_Integer kMaxResults = 256;

// Pushes an array of the ids of the entities this zone owns within `radius` of (cx, cy)
// (kind 0 any, 1 players, 2 NPCs), but `exclude`, nearest first (ties by id), at most
// `max`. The grid answers as of the last AOI update; the distances are the current
// positions', so the query is widened by how far anything moves in a second (rules
// change positions between updates only by teleports and spawns, which it may miss
// until the next update).
int push_within(lua_State* L, double cx, double cy, double radius, int kind, lua_Integer max,
                world::EntityId exclude) {
  RulesShared& shared = *api::state_of(L).shared;
  const world::World& w = shared.world;
  const int count = script::guarded_call(L, [&](lua_State*) {
    shared.near.clear();
    shared.found.clear();
    w.aoi().query_radius({cx, cy}, radius + w.max_speed() + 1.0, shared.near);
    const double r2 = radius * radius;
    for (const aoi::EntityHandle h : shared.near) {
      const world::Entity& e = w.entity(h.index);
      if (!e.live() || e.ghost || e.id == exclude) continue;
      if (kind == 1 && e.kind != world::EntityKind::kPlayer) continue;
      if (kind == 2 && e.kind != world::EntityKind::kNpc) continue;
      const double dx = e.x - cx, dy = e.y - cy;
      const double d2 = dx * dx + dy * dy;
      if (d2 <= r2) shared.found.push_back({d2, e.id});
    }
    const auto nearer = [](const RulesShared::Found& a, const RulesShared::Found& b) {
      return a.d2 != b.d2 ? a.d2 < b.d2 : a.id < b.id;
    };
    const auto keep = std::min<std::size_t>(shared.found.size(), static_cast<std::size_t>(max));
    std::partial_sort(shared.found.begin(),
                      shared.found.begin() + static_cast<std::ptrdiff_t>(keep), shared.found.end(),
                      nearer);
    return static_cast<int>(keep);
  });
  lua_createtable(L, count, 0);
  for (int i = 0; i < count; ++i) {
    lua_pushinteger(L, shared.found[static_cast<std::size_t>(i)].id);
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

void check_query(lua_State* L, const char* fn, int radius_arg, double& radius, int& kind,
                 lua_Integer& max) {
  radius = api::check_finite(L, radius_arg, fn, "radius");
  if (radius < 0.0 || radius > kMaxQueryRadius) {
    api::refuse(L, "%s: argument %d (radius): %f is not within 0 .. %f m", fn, radius_arg, radius,
                kMaxQueryRadius);
  }
  kind = api::check_kind_filter(L, radius_arg + 1, fn);
  max = kDefaultResults;
  if (!lua_isnoneornil(L, radius_arg + 2)) {
    max = api::check_int(L, radius_arg + 2, fn, "max");
    if (max < 1 || max > kMaxResults) {
      api::refuse(L, "%s: argument %d (max): %I is not within 1 .. %I", fn, radius_arg + 2, max,
                  kMaxResults);
    }
  }
}

// game.within(e, radius [, kind [, max]]) -> {ids}: the others within radius of e.
int l_within(lua_State* L) {
  const char* fn = "game.within";
  const std::uint32_t slot = api::check_entity(L, 1, fn);
  double radius = 0.0;
  int kind = 0;
  lua_Integer max = 0;
  check_query(L, fn, 2, radius, kind, max);
  const world::Entity& e = world_of(L).entity(slot);
  return push_within(L, e.x, e.y, radius, kind, max, e.id);
}

// game.within_point(x, y, radius [, kind [, max]]) -> {ids}
int l_within_point(lua_State* L) {
  const char* fn = "game.within_point";
  const double x = api::check_finite(L, 1, fn, "x");
  const double y = api::check_finite(L, 2, fn, "y");
  double radius = 0.0;
  int kind = 0;
  lua_Integer max = 0;
  check_query(L, fn, 3, radius, kind, max);
  return push_within(L, x, y, radius, kind, max, world::kNoEntity);
}

// game.distance(a, b) -> metres between two entities
int l_distance(lua_State* L) {
  const std::uint32_t a = api::check_entity(L, 1, "game.distance");
  const std::uint32_t b = api::check_entity(L, 2, "game.distance");
  const world::World& w = world_of(L);
  const world::Entity& ea = w.entity(a);
  const world::Entity& eb = w.entity(b);
  lua_pushnumber(L, std::hypot(ea.x - eb.x, ea.y - eb.y));
  return 1;
}

// game.line_of_sight(a, b) -> boolean: no static object stands between two entities.
int l_line_of_sight(lua_State* L) {
  const std::uint32_t a = api::check_entity(L, 1, "game.line_of_sight");
  const std::uint32_t b = api::check_entity(L, 2, "game.line_of_sight");
  const world::World& w = world_of(L);
  const world::Entity& ea = w.entity(a);
  const world::Entity& eb = w.entity(b);
  const bool clear = !w.static_grid().segment_blocked({ea.x, ea.y}, {eb.x, eb.y});
  lua_pushboolean(L, clear ? 1 : 0);
  return 1;
}

}  // namespace

std::optional<script::ScriptError> bind_query_api(script::ScriptVm& vm, VmState* state) {
  static constexpr struct {
    const char* name;
    lua_CFunction fn;
  } kFunctions[] = {{"within", l_within},
                    {"within_point", l_within_point},
                    {"distance", l_distance},
                    {"line_of_sight", l_line_of_sight}};
  for (const auto& f : kFunctions) {
    if (auto error = vm.register_function("game", f.name, f.fn, state)) return error;
  }
  return std::nullopt;
}

}  // namespace zone::game
