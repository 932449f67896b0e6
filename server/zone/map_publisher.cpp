#include "zone/map_publisher.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace zone {

namespace {

// The entities' kind codes in the JSON: a ghost is another zone's entity.
enum DotKind : std::uint8_t {
  kPlayerDot = 0,
  kNpcDot = 1,
  kEngagedNpcDot = 2,  // an NPC engaged with a player (precision tiers)
  kGhostPlayerDot = 3,
  kGhostNpcDot = 4,
};
constexpr bool is_ghost(std::uint8_t kind) {
  return kind == kGhostPlayerDot || kind == kGhostNpcDot;
}

}  // namespace

void MapPublisher::note_events(std::uint32_t tick, const world::World& world) {
  const world::EventLog& log = world.events();
  for (const world::WorldEvent& e : log.events()) {
    if (e.kind == protocol::kChatEvent) {
      if (recent_chat_.size() == kMaxMapChat) recent_chat_.erase(recent_chat_.begin());
      recent_chat_.push_back({tick, static_cast<std::uint8_t>(e.args[0]), std::string(log.name(e)),
                              std::string(log.text(e))});
      continue;
    }
    const world::Entity* at = world.find(e.entity);
    if (at == nullptr) continue;
    // A ring: the oldest is overwritten, nothing moves.
    const MapEvent m{
        tick, e.kind, e.entity, e.target, static_cast<float>(at->x), static_cast<float>(at->y)};
    if (recent_events_.size() < kMaxMapEvents) {
      recent_events_.push_back(m);
    } else {
      recent_events_[next_event_] = m;
    }
    next_event_ = (next_event_ + 1) % kMaxMapEvents;
  }
}

