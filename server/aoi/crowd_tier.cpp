#include "aoi/crowd_tier.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "aoi/simd.hpp"

namespace zone::aoi {
namespace {

constexpr double kMaxCoordinate = 1.0e7;  // GridAoi::kMaxCoordinate
// At most this many cells of reach each way (cell_size >= (r + h) / 16): a cell has a matrix
// per cell within reach, about 450 at this bound.
constexpr int kMaxReachCells = 17;
constexpr float kFar = 1.0e9f;  // padding lanes: far from everything

std::uint32_t lanes_for(std::size_t members) {
  return static_cast<std::uint32_t>((members + 7) & ~std::size_t{7});
}
std::uint32_t words_for(std::size_t members) {
  return std::max<std::uint32_t>(1, static_cast<std::uint32_t>((members + 63) / 64));
}

void check_position(Vec2 p) {
  if (!(std::abs(p.x) <= kMaxCoordinate && std::abs(p.y) <= kMaxCoordinate)) {
    throw std::invalid_argument("CrowdTier: position not finite or beyond 1e7");
  }
}

}  // namespace

CrowdTier::CrowdTier(double cell_size, double radius, double hysteresis) {
  if (!(std::isfinite(cell_size) && cell_size >= kMinCellSize) ||
      !(std::isfinite(radius) && radius >= 0.0) ||
      !(std::isfinite(hysteresis) && hysteresis >= 0.0) || radius > kMaxCoordinate) {
    throw std::invalid_argument("CrowdTier: cell size, radius or hysteresis out of range");
  }
  cell_ = cell_size;
  inv_cell_ = 1.0 / cell_size;
  const double reach = radius + hysteresis;
  r2_ = radius * radius;
  outer2_ = reach * reach;
  // Two members in cells whose gap (the shortest distance between the cells) is beyond
  // r + h are beyond r + h of each other; the allowance covers a member assigned to the
  // neighbouring cell by the rounding of x / cell_size.
  const double allowed = reach * (1.0 + 1e-9) + 1e-6 * (1.0 + cell_size);
  reach_cells_ = static_cast<int>(std::ceil(allowed / cell_size)) + 1;
  if (reach_cells_ > kMaxReachCells) {
    throw std::invalid_argument("CrowdTier: cell size below (radius + hysteresis) / 16");
  }
  const int k = reach_cells_;
  const int side = 2 * k + 1;
  offset_code_.assign(static_cast<std::size_t>(side) * side, 0);
  auto within = [&](int dx, int dy) {
    const double gx = std::max(0, std::abs(dx) - 1) * cell_size;
    const double gy = std::max(0, std::abs(dy) - 1) * cell_size;
    return gx * gx + gy * gy <= allowed * allowed;
  };
  // One of each pair of opposite offsets: (0, 0), then dy = 0 with dx > 0, then dy > 0.
  for (int dy = 0; dy <= k; ++dy) {
    for (int dx = dy == 0 ? 0 : -k; dx <= k; ++dx) {
      if (!within(dx, dy)) continue;
      const auto o = static_cast<std::int32_t>(offsets_.size());
      offsets_.push_back({dx, dy});
      offset_code_[static_cast<std::size_t>(dy + k) * side + (dx + k)] = o + 1;
      if (dx != 0 || dy != 0)
        offset_code_[static_cast<std::size_t>(k - dy) * side + (k - dx)] = -(o + 1);
    }
  }
  // The float test's margin. Lanes hold coordinates relative to their cell's corner, so
  // for a pair near a threshold (|dx|, |dy| <= r + h, the cells at most reach_cells_
  // apart) each float operation errs by at most (r + h + 3 cell_size) * 2^-24 and d^2 by
  // about 1.2e-6 * (r + h + 3 cell_size)^2; the margin is eight times that, so the float
  // test finds every pair that the double rule changes (and a few more, decided in double).
  const double span = reach + 3.0 * cell_size;
  const double margin = 1e-5 * span * span;
  enter2_ = static_cast<float>(r2_ + margin);
  stay2_ = static_cast<float>(std::max(0.0, outer2_ - margin));
  inner2_ = static_cast<float>(std::max(0.0, r2_ - margin));
  for (const Offset& o : offsets_) {
    shift_x_.push_back(static_cast<float>(o.dx * cell_size));
    shift_y_.push_back(static_cast<float>(o.dy * cell_size));
    // Cells whose farthest points are within r of each other (less the rounding allowance):
    // every pair between them is in view after the update, so their pass needs no kernel.
    const double far_x = (std::abs(o.dx) + 1) * cell_size;
    const double far_y = (std::abs(o.dy) + 1) * cell_size;
    const double inner = radius - 1e-6 * (1.0 + cell_size) - radius * 1e-9;
    deep_.push_back(inner > 0.0 && far_x * far_x + far_y * far_y <= inner * inner);
    // Cells whose points can be beyond r of this cell's square: their pass looks for far
    // rows (simd::CrowdPass).
    const double reach_x = std::abs(o.dx) * cell_size;
    const double reach_y = std::abs(o.dy) * cell_size;
    maybe_far_.push_back(reach_x * reach_x + reach_y * reach_y > r2_ * (1.0 - 1e-6));
    // Cells with points within r of all of this cell's square: their pass looks for near
    // rows (a point's farthest distance from the square is at least |dx| cells across, or
    // half a cell when dx = 0, and alike in y).
    const double near_x = o.dx == 0 ? 0.5 * cell_size : reach_x;
    const double near_y = o.dy == 0 ? 0.5 * cell_size : reach_y;
    maybe_near_.push_back(near_x * near_x + near_y * near_y <= r2_ * (1.0 + 1e-6));
  }
}

int CrowdTier::col_of(double x) const {
  return static_cast<int>(std::floor(x * inv_cell_));
}
int CrowdTier::row_of(double y) const {
  return static_cast<int>(std::floor(y * inv_cell_));
}

std::int32_t CrowdTier::code(std::uint32_t c, std::uint32_t z) const {
  const std::int64_t dx = std::int64_t{info_[z].col} - info_[c].col;
  const std::int64_t dy = std::int64_t{info_[z].row} - info_[c].row;
  const int k = reach_cells_;
  if (dx < -k || dx > k || dy < -k || dy > k) return 0;
  return offset_code_[static_cast<std::size_t>(dy + k) * static_cast<std::size_t>(2 * k + 1) +
                      static_cast<std::size_t>(dx + k)];
}

std::uint32_t CrowdTier::alloc_lanes(std::uint32_t capacity) {
  const auto k = static_cast<std::size_t>(__builtin_ctz(capacity / 8));
  if (free_blocks_.size() <= k) free_blocks_.resize(k + 1);
  if (!free_blocks_[k].empty()) {
    const std::uint32_t lane = free_blocks_[k].back();
    free_blocks_[k].pop_back();
    return lane;
  }
  const auto lane = static_cast<std::uint32_t>(lane_x_.size());
  lane_x_.resize(lane_x_.size() + capacity, kFar);
  lane_y_.resize(lane_y_.size() + capacity, kFar);
  lane_id_.resize(lane_id_.size() + capacity, kNone);
  lane_pos_.resize(lane_pos_.size() + capacity);
  return lane;
}

// Returns a block, its lanes far again (padding for whoever takes it next).
void CrowdTier::free_lanes(std::uint32_t lane, std::uint32_t capacity) {
  std::fill_n(lane_x_.begin() + lane, capacity, kFar);
  std::fill_n(lane_y_.begin() + lane, capacity, kFar);
  free_blocks_[static_cast<std::size_t>(__builtin_ctz(capacity / 8))].push_back(lane);
}

std::uint32_t CrowdTier::alloc_block(std::uint32_t words) {
  const auto k = static_cast<std::size_t>(__builtin_ctz(words));
  if (free_matrices_.size() <= k) free_matrices_.resize(k + 1);
  if (!free_matrices_[k].empty()) {
    const std::uint32_t at = free_matrices_[k].back();
    free_matrices_[k].pop_back();
    std::fill_n(pool_.begin() + at, words, 0);
    return at;
  }
  const auto at = static_cast<std::uint32_t>(pool_.size());
  pool_.resize(pool_.size() + words, 0);
  return at;
}

void CrowdTier::free_block(std::uint32_t at, std::uint32_t words) {
  free_matrices_[static_cast<std::size_t>(__builtin_ctz(words))].push_back(at);
}

// The cell at (col, row), created (and linked to its neighbours within reach) if missing.
std::uint32_t CrowdTier::cell_at(int col, int row) {
  if (const std::uint32_t found = cell_index_.find(key(col, row)); found != kNone) return found;
  const std::size_t n = offsets_.size();
  std::uint32_t c;
  if (!free_cells_.empty()) {
    c = free_cells_.back();
    free_cells_.pop_back();
  } else {
    c = static_cast<std::uint32_t>(info_.size());
    info_.emplace_back();
    up_.resize(up_.size() + n, kNone);
    down_.resize(down_.size() + n, kNone);
    mat_.resize(mat_.size() + n, kNone);
  }
  cell_index_.insert(key(col, row), c);
  ++live_cells_;
  info_[c] = {col, row, 0, 1, alloc_lanes(8), 8};
  up(c, 0) = down(c, 0) = c;
  matrix_at(c, 0) = alloc_block(8);
  for (std::uint32_t o = 1; o < n; ++o) {
    up(c, o) = down(c, o) = kNone;
    if (const std::uint32_t b = cell_index_.find(key(col + offsets_[o].dx, row + offsets_[o].dy));
        b != kNone) {
      up(c, o) = b;
      down(b, o) = c;
      matrix_at(c, o) = alloc_block(info_[b].capacity);  // one word per row
    }
    if (const std::uint32_t a = cell_index_.find(key(col - offsets_[o].dx, row - offsets_[o].dy));
        a != kNone) {
      down(c, o) = a;
      up(a, o) = c;
      matrix_at(a, o) = alloc_block(8 * info_[a].words);
    }
  }
  return c;
}

// Unlinks an empty cell from its neighbours and frees it.
void CrowdTier::drop_cell(std::uint32_t c) {
  free_block(matrix_at(c, 0), info_[c].capacity * info_[c].words);
  for (std::uint32_t o = 1; o < offsets_.size(); ++o) {
    if (const std::uint32_t b = up(c, o); b != kNone) {
      down(b, o) = kNone;
      free_block(matrix_at(c, o), info_[b].capacity * info_[c].words);
    }
    if (const std::uint32_t a = down(c, o); a != kNone) {
      up(a, o) = kNone;
      free_block(matrix_at(a, o), info_[c].capacity * info_[a].words);
      matrix_at(a, o) = kNone;
    }
    up(c, o) = down(c, o) = kNone;
    matrix_at(c, o) = kNone;
  }
  free_lanes(info_[c].lane, info_[c].capacity);
  cell_index_.erase(key(info_[c].col, info_[c].row));
  free_cells_.push_back(c);
  --live_cells_;
}

// Doubles cell c's room: its lanes, the rows of the matrices that have it above, and (past 64
// members) the words of its own matrices' rows.
void CrowdTier::grow(std::uint32_t c) {
  const CellInfo old = info_[c];
  const std::uint32_t capacity = 2 * old.capacity;
  const std::uint32_t words = std::max<std::uint32_t>(1, capacity / 64);
  // Copies the rows of a matrix into a new block (rows of `from` words into rows of `to`).
  auto move_block = [&](std::uint32_t& at, std::uint32_t old_size, std::uint32_t new_size,
                        std::uint32_t rows, std::uint32_t from, std::uint32_t to) {
    const std::uint32_t fresh = alloc_block(new_size);  // (may move pool_)
    for (std::uint32_t r = 0; r < rows; ++r) {
      std::copy_n(pool_.begin() + at + std::size_t{r} * from, from,
                  pool_.begin() + fresh + std::size_t{r} * to);
    }
    free_block(at, old_size);
    at = fresh;
  };
  move_block(matrix_at(c, 0), old.capacity * old.words, capacity * words, old.count, old.words,
             words);
  for (std::uint32_t o = 1; o < offsets_.size(); ++o) {
    if (const std::uint32_t b = up(c, o); b != kNone && words != old.words) {
      const std::uint32_t rows = info_[b].capacity;
      move_block(matrix_at(c, o), rows * old.words, rows * words, info_[b].count, old.words, words);
    }
    if (const std::uint32_t a = down(c, o); a != kNone) {
      const std::uint32_t aw = info_[a].words;
      move_block(matrix_at(a, o), old.capacity * aw, capacity * aw, old.count, aw, aw);
    }
  }
  const std::uint32_t lane = alloc_lanes(capacity);
  std::copy_n(lane_x_.begin() + old.lane, old.count, lane_x_.begin() + lane);
  std::copy_n(lane_y_.begin() + old.lane, old.count, lane_y_.begin() + lane);
  std::copy_n(lane_id_.begin() + old.lane, old.count, lane_id_.begin() + lane);
  std::copy_n(lane_pos_.begin() + old.lane, old.count, lane_pos_.begin() + lane);
  free_lanes(old.lane, old.capacity);
  info_[c].lane = lane;
  info_[c].capacity = capacity;
  info_[c].words = words;
}

void CrowdTier::set_lane(std::uint32_t id) {
  const Where& w = where_[id];
  const std::uint32_t lane = info_[w.cell].lane + w.index;
  lane_x_[lane] = static_cast<float>(pos_[id].x - w.col * cell_);
  lane_y_[lane] = static_cast<float>(pos_[id].y - w.row * cell_);
  lane_pos_[lane] = pos_[id];
}

// Appends id to cell c, every pair of it out of view (rows and bits past the members are
// kept 0); returns its index there.
std::uint32_t CrowdTier::add_member(std::uint32_t c, std::uint32_t id) {
  const std::uint32_t i = info_[c].count;
  if (i == info_[c].capacity) grow(c);
  info_[c].count = i + 1;
  lane_id_[info_[c].lane + i] = id;
  where_[id] = {c, i, info_[c].col, info_[c].row};
  set_lane(id);
  return i;
}

// Takes member i out of cell c: the last member takes its place (its lane, its row in the
// matrices above it, its column in its own), and an emptied cell is dropped. The member
// taken out keeps its Where (the caller's to update).
void CrowdTier::remove_at(std::uint32_t c, std::uint32_t i) {
  const std::uint32_t last = info_[c].count - 1;
  const std::uint32_t words = info_[c].words;
  // Columns: bit `last` moves to bit i in every row of this cell's matrices.
  for (std::uint32_t o = 0; o < offsets_.size(); ++o) {
    const std::uint32_t b = up(c, o);
    if (b == kNone) continue;
    std::uint64_t* m = matrix(c, o);
    const std::uint32_t rows = info_[b].count;
    if (words == 1) {  // the common case, without branches
      const std::uint64_t keep = ~(std::uint64_t{1} << last) & ~(std::uint64_t{1} << i);
      const std::uint32_t to = i != last ? i : 64;  // 64: the bit is dropped
      for (std::uint32_t r = 0; r < rows; ++r) {
        const std::uint64_t x = m[r];
        m[r] = (x & keep) | (to < 64 ? (x >> last & 1u) << to : 0);
      }
      continue;
    }
    for (std::uint32_t r = 0; r < rows; ++r) {
      std::uint64_t* row = m + std::size_t{r} * words;
      const std::uint64_t moving = row[last / 64] >> (last % 64) & 1u;
      row[last / 64] &= ~(std::uint64_t{1} << (last % 64));
      if (i != last) {
        row[i / 64] = (row[i / 64] & ~(std::uint64_t{1} << (i % 64))) | moving << (i % 64);
      }
    }
  }
  // Rows: row `last` moves to row i (and is cleared) in every matrix that has this cell above.
  for (std::uint32_t o = 0; o < offsets_.size(); ++o) {
    const std::uint32_t a = down(c, o);
    if (a == kNone) continue;
    const std::uint32_t aw = info_[a].words;
    std::uint64_t* m = matrix(a, o);
    std::copy_n(m + std::size_t{last} * aw, aw, m + std::size_t{i} * aw);
    std::fill_n(m + std::size_t{last} * aw, aw, 0);
  }
  const std::uint32_t lane = info_[c].lane;
  const std::uint32_t moved = lane_id_[lane + last];
  lane_id_[lane + i] = moved;
  lane_pos_[lane + i] = lane_pos_[lane + last];
  lane_x_[lane + i] = lane_x_[lane + last];
  lane_y_[lane + i] = lane_y_[lane + last];
  lane_x_[lane + last] = kFar;
  lane_y_[lane + last] = kFar;
  lane_id_[lane + last] = kNone;
  info_[c].count = last;
  if (where_[moved].cell == c) where_[moved].index = i;  // (not the member moved away)
  if (last == 0) drop_cell(c);
}

void CrowdTier::insert(std::uint32_t id, Vec2 p) {
  check_position(p);
  if (id >= where_.size()) {
    where_.resize(id + 1);
    pos_.resize(id + 1);
    moved_.resize(id + 1, 0);
  }
  if (where_[id].cell != kNone) throw std::logic_error("CrowdTier::insert: already a member");
  pos_[id] = p;
  moved_[id] = 0;
  add_member(cell_at(col_of(p.x), row_of(p.y)), id);
  ++members_;
}

void CrowdTier::erase(std::uint32_t id) {
  if (!contains(id)) throw std::logic_error("CrowdTier::erase: not a member");
  partner_scratch_.clear();
  release(id, partner_scratch_);
  for (const std::uint32_t p : partner_scratch_) pending_.push_back({id, p, EventKind::kLeave});
}

void CrowdTier::release(std::uint32_t id, std::vector<std::uint32_t>& out) {
  if (!contains(id)) throw std::logic_error("CrowdTier::release: not a member");
  const std::size_t before = out.size();
  collect_partners(id, out);
  visible_pairs_ -= out.size() - before;
  remove_at(where_[id].cell, where_[id].index);
  where_[id].cell = kNone;
  moved_[id] = 0;
  --members_;
}

void CrowdTier::set_in_view(std::uint32_t a, std::uint32_t b) {
  if (a == b || !contains(a) || !contains(b)) {
    throw std::logic_error("CrowdTier::set_in_view: not a pair of members");
  }
  const BitRef r = locate(a, b);
  if (r.owner == kNone) throw std::logic_error("CrowdTier::set_in_view: cells out of reach");
  if (bit(r)) throw std::logic_error("CrowdTier::set_in_view: already in view");
  flip(r);
  ++visible_pairs_;
}

void CrowdTier::move(std::uint32_t id, Vec2 p) {
  check_position(p);
  if (!contains(id)) throw std::logic_error("CrowdTier::move: not a member");
  pos_[id] = p;
  if (!moved_[id]) {
    moved_[id] = 1;
    movers_.push_back(id);
  }
}

// Where the bit of the pair (a, b) is, or owner kNone when their cells are out of reach.
CrowdTier::BitRef CrowdTier::locate(std::uint32_t a, std::uint32_t b) const {
  const Where wa = where_[a];
  const Where wb = where_[b];
  const std::int32_t c = code(wa.cell, wb.cell);
  if (c > 0) return {wa.cell, static_cast<std::uint32_t>(c - 1), wb.index, wa.index};
  if (c < 0) return {wb.cell, static_cast<std::uint32_t>(-c - 1), wa.index, wb.index};
  return {};
}

bool CrowdTier::bit(const BitRef& r) const {
  const std::uint64_t word =
      matrix(r.owner, r.offset)[std::size_t{r.row} * info_[r.owner].words + r.column / 64];
  return (word >> (r.column % 64) & 1u) != 0;
}

// Flips a pair's bit (both copies for a pair within one cell, whose matrix is symmetric).
void CrowdTier::flip(const BitRef& r) {
  const std::uint32_t words = info_[r.owner].words;
  std::uint64_t* m = matrix(r.owner, r.offset);
  m[std::size_t{r.row} * words + r.column / 64] ^= std::uint64_t{1} << (r.column % 64);
  if (r.offset == 0) {
    m[std::size_t{r.column} * words + r.row / 64] ^= std::uint64_t{1} << (r.row % 64);
  }
}

bool CrowdTier::sees(std::uint32_t a, std::uint32_t b) const {
  if (a == b || !contains(a) || !contains(b)) return false;
  const BitRef r = locate(a, b);
  return r.owner != kNone && bit(r);
}

void CrowdTier::partners(std::uint32_t id, std::vector<std::uint32_t>& out) const {
  if (contains(id)) collect_partners(id, out);
}

// Word w of the pairs of member i of cell c with the members of cell z, as bits over z's
// members (code: of the cell pair (c, z), not 0): i's row in z's matrix when c is above z
// (or z is c), else one bit of each row of c's matrix with z, i's column there.
std::uint64_t CrowdTier::pair_word(std::uint32_t c, std::uint32_t i, std::uint32_t z,
                                   std::int32_t code, std::uint32_t w) const {
  if (code < 0 || z == c) {
    const auto o = static_cast<std::uint32_t>(code < 0 ? -code - 1 : 0);
    return matrix(z, o)[std::size_t{i} * info_[z].words + w];
  }
  const std::uint32_t words = info_[c].words;
  const std::uint64_t* m = matrix(c, static_cast<std::uint32_t>(code - 1));
  const std::uint32_t end = std::min(info_[z].count, 64 * w + 64);
  // (The matrix has rows for z's lanes, a multiple of 8, those past its members 0.)
  if (words == 1) return simd::column_bits(m + 64 * w, end - 64 * w, i);
  std::uint64_t bits = 0;
  for (std::uint32_t r = 64 * w; r < end; ++r) {
    bits |= (m[std::size_t{r} * words + i / 64] >> (i % 64) & 1u) << (r % 64);
  }
  return bits;
}

// Sets the pairs of member j of cell c with the members of cell z given as bits (words as
// pair_word gives them); every pair of j was out of view.
void CrowdTier::write_bits(std::uint32_t c, std::uint32_t j, std::uint32_t z, std::int32_t code,
                           const std::uint64_t* in) {
  const std::uint32_t zw = words_for(info_[z].count);
  if (code < 0 || z == c) {
    const auto o = static_cast<std::uint32_t>(code < 0 ? -code - 1 : 0);
    const std::uint32_t stride = info_[z].words;
    std::uint64_t* row = matrix(z, o) + std::size_t{j} * stride;
    for (std::uint32_t w = 0; w < zw; ++w) row[w] |= in[w];
    if (z != c) return;
  }
  // j's column in c's matrix with z (for z == c: the other half of the symmetric matrix).
  const std::uint32_t words = info_[c].words;
  std::uint64_t* m = matrix(c, z == c ? 0 : static_cast<std::uint32_t>(code - 1));
  for (std::uint32_t w = 0; w < zw; ++w) {
    for (std::uint64_t bits = in[w]; bits != 0; bits &= bits - 1) {
      const std::uint32_t r = 64 * w + static_cast<std::uint32_t>(__builtin_ctzll(bits));
      m[std::size_t{r} * words + j / 64] |= std::uint64_t{1} << (j % 64);
    }
  }
}

// Moves a member to the cell at (col, row), its pairs' bits with it: for every cell z within
// reach of the new cell, the pairs with z's members are copied from where they were (none
// when z was out of reach of the old cell: such pairs were beyond r + h). A pair in view
// whose cells are out of reach now leaves, unless its other end has yet to be placed this
// update: then it waits in restore_ until it has.
void CrowdTier::relocate(std::uint32_t id, int col, int row) {
  const std::uint32_t from = where_[id].cell;
  const std::uint32_t i = where_[id].index;
  const std::uint32_t to = cell_at(col, row);
  const std::uint32_t j = add_member(to, id);
  for_each_neighbour(to, [&](std::uint32_t z) {
    const std::int32_t old_code = code(from, z);
    if (old_code == 0) return;
    word_scratch_.resize(words_for(info_[z].count));
    for (std::uint32_t w = 0; w < word_scratch_.size(); ++w) {
      word_scratch_[w] = pair_word(from, i, z, old_code, w);
    }
    write_bits(to, j, z, code(to, z), word_scratch_.data());
  });
  for_each_neighbour(from, [&](std::uint32_t z) {
    if (code(to, z) != 0) return;  // carried
    for_each_partner(from, i, z, [&](std::uint32_t p) {
      if (p == id) return;
      if (moved_[p] == 1) {
        restore_.push_back(id);
        restore_.push_back(p);
      } else {
        events_.push_back({id, p, EventKind::kLeave});
      }
      --visible_pairs_;
    });
  });
  remove_at(from, i);
}

// Appends the partners of id in view, cell by cell.
void CrowdTier::collect_partners(std::uint32_t id, std::vector<std::uint32_t>& out) const {
  const Where w = where_[id];
  for_each_neighbour(w.cell, [&](std::uint32_t z) {
    for_each_partner(w.cell, w.index, z, [&](std::uint32_t p) { out.push_back(p); });
  });
}

std::span<const CrowdTier::Event> CrowdTier::update() {
  events_.swap(pending_);
  pending_.clear();
  restore_.clear();
  // Members that changed cells move there with their pairs; the others' lanes are updated.
  for (const std::uint32_t id : movers_) {
    if (moved_[id] != 1) continue;  // erased since it moved, or listed twice
    const int col = col_of(pos_[id].x);
    const int row = row_of(pos_[id].y);
    if (where_[id].col != col || where_[id].row != row) {
      relocate(id, col, row);
    } else {
      set_lane(id);
    }
    moved_[id] = 0;
  }
  movers_.clear();
  // Pairs in view whose cells went out of reach while the other end had yet to move.
  for (std::size_t k = 0; k < restore_.size(); k += 2) {
    const std::uint32_t a = restore_[k];
    const std::uint32_t b = restore_[k + 1];
    const BitRef r = locate(a, b);
    if (r.owner == kNone) {  // their cells are out of reach: beyond r + h
      events_.push_back({a, b, EventKind::kLeave});
    } else {
      flip(r);  // (0: both ends' pairs were out of view where they are now)
      ++visible_pairs_;
    }
  }
  evaluate();
  return events_;
}

// Every pair of cells within reach: the float test of all their member pairs, and the
// candidates decided in double.
void CrowdTier::evaluate() {
  const auto n = static_cast<std::uint32_t>(offsets_.size());
  for (std::uint32_t c = 0; c < info_.size(); ++c) {
    const CellInfo a = info_[c];
    if (a.count == 0) continue;
    const std::uint32_t* ups = up_.data() + std::size_t{c} * n;
    const std::uint32_t* mats = mat_.data() + std::size_t{c} * n;
    // The cells and matrices this cell's pairs read are scattered: fetch their first lines
    // now, and the rest of each matrix before its pass.
    for (std::uint32_t o = 0; o < n; ++o) {
      if (ups[o] == kNone) continue;
      __builtin_prefetch(&info_[ups[o]]);
      __builtin_prefetch(pool_.data() + mats[o]);
    }
    for (std::uint32_t o = 0; o < n; ++o) {
      const std::uint32_t above = ups[o];
      if (above == kNone) continue;
      const CellInfo& b = info_[above];
      const std::uint64_t* m = pool_.data() + mats[o];
      const std::size_t words = std::size_t{b.count} * a.words;
      for (std::size_t k = 8; k < words; k += 8) __builtin_prefetch(m + k);
      if (changes_.size() < words) changes_.resize(words);
      if (deep_[o]) {  // every pair within r: the pairs out of view enter
        for (std::uint32_t j = 0; j < b.count; ++j) {
          for (std::uint32_t w = 0; w < a.words; ++w) {
            const std::size_t at = std::size_t{j} * a.words + w;
            const std::uint64_t enter =
                simd::crowd_valid_lanes(a.count, o == 0 ? j : a.count, w) & ~m[at];
            if (enter != 0) decide(c, o, {static_cast<std::uint32_t>(at), enter});
          }
        }
        continue;
      }
      const std::uint32_t found = simd::crowd_pass({.ax = lane_x_.data() + a.lane,
                                                    .ay = lane_y_.data() + a.lane,
                                                    .count = a.count,
                                                    .lanes = lanes_for(a.count),
                                                    .bx = lane_x_.data() + b.lane,
                                                    .by = lane_y_.data() + b.lane,
                                                    .rows = b.count,
                                                    .words = a.words,
                                                    .old = m,
                                                    .sx = shift_x_[o],
                                                    .sy = shift_y_[o],
                                                    .enter2 = enter2_,
                                                    .stay2 = stay2_,
                                                    .extent = static_cast<float>(cell_),
                                                    .inner2 = inner2_,
                                                    .far_rows = maybe_far_[o],
                                                    .near_rows = maybe_near_[o],
                                                    .self = o == 0},
                                                   changes_.data());
      for (std::uint32_t k = 0; k < found; ++k) decide(c, o, changes_[k]);
    }
  }
}

// The float test's candidates of one matrix word, decided with the rule in double.
void CrowdTier::decide(std::uint32_t a_cell, std::uint32_t o, const simd::CrowdChange& change) {
  const CellInfo& a = info_[a_cell];
  const CellInfo& b = info_[up(a_cell, o)];
  const std::uint32_t row = change.word / a.words;
  const std::uint32_t first = 64 * (change.word % a.words);
  const std::uint32_t target = lane_id_[b.lane + row];
  const Vec2 pb = lane_pos_[b.lane + row];
  std::uint64_t* word = matrix(a_cell, o) + change.word;
  for (std::uint64_t candidates = change.bits; candidates != 0; candidates &= candidates - 1) {
    const auto k = static_cast<std::uint32_t>(__builtin_ctzll(candidates));
    const Vec2 pa = lane_pos_[a.lane + first + k];
    const double dx = pb.x - pa.x;
    const double dy = pb.y - pa.y;
    const double d2 = dx * dx + dy * dy;
    const bool visible = (*word >> k & 1u) != 0;
    if (visible ? d2 <= outer2_ : d2 > r2_) continue;
    events_.push_back(
        {lane_id_[a.lane + first + k], target, visible ? EventKind::kLeave : EventKind::kEnter});
    visible_pairs_ += visible ? -1 : 1;
    flip({a_cell, o, row, first + k});
  }
}

std::string CrowdTier::check_invariants() const {
  std::uint32_t members = 0;
  std::uint32_t live = 0;
  std::uint64_t visible = 0;
  for (std::uint32_t c = 0; c < info_.size(); ++c) {
    const CellInfo& cell = info_[c];
    if (cell.count == 0) continue;
    ++live;
    if (cell_index_.find(key(cell.col, cell.row)) != c) return "cell missing from the index";
    if (cell.words != std::max<std::uint32_t>(1, cell.capacity / 64)) return "words per row wrong";
    if (cell.capacity < cell.count || cell.capacity % 8 != 0) return "lane block too small";
    for (std::uint32_t i = 0; i < cell.count; ++i) {
      const std::uint32_t id = lane_id_[cell.lane + i];
      ++members;
      if (id >= where_.size()) return "lane of a member holds no id";
      if (lane_pos_[cell.lane + i].x != pos_[id].x || lane_pos_[cell.lane + i].y != pos_[id].y) {
        if (!moved_[id]) return "lane position is stale";
      }
      const Where& w = where_[id];
      if (w.cell != c || w.index != i || w.col != cell.col || w.row != cell.row) {
        return "member's place is wrong";
      }
      if ((col_of(pos_[id].x) != cell.col || row_of(pos_[id].y) != cell.row) && !moved_[id]) {
        return "member in the wrong cell";
      }
    }
    for (std::uint32_t i = cell.count; i < cell.capacity; ++i) {
      if (lane_x_[cell.lane + i] != kFar || lane_y_[cell.lane + i] != kFar) {
        return "padding lane not far";
      }
    }
    for (std::uint32_t o = 0; o < offsets_.size(); ++o) {
      if (up(c, o) != cell_index_.find(key(cell.col + offsets_[o].dx, cell.row + offsets_[o].dy))) {
        return "wrong neighbour above";
      }
      if (down(c, o) !=
          cell_index_.find(key(cell.col - offsets_[o].dx, cell.row - offsets_[o].dy))) {
        return "wrong neighbour below";
      }
      if (up(c, o) == kNone) {
        if (o != 0 && mat_[std::size_t{c} * offsets_.size() + o] != kNone) {
          return "matrix without a neighbour";
        }
        continue;
      }
      const std::uint64_t* m = matrix(c, o);
      const std::uint32_t rows = info_[up(c, o)].count;
      for (std::uint32_t r = rows; r < info_[up(c, o)].capacity; ++r) {
        for (std::uint32_t w = 0; w < cell.words; ++w) {
          if (m[std::size_t{r} * cell.words + w] != 0) return "bits in a row past the members";
        }
      }
      for (std::uint32_t r = 0; r < rows; ++r) {
        for (std::uint32_t w = 0; w < cell.words; ++w) {
          for (std::uint64_t bits = m[std::size_t{r} * cell.words + w]; bits != 0;
               bits &= bits - 1) {
            const std::uint32_t col = 64 * w + static_cast<std::uint32_t>(__builtin_ctzll(bits));
            if (col >= cell.count) return "bit beyond the members";
            if (o != 0) {
              ++visible;
              continue;
            }
            if (col == r) return "a member sees itself";
            if (!(m[std::size_t{col} * cell.words + r / 64] >> (r % 64) & 1u)) {
              return "cell's own matrix not symmetric";
            }
            if (col < r) ++visible;
          }
        }
      }
    }
  }
  if (members != members_) return "member count is wrong";
  if (live != live_cells_ || cell_index_.size() != live_cells_) return "cell count is wrong";
  if (visible != visible_pairs_) return "visible pair count is wrong";
  return {};
}

}  // namespace zone::aoi
