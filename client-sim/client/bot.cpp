#include "client/bot.hpp"

#include <algorithm>

#include "protocol/codec.hpp"

namespace zone::client {

namespace {
constexpr std::uint8_t kReliableChannel = 0;
constexpr std::uint8_t kInputChannel = 1;
}  // namespace

void Bot::connect(net::EnetHost& host, const std::string& server, std::uint16_t port) {
  if (protocol_version_ == 0) protocol_version_ = protocol::kProtocolVersion;
  peer_ = host.connect(server, port);
  phase_ = Phase::kConnecting;
}

void Bot::on_connect(net::EnetHost& host) {
  protocol::build_hello(fbb_, protocol_version_, name_);
  host.send(peer_, protocol::bytes_of(fbb_), net::Delivery::kReliable, kReliableChannel);
  ++counters_.packets_out;
  counters_.bytes_out += fbb_.GetSize();
  phase_ = Phase::kAwaitingWelcome;
}

void Bot::on_disconnect(std::uint32_t reason) {
  disconnect_reason_ = reason;
  phase_ = Phase::kClosed;
}

void Bot::on_packet(std::span<const std::uint8_t> bytes) {
  ++counters_.packets_in;
  counters_.bytes_in += bytes.size();
  const protocol::ServerPacket* packet = protocol::parse_server_packet(bytes);
  if (packet == nullptr) {
    ++counters_.malformed;
    return;
  }
  if (const protocol::Welcome* w = packet->message_as_Welcome()) {
    welcome_ = {w->entity_id(),   w->server_tick(), w->tick_rate(),   w->view_radius(),
                w->hysteresis(),  w->world_min_x(), w->world_min_y(), w->world_max_x(),
                w->world_max_y(), w->aoi_enabled(), w->max_speed()};
    replica_.reset({w->max_speed(), w->tick_rate(), w->entity_id()});
    phase_ = Phase::kPlaying;
  } else if (const protocol::Snapshot* s = packet->message_as_Snapshot()) {
    if (phase_ != Phase::kPlaying) return;  // cannot happen before the reliable welcome
    ++counters_.snapshots;
    if (!light_) {
      replica_.apply(bytes, *s);
      return;
    }
    const protocol::SnapshotHeader* h = s->header();
    if (h == nullptr || h->server_tick() <= light_ack_) return;
    if (s->self_state() != nullptr) light_self_ = *s->self_state();
    if (h->server_tick() != light_tick_) {
      light_tick_ = h->server_tick();
      light_parts_ = 0;
    }
    if (++light_parts_ >= std::max<std::uint32_t>(1, h->part_count())) light_ack_ = light_tick_;
  }
}

void Bot::send_input(net::EnetHost& host, float move_x, float move_y) {
  if (phase_ != Phase::kPlaying) return;
  protocol::build_input(fbb_, ++sequence_, move_x, move_y, ack_tick());
  if (host.send(peer_, protocol::bytes_of(fbb_), net::Delivery::kUnreliable, kInputChannel)) {
    ++counters_.packets_out;
    counters_.bytes_out += fbb_.GetSize();
  }
}

void Bot::quit(net::EnetHost& host) {
  host.disconnect(peer_, static_cast<std::uint32_t>(protocol::DisconnectReason::ClientQuit));
  phase_ = Phase::kClosed;
  disconnect_reason_ = static_cast<std::uint32_t>(protocol::DisconnectReason::ClientQuit);
}

}  // namespace zone::client
