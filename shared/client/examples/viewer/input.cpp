#include "input.hpp"

#include <algorithm>
#include <cmath>

#include <SDL.h>

namespace viewer {

Requests Controls::poll(ChatBox& chat, const Camera& camera) {
  Requests r;
  SDL_Event e;
  while (SDL_PollEvent(&e) != 0) {
    switch (e.type) {
      case SDL_QUIT:
        r.quit = true;
        break;
      case SDL_TEXTINPUT:
        chat.type(e.text.text);
        break;
      case SDL_KEYDOWN: {
        const SDL_Keycode key = e.key.keysym.sym;
        if (key == SDLK_RETURN || key == SDLK_KP_ENTER) {
          r.chat = chat.enter();
          // Text events only while a line is typed, so WASD is never typed by accident.
          if (chat.typing()) {
            SDL_StartTextInput();
          } else {
            SDL_StopTextInput();
          }
        } else if (chat.typing()) {
          if (key == SDLK_ESCAPE) {
            chat.cancel();
            SDL_StopTextInput();
          } else if (key == SDLK_BACKSPACE) {
            chat.backspace();
          }
        } else if (key == SDLK_ESCAPE) {
          r.quit = true;
        } else if (key == SDLK_PLUS || key == SDLK_EQUALS || key == SDLK_KP_PLUS) {
          ++r.zoom_steps;
        } else if (key == SDLK_MINUS || key == SDLK_KP_MINUS) {
          --r.zoom_steps;
        }
        break;
      }
      case SDL_MOUSEWHEEL:
        r.zoom_steps += e.wheel.y;
        break;
      case SDL_MOUSEBUTTONDOWN:
        if (e.button.button == SDL_BUTTON_LEFT && camera.view.contains(e.button.x, e.button.y)) {
          r.click = Point{camera.to_world_x(e.button.x + 0.5), camera.to_world_y(e.button.y + 0.5)};
        }
        break;
      default:
        break;
    }
  }
  return r;
}

Controls::Intent Controls::intent(bool typing, Point self, double arrive) {
  if (typing) return {};
  const Uint8* keys = SDL_GetKeyboardState(nullptr);
  float x = 0.0F, y = 0.0F;
  if (keys[SDL_SCANCODE_W] != 0 || keys[SDL_SCANCODE_UP] != 0) y += 1.0F;
  if (keys[SDL_SCANCODE_S] != 0 || keys[SDL_SCANCODE_DOWN] != 0) y -= 1.0F;
  if (keys[SDL_SCANCODE_D] != 0 || keys[SDL_SCANCODE_RIGHT] != 0) x += 1.0F;
  if (keys[SDL_SCANCODE_A] != 0 || keys[SDL_SCANCODE_LEFT] != 0) x -= 1.0F;
  if (x != 0.0F || y != 0.0F) {
    walk_to_.reset();
    const float length = std::hypot(x, y);  // diagonals no faster than straight
    return {x / length, y / length};
  }
  if (!walk_to_) return {};
  const double dx = walk_to_->x - self.x, dy = walk_to_->y - self.y;
  const double distance = std::hypot(dx, dy);
  if (distance <= arrive) {
    walk_to_.reset();
    return {};
  }
  // Full speed until the last metre, then slower, so the player stops on the point
  // rather than stepping past it (a step is a tick of movement at top speed).
  const double speed = std::min(1.0, distance);
  return {static_cast<float>(dx / distance * speed), static_cast<float>(dy / distance * speed)};
}

}  // namespace viewer
