// The C ABI over Connection (include/zoneclient.h). Every entry point catches whatever
// the C++ side throws: nothing crosses into C, Unity, Godot or Unreal but return values.
#include "zoneclient.h"

#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>

#include "client/connection.hpp"
#include "protocol/codec.hpp"
#include "protocol/quantize.hpp"

struct zc_client {
  explicit zc_client(zone::client::ConnectionOptions o) : connection(std::move(o)) {}
  zone::client::Connection connection;
  // Copies of names handed out (stable until the next update or poll).
  std::string zone_name;
};

namespace {

using zone::client::Connection;

template <typename R, typename F>
R guarded(R fallback, F&& f) noexcept {
  try {
    return f();
  } catch (...) {
    return fallback;
  }
}

void fill_entity(const zc_client* c, const zone::replica::EntityView& v, zc_entity* out) {
  const Connection& conn = c->connection;
  out->id = v.id;
  const zone::replica::EntityInfo* info = conn.replica().info(v.id);
  out->type = info != nullptr ? info->type : 0;
  out->is_player = info != nullptr && info->kind == zone::protocol::EntityKind::kPlayer ? 1 : 0;
  out->name = info != nullptr ? info->name.c_str() : "";
  zone::client::EntitySample s;
  if (conn.interpolated(v.id, s)) {
    out->x = s.x;
    out->y = s.y;
    out->heading = s.heading;
  } else {
    out->x = zone::protocol::position_metres(v.values, zone::protocol::kX);
    out->y = zone::protocol::position_metres(v.values, zone::protocol::kY);
    out->heading = zone::protocol::heading_radians(v.values);
  }
}

int32_t found(std::optional<std::size_t> i) {
  return i ? static_cast<int32_t>(*i) : -1;
}

}  // namespace

