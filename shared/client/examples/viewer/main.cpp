// The sample game client (docs/client.md, "The sample client"): a window on a zone through
// zoneclient.h. One loop per rendered frame: input, the movement intent, zc_update, the
// events, drawing; with --screenshot, it saves a frame after --after seconds and exits.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <SDL.h>

#include "camera.hpp"
#include "chat_box.hpp"
#include "input.hpp"
#include "options.hpp"
#include "render.hpp"
#include "screenshot.hpp"
#include "session.hpp"
#include "zoneclient.h"

namespace {

using viewer::Options;

constexpr int kStatusHeight = 20;
constexpr std::size_t kChatLines = 8;

double seconds_now() {
  return static_cast<double>(SDL_GetPerformanceCounter()) /
         static_cast<double>(SDL_GetPerformanceFrequency());
}

// The window's layout: the status line on top, the chat box at the bottom, the world
// between them.
struct Layout {
  viewer::Rect status, world, chat;
};

Layout layout(int width, int height, int chat_height) {
  Layout l;
  l.status = {0, 0, width, kStatusHeight};
  l.chat = {0, height - chat_height, width, chat_height};
  l.world = {0, kStatusHeight, width, height - kStatusHeight - chat_height};
  return l;
}

// Ends what SDL and the library hand out, in unique_ptrs.
struct Deleter {
  void operator()(SDL_Window* w) const { SDL_DestroyWindow(w); }
  void operator()(SDL_Renderer* r) const { SDL_DestroyRenderer(r); }
  void operator()(zc_client* c) const { zc_destroy(c); }
};

int run(const Options& o) {
  const std::string title = "zone viewer - " + o.name;
  std::unique_ptr<SDL_Window, Deleter> window(
      SDL_CreateWindow(title.c_str(), SDL_WINDOWPOS_UNDEFINED, SDL_WINDOWPOS_UNDEFINED, o.width,
                       o.height, SDL_WINDOW_SHOWN));
  if (!window) {
    std::fprintf(stderr, "viewer: no window: %s\n", SDL_GetError());
    return 1;
  }
  std::unique_ptr<SDL_Renderer, Deleter> renderer(SDL_CreateRenderer(window.get(), -1, 0));
  if (!renderer) {
    // No accelerated renderer (a bare X server): SDL's software one draws the same.
    renderer.reset(SDL_CreateRenderer(window.get(), -1, SDL_RENDERER_SOFTWARE));
  }
  if (!renderer) {
    std::fprintf(stderr, "viewer: no renderer: %s\n", SDL_GetError());
    return 1;
  }

  // SDL starts with text input on; the viewer asks for it only while a chat line is typed
  // (input.cpp), so an input method never takes WASD.
  SDL_StopTextInput();

  zc_options options;
  zc_options_init(&options);
  options.player_name = o.name.c_str();
  if (!o.ticket.empty()) {
    options.ticket = o.ticket.data();
    options.ticket_size = o.ticket.size();
  }
  std::unique_ptr<zc_client, Deleter> client(zc_create(&options));
  if (!client || zc_connect(client.get(), o.host.c_str(), o.port) != 0) {
    std::fprintf(stderr, "viewer: cannot connect to %s:%u\n", o.host.c_str(), o.port);
    return 1;
  }

  viewer::ChatBox chat(kChatLines);
  viewer::Controls controls;
  viewer::Session session(client.get());
  viewer::Camera camera;
  camera.scale = o.scale;
  chat.add("connecting to " + o.host + ":" + std::to_string(o.port) + " as " + o.name);

  const double start = seconds_now();
  double first_drawn = -1.0;  // when the own player was first drawn
  for (;;) {
    int width = 0, height = 0;
    SDL_GetRendererOutputSize(renderer.get(), &width, &height);
    const Layout l = layout(width, height, chat.height());
    camera.view = l.world;

    const viewer::Requests asked = controls.poll(chat, camera);
    if (asked.quit) break;
    if (asked.zoom_steps != 0) {
      camera.scale = std::clamp(camera.scale * std::pow(1.25, asked.zoom_steps), 0.5, 200.0);
    }
    if (asked.chat) session.say(*asked.chat, chat);
    if (asked.click) {
      const std::uint32_t target = viewer::entity_at(client.get(), camera, *asked.click);
      if (target != 0) {
        session.attack(target, chat);
      } else {
        controls.walk_to(*asked.click);
      }
    }

    zc_player me;
    const bool playing = zc_get_player(client.get(), &me) != 0;
    const viewer::Controls::Intent intent =
        playing ? controls.intent(chat.typing(), {me.x, me.y}) : viewer::Controls::Intent{};
    zc_set_move(client.get(), intent.x, intent.y);
    const double now = seconds_now();
    zc_update(client.get(), now);
    session.poll_events(chat);

    // The view follows the own player where it is drawn this frame.
    if (zc_get_player(client.get(), &me) != 0) {
      camera.centre_x = me.x;
      camera.centre_y = me.y;
      if (first_drawn < 0.0) first_drawn = now;
    }
    const viewer::Drawn drawn =
        viewer::draw_world(renderer.get(), client.get(), camera, controls.walk_target());
    viewer::draw_status(renderer.get(), client.get(), l.status, drawn);
    chat.draw(renderer.get(), l.chat);

    if (!o.screenshot.empty()) {
      if (first_drawn >= 0.0 && now - first_drawn >= o.after) {
        std::string error;
        if (!viewer::save_screenshot(renderer.get(), o.screenshot, error)) {
          std::fprintf(stderr, "viewer: cannot save %s: %s\n", o.screenshot.c_str(), error.c_str());
          return 1;
        }
        // What the frame showed, as the library holds it, for whoever checks the picture.
        std::printf(
            "viewer: screenshot %s size=%dx%d view=%d,%d,%d,%d self=%d,%d self_shown=%d "
            "npcs_on_screen=%d players_on_screen=%d statics_on_screen=%d chunks=%d entities=%u\n",
            o.screenshot.c_str(), width, height, camera.view.x, camera.view.y, camera.view.w,
            camera.view.h, camera.centre_px(), camera.centre_py(), drawn.self ? 1 : 0, drawn.npcs,
            drawn.players, drawn.statics, drawn.chunks, zc_entity_count(client.get()));
        std::fflush(stdout);
        break;
      }
      if (zc_get_state(client.get()) == ZC_STATE_CLOSED || now - start > o.wait_limit) {
        std::fprintf(stderr, "viewer: no world to take a screenshot of (state %d, reason %u)\n",
                     static_cast<int>(zc_get_state(client.get())),
                     zc_disconnect_reason(client.get()));
        return 1;
      }
    }
    SDL_RenderPresent(renderer.get());
    // About 60 frames a second without relying on vsync, which a virtual display lacks.
    const double spent = seconds_now() - now;
    if (spent < 1.0 / 60.0) SDL_Delay(static_cast<Uint32>((1.0 / 60.0 - spent) * 1000.0));
  }
  zc_disconnect(client.get());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string error;
  bool help = false;
  const std::optional<Options> options =
      viewer::parse_options(std::vector<std::string>(argv + 1, argv + argc), error, help);
  if (!options) {
    std::fputs(error.c_str(), help ? stdout : stderr);
    return help ? 0 : 2;
  }
  if (zc_abi_version() != ZC_ABI_VERSION) {
    std::fprintf(stderr, "viewer: zoneclient ABI %u, built against %u\n", zc_abi_version(),
                 ZC_ABI_VERSION);
    return 1;
  }
  if (SDL_Init(SDL_INIT_VIDEO) != 0) {
    std::fprintf(stderr, "viewer: SDL cannot start video: %s\n", SDL_GetError());
    return 1;
  }
  const int code = run(*options);
  SDL_Quit();
  return code;
}
