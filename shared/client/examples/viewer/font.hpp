// Text without a font file: a built-in 3x5 pixel font (ASCII; lower case drawn as upper
// case), scaled up, so the viewer needs no font package and draws the same everywhere.
#pragma once

#include <string_view>

#include <SDL.h>

namespace viewer {

// Pixels of one glyph cell at the viewer's text size: 3x5 dots of 2x2 pixels, and a gap.
inline constexpr int kGlyphWidth = 8;
inline constexpr int kLineHeight = 14;

// Draws `text` with its top-left corner at (x, y) in the renderer's current colour;
// returns the x after it.
int draw_text(SDL_Renderer* renderer, int x, int y, std::string_view text);

}  // namespace viewer