extern "C" {

uint32_t zc_abi_version(void) {
  return ZC_ABI_VERSION;
}

uint32_t zc_protocol_version(void) {
  return zone::protocol::kProtocolVersion;
}

void zc_options_init(zc_options* options) {
  if (options == nullptr) return;
  std::memset(options, 0, sizeof(*options));
  options->interpolation_delay = 0.1;
  options->correction_time = 0.25;
}

zc_client* zc_create(const zc_options* options) {
  if (options == nullptr || options->player_name == nullptr || options->player_name[0] == '\0')
    return nullptr;
  return guarded<zc_client*>(nullptr, [&]() -> zc_client* {
    zone::client::ConnectionOptions o;
    o.player_name = options->player_name;
    if (options->ticket != nullptr && options->ticket_size > 0)
      o.ticket.assign(options->ticket, options->ticket + options->ticket_size);
    if (options->interpolation_delay > 0.0) o.interpolation_delay = options->interpolation_delay;
    if (options->correction_time > 0.0) o.correction_time = options->correction_time;
    o.player_speed = options->player_speed;
    if (options->resume_attempts < 0) {
      o.resume_attempts = 0;
    } else if (options->resume_attempts > 0) {
      o.resume_attempts = static_cast<std::uint32_t>(options->resume_attempts);
    }
    return new zc_client(std::move(o));
  });
}

void zc_destroy(zc_client* client) {
  guarded(0, [&] {
    delete client;
    return 0;
  });
}

int zc_connect(zc_client* client, const char* host, uint16_t port) {
  if (client == nullptr || host == nullptr) return -1;
  return guarded(-1, [&] { return client->connection.connect(host, port) ? 0 : -1; });
}

void zc_disconnect(zc_client* client) {
  if (client == nullptr) return;
  guarded(0, [&] {
    client->connection.disconnect();
    return 0;
  });
}

void zc_update(zc_client* client, double now) {
  if (client == nullptr) return;
  guarded(0, [&] {
    client->connection.update(now);
    return 0;
  });
}

zc_state zc_get_state(const zc_client* client) {
  if (client == nullptr) return ZC_STATE_CLOSED;
  switch (client->connection.state()) {
    case Connection::State::kIdle:
      return ZC_STATE_IDLE;
    case Connection::State::kConnecting:
      return ZC_STATE_CONNECTING;
    case Connection::State::kPlaying:
      return ZC_STATE_PLAYING;
    case Connection::State::kTransferring:
      return ZC_STATE_TRANSFERRING;
    case Connection::State::kClosed:
      return ZC_STATE_CLOSED;
    case Connection::State::kResuming:
      return ZC_STATE_RESUMING;
  }
  return ZC_STATE_CLOSED;
}

uint32_t zc_disconnect_reason(const zc_client* client) {
  return client != nullptr ? client->connection.disconnect_reason() : 0;
}

int zc_get_welcome(const zc_client* client, zc_welcome* out) {
  if (client == nullptr || out == nullptr || !client->connection.welcomed()) return 0;
  const zone::client::WelcomeInfo& w = client->connection.welcome();
  out->entity_id = w.entity_id;
  out->server_tick = w.server_tick;
  out->tick_rate = w.tick_rate;
  out->view_radius = w.view_radius;
  out->hysteresis = w.hysteresis;
  out->world_min_x = w.world_min_x;
  out->world_min_y = w.world_min_y;
  out->world_max_x = w.world_max_x;
  out->world_max_y = w.world_max_y;
  out->max_speed = w.max_speed;
  out->entity_type = w.entity_type;
  out->zone = w.zone.c_str();
  return 1;
}

uint32_t zc_field_count(const zc_client* client) {
  return client != nullptr && client->connection.welcomed()
             ? static_cast<uint32_t>(client->connection.schema().size())
             : 0;
}

const char* zc_field_name(const zc_client* client, uint32_t row) {
  if (row >= zc_field_count(client)) return nullptr;
  return client->connection.schema().field(row).name.c_str();
}

int32_t zc_find_field(const zc_client* client, const char* name) {
  if (client == nullptr || name == nullptr) return -1;
  return found(client->connection.schema().find_field(name));
}

int32_t zc_find_action(const zc_client* client, const char* name) {
  if (client == nullptr || name == nullptr) return -1;
  return found(client->connection.schema().find_action(name));
}

int32_t zc_find_event(const zc_client* client, const char* name) {
  if (client == nullptr || name == nullptr) return -1;
  return found(client->connection.schema().find_event(name));
}

const char* zc_event_name(const zc_client* client, uint32_t kind) {
  if (client == nullptr) return nullptr;
  const auto events = client->connection.schema().events();
  return kind < events.size() ? events[kind].name.c_str() : nullptr;
}

void zc_set_move(zc_client* client, float move_x, float move_y) {
  if (client != nullptr) client->connection.set_move(move_x, move_y);
}

int zc_get_player(const zc_client* client, zc_player* out) {
  if (client == nullptr || out == nullptr || !client->connection.has_frame()) return 0;
  const Connection& c = client->connection;
  const zone::protocol::Values self = c.replica().self();
  out->entity_id = c.welcome().entity_id;
  out->x = c.predictor().x();
  out->y = c.predictor().y();
  out->server_x = zone::protocol::position_metres(self, zone::protocol::kX);
  out->server_y = zone::protocol::position_metres(self, zone::protocol::kY);
  out->heading = zone::protocol::heading_radians(self);
  out->server_tick = c.replica().ack_tick();
  out->last_input_applied = c.last_input_applied();
  out->last_input_sent = c.last_input_sent();
  return 1;
}

int zc_player_value(const zc_client* client, uint32_t row, int32_t* out) {
  if (client == nullptr || out == nullptr || !client->connection.has_frame()) return 0;
  const zone::protocol::Values self = client->connection.replica().self();
  if (row >= self.size()) return 0;
  *out = self[row];
  return 1;
}

uint32_t zc_entity_count(const zc_client* client) {
  if (client == nullptr) return 0;
  return static_cast<uint32_t>(client->connection.replica().current().entities.size());
}

int zc_entity_at(const zc_client* client, uint32_t index, zc_entity* out) {
  if (client == nullptr || out == nullptr) return 0;
  const auto& list = client->connection.replica().current().entities;
  if (index >= list.size()) return 0;
  fill_entity(client, list[index], out);
  return 1;
}

int zc_entity_find(const zc_client* client, uint32_t id, zc_entity* out) {
  if (client == nullptr || out == nullptr) return 0;
  const auto& list = client->connection.replica().current().entities;
  const std::size_t i = list.index_of(id);
  if (i == list.size()) return 0;
  fill_entity(client, list[i], out);
  return 1;
}

int zc_entity_value(const zc_client* client, uint32_t id, uint32_t row, int32_t* out) {
  if (client == nullptr || out == nullptr) return 0;
  const auto e = client->connection.replica().find(id);
  if (e == nullptr || row >= e->values.size()) return 0;
  *out = e->values[row];
  return 1;
}

double zc_render_tick(const zc_client* client) {
  return client != nullptr ? client->connection.render_tick() : 0.0;
}

uint32_t zc_send_action(zc_client* client, uint16_t action, uint32_t target, const int32_t* args,
                        uint32_t arg_count) {
  if (client == nullptr || arg_count > 4 || (arg_count > 0 && args == nullptr)) return 0;
  return guarded<uint32_t>(0, [&] {
    return client->connection.send_action(action, target, {args, arg_count});
  });
}

int zc_send_chat(zc_client* client, uint8_t channel, const char* text, const char* to) {
  if (client == nullptr || text == nullptr || channel >= zone::protocol::kChatChannelCount)
    return 0;
  return guarded(0, [&] {
    return client->connection.send_chat(static_cast<zone::protocol::ChatChannel>(channel), text,
                                        to != nullptr ? to : "")
               ? 1
               : 0;
  });
}

int zc_join_party(zc_client* client, uint64_t key) {
  if (client == nullptr) return 0;
  return guarded(0, [&] { return client->connection.join_party(key) ? 1 : 0; });
}

int zc_join_guild(zc_client* client, uint64_t key) {
  if (client == nullptr) return 0;
  return guarded(0, [&] { return client->connection.join_guild(key) ? 1 : 0; });
}

uint32_t zc_static_count(const zc_client* client) {
  return client != nullptr ? static_cast<uint32_t>(client->connection.statics().size()) : 0;
}

int zc_static_at(const zc_client* client, uint32_t index, zc_static_object* out) {
  if (client == nullptr || out == nullptr || index >= zc_static_count(client)) return 0;
  const zone::client::StaticObject& s = client->connection.statics()[index];
  *out = {s.id, s.x, s.y, s.radius, s.kind};
  return 1;
}

uint32_t zc_chunk_count(const zc_client* client) {
  return client != nullptr ? static_cast<uint32_t>(client->connection.chunks().size()) : 0;
}

int zc_chunk_at(const zc_client* client, uint32_t index, zc_chunk* out) {
  if (client == nullptr || out == nullptr || index >= zc_chunk_count(client)) return 0;
  const auto& c = client->connection.chunks()[index];
  *out = {c.col, c.row};
  return 1;
}

int zc_get_chunk_layer(const zc_client* client, zc_chunk_layer* out) {
  if (client == nullptr || out == nullptr) return 0;
  const zone::client::ChunkLayer& layer = client->connection.chunk_layer();
  if (layer.chunk_size <= 0.0F) return 0;
  *out = {layer.chunk_size, layer.load_radius, layer.unload_radius};
  return 1;
}

int zc_poll_event(zc_client* client, zc_event* out) {
  if (client == nullptr || out == nullptr) return 0;
  const zone::client::ClientEvent* e = client->connection.events().pop();
  if (e == nullptr) return 0;
  std::memset(out, 0, sizeof(*out));
  out->type = static_cast<zc_event_type>(e->type);
  out->tick = e->tick;
  out->sequence = e->sequence;
  out->kind = e->kind;
  out->entity = e->entity;
  out->target = e->target;
  for (std::size_t i = 0; i < 4; ++i) out->args[i] = e->args[i];
  out->arg_count = e->arg_count;
  out->status = e->status;
  out->channel = e->channel;
  out->reason = e->reason;
  out->group = e->group;
  out->members = e->members.empty() ? nullptr : e->members.data();
  out->count = e->count;
  out->dx = e->dx;
  out->dy = e->dy;
  out->text = e->text.c_str();
  out->name = e->name.c_str();
  return 1;
}

void zc_get_stats(const zc_client* client, zc_stats* out) {
  if (out == nullptr) return;
  std::memset(out, 0, sizeof(*out));
  if (client == nullptr) return;
  const zone::client::ConnectionStats& s = client->connection.stats();
  out->packets_in = s.packets_in;
  out->packets_out = s.packets_out;
  out->bytes_in = s.bytes_in;
  out->bytes_out = s.bytes_out;
  out->frames = s.frames;
  out->malformed = s.malformed;
  out->corrections = s.corrections;
  out->largest_correction = s.largest_correction;
  out->round_trip_ms = client->connection.round_trip_ms();
  out->input_lead = client->connection.predictor().lead();
}

}  // extern "C"
