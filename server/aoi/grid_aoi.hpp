// Grid area-of-interest core: who sees whom, recomputed exactly once per tick.
//
// A pure spatial library: no networking, no configuration parsing, nothing beyond the
// standard library. The zone loop feeds it the tick's adds, moves and removes, calls
// update() once, and reads back the tick's enter/leave events.
//
// Visibility rule (exact distance with hysteresis; cells are only the broad phase):
//   target b ENTERS observer a's view when it is not in view and dist(a, b) <= r_a,
//   target b LEAVES observer a's view when it is in view and dist(a, b) >  r_a + h.
// An entity never observes itself. Entities that are not observers have no view set
// but are still seen by observers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "aoi/slot_map.hpp"

namespace zone::aoi {

// World position in metres. Double precision so that the enter/leave decisions are exact
// far from the origin; the broad phase keeps a float copy for its vectorised filter.
struct Vec2 {
  double x = 0.0;
  double y = 0.0;
};

// Axis-aligned world rectangle [min, max]. Positions outside it are legal: the grid
// clamps them into its border cells for the broad phase, distances stay exact.
struct Bounds {
  Vec2 min;
  Vec2 max;
};

struct GridConfig {
  Bounds bounds{{0.0, 0.0}, {1000.0, 1000.0}};
  double cell_size = 32.0;  // metres; the broad-phase bucket size
  double hysteresis = 2.0;  // metres; h in the visibility rule
};

enum class EventKind : std::uint8_t { kEnter = 0, kLeave = 1 };

struct VisibilityEvent {
  EntityHandle observer;
  EntityHandle target;
  EventKind kind;
};

struct GridStats {
  std::uint32_t entities = 0;
  std::uint32_t observers = 0;
  std::uint32_t cells = 0;           // cells in the grid
  std::uint32_t occupied_cells = 0;  // cells holding at least one entity
  std::uint32_t max_cell_population = 0;
  std::uint64_t visible_pairs = 0;  // sum of all view-set sizes
};

// Why a GridConfig or an entity parameter was refused.
enum class ConfigError : std::uint8_t {
  kNone,
  kBadBounds,      // min >= max on an axis, or not finite
  kBadCellSize,    // not finite or <= 0
  kTooManyCells,   // the grid would exceed kMaxCells
  kBadHysteresis,  // negative or not finite
};
const char* to_string(ConfigError e);

class GridAoi {
 public:
  // Upper bound on the dense grid: 16 Mi cells (64 MiB of cell offsets).
  static constexpr std::uint32_t kMaxCells = 1u << 24;

  // Checks a configuration without building anything.
  static ConfigError validate(const GridConfig& config);

  // Precondition: validate(config) == ConfigError::kNone (checked; throws
  // std::invalid_argument otherwise).
  explicit GridAoi(const GridConfig& config);

  // --- Mutations. They take effect at the next update(). ---------------------------------
  // Coordinates must be finite and within +-kMaxCoordinate; radii finite, >= 0 and at
  // most kMaxCoordinate. Anything else is refused, never stored.
  static constexpr double kMaxCoordinate = 1.0e7;

  // Adds an entity. Returns an invalid handle if the position or radius is refused.
  EntityHandle add(Vec2 position, double view_radius, bool observer);
  // Removes an entity; at the next update every pair it is part of leaves, in both
  // directions. Returns false for a stale handle.
  bool remove(EntityHandle h);
  // Moves an entity. A move of any length (several cells, across the world) is handled
  // exactly. Returns false (and changes nothing) for a stale handle or a non-finite
  // position.
  bool move(EntityHandle h, Vec2 position);
  bool set_view_radius(EntityHandle h, double view_radius);
  bool set_observer(EntityHandle h, bool observer);

  struct Move {
    EntityHandle handle;
    Vec2 position;
  };
  // Batch form of move(); returns how many moves were refused.
  std::size_t move_batch(std::span<const Move> moves);

  // --- The tick. ----------------------------------------------------------------------------
  // Rebuilds the broad phase from the current positions and recomputes every observer's
  // view set. Returns the tick's events, valid until the next update(). Order is
  // deterministic: observers by ascending slot index; for each observer its enters (in
  // broad-phase order) and then its leaves (in view-set order). Despawned entities'
  // handles appear in the events of the tick they are removed in, and their slots are
  // reused only afterwards.
  std::span<const VisibilityEvent> update();

