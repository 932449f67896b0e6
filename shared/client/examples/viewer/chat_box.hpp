// The chat box: the last lines heard (chat, and what the zone answered or did), and the
// line being typed. It keeps text only; main.cpp feeds it events and sends what it returns.
#pragma once

#include <cstddef>
#include <deque>
#include <optional>
#include <string>

#include <SDL.h>

#include "camera.hpp"

namespace viewer {

class ChatBox {
 public:
  explicit ChatBox(std::size_t max_lines) : max_lines_(max_lines) {}

  void add(std::string line);
  const std::deque<std::string>& lines() const { return lines_; }
  bool typing() const { return typing_; }
  // Enter: starts a line, or ends the one being typed and returns it (nullopt when empty).
  std::optional<std::string> enter();
  void cancel();                // Escape while typing
  void type(const char* utf8);  // SDL_TEXTINPUT
  void backspace();

  // The box's height for `max_lines` lines and the input line.
  int height() const;
  void draw(SDL_Renderer* renderer, const Rect& area) const;

 private:
  std::size_t max_lines_;
  std::deque<std::string> lines_;
  bool typing_ = false;
  std::string typed_;
};

}  // namespace viewer
