// Chat (docs/protocol.md, "Chat"): a player's line, checked and turned into the engine's
// chat event (kind 0), which replication delivers by the channel's route: say to every
// client that holds the speaker, party and guild to their members, whisper to the players
// of one name, zone to everyone. The text follows the player-name rule's characters
// (no control, bidirectional or invisible characters), at most chat.max_length bytes.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "cluster/chat_codec.hpp"
#include "config/zone_config.hpp"
#include "protocol/zone_generated.h"
#include "world/world.hpp"

namespace zone {

// The zone's players by name (names are not unique: a whisper reaches every player of
// that name in the zone).
class PlayerNames {
 public:
  void add(const std::string& name, std::uint32_t slot) { slots_[name].push_back(slot); }
  void remove(const std::string& name, std::uint32_t slot);
  const std::vector<std::uint32_t>* find(std::string_view name) const;

 private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, std::vector<std::uint32_t>, Hash, std::equal_to<>> slots_;
};

struct ChatLine {
  std::uint32_t speaker_slot = 0;
  std::uint8_t channel = 0;
  std::string_view text;
  std::string_view to;  // whisper: the receiver's name
};

// Where lines for other zones go in a world (cluster::GhostExchange::publish_chat); empty
// for a zone alone.
using ChatForward = std::function<void(const cluster::RemoteChat&)>;

// Checks the line and emits it into the world's events; Sent, or why not (nothing sent).
// In a world (`forward` set), a guild line also goes to the other zones, and so does a
// whisper to a name this zone does not have (answered Sent: no zone answers whether the
// name was anywhere).
protocol::ChatStatus send_chat(const config::ChatConfig& config, std::size_t max_name_bytes,
                               world::World& world, const PlayerNames& names, const ChatLine& line,
                               const ChatForward& forward = {});

// A line from another zone (already checked by the exchange): a whisper to this zone's
// players of that name, a guild line to this zone's guild of that key; nothing if there is
// none here.
void deliver_remote_chat(world::World& world, const PlayerNames& names,
                         const cluster::RemoteChat& line);

}  // namespace zone
