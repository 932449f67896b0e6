// ZoneServer: client sessions: connect, hello, input, bad input, disconnect.
#include "zone/zone_server.hpp"

#include <cmath>

#include "protocol/codec.hpp"
#include "protocol/player_name.hpp"
#include "zone/channels.hpp"

namespace zone {

using protocol::DisconnectReason;

namespace {

// A movement intent is a direction of length <= 1; components far beyond that mean a
// broken or hostile client, not a fast one.
constexpr float kMaxIntentComponent = 16.0f;

}  // namespace

const char* to_string(DropReason r) {
  switch (r) {
    case DropReason::kOversize:
      return "oversize";
    case DropReason::kMalformed:
      return "malformed";
    case DropReason::kUnknownMessage:
      return "unknown_message";
    case DropReason::kBeforeHello:
      return "before_hello";
    case DropReason::kDuplicateHello:
      return "duplicate_hello";
    case DropReason::kBadValue:
      return "bad_value";
    case DropReason::kStaleInput:
      return "stale_input";
    case DropReason::kFlood:
      return "flood";
    case DropReason::kBadAck:
      return "bad_ack";
  }
  return "unknown";
}

void ZoneServer::expire_silent_connections() {
  // A connection that never says hello would hold a peer slot for ever.
  const auto limit = std::chrono::milliseconds(config_.limits.hello_timeout_ms);
  const auto now = std::chrono::steady_clock::now();
  for (Session& s : sessions_) {
    if (s.phase == Session::Phase::kAwaitingHello && now - s.connected_at > limit) {
      kick(s, DisconnectReason::BadHello);
    }
  }
}

void ZoneServer::on_connect(net::PeerId peer) {
  Session& s = sessions_[peer.index];
  s = Session{};
  s.peer = peer;
  s.phase = Session::Phase::kAwaitingHello;
  s.connected_at = std::chrono::steady_clock::now();
  s.input_refill = s.connected_at;
  s.input_tokens = config_.limits.max_inputs_per_second;
  if (!accepting_) kick(s, DisconnectReason::ServerShutdown);
}

void ZoneServer::on_disconnect(net::PeerId peer, std::uint32_t data) {
  Session* s = session_of(peer);
  if (s == nullptr) return;
  // ENet 1.3 reports a timeout as a disconnect with no data; a client that quits
  // politely says so.
  const auto reason = data == static_cast<std::uint32_t>(DisconnectReason::ClientQuit)
                          ? DisconnectReason::ClientQuit
                          : DisconnectReason::Timeout;
  ++counters_.disconnects[static_cast<std::size_t>(reason)];
  if (s->phase == Session::Phase::kPlaying) {
    log_.info("player '{}' left (entity {}): {}", s->name, world_.entity(s->player_slot).id,
              protocol::to_string(reason));
  }
  end_session(*s);
}

void ZoneServer::end_session(Session& s) {
  if (s.phase == Session::Phase::kPlaying) {
    // Despawning makes the AOI emit leave events to everyone who saw this player.
    replicator_.remove_client(s.client);
    world_.despawn(s.player_slot);
    ++counters_.leaves;
  }
  s = Session{};
}

void ZoneServer::kick(Session& s, DisconnectReason reason) {
  ++counters_.disconnects[static_cast<std::size_t>(reason)];
  if (s.phase == Session::Phase::kPlaying) {
    log_.info("player '{}' disconnected: {}", s.name, protocol::to_string(reason));
  }
  host_->disconnect(s.peer, static_cast<std::uint32_t>(reason));
  // The player leaves the world now; ENet finishes the goodbye on its own.
  end_session(s);
}

void ZoneServer::drop(Session& s, DropReason reason) {
  ++counters_.drops[static_cast<std::size_t>(reason)];
  std::uint64_t suppressed = 0;
  if (bad_input_log_.allow(std::chrono::steady_clock::now(), suppressed)) {
    log_.warn("dropped packet from peer {}: {}{}", s.peer.index, to_string(reason),
              suppressed ? fmt::format(" ({} similar lines suppressed)", suppressed) : "");
  }
  // Stale inputs are normal on a lossy network (reordering); everything else counts
  // against the client.
  if (reason == DropReason::kStaleInput) return;
  if (++s.bad_packets > config_.limits.max_bad_packets) {
    kick(s, reason == DropReason::kFlood ? DisconnectReason::InputFlood
                                         : DisconnectReason::MalformedPackets);
  }
}

void ZoneServer::on_receive(net::PeerId peer, std::span<const std::uint8_t> bytes) {
  Session* s = session_of(peer);
  if (s == nullptr) return;
  if (bytes.size() > config_.limits.max_client_packet_bytes) return drop(*s, DropReason::kOversize);
  protocol::ParseError why = protocol::ParseError::kNone;
  const protocol::ClientPacket* packet = protocol::parse_client_packet(bytes, &why);
  if (packet == nullptr) {
    return drop(*s, why == protocol::ParseError::kUnknownMessage ? DropReason::kUnknownMessage
                                                                 : DropReason::kMalformed);
  }
  if (const protocol::Hello* hello = packet->message_as_Hello()) return on_hello(*s, *hello);
  if (const protocol::Input* input = packet->message_as_Input()) return on_input(*s, *input);
}

void ZoneServer::on_hello(Session& s, const protocol::Hello& hello) {
  if (s.phase != Session::Phase::kAwaitingHello) return drop(s, DropReason::kDuplicateHello);
  if (hello.protocol_version() != protocol::kProtocolVersion) {
    log_.info("refused peer {}: protocol version {} (server speaks {})", s.peer.index,
              hello.protocol_version(), protocol::kProtocolVersion);
    return kick(s, DisconnectReason::ProtocolMismatch);
  }
  const std::string_view name = hello.player_name() ? hello.player_name()->string_view() : "";
  if (!protocol::valid_player_name(name, config_.players.max_name_length)) {
    return kick(s, DisconnectReason::BadHello);
  }
  if (world_.player_count() >= config_.players.max_players) {
    return kick(s, DisconnectReason::ServerFull);
  }
  s.name = std::string(name);
  s.player_slot = world_.spawn_player(s.name);
  s.client = replicator_.add_client(s.player_slot);
  if (s.client >= peer_of_client_.size()) peer_of_client_.resize(s.client + 1);
  peer_of_client_[s.client] = s.peer;
  s.phase = Session::Phase::kPlaying;
  ++counters_.joins;

  const world::Entity& e = world_.entity(s.player_slot);
  const config::WorldConfig& w = config_.world;
  fbb_.Clear();
  const auto welcome = protocol::CreateWelcome(
      fbb_, e.id, tick_, static_cast<std::uint16_t>(config_.tick.rate_hz),
      static_cast<float>(world_.effective_player_radius()),
      static_cast<float>(config_.aoi.hysteresis), static_cast<float>(w.min_x),
      static_cast<float>(w.min_y), static_cast<float>(w.max_x), static_cast<float>(w.max_y),
      config_.aoi.enabled,
      static_cast<float>(std::max(config_.players.max_speed, config_.npcs.speed)));
  fbb_.Finish(
      protocol::CreateServerPacket(fbb_, protocol::ServerMessage::Welcome, welcome.Union()));
  host_->send(s.peer, protocol::bytes_of(fbb_), net::Delivery::kReliable, kReliableChannel);
  log_.info("player '{}' joined as entity {} at ({:.1f}, {:.1f}); {} players", s.name, e.id, e.x,
            e.y, world_.player_count());
}

void ZoneServer::on_input(Session& s, const protocol::Input& input) {
  if (s.phase != Session::Phase::kPlaying) return drop(s, DropReason::kBeforeHello);
  // Flood control: a token bucket of one second's worth of inputs, refilled by wall
  // time, so a slow tick or a network stall followed by a burst is not a flood.
  const auto now = std::chrono::steady_clock::now();
  const double rate = config_.limits.max_inputs_per_second;
  s.input_tokens = std::min(
      rate, s.input_tokens + rate * std::chrono::duration<double>(now - s.input_refill).count());
  s.input_refill = now;
  if (s.input_tokens < 1.0) return drop(s, DropReason::kFlood);
  s.input_tokens -= 1.0;
  const float mx = input.move_x();
  const float my = input.move_y();
  if (!std::isfinite(mx) || !std::isfinite(my) || std::abs(mx) > kMaxIntentComponent ||
      std::abs(my) > kMaxIntentComponent) {
    return drop(s, DropReason::kBadValue);
  }
  if (!replicator_.acknowledge(s.client, input.ack_tick())) return drop(s, DropReason::kBadAck);
  if (input.sequence() <= s.last_sequence) return drop(s, DropReason::kStaleInput);
  s.last_sequence = input.sequence();
  s.intent_x = mx;
  s.intent_y = my;
  replicator_.set_last_input_sequence(s.client, s.last_sequence);
}

}  // namespace zone