  // --- Queries. The broad-phase queries (query_radius, view sets, stats) answer as of
  // the last update(); position(), view_radius() and is_observer() return the latest
  // values set, including changes still pending for the next update(). ----------------
  // False for stale handles and for entities removed since the last update().
  bool contains(EntityHandle h) const { return usable(h); }
  Vec2 position(EntityHandle h) const;  // precondition: contains(h)
  double view_radius(EntityHandle h) const;
  bool is_observer(EntityHandle h) const;
  // The targets in an observer's view (unordered). Empty for non-observers.
  std::span<const std::uint32_t> view_slots(EntityHandle observer) const;
  // Same, as handles, appended to out.
  void view_set(EntityHandle observer, std::vector<EntityHandle>& out) const;
  bool sees(EntityHandle observer, EntityHandle target) const;
  // Entities with dist(center, e) <= radius, appended to out in broad-phase order.
  void query_radius(Vec2 center, double radius, std::vector<EntityHandle>& out) const;
  GridStats stats() const;
  const GridConfig& config() const { return config_; }
  std::uint32_t grid_width() const { return cols_; }
  std::uint32_t grid_height() const { return rows_; }
  EntityHandle handle_at(std::uint32_t slot) const { return slots_.handle_at(slot); }

  // Replaces the cell size (a designer tuning it while the zone runs) from the next
  // update() on; until then queries keep using the current grid. View sets are kept, so
  // this produces no events by itself: visibility depends on distances, not cells.
  ConfigError set_cell_size(double cell_size);
  // Replaces the hysteresis; takes effect at the next update().
  ConfigError set_hysteresis(double hysteresis);

 private:
  // Candidate rows for a disc: for each grid row the disc touches, the contiguous range
  // [begin, end) of cell-ordered entities in the columns the disc can reach on that row.
  // Also marks, per row, the sub-range [inner_begin, inner_end) of cells lying wholly
  // within inner_radius (empty when there are none): fn(begin, end, inner_begin, inner_end).
  template <typename Fn>
  void for_each_row_span(Vec2 center, double radius, double inner_radius, Fn&& fn) const;
  std::uint32_t cell_col(double x) const;
  std::uint32_t cell_row(double y) const;
  void resize_grid();
  void rebuild_cells();
  void update_observer(std::uint32_t slot);
  void release_removed();
  std::uint32_t next_epoch();
  bool usable(EntityHandle h) const;

  GridConfig config_;
  std::uint32_t cols_ = 0;
  std::uint32_t rows_ = 0;
  double inv_cell_ = 0.0;

  SlotMap slots_;
  // Per slot (structure of arrays, indexed by slot index).
  std::vector<Vec2> pos_;
  std::vector<double> radius_;
  std::vector<std::uint8_t> flags_;               // kAlive / kObserver / kRemoved bits
  std::vector<std::vector<std::uint32_t>> view_;  // observer -> target slots
  std::vector<std::uint32_t> stamp_;              // scratch marks for the view diff

  // Broad phase, rebuilt every tick by a stable counting sort over cell indices: the
  // entities of cell c sit at [cell_start_[c], cell_start_[c + 1]) of the cell-ordered
  // arrays, and a run of cells along one grid row is one contiguous range.
  std::vector<std::uint32_t> cell_of_;     // per slot, this tick's cell
  std::vector<std::uint32_t> cell_start_;  // cols_ * rows_ + 1 offsets
  std::vector<float> sorted_xf_;           // float copy for the vectorised filter
  std::vector<float> sorted_yf_;
  std::vector<double> sorted_x_;  // exact positions for the decision
  std::vector<double> sorted_y_;
  std::vector<std::uint32_t> sorted_slot_;

  std::vector<std::uint32_t> hits_;     // scratch: candidate positions of one observer
  std::vector<std::uint32_t> removed_;  // slots removed since the last update
  std::vector<VisibilityEvent> events_;
  std::uint32_t epoch_ = 0;
  double pending_cell_size_ = 0.0;  // > 0: applied at the start of the next update()
};

}  // namespace zone::aoi
