// The chunk layer's set as a client keeps it (docs/protocol.md, "Chunk layer"): a
// ChunkUpdate removes its unloads from the set, then adds its loads. Shared by every
// client of the project; a checking client (client-sim) hears of every load of a chunk it
// holds and every unload of one it does not, which cannot happen on the reliable channel.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "protocol/zone_generated.h"
#include "util/chunk_grid.hpp"

namespace zone::client {

struct ChunkChange {
  std::uint32_t loads = 0;
  std::uint32_t unloads = 0;
};

// `loaded` is ascending. `mismatch(bool load, util::ChunkCoord)` is called for a load of a
// chunk already loaded (load true) and an unload of one not loaded (false).
template <typename Mismatch>
ChunkChange apply_chunk_update(std::vector<util::ChunkCoord>& loaded,
                               const protocol::ChunkUpdate& u, Mismatch&& mismatch) {
  ChunkChange change;
  if (u.unload() != nullptr) {
    for (const protocol::Chunk* c : *u.unload()) {
      const util::ChunkCoord cc{c->col(), c->row()};
      const auto at = std::lower_bound(loaded.begin(), loaded.end(), cc);
      if (at == loaded.end() || *at != cc) {
        mismatch(false, cc);
      } else {
        loaded.erase(at);
      }
      ++change.unloads;
    }
  }
  if (u.load() != nullptr) {
    for (const protocol::Chunk* c : *u.load()) {
      const util::ChunkCoord cc{c->col(), c->row()};
      const auto at = std::lower_bound(loaded.begin(), loaded.end(), cc);
      if (at != loaded.end() && *at == cc) {
        mismatch(true, cc);
      } else {
        loaded.insert(at, cc);
      }
      ++change.loads;
    }
  }
  return change;
}

}  // namespace zone::client
