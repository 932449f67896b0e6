// World metres to window pixels: a top-down view centred on the own player, north up.
#pragma once

#include <cmath>

namespace viewer {

struct Rect {
  int x = 0, y = 0, w = 0, h = 0;
  bool contains(double px, double py) const {
    return px >= x && px < x + w && py >= y && py < y + h;
  }
};

struct Camera {
  Rect view;                              // the window's part that shows the world
  double centre_x = 0.0, centre_y = 0.0;  // metres: the point at the view's centre
  double scale = 8.0;                     // pixels per metre

  // The view's centre pixel: where the own player is drawn.
  int centre_px() const { return view.x + view.w / 2; }
  int centre_py() const { return view.y + view.h / 2; }
  // Screen y grows downwards, world y northwards.
  double to_px(double x) const { return centre_px() + (x - centre_x) * scale; }
  double to_py(double y) const { return centre_py() - (y - centre_y) * scale; }
  double to_world_x(double px) const { return centre_x + (px - centre_px()) / scale; }
  double to_world_y(double py) const { return centre_y - (py - centre_py()) / scale; }
  bool shows(double x, double y) const {
    return view.contains(std::floor(to_px(x)), std::floor(to_py(y)));
  }
};

}  // namespace viewer
