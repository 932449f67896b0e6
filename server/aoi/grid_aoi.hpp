// Grid area-of-interest core: who sees whom, brought up to date exactly once per tick.
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
//
// Given a per-tick displacement bound (GridConfig::max_step), a pair is only re-tested
// when it could have crossed a threshold. Each observer's candidate list (the targets
// within r + skin of it) is rebuilt from the grid every few ticks; in between, every pair
// that could change before the rebuild has a re-test filed in a timing wheel under the
// first tick at which it could have crossed, and pairs deep inside or far outside are not
// looked at. Entities that move further than the bound in one tick are handled as
// teleports, so the result is exact whatever the callers do: the bound only decides how
// much work is skipped.
//
// Observers of the same view radius form a mutual class: between two of them the rule
// gives both directions the same thresholds and the same distance, so a pair is seen both
// ways or neither. Such a pair is looked after once, by the list of its lower slot, which
// decides both directions with one distance, and is held by that slot's view alone. An observer
// whose radius changes or that stops observing leaves its class (its pairs are then looked after
// one direction at a time, as between observers of different radii); it joins the class of its new
// radius once none of its pairs with that class is seen one way only. docs/architecture.md
// describes the scheme.
//
// In crowded cells (GridConfig::crowd_min_in_view) the members of a class hand their
// pairs with each other to a CrowdTier, one per class, which tests them all each tick from
// contiguous arrays. Such a pair is in no view and no list; every other pair of a member
// (with another class, a non-observer, a classmate outside the crowd) stays with the lists.
// Membership is decided at the end of each update and hands the pairs over without events:
// a joiner's lists go on as they are (tests of its crowd pairs are dropped when they come
// due), a leaver is handled like a teleport in place at the next update (its list rebuilt,
// its neighbours' pairs with it re-tested). grid_crowds.cpp has the details.
//
// The tick's two heavy phases, the list rebuilds and the due pair tests, can run on worker
// threads (set_parallel): cut into pieces that each write an output of their own, merged in
// piece order, so that nothing the AOI returns depends on the number of threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "aoi/crowd_tier.hpp"
#include "aoi/slot_map.hpp"
#include "aoi/test_wheel.hpp"
#include "aoi/types.hpp"

namespace zone::aoi {

struct GridConfig {
  Bounds bounds{{0.0, 0.0}, {1000.0, 1000.0}};
  double cell_size = 32.0;  // metres; the broad-phase bucket size
  double hysteresis = 2.0;  // metres; h in the visibility rule
  // Metres: the furthest any entity is expected to move between two update() calls.
  // Only a performance hint: a move beyond it is handled as a teleport (exactly, at a
  // higher cost). Infinity (the default) means "no bound": every list is rebuilt every
  // tick. 0 is allowed (a static world where every move is a teleport).
  double max_step = std::numeric_limits<double>::infinity();
  // Crowds: an observer of a mutual class (a view radius r several observers share) whose
  // broad-phase cell is so dense that about this many entities are within r of it (the
  // other entities in its cell times pi r^2 / cell_size^2) has its pairs with the other such
  // observers of its class decided by a crowd tier (crowd_tier.hpp: every pair of nearby
  // cells tested each tick from contiguous arrays, cheaper than per-pair wake-ups once
  // hundreds are in view); it goes back to the lists below half that density. Only a
  // performance choice: the events are the same. 0 turns crowds off.
  std::uint32_t crowd_min_in_view = 0;
};

struct VisibilityEvent {
  EntityHandle observer;
  EntityHandle target;
  EventKind kind;
};

struct GridStats {
  std::uint32_t entities = 0;
  std::uint32_t observers = 0;
  std::uint32_t cells = 0;  // cells in the grid
  // Cells holding at least one entity, as the broad phase lists them (an entity walking
  // across a cell edge may be listed under its old cell for a few ticks).
  std::uint32_t occupied_cells = 0;
  std::uint32_t max_cell_population = 0;  // the same: as listed
  std::uint64_t visible_pairs = 0;        // sum of all view-set sizes
  std::uint32_t mutual_observers = 0;     // observers in a mutual class (see GridAoi)
  std::uint32_t crowd_members = 0;        // observers whose classmate pairs a crowd decides
};

// Why a GridConfig or an entity parameter was refused.
enum class GridConfigError : std::uint8_t {
  kNone,
  kBadBounds,      // min >= max on an axis, or not finite
  kBadCellSize,    // not finite or <= 0
  kTooManyCells,   // the grid would exceed kMaxCells
  kBadHysteresis,  // negative or not finite
  kBadMaxStep,     // negative or NaN
};
const char* to_string(GridConfigError e);

class GridAoi {
 public:
  // Upper bound on the grid's extent: 16 Mi cells. The grid is sparse (memory and
  // per-tick work follow the entities, not the cells); the cap keeps cell indices in 32 bits
  // and bounds the rows a query may have to walk.
  static constexpr std::uint32_t kMaxCells = 1u << 24;

