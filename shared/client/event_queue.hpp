// What a Connection has to tell the game, queued until the game polls: a ring of events
// whose strings and member lists are reused, so that steady play allocates nothing.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace zone::client {

enum class EventType : std::uint8_t {
  kNone = 0,
  kWelcome = 1,
  kDisconnected = 2,
  kTransfer = 3,
  kGame = 4,
  kActionResult = 5,
  kChatResult = 6,
  kParty = 7,
  kGuild = 8,
  kChunks = 9,
  kStatics = 10,
  kZoneParams = 11,
  kCorrection = 12,
  kResuming = 13,
};

struct ClientEvent {
  EventType type = EventType::kNone;
  std::uint32_t tick = 0;
  std::uint32_t sequence = 0;
  std::uint16_t kind = 0;
  std::uint32_t entity = 0;
  std::uint32_t target = 0;
  std::array<std::int32_t, 4> args{};
  std::uint32_t arg_count = 0;
  std::uint32_t status = 0;
  std::uint32_t channel = 0;
  std::uint32_t reason = 0;
  std::uint32_t group = 0;
  std::vector<std::uint32_t> members;
  std::uint32_t count = 0;
  double dx = 0.0, dy = 0.0;
  std::string text;
  std::string name;
};

class EventQueue {
 public:
  // A slot for a new event, cleared but keeping its buffers' capacity. A full queue
  // grows (a game that does not poll for a long while).
  ClientEvent& push();
  // The oldest event, or nullptr; it stays valid until the next push() or pop().
  const ClientEvent* pop();
  std::size_t size() const { return size_; }
  void clear() { head_ = size_ = 0; }

 private:
  std::vector<ClientEvent> ring_ = std::vector<ClientEvent>(64);
  std::size_t head_ = 0;  // the oldest
  std::size_t size_ = 0;
};

}  // namespace zone::client
