#include "font.hpp"

#include <array>
#include <cstdint>

namespace viewer {

namespace {

// Rows top to bottom, 3 bits each (4 = the left column). Characters 32 (space) to 96
// (backquote); '{' to '~' follow; lower case letters use the upper case glyphs.
constexpr std::array<std::array<std::uint8_t, 5>, 69> kGlyphs{{
    {0, 0, 0, 0, 0}, {2, 2, 2, 0, 2}, {5, 5, 0, 0, 0}, {5, 7, 5, 7, 5},  // space ! " #
    {3, 6, 2, 3, 6}, {5, 1, 2, 4, 5}, {2, 5, 2, 5, 3}, {2, 2, 0, 0, 0},  // $ % & '
    {1, 2, 2, 2, 1}, {4, 2, 2, 2, 4}, {0, 5, 2, 5, 0}, {0, 2, 7, 2, 0},  // ( ) * +
    {0, 0, 0, 2, 4}, {0, 0, 7, 0, 0}, {0, 0, 0, 0, 2}, {1, 1, 2, 4, 4},  // , - . /
    {7, 5, 5, 5, 7}, {2, 6, 2, 2, 7}, {7, 1, 7, 4, 7}, {7, 1, 3, 1, 7},  // 0 1 2 3
    {5, 5, 7, 1, 1}, {7, 4, 7, 1, 7}, {7, 4, 7, 5, 7}, {7, 1, 1, 2, 2},  // 4 5 6 7
    {7, 5, 7, 5, 7}, {7, 5, 7, 1, 7}, {0, 2, 0, 2, 0}, {0, 2, 0, 2, 4},  // 8 9 : ;
    {1, 2, 4, 2, 1}, {0, 7, 0, 7, 0}, {4, 2, 1, 2, 4}, {7, 1, 3, 0, 2},  // < = > ?
    {2, 5, 7, 4, 3}, {2, 5, 7, 5, 5}, {6, 5, 6, 5, 6}, {3, 4, 4, 4, 3},  // @ A B C
    {6, 5, 5, 5, 6}, {7, 4, 6, 4, 7}, {7, 4, 6, 4, 4}, {3, 4, 5, 5, 3},  // D E F G
    {5, 5, 7, 5, 5}, {7, 2, 2, 2, 7}, {1, 1, 1, 5, 2}, {5, 5, 6, 5, 5},  // H I J K
    {4, 4, 4, 4, 7}, {5, 7, 7, 5, 5}, {6, 5, 5, 5, 5}, {2, 5, 5, 5, 2},  // L M N O
    {6, 5, 6, 4, 4}, {2, 5, 5, 6, 3}, {6, 5, 6, 5, 5}, {3, 4, 2, 1, 6},  // P Q R S
    {7, 2, 2, 2, 2}, {5, 5, 5, 5, 7}, {5, 5, 5, 5, 2}, {5, 5, 7, 7, 5},  // T U V W
    {5, 5, 2, 5, 5}, {5, 5, 2, 2, 2}, {7, 1, 2, 4, 7}, {6, 4, 4, 4, 6},  // X Y Z [
    {4, 4, 2, 1, 1}, {3, 1, 1, 1, 3}, {2, 5, 0, 0, 0}, {0, 0, 0, 0, 7},  // \ ] ^ _
    {4, 2, 0, 0, 0}, {3, 2, 6, 2, 3}, {2, 2, 2, 2, 2}, {6, 2, 3, 2, 6},  // ` { | }
    {0, 3, 6, 0, 0},                                                     // ~
}};

constexpr std::size_t glyph_index(unsigned char c) {
  if (c >= 'a' && c <= 'z') return c - 'a' + 'A' - 32;
  if (c >= 32 && c <= 96) return c - 32;
  if (c >= '{' && c <= '~') return c - '{' + 65;
  return '?' - 32;  // anything else, UTF-8 bytes included
}

}  // namespace

int draw_text(SDL_Renderer* renderer, int x, int y, std::string_view text) {
  // Each set dot is a 2x2 square; a line of text is one batch of rectangles.
  std::array<SDL_Rect, 15> dots{};
  for (const char ch : text) {
    const auto& glyph = kGlyphs[glyph_index(static_cast<unsigned char>(ch))];
    int n = 0;
    for (int row = 0; row < 5; ++row) {
      for (int col = 0; col < 3; ++col) {
        if ((glyph[row] & (4 >> col)) != 0) dots[n++] = {x + col * 2, y + row * 2, 2, 2};
      }
    }
    if (n > 0) SDL_RenderFillRects(renderer, dots.data(), n);
    x += kGlyphWidth;
  }
  return x;
}

}  // namespace viewer
