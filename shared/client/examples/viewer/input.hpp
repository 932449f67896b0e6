// Keyboard and mouse: what the player asked for this frame, and the movement intent
// (held WASD/arrow keys, or walking toward a clicked point until it is reached).
#pragma once

#include <optional>
#include <string>

#include "camera.hpp"
#include "chat_box.hpp"

namespace viewer {

struct Point {
  double x = 0.0, y = 0.0;
};

// What the events of one frame asked for.
struct Requests {
  bool quit = false;
  std::optional<std::string> chat;  // a line to say
  std::optional<Point> click;       // a left click, in world metres
  int zoom_steps = 0;               // mouse wheel or +/-: positive zooms in
};

class Controls {
 public:
  // Drains SDL's event queue; typing goes to `chat`.
  Requests poll(ChatBox& chat, const Camera& camera);

  void walk_to(Point target) { walk_to_ = target; }
  const std::optional<Point>& walk_target() const { return walk_to_; }

  struct Intent {
    float x = 0.0F, y = 0.0F;
  };
  // The intent for this frame from the own player's drawn position: held keys win (and
  // forget a walk target); else toward the target, slowing over the last metre, until
  // within `arrive` metres. Nothing while a chat line is typed.
  Intent intent(bool typing, Point self, double arrive = 0.25);

 private:
  std::optional<Point> walk_to_;
};

}  // namespace viewer
