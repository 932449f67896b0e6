// The crowd tier: exact visibility among members that share one view radius, decided by
// testing every pair of members of every pair of nearby cells each tick.
//
// GridAoi's per-pair wake ticks skip nearly every pair of a sparse world, but in a crowd
// (hundreds of entities in view) each event costs about nine visits of ~12 ns, each a
// random access through a timing wheel (docs/benchmarks.md). Here a crowd's pairs are
// tested from contiguous arrays instead, eight at a time in float arithmetic, and a pair's
// visibility is one bit found by position: cells of side cell_size hold their members'
// coordinates (relative to the cell's corner); for every pair of occupied cells that can
// hold a pair within r + h (each unordered pair of cells once, a cell with itself too), a
// bit matrix holds one row per member of the one cell and one bit per member of the other.
// A float test with a margin finds a superset of the pairs that must change; each of those
// is decided in double precision with the rule itself, so the result is exact:
//   the pair ENTERS (both ways) when not visible and dx*dx + dy*dy <= r*r,
//   the pair LEAVES (both ways) when visible and dx*dx + dy*dy > (r + h)*(r + h)
//   (dx = x_b - x_a, dy = y_b - y_a, double).
// The distance is symmetric, so one bit and one test serve both directions.
//
// A member that changes cells takes its bits along (its visible partners are read out of
// the matrices and written back at its new place); a pair whose cells are no longer within
// reach of each other is beyond r + h, so it leaves there and then. Cost per tick: the
// member pairs of the cells within reach (about 0.35 ns each with AVX2), plus the members
// that changed cells. It is meant for crowds: on sparse worlds most cell pairs and lanes
// are empty (docs/benchmarks.md, "The crowd tier"). GridAoi hands it the observers of crowded
// cells (GridConfig::crowd_min_in_view); aoi-bench --engine crowd-tier runs it alone.
//
// Pure and single-threaded; members are named by the caller's ids (dense small integers).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "aoi/cell_index.hpp"
#include "aoi/simd.hpp"
#include "aoi/types.hpp"

namespace zone::aoi {

class CrowdTier {
 public:
  // Cells this small would number more than 2^30 across the coordinate range (+-1e7 m).
  static constexpr double kMinCellSize = 0.01;

  // A pair that changed: kind applies to both directions (a sees b, b sees a).
  struct Event {
    std::uint32_t a;
    std::uint32_t b;
    EventKind kind;
  };

  // cell_size >= 0.01 and at least (radius + hysteresis) / 16, radius >= 0, hysteresis >= 0,
  // all finite (checked; throws std::invalid_argument). Each cell has a matrix per cell
  // within reach, so cells much smaller than r + h multiply them (12 m for r + h = 32 m
  // measured best, docs/benchmarks.md).
  CrowdTier(double cell_size, double radius, double hysteresis);

  // Positions must be finite, within +-1e7 (GridAoi::kMaxCoordinate; checked, throws).
  // Adds a member; its pairs start out of view (the next update() enters those within r).
  void insert(std::uint32_t id, Vec2 p);
  // Removes a member; each pair of it in view leaves at the next update().
  void erase(std::uint32_t id);
  // Moves a member, any distance; the pairs are decided at the next update().
  void move(std::uint32_t id, Vec2 p);
  // Moves every member whose position_of(id) differs from where the last update placed it.
  template <typename PositionOf>
  void move_all(PositionOf&& position_of) {
    for (const CellInfo& cell : info_) {
      for (std::uint32_t lane = cell.lane; lane < cell.lane + cell.count; ++lane) {
        const Vec2 p = position_of(lane_id_[lane]);
        if (p.x != lane_pos_[lane].x || p.y != lane_pos_[lane].y) move(lane_id_[lane], p);
      }
    }
  }
  // Marks the pair of members a and b in view without an event: a pair decided elsewhere
  // (GridAoi hands its crowd's pairs over). It must be out of view here and its cells within
  // reach of each other, as those of a pair within r + h always are (std::logic_error
  // otherwise).
  void set_in_view(std::uint32_t a, std::uint32_t b);
  // Takes a member out without events (the caller takes its pairs over): appends the
  // partners it has in view, as of the last update(), to out.
  void release(std::uint32_t id, std::vector<std::uint32_t>& out);

  // Decides every pair on the current positions. The events are valid until the next call:
  // first the leaves of erased members (in the order they were erased, each one's partners
  // in the order of its cells), then the leaves of pairs whose cells drifted out of reach of
  // each other (members that changed cells, in the order they first moved; a pair whose
  // other end moved later, once both are placed), then the pairs that changed, cell pair by
  // cell pair (cells by index: a new cell takes the index of the last one dropped).
  std::span<const Event> update();

