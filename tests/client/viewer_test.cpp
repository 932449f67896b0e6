// The sample client (shared/client/examples/viewer) against a real zone-server on a
// virtual X display (Xvfb): it plays for a few seconds, saves a screenshot, and prints
// what its library held on screen at that frame. The test reads the picture back and
// finds those things in it by their colours (viewer/colours.hpp): one disc per NPC, the
// other player, the own player at the view's centre, static objects, chunk borders.
#include <doctest/doctest.h>

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <SDL.h>

#include "client/connection.hpp"
#include "process.hpp"
#include "truth_zone.hpp"

using namespace std::chrono_literals;

namespace {

struct Rgb {
  std::uint8_t r, g, b;
  bool operator==(const Rgb&) const = default;
};
// viewer/colours.hpp
constexpr Rgb kSelf{64, 200, 255};
constexpr Rgb kPlayer{90, 240, 90};
constexpr Rgb kNpc{240, 70, 60};
constexpr Rgb kTree{30, 120, 50};
constexpr Rgb kRock{120, 110, 100};
constexpr Rgb kResource{220, 180, 40};
constexpr Rgb kChunkBorder{60, 72, 104};

// The screenshot as RGB rows.
struct Picture {
  int width = 0, height = 0;
  std::vector<Rgb> pixels;
  Rgb at(int x, int y) const { return pixels[static_cast<std::size_t>(y) * width + x]; }
};

bool load_bmp(const std::string& path, Picture& out) {
  SDL_Surface* loaded = SDL_LoadBMP(path.c_str());
  if (loaded == nullptr) return false;
  SDL_Surface* argb = SDL_ConvertSurfaceFormat(loaded, SDL_PIXELFORMAT_ARGB8888, 0);
  SDL_FreeSurface(loaded);
  if (argb == nullptr) return false;
  out.width = argb->w;
  out.height = argb->h;
  out.pixels.resize(static_cast<std::size_t>(argb->w) * argb->h);
  for (int y = 0; y < argb->h; ++y) {
    const auto* row =
        reinterpret_cast<const std::uint32_t*>(static_cast<const std::uint8_t*>(argb->pixels) +
                                               static_cast<std::ptrdiff_t>(y) * argb->pitch);
    for (int x = 0; x < argb->w; ++x) {
      const std::uint32_t p = row[x];
      out.pixels[static_cast<std::size_t>(y) * argb->w + x] = {static_cast<std::uint8_t>(p >> 16),
                                                               static_cast<std::uint8_t>(p >> 8),
                                                               static_cast<std::uint8_t>(p)};
    }
  }
  SDL_FreeSurface(argb);
  return true;
}

struct Region {
  int x = 0, y = 0, w = 0, h = 0;
};

std::size_t count_pixels(const Picture& p, const Region& r, Rgb colour) {
  std::size_t n = 0;
  for (int y = r.y; y < r.y + r.h; ++y) {
    for (int x = r.x; x < r.x + r.w; ++x) n += p.at(x, y) == colour ? 1 : 0;
  }
  return n;
}

// Connected areas of `colour` (8-neighbours) within `r`: one per disc drawn, unless two
// overlap.
int count_blobs(const Picture& p, const Region& r, Rgb colour) {
  std::vector<bool> seen(p.pixels.size(), false);
  std::vector<std::pair<int, int>> stack;
  int blobs = 0;
  for (int y = r.y; y < r.y + r.h; ++y) {
    for (int x = r.x; x < r.x + r.w; ++x) {
      const std::size_t i = static_cast<std::size_t>(y) * p.width + x;
      if (seen[i] || !(p.at(x, y) == colour)) continue;
      ++blobs;
      seen[i] = true;
      stack.push_back({x, y});
      while (!stack.empty()) {
        const auto [cx, cy] = stack.back();
        stack.pop_back();
        for (int dy = -1; dy <= 1; ++dy) {
          for (int dx = -1; dx <= 1; ++dx) {
            const int nx = cx + dx, ny = cy + dy;
            if (nx < r.x || ny < r.y || nx >= r.x + r.w || ny >= r.y + r.h) continue;
            const std::size_t j = static_cast<std::size_t>(ny) * p.width + nx;
            if (seen[j] || !(p.at(nx, ny) == colour)) continue;
            seen[j] = true;
            stack.push_back({nx, ny});
          }
        }
      }
    }
  }
  return blobs;
}

std::string find_program(const char* name) {
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    const std::size_t end = std::min(dirs.find(':', start), dirs.size());
    const std::string candidate = dirs.substr(start, end - start) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return "";
}

double seconds_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

TEST_CASE("client kit: the sample client draws the NPCs, a player, itself, objects and chunks") {
  const std::string xvfb_run = find_program("xvfb-run");
  if (xvfb_run.empty()) {
    std::fprintf(stderr, "SKIPPED: xvfb-run is not installed (Debian package xvfb)\n");
    std::exit(77);
  }
  std::string dir = (std::filesystem::temp_directory_path() / "zone-viewer-XXXXXX").string();
  REQUIRE(::mkdtemp(dir.data()) != nullptr);
  // A few static objects in a world small enough to be on screen whole.
  const std::string map = dir + "/map.yaml";
  std::ofstream(map) << "objects:\n"
                        "  - [tree, 10.0, 12.0, 1.0]\n"
                        "  - [rock, 68.0, 14.0, 1.5]\n"
                        "  - [resource, 40.0, 70.0, 1.0]\n";
  // Six NPCs standing still, the whole world sent to every client, 16 m chunks.
  constexpr int kNpcs = 6;
  zone::test::TruthZone zone = zone::test::start_truth_zone(
      ZONE_SERVER_BIN, ZONE_SOURCE_DIR "/configs/zone.yaml",
      {"--set", "world.max_x=80",          "--set", "world.max_y=80",
       "--set", "aoi.enabled=false",       "--set", "npcs.count=" + std::to_string(kNpcs),
       "--set", "npcs.behaviour=idle",     "--set", "chunks.enabled=true",
       "--set", "chunks.size=16",          "--set", "chunks.load_radius=24",
       "--set", "chunks.interval_ticks=1", "--set", "static.map_file=" + map},
      dir + "/server.log");
  REQUIRE_MESSAGE(zone.port != 0, zone.process->log());

  // Another player, standing still wherever it spawned.
  zone::client::ConnectionOptions other_options;
  other_options.player_name = "other";
  zone::client::Connection other(other_options);
  REQUIRE(other.connect("127.0.0.1", zone.port));
  const auto joined_by = std::chrono::steady_clock::now() + 30s;
  while (!other.has_frame() && std::chrono::steady_clock::now() < joined_by) {
    other.update(seconds_now());
    while (other.events().pop() != nullptr) {
    }
    std::this_thread::sleep_for(5ms);
  }
  REQUIRE(other.has_frame());

  // 3 px a metre: the 80 m world is 240 px, on screen whole wherever the viewer spawns.
  const std::string shot = dir + "/shot.bmp";
  // In a sanitizer build, LeakSanitizer would report what the X libraries and SDL keep
  // until exit; the viewer alone runs without the leak check (posix_spawn passes it the
  // environment as it is now).
  const char* asan = std::getenv("ASAN_OPTIONS");
  const std::string asan_before = asan != nullptr ? asan : "";
  ::setenv("ASAN_OPTIONS",
           (asan_before + (asan_before.empty() ? "" : ":") + "detect_leaks=0").c_str(), 1);
  zone::test::Process viewer(
      {xvfb_run, "-a", "-s", "-screen 0 1024x768x24", ZONE_VIEWER_BIN, "--server",
       "127.0.0.1:" + std::to_string(zone.port), "--name", "looker", "--size", "800x700", "--scale",
       "3", "--screenshot", shot, "--after", "3"},
      dir + "/viewer.log");
  if (asan != nullptr) {
    ::setenv("ASAN_OPTIONS", asan_before.c_str(), 1);
  } else {
    ::unsetenv("ASAN_OPTIONS");
  }
  const std::optional<int> code = viewer.wait(120s, [&] {
    other.update(seconds_now());
    while (other.events().pop() != nullptr) {
    }
    std::this_thread::sleep_for(5ms);
  });
  const std::string log = viewer.log();
  REQUIRE_MESSAGE(code == 0, log);

  std::smatch m;
  const std::regex report(
      R"(screenshot \S+ size=(\d+)x(\d+) view=(\d+),(\d+),(\d+),(\d+) self=(\d+),(\d+) )"
      R"(self_shown=(\d) npcs_on_screen=(\d+) players_on_screen=(\d+) statics_on_screen=(\d+) )"
      R"(chunks=(\d+) entities=(\d+))");
  REQUIRE_MESSAGE(std::regex_search(log, m, report), log);
  const auto number = [&](int i) { return std::stoi(m[i].str()); };
  const Region view{number(3), number(4), number(5), number(6)};
  const int self_x = number(7), self_y = number(8);
  const int npcs = number(10), players = number(11), statics = number(12), chunks = number(13);
  MESSAGE("the viewer held ", number(14), " entities: ", npcs, " NPCs and ", players,
          " players on screen, ", statics, " static objects, ", chunks, " chunks");
  // The whole world is on screen: everything the zone has.
  CHECK(number(9) == 1);
  CHECK(npcs == kNpcs);
  CHECK(players == 1);
  CHECK(statics == 3);
  CHECK(chunks > 0);

  Picture picture;
  REQUIRE_MESSAGE(load_bmp(shot, picture), SDL_GetError());
  CHECK(picture.width == number(1));
  CHECK(picture.height == number(2));
  REQUIRE(view.x + view.w <= picture.width);
  REQUIRE(view.y + view.h <= picture.height);

  const int npc_blobs = count_blobs(picture, view, kNpc);
  const int player_blobs = count_blobs(picture, view, kPlayer);
  const int self_blobs = count_blobs(picture, view, kSelf);
  MESSAGE("pixels: NPC ", count_pixels(picture, view, kNpc), " in ", npc_blobs, " discs; player ",
          count_pixels(picture, view, kPlayer), " in ", player_blobs, " discs; self ",
          count_pixels(picture, view, kSelf), " in ", self_blobs, "; tree ",
          count_pixels(picture, view, kTree), ", rock ", count_pixels(picture, view, kRock),
          ", resource ", count_pixels(picture, view, kResource), ", chunk borders ",
          count_pixels(picture, view, kChunkBorder));
  // The own player at the view's centre.
  CHECK(self_x == view.x + view.w / 2);
  CHECK(self_y == view.y + view.h / 2);
  CHECK(picture.at(self_x, self_y) == kSelf);
  CHECK(self_blobs == 1);
  // One disc per NPC the library held: give or take one, for two discs that overlap on
  // screen, or a player's heading line drawn across an NPC's disc.
  CHECK(npc_blobs <= npcs + 1);
  CHECK(npc_blobs >= npcs - 1);
  CHECK(player_blobs == players);
  CHECK(count_pixels(picture, view, kTree) > 0);
  CHECK(count_pixels(picture, view, kRock) > 0);
  CHECK(count_pixels(picture, view, kResource) > 0);
  CHECK(count_pixels(picture, view, kChunkBorder) > 0);

  other.disconnect();
  zone.process.reset();
  std::filesystem::remove_all(dir);
}