  // Checks a configuration without building anything.
  static GridConfigError validate(const GridConfig& config);

  // Precondition: validate(config) == GridConfigError::kNone (checked; throws
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
  // exactly; one longer than max_step since the last update() is a teleport. Returns
  // false (and changes nothing) for a stale handle or a non-finite position.
  bool move(EntityHandle h, Vec2 position);
  bool set_view_radius(EntityHandle h, double view_radius);
  bool set_observer(EntityHandle h, bool observer);

  struct Move {
    EntityHandle handle;
    Vec2 position;
  };
  // Batch form of move(); returns how many moves were refused.
  std::size_t move_batch(std::span<const Move> moves);

  // --- Threads. ---------------------------------------------------------------------------
  // Runs fn(piece, worker) once for every piece in [0, pieces), on at most `workers`
  // threads at once (worker < workers, each worker number used by one thread at a time),
  // and returns when all are done. A zone passes its worker pool's run().
  using PieceFn = std::function<void(std::uint32_t piece, std::uint32_t worker)>;
  using ParallelFor = std::function<void(std::uint32_t pieces, const PieceFn& fn)>;
  // From the next update() on, the list rebuilds and the pair tests of a tick run on
  // `workers` threads through `run` (workers <= 1 or an empty `run`: on the calling
  // thread alone). The events, their order and every query's answer are the same for any
  // number of workers: each piece of work writes its own output, merged in piece order.
  void set_parallel(ParallelFor run, std::uint32_t workers);

  // --- The tick. ----------------------------------------------------------------------------
  // Brings every observer's view set up to date with the current positions. Returns the
  // tick's events, valid until the next update(); at most one per (observer, target) pair.
  // The order is deterministic (a function of the sequence of calls alone): first the
  // observers whose candidate lists are rebuilt (or dropped: switched off, removed) this
  // tick, by ascending slot, each list with its enters and then its leaves; then the pairs
  // re-tested individually, in the order their re-tests were scheduled. The two events of
  // a mutual pair decided by its owner (the lower slot's list) come together, the owner's
  // first, inside the owner's part; so a higher slot's events may appear in a lower
  // slot's part too. An observer switched off or removed has left its class, so its
  // view's leaves and the other ways round come separately. Last come the crowds' pairs,
  // class by class, each pair's two events together (CrowdTier::update gives their order).
  // Without a bound every list is rebuilt every tick. Despawned entities' handles appear in the
  // events of the tick they are removed in, and their slots are reused only afterwards.
  std::span<const VisibilityEvent> update();

