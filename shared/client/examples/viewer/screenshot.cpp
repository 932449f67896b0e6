#include "screenshot.hpp"

#include <memory>

namespace viewer {

bool save_screenshot(SDL_Renderer* renderer, const std::string& path, std::string& error) {
  int w = 0, h = 0;
  if (SDL_GetRendererOutputSize(renderer, &w, &h) != 0) {
    error = SDL_GetError();
    return false;
  }
  const std::unique_ptr<SDL_Surface, decltype(&SDL_FreeSurface)> surface(
      SDL_CreateRGBSurfaceWithFormat(0, w, h, 32, SDL_PIXELFORMAT_ARGB8888), SDL_FreeSurface);
  if (!surface) {
    error = SDL_GetError();
    return false;
  }
  // The renderer's own pixels, read back: the same whatever the window system shows.
  if (SDL_RenderReadPixels(renderer, nullptr, SDL_PIXELFORMAT_ARGB8888, surface->pixels,
                           surface->pitch) != 0 ||
      SDL_SaveBMP(surface.get(), path.c_str()) != 0) {
    error = SDL_GetError();
    return false;
  }
  return true;
}

}  // namespace viewer
