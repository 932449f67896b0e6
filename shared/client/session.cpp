#include "client/session.hpp"

#include <optional>

namespace zone::client {

namespace {

std::uint32_t read_u32(std::span<const std::uint8_t> b, std::size_t at) {
  return static_cast<std::uint32_t>(b[at]) | static_cast<std::uint32_t>(b[at + 1]) << 8 |
         static_cast<std::uint32_t>(b[at + 2]) << 16 | static_cast<std::uint32_t>(b[at + 3]) << 24;
}

}  // namespace

void Session::set_transfer_token(std::vector<std::uint8_t> token) {
  transfer_.token = std::move(token);
  arriving_ = true;
}

void Session::set_resume_token(std::vector<std::uint8_t> token) {
  resume_token_ = std::move(token);
  resuming_ = true;
}

void Session::start(const std::string& host, std::uint16_t port) {
  server_host_ = host;
  server_port_ = port;
  disconnect_reason_ = 0;
  phase_ = Phase::kConnecting;
}

void Session::begin_transfer() {
  transfer_pending_ = false;
  arriving_ = true;
  resuming_ = false;
  server_host_ = transfer_.host;
  server_port_ = transfer_.port;
  frame_input_sequence_ = 0;
  phase_ = Phase::kConnecting;
}

void Session::begin_resume() {
  resuming_ = true;
  arriving_ = false;
  frame_input_sequence_ = 0;
  phase_ = Phase::kConnecting;
}

void Session::quit() {
  phase_ = Phase::kClosed;
  disconnect_reason_ = static_cast<std::uint32_t>(protocol::DisconnectReason::ClientQuit);
  resuming_ = false;
}

std::span<const std::uint8_t> Session::hello() {
  using Bytes = std::span<const std::uint8_t>;
  protocol::build_hello(fbb_, protocol_version_, name_,
                        arriving_ ? Bytes(transfer_.token) : Bytes(), ticket_,
                        resuming_ ? Bytes(resume_token_) : Bytes());
  phase_ = Phase::kAwaitingWelcome;
  return built();
}

std::span<const std::uint8_t> Session::input(float move_x, float move_y, std::uint32_t ack_tick) {
  protocol::encode_input({++sequence_, ack_tick, move_x, move_y}, input_bytes_);
  return input_bytes_;
}

std::span<const std::uint8_t> Session::action(std::uint16_t action, std::uint32_t target,
                                              std::span<const std::int32_t> args) {
  protocol::build_action(fbb_, ++action_sequence_, action, target, args);
  return built();
}

std::span<const std::uint8_t> Session::chat(protocol::ChatChannel channel, std::string_view text,
                                            std::string_view to) {
  protocol::build_chat(fbb_, channel, text, to);
  return built();
}

std::span<const std::uint8_t> Session::join_party(std::uint64_t key) {
  protocol::build_join_party(fbb_, key);
  return built();
}

std::span<const std::uint8_t> Session::join_guild(std::uint64_t key) {
  protocol::build_join_guild(fbb_, key);
  return built();
}

Session::Ending Session::on_disconnect(std::uint32_t reason) {
  disconnect_reason_ = reason;
  if (transfer_pending_) {
    // However the old connection ended (a lost goodbye times out as 7): on to the next
    // zone.
    phase_ = Phase::kTransferring;
    return Ending::kTransfer;
  }
  phase_ = Phase::kClosed;
  // Lost, not ended by the zone (ENet's time-out says 0; the zone's own, 7): the player
  // waits in the world for players.resume_grace_ms.
  const bool lost =
      reason == 0 || reason == static_cast<std::uint32_t>(protocol::DisconnectReason::Timeout);
  return lost ? Ending::kLost : Ending::kClosed;
}

void Session::receive(std::uint8_t channel, std::span<const std::uint8_t> bytes,
                      SessionObserver& observer) {
  ++counters_.packets_in;
  counters_.bytes_in += bytes.size();
  if (channel == protocol::kReliableChannel) return on_reliable(bytes, observer);
  // Snapshots cannot come before the reliable Welcome.
  if (channel != protocol::kUnreliableChannel || phase_ != Phase::kPlaying) return;
  ++counters_.snapshot_parts;
  if (!replicate_) return observer.on_unreplicated_part(bytes);
  on_snapshot(bytes, observer);
}

void Session::on_snapshot(std::span<const std::uint8_t> bytes, SessionObserver& observer) {
  const std::size_t violations = replica_.violations().size();
  const std::uint32_t previous = replica_.ack_tick();
  const bool completed = replica_.apply(bytes);
  for (std::size_t i = violations; i < replica_.violations().size(); ++i) {
    if (replica_.violations()[i].kind == replica::Violation::kMalformed) ++counters_.malformed;
  }
  if (completed) {
    ++counters_.frames;
    // The part that completed the frame carries the frame's own header.
    frame_input_sequence_ = read_u32(bytes, 4);
  }
  observer.on_snapshot_part(completed, previous);
}

void Session::on_reliable(std::span<const std::uint8_t> bytes, SessionObserver& observer) {
  const protocol::ServerPacket* packet = protocol::parse_server_packet(bytes);
  if (packet == nullptr) {
    ++counters_.malformed;
    return;
  }
  if (const protocol::Welcome* w = packet->message_as_Welcome()) {
    on_welcome(*w, observer);
  } else if (const protocol::Transfer* t = packet->message_as_Transfer()) {
    transfer_ = read_transfer(*t);
    transfer_pending_ = true;
    observer.on_transfer(transfer_);
  } else if (const protocol::ZoneParams* p = packet->message_as_ZoneParams()) {
    apply_zone_params(welcome_, *p);
    observer.on_zone_params(*p);
  } else if (const protocol::PartyStatus* s = packet->message_as_PartyStatus()) {
    observer.on_party(*s);
  } else if (const protocol::GuildStatus* g = packet->message_as_GuildStatus()) {
    observer.on_guild(*g);
  } else if (const protocol::ChunkUpdate* c = packet->message_as_ChunkUpdate()) {
    observer.on_chunks(*c);
  } else if (const protocol::StaticObjects* o = packet->message_as_StaticObjects()) {
    observer.on_statics(*o);
  } else if (const protocol::Events* e = packet->message_as_Events()) {
    if (phase_ == Phase::kPlaying) observer.on_events(*e);
  } else if (const protocol::ActionResult* ar = packet->message_as_ActionResult()) {
    observer.on_action_result(*ar);
  } else if (const protocol::ChatResult* cr = packet->message_as_ChatResult()) {
    observer.on_chat_result(*cr);
  }
}

void Session::on_welcome(const protocol::Welcome& w, SessionObserver& observer) {
  std::optional<protocol::Schema> schema = protocol::read_schema(w.schema());
  if (!schema) {
    // Nothing of this session can be read.
    ++counters_.malformed;
    phase_ = Phase::kClosed;
    observer.on_unreadable_welcome();
    return;
  }
  const WelcomeNote note{arriving_, resuming_, welcome_.entity_id};
  welcome_ = read_welcome(w);
  // Each Welcome's token replaces the last (a resume uses one up).
  resume_token_ = welcome_.resume_token;
  arriving_ = false;
  resuming_ = false;
  frame_input_sequence_ = 0;
  // A new zone counts its own ticks: the replica starts again from its first snapshot,
  // which holds everything in view.
  replica_.reset({w.max_speed(), w.tick_rate(), w.entity_id()}, *schema);
  phase_ = Phase::kPlaying;
  observer.on_welcome(w, note);
}

}  // namespace zone::client
