// The viewer's palette. Each kind of thing has a colour of its own, used for nothing else,
// so a screenshot can be read back by colour (tests/client/viewer_test.cpp counts them).
#pragma once

#include <cstdint>

#include <SDL.h>

namespace viewer {

struct Colour {
  std::uint8_t r, g, b;
};

inline constexpr Colour kOutside{12, 12, 16};  // beyond the world's edge
inline constexpr Colour kGround{28, 36, 30};   // inside the world
inline constexpr Colour kWorldEdge{150, 150, 150};
inline constexpr Colour kChunkBorder{60, 72, 104};  // a loaded chunk's outline
inline constexpr Colour kSelf{64, 200, 255};
inline constexpr Colour kPlayer{90, 240, 90};
inline constexpr Colour kNpc{240, 70, 60};
inline constexpr Colour kTree{30, 120, 50};
inline constexpr Colour kRock{120, 110, 100};
inline constexpr Colour kResource{220, 180, 40};
inline constexpr Colour kWalkTarget{250, 250, 120};
inline constexpr Colour kText{225, 225, 225};
inline constexpr Colour kTyped{255, 255, 160};
inline constexpr Colour kHint{120, 120, 130};
inline constexpr Colour kPanel{20, 20, 26};
inline constexpr Colour kPanelEdge{70, 70, 80};

inline void set_colour(SDL_Renderer* renderer, Colour c) {
  SDL_SetRenderDrawColor(renderer, c.r, c.g, c.b, 255);
}

}  // namespace viewer
