// The protocol session of one client (docs/protocol.md), without any I/O: it builds the
// messages a client sends (Hello with the login ticket, transfer token or resume token,
// inputs carrying the ack tick, Action, Chat, JoinParty, JoinGuild) and consumes the
// packets the zone sends (the Welcome, snapshot parts into a replica::FrameReplica, the
// reliable messages, the goodbye's reason), keeping what a session is: the Welcome, the
// replica, the resume token, the last Transfer, the sequences and the phase.
//
// Its owner does the networking: it hands the session each packet received on the
// session's connection (receive) and its disconnect reason (on_disconnect), and sends the
// bytes the builders return through whatever host it owns (the kit's Connection owns one
// ENet host per player; client-sim's bots share one per group). What the session heard
// of is reported to a SessionObserver, one call per message, never one per entity.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <flatbuffers/flatbuffers.h>

#include "client/session_info.hpp"
#include "protocol/codec.hpp"
#include "protocol/compact.hpp"
#include "protocol/zone_generated.h"
#include "replica/frame_replica.hpp"

namespace zone::client {

// Traffic of one session object (every connection it made). Sent packets are counted by
// the owner (count_sent) once its host took them.
struct SessionCounters {
  std::uint64_t packets_in = 0, bytes_in = 0, packets_out = 0, bytes_out = 0;
  std::uint64_t snapshot_parts = 0;  // snapshot parts received while playing
  std::uint64_t frames = 0;          // frames the replica completed
  std::uint64_t malformed = 0;       // packets that failed verification or parsing
};

// How a Welcome came: after a Transfer (arrived, with the Transfer's entity id in the
// session's transfer()), after a lost connection (resumed), and the entity the previous
// Welcome named (0: none).
struct WelcomeNote {
  bool arrived = false;
  bool resumed = false;
  std::uint32_t previous_entity = 0;
};

// What a Session heard of. Every method does nothing unless overridden; the messages are
// the zone's, valid for the call only.
class SessionObserver {
 public:
  // The session plays: welcome(), schema() and the reset replica are the new zone's.
  virtual void on_welcome(const protocol::Welcome& /*w*/, const WelcomeNote& /*note*/) {}
  // A Welcome whose schema cannot be read: nothing of the session can be; the session is
  // closed (count included in malformed).
  virtual void on_unreadable_welcome() {}
  // A snapshot part went into the replica; `completed`: it completed a frame
  // (replica().current()), `previous_ack` the frame current before it.
  virtual void on_snapshot_part(bool /*completed*/, std::uint32_t /*previous_ack*/) {}
  // A snapshot part while the session does not replicate (set_replicate(false)).
  virtual void on_unreplicated_part(std::span<const std::uint8_t> /*bytes*/) {}
  // The zone hands the player over (transfer()); its goodbye follows.
  virtual void on_transfer(const TransferInfo& /*transfer*/) {}
  // Already applied to welcome().
  virtual void on_zone_params(const protocol::ZoneParams& /*p*/) {}
  virtual void on_party(const protocol::PartyStatus& /*s*/) {}
  virtual void on_guild(const protocol::GuildStatus& /*s*/) {}
  virtual void on_chunks(const protocol::ChunkUpdate& /*u*/) {}
  virtual void on_statics(const protocol::StaticObjects& /*o*/) {}
  // Only while playing.
  virtual void on_events(const protocol::Events& /*e*/) {}
  virtual void on_action_result(const protocol::ActionResult& /*r*/) {}
  virtual void on_chat_result(const protocol::ChatResult& /*r*/) {}

 protected:
  ~SessionObserver() = default;
};

class Session {
 public:
  // kAwaitingWelcome: the Hello went. kTransferring: a Transfer came and the connection
  // ended; the owner connects to transfer() (begin_transfer).
  enum class Phase : std::uint8_t {
    kIdle,
    kConnecting,
    kAwaitingWelcome,
    kPlaying,
    kTransferring,
    kClosed
  };
  // How a connection ended (on_disconnect): on to the Transfer's zone, lost (no goodbye
  // from the zone: ENet's time-out, or the zone's own), or ended by the zone or the client.
  enum class Ending : std::uint8_t { kTransfer, kLost, kClosed };

  explicit Session(std::string player_name = {}) : name_(std::move(player_name)) {}

  // Set before connecting. The login ticket every Hello carries (empty: none).
  void set_ticket(std::vector<std::uint8_t> ticket) { ticket_ = std::move(ticket); }
  // The version the Hello announces (tests change it to provoke a refusal).
  void set_protocol_version(std::uint16_t v) { protocol_version_ = v; }
  // Presents `token` in the next Hello as a transfer token (resume token), as a client
  // another zone handed over (a lost one) does.
  void set_transfer_token(std::vector<std::uint8_t> token);
  void set_resume_token(std::vector<std::uint8_t> token);
  void forget_resume_token() { resume_token_.clear(); }
  // false: snapshot parts are handed to the observer (on_unreplicated_part) instead of
  // the replica, for a client that reads them its own way (client-sim's light mode).
  void set_replicate(bool replicate) { replicate_ = replicate; }