  // --- Queries. The broad-phase queries (query_radius, view sets, stats) answer as of
  // the last update(); position(), view_radius() and is_observer() return the latest
  // values set, including changes still pending for the next update(). ----------------
  // False for stale handles and for entities removed since the last update().
  bool contains(EntityHandle h) const { return usable(h); }
  Vec2 position(EntityHandle h) const;  // precondition: contains(h)
  double view_radius(EntityHandle h) const;
  bool is_observer(EntityHandle h) const;
  // The targets in an observer's view as of the last update, appended to out (unordered;
  // none for an entity that was no observer then). Its mutual pairs with lower slots are
  // found with a grid query around its position of the last update (a scan of every
  // entity when it moved further than max_step since, or without a bound), and those its
  // crowd decides are read from the crowd's bits: meant for inspecting a few observers, not
  // all of them every tick.
  void view_set(EntityHandle observer, std::vector<EntityHandle>& out) const;
  bool sees(EntityHandle observer, EntityHandle target) const;
  // Entities with dist(center, e) <= radius, appended to out in broad-phase order.
  void query_radius(Vec2 center, double radius, std::vector<EntityHandle>& out) const;
  // O(number of crowds): kept up to date by update() and the mutations.
  GridStats stats() const;
  const GridConfig& config() const { return config_; }
  std::uint32_t grid_width() const { return cols_; }
  std::uint32_t grid_height() const { return rows_; }
  EntityHandle handle_at(std::uint32_t slot) const { return slots_.handle_at(slot); }

  // Replaces the cell size (a designer tuning it while the zone runs) from the next
  // update() on; until then queries keep using the current grid. View sets are kept, so
  // this produces no events by itself: visibility depends on distances, not cells.
  GridConfigError set_cell_size(double cell_size);
  // Replaces the hysteresis; takes effect at the next update().
  GridConfigError set_hysteresis(double hysteresis);
  // Replaces the displacement bound; it applies to the moves made before the next update().
  GridConfigError set_max_step(double max_step);

  // Internal consistency check for tests (O(N^2 + scheduled tests)): view sets, scheduled
  // re-tests and the broad phase agree with the positions of the last update(). Returns an
  // empty string when all is well.
  std::string check_invariants() const;

 private:
  struct Leave {  // a view removal, applied after the tick's tests
    std::uint32_t observer;
    std::uint32_t target;
    std::uint32_t hint;
  };
  struct Enter {  // a pair that came into view, put into the views after the tick's tests
    std::uint32_t observer;
    std::uint32_t target;
    std::uint8_t observer_version;
    std::uint8_t target_version;
    bool mutual;    // and the target sees the observer
    bool schedule;  // wake is before the list expires
    std::uint32_t wake;
  };
  struct CellEntry {  // an entity waiting to be merged into the cell order
    std::uint32_t key;
    std::uint32_t slot;
    friend bool operator<(CellEntry a, CellEntry b) {
      return a.key != b.key ? a.key < b.key : a.slot < b.slot;
    }
  };
  // An entity that left its position of the last update (removed, teleported, or left its
  // mutual class); as an arrival, also a new entity (from: NaN).
  struct Departure {
    std::uint32_t slot;
    Vec2 from;
  };

  // Contiguous ranges [begin, end) of the cell-ordered arrays that hold every entity
  // within `reach` of c (and others): one range per occupied grid row the disc touches.
  // Always inlined: left out of line in the templated rebuild, its per-span call cost the
  // rebuilds about 5% more instructions (cachegrind, mixed-20k). This and the other inline
  // members declared without a body are defined in grid_aoi_internal.hpp.
  template <typename Fn>
  [[gnu::always_inline]] inline void for_each_span(Vec2 c, double reach, Fn&& fn) const;
  // The same ranges as occupied cells [first, last) of cell_key_ (fn(first, last)).
  template <typename Fn>
  [[gnu::always_inline]] inline void for_each_cell_run(Vec2 c, double reach, Fn&& fn) const;
  inline std::uint32_t cell_col(double x) const;
  inline std::uint32_t cell_row(double y) const;
  inline std::uint32_t cell_key(Vec2 p) const;
  void resize_grid();
  void apply_settings();
  void compute_schedule();
  std::uint32_t merge_interval() const;
  void maintain_cells();
  void index_cells();
  void notify_departure(const Departure& d);
  void notify_arrival(const Departure& arrival);
  bool list_is_current(std::uint32_t a) const;
  bool decided_by(std::uint32_t b, std::uint32_t a) const;
  // view_index: where b is in a's view, or kNotVisible (0xFFFFFFFF) for a hidden pair.
  void schedule(std::uint32_t tick, std::uint32_t a, std::uint32_t b, std::uint32_t view_index) {
    schedule(tick, {a, b, hot_[a].observer_version, hot_[b].target_version, 0}, view_index);
  }
  // Same, with the versions already in `test` (its target field without the visible bit).
  void schedule(std::uint32_t tick, PairTest test, std::uint32_t view_index) {
    file(tick, encode(test, view_index));
  }
  // The test with its visible bit and view index set.
  static PairTest encode(PairTest test, std::uint32_t view_index) {
    test.target |= view_index != 0xFFFFFFFFu ? PairTest::kVisibleBit : 0u;
    test.view_index = static_cast<std::uint16_t>(view_index);
    return test;
  }
  // Files a test (its target field and view index already set) under `tick`.
  void file(std::uint32_t tick, const PairTest& test) { wheel_.append(wheel_.due(tick), test); }