  bool contains(std::uint32_t id) const { return id < where_.size() && where_[id].cell != kNone; }
  // Whether the pair is in view as of the last update() (false unless both are members).
  bool sees(std::uint32_t a, std::uint32_t b) const;
  // The partners of a member in view, appended to out (unordered).
  void partners(std::uint32_t id, std::vector<std::uint32_t>& out) const;
  std::uint64_t visible_pairs() const { return visible_pairs_; }  // unordered pairs
  std::uint32_t members() const { return members_; }
  std::uint32_t cells() const { return live_cells_; }
  // How many cells each cell is paired with (itself included): the cost per member pair.
  std::uint32_t offsets() const { return static_cast<std::uint32_t>(offsets_.size()); }

  // Consistency of cells, matrices and positions (for tests); empty when all is well.
  std::string check_invariants() const;

 private:
  static constexpr std::uint32_t kNone = 0xFFFFFFFFu;
  struct Offset {
    int dx;
    int dy;
  };
  // A cell's hot fields. Its members are lanes [lane, lane + count) of the lane arrays, with
  // room up to lane + capacity (padding lanes far away).
  struct CellInfo {
    int col = 0;
    int row = 0;
    std::uint32_t count = 0;
    std::uint32_t words = 1;  // per matrix row: capacity / 64, at least 1
    std::uint32_t lane = 0;
    std::uint32_t capacity = 0;  // lanes: 8 << k
  };
  struct Where {
    std::uint32_t cell = kNone;
    std::uint32_t index = 0;  // in the cell's ids
    int col = 0;              // the cell's column and row (read without touching the cell)
    int row = 0;
  };
  // Where the bit of a pair is: the matrix (of cell `owner`, offset o), its row and column.
  struct BitRef {
    std::uint32_t owner = kNone;
    std::uint32_t offset = 0;
    std::uint32_t row = 0;
    std::uint32_t column = 0;
  };

