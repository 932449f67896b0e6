// Saves what the renderer has drawn (before it is presented) as a BMP file.
#pragma once

#include <string>

#include <SDL.h>

namespace viewer {

// false with `error` set when the pixels cannot be read back or the file written.
bool save_screenshot(SDL_Renderer* renderer, const std::string& path, std::string& error);

}  // namespace viewer