  // What a worker uses while it rebuilds lists: marks for the view diff (per target slot)
  // and room for the candidates and the new view (as many as there are entities).
  struct Scratch {
    std::vector<std::uint32_t> stamp;
    std::uint32_t epoch = 0;
    std::vector<std::uint32_t> hits;
    std::vector<std::uint32_t> view;
    std::uint32_t next_epoch();
  };
  std::uint32_t mark_view(std::uint32_t b, Scratch& scratch) const;
  [[gnu::noinline]] std::uint32_t crowd_member_candidates(Vec2 c, double reach, std::uint8_t cls,
                                                          std::uint32_t* hits) const;
  // What one piece of a parallel phase produces, merged in piece order afterwards: the
  // events, the tests to file (per wheel bucket, so that each bucket's share is copied
  // whole), the view changes to apply, the lists' expiry entries and the change in the
  // number of visible pairs.
  struct Expiry {
    std::uint32_t bucket;
    std::uint32_t observer;
  };
  struct Piece {
    std::vector<VisibilityEvent> events;
    std::vector<std::vector<PairTest>> filed;  // per wheel bucket
    std::vector<Leave> leaves;
    std::vector<Enter> enters;
    std::vector<Expiry> expiring;
    std::vector<std::uint32_t> joiners;
    std::int64_t visible = 0;
    void clear();
  };
  // (Both defined in grid_aoi_internal.hpp.)
  class DirectSink;  // writes into the AOI's own buffers (one thread)
  class PieceSink;   // writes into a Piece
  template <typename Sink>
  void rebuild_list(std::uint32_t a, std::uint32_t base_tick, Scratch& scratch, Sink& sink);
  template <typename Sink>
  void clear_view(std::uint32_t a, Sink& sink);
  template <typename Sink>
  void build_lists(std::uint32_t begin, std::uint32_t end, bool stale, Scratch& scratch,
                   Sink& sink);
  template <typename Sink>
  void run_tests(const PairTest* tests, std::uint32_t count, Sink& sink);
  void rebuild_lists(bool stale);
  void run_due_tests();
  void merge(Piece& piece);
  void apply_enters();
  void apply_leaves();
  void remove_from_view(std::uint32_t a, std::uint32_t b, std::uint32_t hint);
  void release_removed();
  bool usable(EntityHandle h) const;
  std::uint8_t class_for(double radius);
  void leave_class(std::uint32_t s);
  void try_join(std::uint32_t e);
  std::uint32_t order_index(std::uint32_t s) const;
  template <typename Fn>
  void for_each_holder(std::uint32_t s, std::uint8_t cls, Fn&& fn, bool members_only = false) const;
  void split_pairs(std::uint32_t s, std::uint8_t cls);
  // Crowds (grid_crowds.cpp).
  CrowdTier* crowd_of(std::uint8_t cls);
  // Both in one crowd tier. (By crowd_class_, which keeps a member removed since the last
  // update until update_crowds; its class byte lost kCrowdBit with its class at remove().
  // The pair-test kernel and the filters read the class bytes: for them the removed one is
  // no member, and its pairs are stale anyway.)
  bool crowd_pair(std::uint32_t a, std::uint32_t b) const {
    return crowd_class_[a] != 0 && crowd_class_[a] == crowd_class_[b];
  }
  CrowdTier& crowd_tier(std::uint32_t member) { return *crowds_[crowd_class_[member] - 1u]; }
  const CrowdTier& crowd_tier(std::uint32_t member) const {
    return *crowds_[crowd_class_[member] - 1u];
  }
  void enter_crowd(std::uint32_t s);
  void update_crowds();
  bool may_join_crowd(std::uint32_t s);
  double pi_over_cell_area() const;
  void join_added_crowds();
  void mark_crowd_cells();
  void crowd_membership();
  void join_crowds();
  void leave_crowd(std::uint32_t s);
  void dissolve_crowds();
  inline void emit(std::uint32_t a, std::uint32_t b, EventKind kind);