  static std::uint64_t key(int col, int row) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(col)) << 32) |
           static_cast<std::uint32_t>(row);
  }
  int col_of(double x) const;
  int row_of(double y) const;
  // The offset code of the cell pair (c, z): +(o + 1) when z is c + offsets_[o], -(o + 1)
  // when c is z + offsets_[o], 0 when out of reach.
  std::int32_t code(std::uint32_t c, std::uint32_t z) const;
  std::uint32_t cell_at(int col, int row);  // creates it when missing
  void drop_cell(std::uint32_t c);
  std::uint32_t alloc_lanes(std::uint32_t capacity);
  void free_lanes(std::uint32_t lane, std::uint32_t capacity);
  std::uint32_t add_member(std::uint32_t c, std::uint32_t id);
  void remove_at(std::uint32_t c, std::uint32_t i);
  std::uint32_t alloc_block(std::uint32_t words);
  void free_block(std::uint32_t at, std::uint32_t words);
  void grow(std::uint32_t c);
  void set_lane(std::uint32_t id);
  void relocate(std::uint32_t id, int col, int row);
  std::uint64_t pair_word(std::uint32_t c, std::uint32_t i, std::uint32_t z, std::int32_t code,
                          std::uint32_t w) const;
  // Calls fn(z) for every occupied cell within reach of cell c: c itself, then the cells
  // above it, then those below it.
  template <typename Fn>
  void for_each_neighbour(std::uint32_t c, Fn&& fn) const {
    for (std::uint32_t o = 0; o < offsets_.size(); ++o) {
      if (up(c, o) != kNone) fn(up(c, o));
    }
    for (std::uint32_t o = 1; o < offsets_.size(); ++o) {
      if (down(c, o) != kNone) fn(down(c, o));
    }
  }
  // Calls fn(id) for every member of cell z in view of member i of cell c.
  template <typename Fn>
  void for_each_partner(std::uint32_t c, std::uint32_t i, std::uint32_t z, Fn&& fn) const {
    const std::int32_t pair_code = code(c, z);
    const std::uint32_t words = (info_[z].count + 63) / 64;
    for (std::uint32_t w = 0; w < words; ++w) {
      for (std::uint64_t bits = pair_word(c, i, z, pair_code, w); bits != 0; bits &= bits - 1) {
        fn(lane_id_[info_[z].lane + 64 * w + static_cast<std::uint32_t>(__builtin_ctzll(bits))]);
      }
    }
  }
  void write_bits(std::uint32_t c, std::uint32_t j, std::uint32_t z, std::int32_t code,
                  const std::uint64_t* in);
  BitRef locate(std::uint32_t a, std::uint32_t b) const;
  bool bit(const BitRef& r) const;
  void flip(const BitRef& r);
  void collect_partners(std::uint32_t id, std::vector<std::uint32_t>& out) const;
  void evaluate();
  void decide(std::uint32_t a_cell, std::uint32_t o, const simd::CrowdChange& change);
  // The matrix of cell c with the cell at +offsets_[o] (valid while pool_ does not grow).
  std::uint64_t* matrix(std::uint32_t c, std::uint32_t o) {
    return pool_.data() + mat_[static_cast<std::size_t>(c) * offsets_.size() + o];
  }
  const std::uint64_t* matrix(std::uint32_t c, std::uint32_t o) const {
    return pool_.data() + mat_[static_cast<std::size_t>(c) * offsets_.size() + o];
  }
  std::uint32_t& matrix_at(std::uint32_t c, std::uint32_t o) {
    return mat_[static_cast<std::size_t>(c) * offsets_.size() + o];
  }
  std::uint32_t& up(std::uint32_t c, std::uint32_t o) {
    return up_[static_cast<std::size_t>(c) * offsets_.size() + o];
  }
  std::uint32_t up(std::uint32_t c, std::uint32_t o) const {
    return up_[static_cast<std::size_t>(c) * offsets_.size() + o];
  }
  std::uint32_t& down(std::uint32_t c, std::uint32_t o) {
    return down_[static_cast<std::size_t>(c) * offsets_.size() + o];
  }
  std::uint32_t down(std::uint32_t c, std::uint32_t o) const {
    return down_[static_cast<std::size_t>(c) * offsets_.size() + o];
  }

  double cell_;
  double inv_cell_;
  double r2_;
  double outer2_;
  float enter2_;  // float thresholds with the rounding margin (see the constructor)
  float stay2_;
  float inner2_;         // a row within this of all of a cell's square has its pairs within r
  int reach_cells_ = 0;  // offsets span -reach_cells_ .. +reach_cells_
  std::vector<Offset> offsets_;  // offsets_[0] = (0, 0)
  std::vector<float> shift_x_;   // per offset: dx * cell_size, dy * cell_size
  std::vector<float> shift_y_;
  std::vector<bool> deep_;                 // per offset: every pair of the two cells is within r
  std::vector<bool> maybe_far_;            // per offset: the pass looks for far rows
  std::vector<bool> maybe_near_;           // per offset: the pass looks for near rows
  std::vector<std::int32_t> offset_code_;  // (dx, dy) -> +(o + 1), -(o + 1) or 0

  // Cells (indices reused through free_cells_). Per cell: its hot fields, and
  // per offset o the cell at +o and at -o (kNone when not occupied) and the matrix with the
  // cell at +o: a row per member of that cell, `words` words per row, bit i of a row being
  // the pair with member i of this cell (o = 0: the cell with itself, symmetric).
  std::vector<CellInfo> info_;
  std::vector<std::uint32_t> up_;
  std::vector<std::uint32_t> down_;
  std::vector<std::uint32_t> mat_;  // per (cell, offset): where its matrix starts in pool_
  std::vector<std::uint32_t> free_cells_;
  CellIndex cell_index_;  // cell key -> cell
  std::uint32_t live_cells_ = 0;
  // The matrices: a matrix of cell c has room for as many rows as the cell above has lanes
  // (rows past its members are 0), `words` words each; blocks of 2^k words, free blocks
  // listed per k.
  std::vector<std::uint64_t> pool_;
  std::vector<std::vector<std::uint32_t>> free_matrices_;
  // Lanes of all cells, in blocks of 8 << k (free blocks listed per k): the member's id, its
  // position, and the position relative to the cell's corner in float for the kernel.
  std::vector<float> lane_x_;
  std::vector<float> lane_y_;
  std::vector<std::uint32_t> lane_id_;
  std::vector<Vec2> lane_pos_;
  std::vector<std::vector<std::uint32_t>> free_blocks_;

  std::vector<Vec2> pos_;              // per id
  std::vector<Where> where_;           // per id
  std::vector<std::uint8_t> moved_;    // per id: moved since the last update, not yet placed
  std::vector<std::uint32_t> movers_;  // ids moved since the last update, first move order
  std::uint32_t members_ = 0;
  std::uint64_t visible_pairs_ = 0;

  std::vector<Event> events_;
  std::vector<Event> pending_;  // leaves of erased members, for the next update()
  // Scratch: partners, pairs whose fate waits for the other end's move, kernel results.
  std::vector<std::uint32_t> partner_scratch_;
  std::vector<std::uint32_t> restore_;  // (member, partner) pairs, flattened
  std::vector<std::uint64_t> word_scratch_;
  std::vector<simd::CrowdChange> changes_;
};

}  // namespace zone::aoi
