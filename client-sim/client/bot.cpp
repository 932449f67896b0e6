#include "client/bot.hpp"

#include <algorithm>

#include "protocol/codec.hpp"

namespace zone::client {

namespace {

void update(GroupInfo& info, std::uint32_t id, protocol::GroupResult result,
            const flatbuffers::Vector<std::uint32_t>* members) {
  info.id = id;
  info.last_result = static_cast<std::uint8_t>(result);
  info.members.clear();
  if (members != nullptr) info.members.assign(members->begin(), members->end());
  ++info.statuses;
}

}  // namespace

void Bot::connect(net::EnetHost& host, const std::string& server, std::uint16_t port) {
  if (protocol_version_ == 0) protocol_version_ = protocol::kProtocolVersion;
  peer_ = host.connect(server, port);
  phase_ = Phase::kConnecting;
}

void Bot::on_connect(net::EnetHost& host) {
  protocol::build_hello(fbb_, protocol_version_, name_);
  host.send(peer_, protocol::bytes_of(fbb_), net::Delivery::kReliable, protocol::kReliableChannel);
  ++counters_.packets_out;
  counters_.bytes_out += fbb_.GetSize();
  phase_ = Phase::kAwaitingWelcome;
}

void Bot::on_disconnect(std::uint32_t reason) {
  disconnect_reason_ = reason;
  phase_ = Phase::kClosed;
}

void Bot::on_packet(std::uint8_t channel, std::span<const std::uint8_t> bytes) {
  ++counters_.packets_in;
  counters_.bytes_in += bytes.size();
  if (channel == protocol::kUnreliableChannel) {
    if (phase_ != Phase::kPlaying) return;  // cannot happen before the reliable welcome
    ++counters_.snapshots;
    if (light_) return light_part(bytes);
    const std::size_t before = replica_.violations().size();
    replica_.apply(bytes);
    for (std::size_t i = before; i < replica_.violations().size(); ++i) {
      if (replica_.violations()[i].kind == replica::Violation::kMalformed) ++counters_.malformed;
    }
    return;
  }
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
  } else if (const protocol::ZoneParams* p = packet->message_as_ZoneParams()) {
    welcome_.view_radius = p->view_radius();
    welcome_.hysteresis = p->hysteresis();
    welcome_.aoi_enabled = p->aoi_enabled();
  } else if (const protocol::PartyStatus* s = packet->message_as_PartyStatus()) {
    update(party_, s->party(), s->result(), s->members());
  } else if (const protocol::GuildStatus* g = packet->message_as_GuildStatus()) {
    update(guild_, g->guild(), g->result(), g->members());
  }
}

void Bot::join_party(net::EnetHost& host, std::uint64_t key) {
  if (phase_ != Phase::kPlaying) return;
  protocol::build_join_party(fbb_, key);
  send_reliable(host);
}

void Bot::join_guild(net::EnetHost& host, std::uint64_t key) {
  if (phase_ != Phase::kPlaying) return;
  protocol::build_join_guild(fbb_, key);
  send_reliable(host);
}

void Bot::send_reliable(net::EnetHost& host) {
  host.send(peer_, protocol::bytes_of(fbb_), net::Delivery::kReliable, protocol::kReliableChannel);
  ++counters_.packets_out;
  counters_.bytes_out += fbb_.GetSize();
}

void Bot::light_part(std::span<const std::uint8_t> bytes) {
  if (protocol::parse_snapshot_part(bytes, light_scratch_) != protocol::ParseError::kNone) {
    ++counters_.malformed;
    return;
  }
  const protocol::SnapshotHeader& h = light_scratch_.header;
  if (h.server_tick <= light_ack_) return;
  if (h.server_tick != light_tick_) {
    light_tick_ = h.server_tick;
    light_parts_ = 0;
    // The own record is relative to the baseline frame's; without that frame (never
    // complete here), the tick cannot be completed either.
    const auto& base = light_selves_[h.baseline_tick() % light_selves_.size()];
    if (h.baseline_tick() != 0 && base.first != h.baseline_tick()) {
      light_tick_ = 0;
      return;
    }
    light_pending_self_ = h.baseline_tick() != 0 ? base.second : protocol::FieldValues{};
  }
  if (h.part == 0 && (h.flags & protocol::kSnapshotHasSelf)) {
    protocol::fields::apply(protocol::kEntityFields, light_scratch_.self_mask,
                            light_scratch_.self_wire, light_pending_self_);
  }
  if (++light_parts_ >= h.part_count) {
    light_ack_ = light_tick_;
    light_self_ = light_pending_self_;
    light_selves_[light_ack_ % light_selves_.size()] = {light_ack_, light_self_};
  }
}

void Bot::send_input(net::EnetHost& host, float move_x, float move_y) {
  if (phase_ != Phase::kPlaying) return;
  std::array<std::uint8_t, protocol::kInputBytes> bytes;
  protocol::encode_input({++sequence_, ack_tick(), move_x, move_y}, bytes);
  if (host.send(peer_, bytes, net::Delivery::kUnreliable, protocol::kUnreliableChannel)) {
    ++counters_.packets_out;
    counters_.bytes_out += bytes.size();
  }
}

void Bot::quit(net::EnetHost& host) {
  host.disconnect(peer_, static_cast<std::uint32_t>(protocol::DisconnectReason::ClientQuit));
  phase_ = Phase::kClosed;
  disconnect_reason_ = static_cast<std::uint32_t>(protocol::DisconnectReason::ClientQuit);
}

}  // namespace zone::client
