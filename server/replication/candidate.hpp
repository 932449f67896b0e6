// A record that may go in a client's next snapshot: what the stages pass along. The
// gather stage makes them, the rank stage orders them, the budget stage picks them, the
// pack stage puts them in parts and the settle stage records the outcome.
#pragma once

#include <cstdint>

namespace zone::replication {

struct Candidate {
  enum Kind : std::uint8_t { kSpawn, kUpdate, kDespawn } kind;
  bool mandatory;  // sent whatever the budget
  bool sent;
  std::uint32_t interest_index;  // spawns and updates
  std::uint32_t base_index;      // updates and despawns: position in the baseline frame
  std::uint32_t frame_index;     // spawns and updates: position in the new frame
  std::uint32_t cost;            // upper bound of the record's bytes in a part
  float priority;
  std::uint64_t mask;       // updates
  const std::int32_t* now;  // spawns and updates: the values the client is to hold
};

// What a part costs beside its records: the stages that plan parts agree on it.
struct PartCosts {
  std::uint32_t max_bytes;      // network.max_packet_bytes
  std::uint32_t part_overhead;  // header and the two counts
  std::uint32_t self_cost;      // the client's own record, in the first part (0: none)
};

}  // namespace zone::replication
