// One connected client as the zone loop sees it: its phase, its player, its latest
// input, and how much bad input it has sent.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <string>

#include "net/enet_host.hpp"
#include "replication/replicator.hpp"

namespace zone {

// Why an incoming packet was dropped. Counted per reason for metrics and the log.
enum class DropReason : std::uint8_t {
  kOversize,        // larger than limits.max_client_packet_bytes
  kMalformed,       // failed FlatBuffers verification
  kUnknownMessage,  // verified, but a message type this server does not know
  kBeforeHello,     // input before the hello was accepted
  kDuplicateHello,  // a second hello
  kBadValue,        // NaN, infinite or absurd numbers
  kStaleInput,      // sequence not newer than the last applied one
  kFlood,           // over limits.max_inputs_per_second
  kBadAck,          // acknowledges a tick that was never sent
};
inline constexpr std::size_t kDropReasons = 9;
const char* to_string(DropReason r);

struct Session {
  enum class Phase : std::uint8_t { kFree, kAwaitingHello, kPlaying };
  Phase phase = Phase::kFree;
  net::PeerId peer;
  std::uint32_t player_slot = 0;
  replication::ClientId client = 0;
  std::string name;
  std::uint32_t last_sequence = 0;
  float intent_x = 0.0f;  // latest accepted movement intent
  float intent_y = 0.0f;
  std::uint32_t bad_packets = 0;  // drops charged to this client
  std::chrono::steady_clock::time_point connected_at{};
  // Flood control: a token bucket holding up to one second of inputs.
  double input_tokens = 0.0;
  std::chrono::steady_clock::time_point input_refill{};
};

}  // namespace zone
