// Stage 0 of a tick's replication, on the simulation thread: every entity's values,
// quantised once for every client (Replicator::begin_tick). The per-client stages read
// their rows from here and never visit the world's entity records for values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "protocol/schema.hpp"
#include "world/world.hpp"

namespace zone::replication {

// The rows a client may receive of an entity: all of them (its own), those of the
// owner's party, those of everyone (docs/protocol.md, "The schema": audiences).
enum class RowView : std::uint32_t { kFull = 0, kParty = 1, kPublic = 2 };

class TickValues {
 public:
  // Quantises every entity of `world` as of now (simulation thread).
  void fill(const world::World& world);
  // The values of the entity in `slot` as `view` may see them (valid after fill()).
  protocol::Values of(std::uint32_t slot, RowView view) const {
    const auto v = static_cast<std::uint32_t>(view);
    const std::uint32_t index = v < views_ ? v : 0u;
    const std::size_t row = static_cast<std::size_t>(slot) * views_ + index;
    return {rows_.data() + row * stride_, stride_};
  }
  std::size_t stride() const { return stride_; }
  // A row of zeros: the client's own values before it holds any.
  protocol::Values zeros() const { return zeros_; }

 private:
  std::size_t stride_ = 0;
  std::uint32_t views_ = 1;         // 3 when some row is not everyone's, else the full view alone
  std::vector<std::int32_t> rows_;  // by world slot, views_ rows each, this tick
  std::vector<std::int32_t> zeros_;
};

}  // namespace zone::replication
