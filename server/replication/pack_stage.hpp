// Pack stage: the selected candidates in wire order (changes by baseline position, then
// spawns by id), split into parts of at most max_packet_bytes by their cost bounds, at
// most 255 parts (what does not fit waits, what the client holds first); then the parts
// written into the worker's arena.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "protocol/compact.hpp"
#include "replication/candidate.hpp"
#include "replication/client_view.hpp"
#include "replication/packet_arena.hpp"
#include "replication/replication_params.hpp"
#include "world/world.hpp"

namespace zone::replication {

// Sorts `selected` into wire order and fills `part_ends` (each part's end in `selected`).
// Past 255 parts, drops from `selected` what waits: `last` is the newest frame the client
// may hold and `interest` its interest set (a spawn's interest_index).
void plan_parts(std::span<const Candidate> candidates, std::span<const InterestEntry> interest,
                const Frame* last, const PartCosts& costs, std::vector<std::uint32_t>& selected,
                std::vector<std::uint32_t>& part_ends);

// What the written parts say beside their records.
struct PartsHeader {
  std::uint32_t tick = 0;
  std::uint32_t last_input_sequence = 0;
  const Frame* baseline = nullptr;  // nullptr: the frame is sent whole
  std::uint64_t self_mask = 0;      // the client's own changed rows (0: not sent)
  protocol::Values base_self;       // its baseline values
  protocol::Values self;            // and its values now
};

// Writes the parts planned by plan_parts() into `out` for `client`, charging each to
// the client's `tokens`; returns the bytes written, and counts packets and bytes in
// `stats`.
std::uint64_t write_parts(std::span<const Candidate> candidates,
                          std::span<const InterestEntry> interest,
                          std::span<const std::uint32_t> selected,
                          std::span<const std::uint32_t> part_ends, const PartsHeader& header,
                          const world::World& world, std::uint32_t max_bytes, ClientId client,
                          PacketArena& out, double& tokens, ReplicationStats& stats);

}  // namespace zone::replication