  GridConfig config_;
  std::uint32_t cols_ = 0;
  std::uint32_t rows_ = 0;
  double inv_cell_ = 0.0;

  // Scheduling: the tick counter, each list's lifetime in ticks and the margin (beyond
  // r) that a list must cover to stay valid for that long.
  std::uint32_t now_ = 0;
  std::uint32_t life_ = 1;
  double skin_ = 0.0;          // list radius is r + skin_
  double step_check_ = 0.0;    // a move longer than this is a teleport
  double step_check2_ = 0.0;   // its square
  double inv_two_step_ = 0.0;  // 1 / (2 * bound), 0 when unbounded
  double max_radius_ = 0.0;    // the largest observer radius at this update
  double eps_ = 0.0;           // rounding allowance of this update's schedule (sched_eps)

  SlotMap slots_;
  // Per slot (structure of arrays, indexed by slot index).
  // What a pair test reads of both entities, in one 32-byte record per slot.
  struct Hot {
    Vec2 pos;  // latest position set
    double radius = 0.0;
    std::uint32_t base_tick = 0;  // the list's base tick; it expires at base_tick + life_
    std::uint8_t flags = 0;
    std::uint8_t observer_version = 0;  // bumped when the list is rebuilt or cleared
    std::uint8_t target_version = 0;    // bumped when the entity teleports, is removed or reclassed
    // The mutual class in the low 7 bits (0: none; else pairs with its classmates are
    // mutual), kCrowdBit when its class's crowd holds it (grid_aoi_internal.hpp).
    std::uint8_t mutual_class = 0;
  };
  std::vector<Hot> hot_;
  // Observer -> target slots, except that a mutual pair is held by the lower slot's view
  // alone (it decides both directions): an observer's classmates of lower slots that see
  // it are in their views, not in its own.
  std::vector<std::vector<std::uint32_t>> view_;

  // The pair tests due at each tick (every test is due less than life_ ticks ahead, and
  // the wheel has at least life_ buckets), and this tick's view changes from them.
  TestWheel wheel_;
  std::vector<Leave> leaves_;
  std::vector<Enter> enters_;