void MapPublisher::publish(std::uint32_t tick, const world::World& world, const MapStats& stats,
                           const world::Ghosts* ghosts) {
  Frame& f = building_;
  const world::WorldParams& p = world.params();
  f.tick = tick;
  f.min_x = p.grid.bounds.min.x;
  f.min_y = p.grid.bounds.min.y;
  f.max_x = p.grid.bounds.max.x;
  f.max_y = p.grid.bounds.max.y;
  f.cell_size = p.grid.cell_size;
  f.view_radius = world.effective_player_radius();
  f.hysteresis = p.grid.hysteresis;
  f.aoi_enabled = !p.broadcast;
  f.stats = stats;
  f.dots.clear();
  f.statics = p.statics.objects;
  // Health bars: the game's properties named health and max_health, if it has both.
  const protocol::Schema& schema = world.game().schema;
  const auto health_row = schema.find_field("health");
  const auto max_row = schema.find_field("max_health");
  const bool bars = health_row && max_row && *health_row >= protocol::kEngineFieldCount &&
                    *max_row >= protocol::kEngineFieldCount;
  world.for_each_entity([&](std::uint32_t slot, const world::Entity& e) {
    const bool player = e.kind == world::EntityKind::kPlayer;
    DotKind kind = player ? kPlayerDot : (e.engaged ? kEngagedNpcDot : kNpcDot);
    if (e.ghost) kind = player ? kGhostPlayerDot : kGhostNpcDot;
    std::uint8_t health = kNoHealth;
    if (bars) {
      const auto values = world.properties(slot);
      const double now = values[*health_row - protocol::kEngineFieldCount];
      const double most = values[*max_row - protocol::kEngineFieldCount];
      if (most > 0) health = static_cast<std::uint8_t>(std::clamp(100.0 * now / most, 0.0, 100.0));
    }
    f.dots.push_back({e.id, static_cast<float>(e.x), static_cast<float>(e.y), kind, health});
  });
  // Events of the last two seconds, and the recent chat lines.
  f.tick_rate_events = every_ * 10;
  f.events.clear();
  for (std::size_t k = 0; k < recent_events_.size(); ++k) {  // oldest first
    const MapEvent& e = recent_events_[(next_event_ + k) % recent_events_.size()];
    if (tick - e.tick <= f.tick_rate_events) f.events.push_back(e);
  }
  f.chat = recent_chat_;
  f.event_names.clear();
  for (const protocol::EventSpec& spec : schema.events()) f.event_names.push_back(spec.name);
  f.world = world_;
  f.ghosts = world.ghost_count();
  f.neighbour_ghosts.clear();
  if (world_) {
    f.covered_min_x = f.min_x - p.ghost_margin;
    f.covered_min_y = f.min_y - p.ghost_margin;
    f.covered_max_x = f.max_x + p.ghost_margin;
    f.covered_max_y = f.max_y + p.ghost_margin;
    // Ghosts by the zone that owns them (whose lists they follow: world::Ghosts' tables).
    for (const MapNeighbour& n : world_->neighbours) {
      f.neighbour_ghosts.push_back(
          ghosts != nullptr ? static_cast<std::uint32_t>(ghosts->count_from(n.index)) : 0);
    }
  }
  f.selected = 0;
  f.selected_view.clear();
  f.selected_party = 0;
  f.selected_guild = 0;
  f.selected_party_members.clear();
  if (const std::uint32_t id = selected_.load(); id != 0) {
    if (const world::Entity* e = world.find(id)) {
      f.selected = id;
      f.selected_name = e->name;
      f.selected_x = static_cast<float>(e->x);
      f.selected_y = static_cast<float>(e->y);
      f.selected_kind = e->kind == world::EntityKind::kPlayer ? 0 : 1;
      f.selected_ghost = e->ghost;
      f.selected_owner = e->ghost && ghosts != nullptr ? ghosts->owner(id).value_or(0) : 0;
      f.selected_radius = static_cast<float>(world.aoi().view_radius(e->aoi));
      view_scratch_.clear();
      world.aoi().view_set(e->aoi, view_scratch_);
      for (const aoi::EntityHandle t : view_scratch_) {
        f.selected_view.push_back(world.entity(t.index).id);
      }
      f.selected_party = e->party;
      f.selected_guild = e->guild;
      f.selected_precision = e->precision;
      f.selected_engaged = e->engaged;
      for (const world::Groups::Member& m : world.parties().members(e->party)) {
        if (m.id == id) continue;
        const world::Entity& member = world.entity(m.slot);
        f.selected_party_members.push_back(
            {m.id, static_cast<float>(member.x), static_cast<float>(member.y), 0});
      }
    }
  }
  std::lock_guard lock(mutex_);
  std::swap(published_, building_);
}

