// Client traffic, decoded on the network threads and taken by the tick.
//
// Each network thread (net::HostThread) calls Ingest::on_event for every ENet event of
// its host: packets are size-checked and decoded there (a 16-byte input, a verified
// FlatBuffers hello), so the tick only applies ready values. The tick takes everything
// queued so far once per tick, in arrival order per host.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "auth/verifier.hpp"
#include "net/enet_host.hpp"
#include "protocol/compact.hpp"
#include "protocol/schema.hpp"
#include "protocol/zone_generated.h"

namespace zone {

// Why an incoming packet was dropped. Counted per reason for metrics and the log.
enum class DropReason : std::uint8_t {
  kOversize,        // larger than limits.max_client_packet_bytes
  kMalformed,       // not a well-formed message of the protocol
  kUnknownMessage,  // well-formed, but a message type this server does not know
  kBeforeHello,     // input before the hello was accepted
  kDuplicateHello,  // a second hello
  kBadValue,        // NaN, infinite or absurd numbers
  kStaleInput,      // sequence not newer than the last applied one
  kFlood,           // over limits.max_inputs_per_second
  kBadAck,          // acknowledges a tick that was never sent
  kOverload,        // more events in one tick than the zone takes (ingest queue full)
};
inline constexpr std::size_t kDropReasons = 10;
const char* to_string(DropReason r);

struct InboundEvent {
  enum class Kind : std::uint8_t {
    kConnect,
    kDisconnect,
    kHello,
    kInput,
    kJoinParty,
    kJoinGuild,
    kAction,
    kChat,
    kBad
  };
  Kind kind = Kind::kBad;
  net::PeerId peer;
  std::uint32_t data = 0;  // disconnect: ENet data; hello: protocol version; bad: DropReason
  std::chrono::steady_clock::time_point at{};  // when the network thread took it
  protocol::InputMessage input;                // kInput
  std::uint64_t group_key = 0;                 // kJoinParty, kJoinGuild
  std::uint32_t name_at = 0;                   // kHello: the name, in Inbox::text
  std::uint32_t name_size = 0;
  std::uint32_t token_size = 0;  // kHello: the transfer token, right after the name
  bool has_token = false;        // kHello: a transfer token was given (of any size)
  // kHello: a resume token was given (of any size); it is the token above unless the
  // hello carried both (which the session refuses).
  bool has_resume = false;
  // kAction: the message's fields; more than protocol::kMaxArgs arguments is marked.
  std::uint32_t action_sequence = 0;
  std::uint16_t action = 0;
  std::uint32_t target = 0;
  std::uint8_t arg_count = 0;
  bool too_many_args = false;
  std::array<std::int32_t, protocol::kMaxArgs> args{};
  // kChat: the channel; its text is at name_at (name_size bytes) in Inbox::text, the
  // whisper's receiver right after it (token_size bytes).
  std::uint8_t chat_channel = 0;
  // kHello in a zone that verifies tickets (auth.mode: ticket); the network thread
  // verified the ticket. With ticket_error kNone the name above is the ticket's (not the
  // Hello's player_name) and the ids are the ticket's.
  bool ticket_checked = false;
  bool has_ticket = false;  // the Hello carried a non-empty ticket
  auth::TicketError ticket_error = auth::TicketError::kNone;
  std::uint64_t account_id = 0;
  std::uint64_t character_id = 0;
};

struct Inbox {
  std::vector<InboundEvent> events;
  std::string text;  // hello names, back to back
  // Packets dropped outright because the queue was far past its limit (counted here,
  // not as events, so memory stays bounded).
  std::uint64_t overflowed = 0;
  std::string_view name_of(const InboundEvent& e) const {
    return std::string_view(text).substr(e.name_at, e.name_size);
  }
  std::string_view chat_text_of(const InboundEvent& e) const { return name_of(e); }
  std::string_view chat_to_of(const InboundEvent& e) const {
    return std::string_view(text).substr(e.name_at + e.name_size, e.token_size);
  }
  std::span<const std::uint8_t> token_of(const InboundEvent& e) const {
    const std::string_view t = std::string_view(text).substr(e.name_at + e.name_size, e.token_size);
    return {reinterpret_cast<const std::uint8_t*>(t.data()), t.size()};
  }
  void clear() {
    events.clear();
    text.clear();
    overflowed = 0;
  }
};

// One per network host: the network thread pushes, the tick takes.
class Ingest {
 public:
  struct Limits {
    std::uint32_t max_packet_bytes = 512;  // limits.max_client_packet_bytes
    // Packets queued between two ticks beyond which the rest are dropped (connects and
    // disconnects always pass, so no session is ever lost track of).
    std::size_t max_events = 1 << 16;
  };
  // `verifier`: the zone's ticket verifier in ticket mode (it must outlive the Ingest),
  // nullptr in open mode. Tickets are verified here, off the tick thread: a signature
  // check costs tens of microseconds.
  explicit Ingest(const Limits& limits, const auth::TicketVerifier* verifier = nullptr)
      : limits_(limits), verifier_(verifier) {}

  // Network thread: decodes one event, staged until publish() (also on that thread)
  // hands the staged events to the tick in one go.
  void on_event(const net::NetEvent& ev);
  void publish();
  // Tick: takes everything queued so far (`into` is cleared first and swapped in).
  void take(Inbox& into);

 private:
  // A Hello's ticket, checked: the event's verdict and ids; the ticket's name in `name`.
  void check_ticket(const flatbuffers::Vector<std::uint8_t>* ticket, InboundEvent& out,
                    std::string& name);

  Limits limits_;
  const auth::TicketVerifier* verifier_;
  // Peers (by index) whose ticket was checked since they connected: one signature check
  // per connection, however many copies of its Hello a client sends (every later one is
  // a duplicate hello to the session layer anyway).
  std::vector<bool> ticket_checked_;
  Inbox staged_;  // the network thread's own
  std::mutex mutex_;
  Inbox queue_;
};

}  // namespace zone