  // Broad phase: live entities sorted by (cell, slot), kept sorted from tick to tick by
  // re-inserting only those that changed cells (an entity that walked into another cell
  // may stay listed under its old one for a few ticks: see maintain_cells, grid_cells.cpp, and
  // slack_). Cells are row-major, so the cells of one grid row that a disc reaches are one
  // contiguous range of these arrays. The occupied cells are listed (sorted) with their first
  // entity, so nothing costs per empty cell.
  std::vector<std::uint32_t> ord_key_;
  std::vector<std::uint32_t> ord_slot_;
  std::vector<double> ord_x_;
  std::vector<double> ord_y_;
  std::vector<std::uint8_t> ord_version_;  // target versions, for the tests a rebuild files
  std::vector<std::uint8_t> ord_class_;    // mutual classes, for the rebuild's ownership test
  // The same, being rewritten (kept to reuse their memory).
  std::vector<std::uint32_t> next_key_;
  std::vector<std::uint32_t> next_slot_;
  std::vector<double> next_x_;
  std::vector<double> next_y_;
  std::vector<std::uint8_t> next_version_;
  std::vector<std::uint8_t> next_class_;
  std::vector<std::uint32_t> leaving_;     // order positions that changed cells or were removed
  std::vector<std::uint32_t> cell_key_;    // occupied cells, ascending
  std::vector<std::uint32_t> cell_begin_;  // their first index in ord_*, plus a sentinel
  // Per occupied cell, the class byte of a crowd when every entity listed there is in it
  // (0 otherwise; filled each update, before the lists are rebuilt, while there are crowds).
  std::vector<std::uint8_t> cell_crowd_;
  std::uint32_t max_cell_population_ = 0;
  // Ticks since the order was last rewritten with every entity under its own cell (see
  // maintain_cells), and how far an entity may be from its listed cell meanwhile.
  std::uint32_t unsorted_ticks_ = 0;
  double slack_ = 0.0;

  // Per-tick work lists and scratch (members so that their capacity is kept).
  std::vector<std::uint32_t> added_;
  std::vector<std::uint32_t> removed_;
  std::vector<Departure> departures_;
  std::vector<Departure> arrivals_;  // from: NaN for an entity added since
  std::vector<CellEntry> moved_cells_;
  std::vector<std::uint32_t> list_work_;  // this tick's lists to rebuild or drop
  // Per wheel bucket, the observers whose lists expire at that tick (entries of lists
  // rebuilt since are skipped); and the observers marked since the last update.
  std::vector<std::vector<std::uint32_t>> expiring_;
  std::vector<std::uint32_t> dirty_;
  std::vector<std::uint32_t> joiners_;  // observers that may join a class after this tick
  std::vector<VisibilityEvent> events_;
  // Threads: the runner, one scratch per worker (the calling thread uses the first), and the
  // pieces of the current phase (kept to reuse their memory).
  ParallelFor parallel_;
  std::vector<Scratch> scratch_ = std::vector<Scratch>(1);
  std::vector<Piece> pieces_;

  // The view radius of each mutual class (class k + 1 at index k); classes are never
  // reused for another radius, so a class id names one radius for good.
  std::vector<double> class_radius_;

  // Crowds: per slot, the class whose crowd tier holds it (0: none; a member removed since
  // the last update stays there until the update; a live member also has kCrowdBit in its
  // Hot::mutual_class); per class, its crowd tier (made when first needed; none for radii out
  // of the range crowds serve); the hysteresis they were made with; the members; this tick's
  // joiners and leavers and the pairs being handed over (scratch).
  std::vector<std::uint8_t> crowd_class_;
  std::vector<std::unique_ptr<CrowdTier>> crowds_;
  double crowd_hysteresis_ = 0.0;
  std::uint32_t crowd_count_ = 0;
  std::vector<std::uint32_t> crowd_joiners_;
  std::vector<std::uint32_t> crowd_leavers_;
  std::vector<std::uint32_t> crowd_scratch_;
  struct HeldPair {
    std::uint32_t holder;
    std::uint32_t target;
  };
  std::vector<HeldPair> handed_;

  // Incremental statistics.
  std::uint32_t entity_count_ = 0;
  std::uint32_t observer_count_ = 0;
  std::uint32_t mutual_count_ = 0;
  std::uint64_t visible_pairs_ = 0;

  // Settings changes waiting for the next update().
  double pending_cell_size_ = 0.0;  // > 0: applied at the start of the next update()
  double view_hysteresis_ = 0.0;    // the hysteresis the views were decided with
  bool lists_stale_ = true;         // every list must be rebuilt at the next update()
};

}  // namespace zone::aoi
