// Drawing: the world as the library holds it (chunks, static objects, the others where
// they are interpolated to, the own player where it is predicted), and the status line.
#pragma once

#include <cstdint>
#include <optional>

#include <SDL.h>

#include "camera.hpp"
#include "input.hpp"
#include "zoneclient.h"

namespace viewer {

// What one frame drew inside the view (centres within it), for the screenshot report.
struct Drawn {
  int npcs = 0, players = 0, statics = 0, chunks = 0;
  bool self = false;
};

// Draws the world into camera.view (clipped to it).
Drawn draw_world(SDL_Renderer* renderer, zc_client* client, const Camera& camera,
                 const std::optional<Point>& walk_target);

// The status line: zone, position, counts, round trip, state.
void draw_status(SDL_Renderer* renderer, const zc_client* client, const Rect& area,
                 const Drawn& drawn);

// The entity whose drawn disc holds `at` (the nearest when several do), or 0.
std::uint32_t entity_at(const zc_client* client, const Camera& camera, Point at);

}  // namespace viewer