  // The owner started connecting to host:port (the first zone).
  void start(const std::string& host, std::uint16_t port);
  // After a Transfer's goodbye: the next connection goes to transfer().host, port, and
  // its Hello carries the transfer token.
  void begin_transfer();
  // After a lost connection: the next connection goes to the zone last played in and its
  // Hello carries the resume token (the owner checks resume_token() is not empty).
  void begin_resume();
  // The owner stopped using the connection without a word (a lost network).
  void go_idle() { phase_ = Phase::kIdle; }
  // The owner said goodbye (ClientQuit).
  void quit();

  // Builders: each returns the bytes to send, valid until the next builder call; the
  // owner sends them on protocol::kReliableChannel (reliable) except input's
  // (kUnreliableChannel, unreliable).
  // The Hello, once the connection is up.
  std::span<const std::uint8_t> hello();
  // The next input (its sequence: input_sequence()) acknowledging `ack_tick`, by default
  // the replica's newest complete frame.
  std::span<const std::uint8_t> input(float move_x, float move_y, std::uint32_t ack_tick);
  std::span<const std::uint8_t> input(float move_x, float move_y) {
    return input(move_x, move_y, replica_.ack_tick());
  }
  // An Action (its sequence: action_sequence()).
  std::span<const std::uint8_t> action(std::uint16_t action, std::uint32_t target,
                                       std::span<const std::int32_t> args = {});
  std::span<const std::uint8_t> chat(protocol::ChatChannel channel, std::string_view text,
                                     std::string_view to = {});
  std::span<const std::uint8_t> join_party(std::uint64_t key);
  std::span<const std::uint8_t> join_guild(std::uint64_t key);
  // The owner's host took `bytes` bytes of this session.
  void count_sent(std::size_t bytes) {
    ++counters_.packets_out;
    counters_.bytes_out += bytes;
  }

  // A packet of the session's connection.
  void receive(std::uint8_t channel, std::span<const std::uint8_t> bytes,
               SessionObserver& observer);
  // The connection ended with `reason` (ENet's disconnect data).
  Ending on_disconnect(std::uint32_t reason);
  // A packet the owner found malformed reading it its own way (light mode).
  void count_malformed() { ++counters_.malformed; }

  Phase phase() const { return phase_; }
  bool playing() const { return phase_ == Phase::kPlaying; }
  const std::string& name() const { return name_; }
  const WelcomeInfo& welcome() const { return welcome_; }
  const replica::FrameReplica& replica() const { return replica_; }
  replica::FrameReplica& replica() { return replica_; }
  const protocol::Schema& schema() const { return replica_.schema(); }
  const TransferInfo& transfer() const { return transfer_; }
  // A Transfer came and its goodbye has not yet.
  bool transfer_pending() const { return transfer_pending_; }
  const std::vector<std::uint8_t>& resume_token() const { return resume_token_; }
  // The zone connected to last (the first one, or the last Transfer's).
  const std::string& server_host() const { return server_host_; }
  std::uint16_t server_port() const { return server_port_; }
  std::uint32_t disconnect_reason() const { return disconnect_reason_; }
  std::uint32_t input_sequence() const { return sequence_; }
  std::uint32_t action_sequence() const { return action_sequence_; }
  // The newest input the zone had applied at the newest complete frame (its header's).
  std::uint32_t frame_input_sequence() const { return frame_input_sequence_; }
  const SessionCounters& counters() const { return counters_; }

 private:
  void on_reliable(std::span<const std::uint8_t> bytes, SessionObserver& observer);
  void on_welcome(const protocol::Welcome& w, SessionObserver& observer);
  void on_snapshot(std::span<const std::uint8_t> bytes, SessionObserver& observer);
  std::span<const std::uint8_t> built() const { return {fbb_.GetBufferPointer(), fbb_.GetSize()}; }

  std::string name_;
  std::vector<std::uint8_t> ticket_;
  std::uint16_t protocol_version_ = protocol::kProtocolVersion;
  Phase phase_ = Phase::kIdle;
  bool replicate_ = true;
  WelcomeInfo welcome_;
  replica::FrameReplica replica_;
  TransferInfo transfer_;
  bool transfer_pending_ = false;           // a Transfer came: the coming goodbye is expected
  bool arriving_ = false;                   // the Hello carries the transfer token
  bool resuming_ = false;                   // the Hello carries the resume token
  std::vector<std::uint8_t> resume_token_;  // the last Welcome's (empty: none)
  std::string server_host_;
  std::uint16_t server_port_ = 0;
  std::uint32_t disconnect_reason_ = 0;
  std::uint32_t sequence_ = 0;
  std::uint32_t action_sequence_ = 0;
  std::uint32_t frame_input_sequence_ = 0;
  SessionCounters counters_;
  flatbuffers::FlatBufferBuilder fbb_{256};
  std::array<std::uint8_t, protocol::kInputBytes> input_bytes_{};
};

}  // namespace zone::client
