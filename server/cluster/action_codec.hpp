// An action forwarded to the zone that owns its target (docs/world.md, "Actions across
// borders"): a player of the sending zone asked for an action on an entity it sees across
// the border, a ghost in its zone; the owner's rules resolve it against the real entity,
// with the actor as the owner's ghost of it. Sent on "<prefix>.handoff.<to>.<from>", the
// neighbour-to-neighbour subject only zone <from> may publish on.
//
// Layout: u8 magic 0x41 ('A'), u8 version 1, u8 sender's zone index, u8 action, u32 actor
// id, u32 target id, f64 x, f64 y (where the actor stood when it acted, metres), u8 arg
// count (at most 4), i32 per argument. decode() checks every field and never reads past
// the buffer.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

namespace zone::cluster {

inline constexpr std::uint8_t kActionMagic = 0x41;  // 'A'
inline constexpr std::uint8_t kActionVersion = 1;
inline constexpr std::size_t kMaxActionArgs = 4;

struct RemoteAction {
  std::uint8_t sender = 0;  // the actor's zone, in the world map
  std::uint8_t action = 0;  // index into the game's actions
  std::uint32_t actor = 0;
  std::uint32_t target = 0;
  double x = 0.0;
  double y = 0.0;
  std::uint8_t arg_count = 0;
  std::array<std::int32_t, kMaxActionArgs> args{};
};

enum class ActionDecodeError : std::uint8_t {
  kNone,
  kNotAction,
  kVersion,
  kTruncated,
  kBadValue,
  kTrailing
};

void encode(const RemoteAction& action, std::vector<std::uint8_t>& out);
ActionDecodeError decode(std::span<const std::uint8_t> bytes, RemoteAction& out);

}  // namespace zone::cluster
