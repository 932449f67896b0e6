// Data for the live web map (admin endpoint "/"): a compact copy of every entity's
// position, published by the tick thread a few times a second, and the view set of the
// one entity the map has selected.
//
// The admin thread formats JSON from the last published frame; the tick thread only
// copies positions into a reused buffer under a mutex, so a busy map costs the tick a
// copy, never a wait on the HTTP side.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "world/world.hpp"

namespace zone {

struct MapStats {
  double tick_ms = 0.0;  // recent mean
  std::uint32_t players = 0;
  std::uint32_t npcs = 0;
  double bytes_out_per_s = 0.0;
  double enters_per_s = 0.0;
  double leaves_per_s = 0.0;
  std::array<double, 3> tier_share{};  // entities in view: near, middle, far (interest)
  double crowded_per_s = 0.0;          // snapshots for views above crowd_threshold
  std::uint32_t load_level = 0;        // interest.load_adaptive
  double load_share = 0.0;             // smoothed tick time / budget
  // Precision tiers (precision.*): NPCs engaged with a player, entities sent coarser.
  std::uint32_t engaged_npcs = 0;
  std::uint32_t ambient = 0;
  // Chunk layer (chunks.*): chunk side, load and unload radii, metres; size 0 when off.
  double chunk_size = 0.0;
  double chunk_load_radius = 0.0;
  double chunk_unload_radius = 0.0;
};

// The part of the map the browser shows, in world metres.
struct MapWindow {
  double x0 = -1e300, y0 = -1e300, x1 = 1e300, y1 = 1e300;
  std::size_t max_entities = 50000;
};

class MapPublisher {
 public:
  // Publishes on every `every_ticks`-th tick.
  explicit MapPublisher(std::uint32_t every_ticks) : every_(every_ticks ? every_ticks : 1) {}

  bool due(std::uint64_t tick) const { return tick % every_ == 0; }
  // Tick thread.
  void publish(std::uint32_t tick, const world::World& world, const MapStats& stats);
  // Admin thread: choose the entity whose view set is published (0: none).
  void select(std::uint32_t entity_id) { selected_.store(entity_id); }

  // Admin thread: the map as JSON (see the page in server/admin/map_page.hpp).
  std::string frame_json(const MapWindow& window) const;

 private:
  struct Dot {
    std::uint32_t id;
    float x, y;
    std::uint8_t kind;  // 0 player, 1 NPC
  };
  struct Frame {
    std::uint32_t tick = 0;
    double min_x = 0, min_y = 0, max_x = 0, max_y = 0;
    double cell_size = 0, view_radius = 0, hysteresis = 0;
    bool aoi_enabled = true;
    MapStats stats;
    std::vector<Dot> dots;
    // The static layer's objects (never change: shared, not copied).
    std::shared_ptr<const std::vector<world::StaticObject>> statics;
    // The selected entity, if any.
    std::uint32_t selected = 0;
    std::string selected_name;
    float selected_x = 0, selected_y = 0, selected_radius = 0;
    std::uint8_t selected_kind = 0;
    std::vector<std::uint32_t> selected_view;  // entity ids
    // Its party (0: none) and the other members, wherever they are: the map draws a line
    // to each.
    std::uint32_t selected_party = 0;
    std::uint32_t selected_guild = 0;
    world::Precision selected_precision;
    bool selected_engaged = false;
    std::vector<Dot> selected_party_members;
  };

  std::uint32_t every_;
  std::atomic<std::uint32_t> selected_{0};
  mutable std::mutex mutex_;
  Frame published_;
  Frame building_;  // tick thread only
};

}  // namespace zone
