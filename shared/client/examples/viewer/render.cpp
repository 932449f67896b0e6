#include "render.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "colours.hpp"
#include "font.hpp"

namespace viewer {

namespace {

// Everything that moves is drawn as a disc of half a metre, but never smaller than a few
// pixels, so it stays visible (and clickable) zoomed out.
double entity_radius_px(const Camera& camera) {
  return std::max(4.0, 0.5 * camera.scale);
}

void fill_circle(SDL_Renderer* renderer, double cx, double cy, double radius) {
  const int r = static_cast<int>(std::lround(radius));
  const int x0 = static_cast<int>(std::lround(cx)), y0 = static_cast<int>(std::lround(cy));
  for (int dy = -r; dy <= r; ++dy) {
    const int half = static_cast<int>(std::sqrt(static_cast<double>(r * r - dy * dy)));
    SDL_RenderDrawLine(renderer, x0 - half, y0 + dy, x0 + half, y0 + dy);
  }
}

// A disc with a line from its centre to past its rim, the way it faces.
void draw_body(SDL_Renderer* renderer, const Camera& camera, double x, double y, double heading,
               Colour colour) {
  const double px = camera.to_px(x), py = camera.to_py(y);
  const double r = entity_radius_px(camera);
  set_colour(renderer, colour);
  fill_circle(renderer, px, py, r);
  const double reach = r + 5.0;
  SDL_RenderDrawLine(renderer, static_cast<int>(std::lround(px)), static_cast<int>(std::lround(py)),
                     static_cast<int>(std::lround(px + std::cos(heading) * reach)),
                     static_cast<int>(std::lround(py - std::sin(heading) * reach)));
}

void draw_chunks(SDL_Renderer* renderer, const zc_client* client, const Camera& camera,
                 const zc_welcome& w, Drawn& drawn) {
  zc_chunk_layer layer;
  if (zc_get_chunk_layer(client, &layer) == 0) return;
  set_colour(renderer, kChunkBorder);
  const uint32_t n = zc_chunk_count(client);
  for (uint32_t i = 0; i < n; ++i) {
    zc_chunk c;
    if (zc_chunk_at(client, i, &c) == 0) continue;
    // The last column and row stop at the world's edge.
    const double x0 = w.world_min_x + c.col * static_cast<double>(layer.chunk_size);
    const double y0 = w.world_min_y + c.row * static_cast<double>(layer.chunk_size);
    const double x1 = std::min<double>(x0 + layer.chunk_size, w.world_max_x);
    const double y1 = std::min<double>(y0 + layer.chunk_size, w.world_max_y);
    const int left = static_cast<int>(std::lround(camera.to_px(x0)));
    const int right = static_cast<int>(std::lround(camera.to_px(x1)));
    const int top = static_cast<int>(std::lround(camera.to_py(y1)));
    const int bottom = static_cast<int>(std::lround(camera.to_py(y0)));
    const SDL_Rect outline{left, top, right - left + 1, bottom - top + 1};
    SDL_RenderDrawRect(renderer, &outline);
    ++drawn.chunks;
  }
}

void draw_statics(SDL_Renderer* renderer, const zc_client* client, const Camera& camera,
                  Drawn& drawn) {
  const uint32_t n = zc_static_count(client);
  for (uint32_t i = 0; i < n; ++i) {
    zc_static_object s;
    if (zc_static_at(client, i, &s) == 0) continue;
    const double x = s.x / 100.0, y = s.y / 100.0, r = s.radius / 100.0;
    // Off-screen objects cost nothing but this test.
    const double reach = r + 1.0;
    if (camera.to_px(x + reach) < camera.view.x ||
        camera.to_px(x - reach) > camera.view.x + camera.view.w ||
        camera.to_py(y - reach) < camera.view.y ||
        camera.to_py(y + reach) > camera.view.y + camera.view.h) {
      continue;
    }
    set_colour(renderer, s.kind == 0 ? kTree : s.kind == 1 ? kRock : kResource);
    fill_circle(renderer, camera.to_px(x), camera.to_py(y), std::max(2.0, r * camera.scale));
    if (camera.shows(x, y)) ++drawn.statics;
  }
}

}  // namespace

Drawn draw_world(SDL_Renderer* renderer, zc_client* client, const Camera& camera,
                 const std::optional<Point>& walk_target) {
  Drawn drawn;
  const SDL_Rect view{camera.view.x, camera.view.y, camera.view.w, camera.view.h};
  SDL_RenderSetClipRect(renderer, &view);
  set_colour(renderer, kOutside);
  SDL_RenderFillRect(renderer, &view);

  zc_welcome w;
  if (zc_get_welcome(client, &w) == 0) {
    SDL_RenderSetClipRect(renderer, nullptr);
    return drawn;
  }
  const int left = static_cast<int>(std::lround(camera.to_px(w.world_min_x)));
  const int right = static_cast<int>(std::lround(camera.to_px(w.world_max_x)));
  const int top = static_cast<int>(std::lround(camera.to_py(w.world_max_y)));
  const int bottom = static_cast<int>(std::lround(camera.to_py(w.world_min_y)));
  const SDL_Rect world{left, top, right - left + 1, bottom - top + 1};
  set_colour(renderer, kGround);
  SDL_RenderFillRect(renderer, &world);
  draw_chunks(renderer, client, camera, w, drawn);
  set_colour(renderer, kWorldEdge);
  SDL_RenderDrawRect(renderer, &world);
  draw_statics(renderer, client, camera, drawn);

  if (walk_target) {
    const int x = static_cast<int>(std::lround(camera.to_px(walk_target->x)));
    const int y = static_cast<int>(std::lround(camera.to_py(walk_target->y)));
    set_colour(renderer, kWalkTarget);
    SDL_RenderDrawLine(renderer, x - 5, y - 5, x + 5, y + 5);
    SDL_RenderDrawLine(renderer, x - 5, y + 5, x + 5, y - 5);
  }

  // Names first, bodies over them: a name never cuts through a body.
  const uint32_t n = zc_entity_count(client);
  const double r = entity_radius_px(camera);
  set_colour(renderer, kText);
  for (uint32_t i = 0; i < n; ++i) {
    zc_entity e;
    if (zc_entity_at(client, i, &e) == 0 || e.is_player == 0 || e.name == nullptr) continue;
    const std::string name = e.name;
    draw_text(renderer,
              static_cast<int>(std::lround(camera.to_px(e.x))) -
                  static_cast<int>(name.size()) * kGlyphWidth / 2,
              static_cast<int>(std::lround(camera.to_py(e.y) - r)) - kLineHeight, name);
  }
  for (uint32_t i = 0; i < n; ++i) {
    zc_entity e;
    if (zc_entity_at(client, i, &e) == 0) continue;
    draw_body(renderer, camera, e.x, e.y, e.heading, e.is_player != 0 ? kPlayer : kNpc);
    if (camera.shows(e.x, e.y)) ++(e.is_player != 0 ? drawn.players : drawn.npcs);
  }
  zc_player me;
  if (zc_get_player(client, &me) != 0) {
    draw_body(renderer, camera, me.x, me.y, me.heading, kSelf);
    drawn.self = camera.shows(me.x, me.y);
  }
  SDL_RenderSetClipRect(renderer, nullptr);
  return drawn;
}

void draw_status(SDL_Renderer* renderer, const zc_client* client, const Rect& area,
                 const Drawn& drawn) {
  const SDL_Rect box{area.x, area.y, area.w, area.h};
  set_colour(renderer, kPanel);
  SDL_RenderFillRect(renderer, &box);
  char line[256];
  zc_welcome w;
  zc_player me;
  zc_stats stats;
  zc_get_stats(client, &stats);
  static constexpr const char* kStates[] = {"idle",         "connecting", "playing",
                                            "transferring", "closed",     "resuming"};
  const int state = static_cast<int>(zc_get_state(client));
  const char* state_name = state >= 0 && state <= 5 ? kStates[state] : "?";
  if (zc_get_welcome(client, &w) != 0 && zc_get_player(client, &me) != 0) {
    // The game's own properties, read by name from the session's schema.
    char health[48] = "";
    const int32_t health_row = zc_find_field(client, "health");
    const int32_t max_row = zc_find_field(client, "max_health");
    int32_t value = 0, max_value = 0;
    if (health_row >= 0 &&
        zc_player_value(client, static_cast<uint32_t>(health_row), &value) != 0) {
      if (max_row >= 0 &&
          zc_player_value(client, static_cast<uint32_t>(max_row), &max_value) != 0) {
        std::snprintf(health, sizeof health, "  health %d/%d", value, max_value);
      } else {
        std::snprintf(health, sizeof health, "  health %d", value);
      }
    }
    std::snprintf(line, sizeof line,
                  "%s  entity %u at (%.1f, %.1f)%s  players %d  npcs %d  objects %d  chunks %d  "
                  "rtt %u ms  %s",
                  w.zone, me.entity_id, me.x, me.y, health, drawn.players, drawn.npcs,
                  drawn.statics, drawn.chunks, stats.round_trip_ms, state_name);
  } else {
    std::snprintf(line, sizeof line, "%s", state_name);
  }
  set_colour(renderer, kText);
  draw_text(renderer, area.x + 6, area.y + (area.h - 10) / 2, line);
}

std::uint32_t entity_at(const zc_client* client, const Camera& camera, Point at) {
  const double reach = entity_radius_px(camera) / camera.scale + 0.2;  // metres
  std::uint32_t best = 0;
  double best_distance = reach;
  const uint32_t n = zc_entity_count(client);
  for (uint32_t i = 0; i < n; ++i) {
    zc_entity e;
    if (zc_entity_at(client, i, &e) == 0) continue;
    const double d = std::hypot(e.x - at.x, e.y - at.y);
    if (d <= best_distance) {
      best = e.id;
      best_distance = d;
    }
  }
  return best;
}

}  // namespace viewer