std::string MapPublisher::frame_json(const MapWindow& w) const {
  Frame f;
  {
    std::lock_guard lock(mutex_);
    f = published_;
  }
  // Entities: a flat array [id, kind, x, y, ...] with positions to 0.1 m, only inside
  // the window, so a zoomed-in map of a 20,000-entity zone stays small.
  std::string dots;
  std::string health;  // per entity shown, in the same order: percent, or -1
  dots.reserve(f.dots.size() * 24);
  std::size_t shown = 0, in_window = 0, ghosts_in_window = 0;
  for (const Dot& d : f.dots) {
    if (d.x < w.x0 || d.x > w.x1 || d.y < w.y0 || d.y > w.y1) continue;
    ++in_window;
    if (is_ghost(d.kind)) ++ghosts_in_window;
    if (shown == w.max_entities) continue;
    ++shown;
    if (!dots.empty()) dots += ',';
    fmt::format_to(std::back_inserter(dots), "{},{},{:.1f},{:.1f}", d.id, d.kind, d.x, d.y);
    if (!health.empty()) health += ',';
    fmt::format_to(std::back_inserter(health), "{}",
                   d.health == kNoHealth ? -1 : static_cast<int>(d.health));
  }
  // Events in the window: [age in ticks, kind, entity, target, x, y]; chat lines as text
  // (the page shows them with textContent: they come from players).
  nlohmann::json events = nlohmann::json::array();
  for (const MapEvent& e : f.events) {
    if (e.x < w.x0 || e.x > w.x1 || e.y < w.y0 || e.y > w.y1) continue;
    events.push_back({f.tick - e.tick, e.kind, e.entity, e.target, e.x, e.y});
  }
  nlohmann::json chat = nlohmann::json::array();
  for (const MapChat& c : f.chat) chat.push_back({c.tick, c.channel, c.name, c.text});
  const nlohmann::json gameplay = {{"event_names", f.event_names},
                                   {"event_ticks", f.tick_rate_events},
                                   {"events", events},
                                   {"chat", chat}};
  // Static objects in the window: [x, y, radius, kind, ...] to the centimetre, at most
  // kMaxStaticsShown (a zoomed-out view of a large map shows none, and says how many).
  constexpr std::size_t kMaxStaticsShown = 5000;
  std::string statics;
  std::size_t statics_in_window = 0;
  if (f.statics) {
    for (const world::StaticObject& o : *f.statics) {
      if (o.x + o.radius < w.x0 || o.x - o.radius > w.x1 || o.y + o.radius < w.y0 ||
          o.y - o.radius > w.y1) {
        continue;
      }
      if (++statics_in_window > kMaxStaticsShown) continue;  // counted, not written
      if (!statics.empty()) statics += ',';
      fmt::format_to(std::back_inserter(statics), "{:.2f},{:.2f},{:.2f},{}", o.x, o.y, o.radius,
                     static_cast<int>(o.kind));
    }
    if (statics_in_window > kMaxStaticsShown) statics.clear();
  }
  // Cell populations over the visible cells (row-major from col0,row0), for shading: the
  // zone's own entities (ghosts, in the band around the zone, would pile up in the edge
  // cells).
  std::string cells;
  std::uint32_t col0 = 0, row0 = 0, cols = 0, rows = 0;
  if (f.cell_size > 0) {
    const auto clampi = [](double v, double hi) {
      return static_cast<std::uint32_t>(std::clamp(v, 0.0, hi));
    };
    const double all_cols = std::ceil((f.max_x - f.min_x) / f.cell_size);
    const double all_rows = std::ceil((f.max_y - f.min_y) / f.cell_size);
    col0 = clampi(std::floor((std::max(w.x0, f.min_x) - f.min_x) / f.cell_size), all_cols - 1);
    row0 = clampi(std::floor((std::max(w.y0, f.min_y) - f.min_y) / f.cell_size), all_rows - 1);
    const std::uint32_t col1 =
        clampi(std::floor((std::min(w.x1, f.max_x) - f.min_x) / f.cell_size), all_cols - 1);
    const std::uint32_t row1 =
        clampi(std::floor((std::min(w.y1, f.max_y) - f.min_y) / f.cell_size), all_rows - 1);
    cols = col1 >= col0 ? col1 - col0 + 1 : 0;
    rows = row1 >= row0 ? row1 - row0 + 1 : 0;
    if (static_cast<std::uint64_t>(cols) * rows <= 65536) {
      std::vector<std::uint32_t> counts(static_cast<std::size_t>(cols) * rows, 0);
      for (const Dot& d : f.dots) {
        if (is_ghost(d.kind)) continue;
        const auto c = clampi(std::floor((d.x - f.min_x) / f.cell_size), all_cols - 1);
        const auto r = clampi(std::floor((d.y - f.min_y) / f.cell_size), all_rows - 1);
        if (c < col0 || c > col1 || r < row0 || r > row1) continue;
        ++counts[(r - row0) * cols + (c - col0)];
      }
      for (std::size_t i = 0; i < counts.size(); ++i) {
        if (i) cells += ',';
        fmt::format_to(std::back_inserter(cells), "{}", counts[i]);
      }
    } else {
      cols = rows = 0;  // too many to shade at this zoom
    }
  }
  std::string selected = "null";
  if (f.selected != 0) {
    nlohmann::json members = nlohmann::json::array();
    for (const Dot& m : f.selected_party_members) members.push_back({m.id, m.x, m.y});
    nlohmann::json s = {{"id", f.selected},
                        {"name", f.selected_name},
                        {"kind", f.selected_kind},
                        {"x", f.selected_x},
                        {"y", f.selected_y},
                        {"view_radius", f.selected_radius},
                        {"view", f.selected_view},
                        {"party", f.selected_party},
                        {"guild", f.selected_guild},
                        {"party_members", members},
                        {"position_cm", f.selected_precision.position_cm},
                        {"heading_bits", 16 - f.selected_precision.heading_shift},
                        {"engaged", f.selected_engaged}};
    // A ghost: the zone that owns it now (after a handoff, not the one that made it).
    if (f.selected_ghost) {
      const std::uint32_t owner = f.selected_owner;
      std::string owner_name;
      if (f.world) {
        for (const MapNeighbour& n : f.world->neighbours) {
          if (n.index == owner) owner_name = n.name;
        }
      }
      s["owner"] = {{"index", owner}, {"name", owner_name}};
    }
    selected = s.dump();
  }
  // In a world of zones only: the zone, the area its AOI covers, its ghosts and its
  // neighbours with the ghosts each has here now.
  std::string zone;
  if (f.world) {
    nlohmann::json neighbours = nlohmann::json::array();
    for (std::size_t i = 0; i < f.world->neighbours.size(); ++i) {
      const MapNeighbour& n = f.world->neighbours[i];
      neighbours.push_back({{"index", n.index},
                            {"name", n.name},
                            {"rect", {n.rect.min.x, n.rect.min.y, n.rect.max.x, n.rect.max.y}},
                            {"ghosts", i < f.neighbour_ghosts.size() ? f.neighbour_ghosts[i] : 0}});
    }
    const nlohmann::json z = {
        {"name", f.world->name},
        {"index", f.world->index},
        {"covered", {f.covered_min_x, f.covered_min_y, f.covered_max_x, f.covered_max_y}},
        {"ghosts", f.ghosts},
        {"ghosts_in_window", ghosts_in_window},
        {"neighbours", neighbours}};
    zone = ",\"zone\":" + z.dump();
  }
  return fmt::format(
      "{{\"tick\":{},\"world\":[{},{},{},{}],\"cell_size\":{},\"view_radius\":{},"
      "\"hysteresis\":{},\"aoi_enabled\":{},\"stats\":{{\"tick_ms\":{:.3f},\"players\":{},"
      "\"npcs\":{},\"entities\":{},\"bytes_out_per_s\":{:.0f},\"enters_per_s\":{:.1f},"
      "\"leaves_per_s\":{:.1f},\"tier_share\":[{:.3f},{:.3f},{:.3f}],"
      "\"crowded_per_s\":{:.1f},\"load_level\":{},\"load_share\":{:.3f},"
      "\"engaged_npcs\":{},\"ambient\":{}}},"
      "\"entities_in_window\":{},\"entities\":[{}],\"health\":[{}],\"gameplay\":{},"
      "\"cells\":{{\"col0\":{},\"row0\":{},\"cols\":{},\"rows\":{},\"counts\":[{}]}},"
      "\"chunks\":{{\"size\":{},\"load_radius\":{},\"unload_radius\":{}}},"
      "\"statics_in_window\":{},\"statics\":[{}]{},"
      "\"selected\":{}}}",
      f.tick, f.min_x, f.min_y, f.max_x, f.max_y, f.cell_size, f.view_radius, f.hysteresis,
      f.aoi_enabled, f.stats.tick_ms, f.stats.players, f.stats.npcs, f.dots.size(),
      f.stats.bytes_out_per_s, f.stats.enters_per_s, f.stats.leaves_per_s, f.stats.tier_share[0],
      f.stats.tier_share[1], f.stats.tier_share[2], f.stats.crowded_per_s, f.stats.load_level,
      f.stats.load_share, f.stats.engaged_npcs, f.stats.ambient, in_window, dots, health,
      gameplay.dump(), col0, row0, cols, rows, cells, f.stats.chunk_size, f.stats.chunk_load_radius,
      f.stats.chunk_unload_radius, statics_in_window, statics, zone, selected);
}

}  // namespace zone
