// The ghost message: one zone's entities near a neighbour, sent to that neighbour over
// the bus every tick (docs/world.md, "Ghost messages", has the byte layout).
//
// Compact little-endian binary with a magic byte and a version, so that a zone can tell
// a message of another version (or none of ours) from a damaged one. decode() checks
// every field and never reads past the buffer: a bad message is refused whole, with a
// reason to count, and changes nothing.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "protocol/schema.hpp"
#include "world/ghosts.hpp"

namespace zone::cluster {

inline constexpr std::uint8_t kGhostMagic = 0x47;  // 'G'
// 2: the sender's epoch; 3: game properties; 4: events about the ghosts
inline constexpr std::uint8_t kGhostVersion = 4;
inline constexpr std::size_t kMaxGhostsPerMessage = 65535;
inline constexpr std::size_t kMaxGhostNameBytes = 255;
inline constexpr std::size_t kMaxGhostEventsPerMessage = 65535;

// An event of the sender's tick about one of the entities the message lists (a hit, a
// say line): the neighbour delivers it to its own clients that hold the ghost.
struct GhostEvent {
  std::uint16_t kind = 0;  // index into the schema's events (the zones run one game)
  world::EntityId entity = world::kNoEntity;
  world::EntityId target = world::kNoEntity;
  std::uint8_t arg_count = 0;
  std::array<std::int32_t, protocol::kMaxArgs> args{};
  std::string text;  // at most protocol::kMaxEventText bytes
  std::string name;  // at most 64 bytes
};

struct GhostMessage {
  std::uint32_t source = 0;  // the sender's index in the world map
  std::uint32_t tick = 0;    // the sender's tick
  // The sender's incarnation: when its process started (microseconds since the Unix
  // epoch). A restarted zone sends a larger one, so its neighbours drop the ghosts of the
  // entities it had before (their ids may come back as other entities).
  std::uint64_t epoch = 0;
  // The sender's wall clock when it sent the message (microseconds since the Unix
  // epoch): bus lag is the receiver's clock minus this, meaningful when the zones' clocks
  // are synchronised (NTP), exact on one machine.
  std::int64_t sent_us = 0;
  std::vector<world::GhostState> ghosts;
  std::vector<GhostEvent> events;  // each about one of `ghosts`
};

enum class GhostDecodeError : std::uint8_t {
  kNone,
  kNotGhost,   // no magic byte: not a ghost message
  kVersion,    // a version this zone does not know
  kTruncated,  // ends inside a field
  kBadValue,   // a field out of range (kind, coordinates, count)
  kTrailing,   // bytes after the last ghost
};
const char* to_string(GhostDecodeError e);

// Appends the message's bytes to `out` (cleared first). Names longer than
// kMaxGhostNameBytes are cut; at most kMaxGhostsPerMessage ghosts and
// kMaxGhostEventsPerMessage events are written (texts cut at kMaxEventText, event names
// at 64 bytes).
void encode(const GhostMessage& message, std::vector<std::uint8_t>& out);
GhostDecodeError decode(std::span<const std::uint8_t> bytes, GhostMessage& out);

}  // namespace zone::cluster
