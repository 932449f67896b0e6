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
#include <utility>
#include <vector>

#include "world/ghosts.hpp"
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

// In a world of zones (docs/world.md): this zone's name and index in the world map, and
// its neighbours' rectangles and names, for the map to draw around the zone. Plain data
// the zone translates from its cluster parameters once; fixed while the zone runs.
struct MapNeighbour {
  std::uint32_t index = 0;  // in the world map: world::zone_of() of its entities' ids
  std::string name;
  aoi::Bounds rect;
};
struct MapWorld {
  std::string name;
  std::uint32_t index = 0;
  std::vector<MapNeighbour> neighbours;
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
  // Tick thread. `ghosts`: in a world of zones, the zone's ghosts of its neighbours'
  // entities (who owns each); null alone.
  void publish(std::uint32_t tick, const world::World& world, const MapStats& stats,
               const world::Ghosts* ghosts = nullptr);
  // Tick thread, once before publishing: the zone's place in a world of zones. Without
  // it (a zone alone) the JSON has no "zone" object.
  void set_world(MapWorld world) { world_ = std::make_shared<const MapWorld>(std::move(world)); }
  // Tick thread, every tick: keeps the tick's events (hits, deaths: a flash where they
  // happened) and chat lines for the map, the most recent kMaxMapEvents and
  // kMaxMapChat, so a publish every few ticks still shows every tick's.
  void note_events(std::uint32_t tick, const world::World& world);
  static constexpr std::size_t kMaxMapEvents = 512;
  static constexpr std::size_t kMaxMapChat = 40;

  // Admin thread: choose the entity whose view set is published (0: none).
  void select(std::uint32_t entity_id) { selected_.store(entity_id); }

  // Admin thread: the map as JSON (see the page in server/admin/map_page.hpp).
  std::string frame_json(const MapWindow& window) const;

 private:
  struct Dot {
    std::uint32_t id;
    float x, y;
    std::uint8_t kind;  // the JSON's kind code (map_publisher.cpp)
    // health / max_health in percent when the game has both properties, else kNoHealth.
    std::uint8_t health = kNoHealth;
  };
  static constexpr std::uint8_t kNoHealth = 255;
  struct MapEvent {
    std::uint32_t tick;
    std::uint16_t kind;
    std::uint32_t entity;
    std::uint32_t target;
    float x, y;
  };
  struct MapChat {
    std::uint32_t tick;
    std::uint8_t channel;
    std::string name;
    std::string text;
  };
  struct Frame {
    std::uint32_t tick = 0;
    double min_x = 0, min_y = 0, max_x = 0, max_y = 0;
    double cell_size = 0, view_radius = 0, hysteresis = 0;
    bool aoi_enabled = true;
    MapStats stats;
    std::vector<Dot> dots;
    // Recent events (oldest first) and their kinds' names; recent chat lines.
    std::vector<MapEvent> events;
    std::vector<std::string> event_names;
    std::vector<MapChat> chat;
    std::uint32_t tick_rate_events = 0;  // ticks an event stays on the map
    // The static layer's objects (never change: shared, not copied).
    std::shared_ptr<const std::vector<world::StaticObject>> statics;
    // In a world of zones only (else null): the zone and its neighbours (shared, never
    // copied), what the AOI covers (the rectangle plus the ghost distance), the ghosts
    // held and how many came from each neighbour (in its order).
    std::shared_ptr<const MapWorld> world;
    double covered_min_x = 0, covered_min_y = 0, covered_max_x = 0, covered_max_y = 0;
    std::uint32_t ghosts = 0;
    std::vector<std::uint32_t> neighbour_ghosts;
    // The selected entity, if any.
    std::uint32_t selected = 0;
    std::string selected_name;
    float selected_x = 0, selected_y = 0, selected_radius = 0;
    std::uint8_t selected_kind = 0;
    bool selected_ghost = false;
    std::uint32_t selected_owner = 0;          // a ghost's owning zone
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
  std::shared_ptr<const MapWorld> world_;  // tick thread
  mutable std::mutex mutex_;
  Frame published_;
  Frame building_;                               // tick thread only
  std::vector<MapEvent> recent_events_;          // tick thread only, a ring
  std::size_t next_event_ = 0;                   // the ring's oldest once it is full
  std::vector<MapChat> recent_chat_;             // tick thread only
  std::vector<aoi::EntityHandle> view_scratch_;  // tick thread only
};

}  // namespace zone
