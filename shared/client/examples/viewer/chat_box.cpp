#include "chat_box.hpp"

#include <algorithm>

#include "colours.hpp"
#include "font.hpp"

namespace viewer {

namespace {
// The zone's chat lines are at most this long (a longer one is refused).
constexpr std::size_t kMaxTyped = 200;
constexpr int kPadding = 6;
}  // namespace

void ChatBox::add(std::string line) {
  lines_.push_back(std::move(line));
  while (lines_.size() > max_lines_) lines_.pop_front();
}

std::optional<std::string> ChatBox::enter() {
  if (!typing_) {
    typing_ = true;
    typed_.clear();
    return std::nullopt;
  }
  typing_ = false;
  std::string line = std::move(typed_);
  typed_.clear();
  if (line.empty()) return std::nullopt;
  return line;
}

void ChatBox::cancel() {
  typing_ = false;
  typed_.clear();
}

void ChatBox::type(const char* utf8) {
  if (!typing_) return;
  for (; *utf8 != '\0' && typed_.size() < kMaxTyped; ++utf8) typed_.push_back(*utf8);
}

void ChatBox::backspace() {
  // Drops a whole UTF-8 character: its continuation bytes, then its lead byte.
  while (!typed_.empty() && (static_cast<unsigned char>(typed_.back()) & 0xC0) == 0x80) {
    typed_.pop_back();
  }
  if (!typed_.empty()) typed_.pop_back();
}

int ChatBox::height() const {
  return static_cast<int>(max_lines_ + 1) * kLineHeight + 2 * kPadding;
}

void ChatBox::draw(SDL_Renderer* renderer, const Rect& area) const {
  const SDL_Rect box{area.x, area.y, area.w, area.h};
  set_colour(renderer, kPanel);
  SDL_RenderFillRect(renderer, &box);
  set_colour(renderer, kPanelEdge);
  SDL_RenderDrawLine(renderer, area.x, area.y, area.x + area.w - 1, area.y);

  // A line longer than the box is cut: the box shows the start of each line.
  const std::size_t columns =
      static_cast<std::size_t>(std::max(1, (area.w - 2 * kPadding) / kGlyphWidth));
  int y = area.y + kPadding;
  set_colour(renderer, kText);
  for (const std::string& line : lines_) {
    draw_text(renderer, area.x + kPadding, y, std::string_view(line).substr(0, columns));
    y += kLineHeight;
  }
  y = area.y + area.h - kPadding - kLineHeight;
  if (typing_) {
    set_colour(renderer, kTyped);
    // The end of a long line stays visible while it is typed.
    std::string shown = "> " + typed_ + "_";
    if (shown.size() > columns) shown.erase(0, shown.size() - columns);
    draw_text(renderer, area.x + kPadding, y, shown);
  } else {
    set_colour(renderer, kHint);
    draw_text(renderer, area.x + kPadding, y,
              std::string_view("Enter: chat   WASD/arrows or click: walk   click someone: attack   "
                               "wheel: zoom   Esc: quit")
                  .substr(0, columns));
  }
}

}  // namespace viewer
