#include "client/connection.hpp"

#include "client/chunk_set.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "protocol/byte_io.hpp"
#include "protocol/codec.hpp"
#include "protocol/quantize.hpp"

namespace zone::client {

namespace {

net::HostOptions client_host_options(std::uint32_t timeout_ms) {
  net::HostOptions o;
  o.timeout_ms = timeout_ms;
  // Two peers: during a transfer the old zone's goodbye may still be on its way while the
  // new zone is being connected.
  o.max_peers = 2;
  o.channels = protocol::kChannelCount;
  o.socket_buffer_bytes = 256 * 1024;
  return o;
}

}  // namespace

Connection::Connection(ConnectionOptions options)
    : options_(std::move(options)), session_(options_.player_name) {
  session_.set_ticket(options_.ticket);
  host_ = std::make_unique<net::EnetHost>(client_host_options(options_.timeout_ms));
}

Connection::~Connection() {
  if (state_ == State::kPlaying || state_ == State::kConnecting) disconnect();
  if (host_) host_->flush();
}

bool Connection::connect(const std::string& host, std::uint16_t port) {
  try {
    peer_ = host_->connect(host, port);
  } catch (const net::NetError&) {
    return false;
  }
  if (!peer_.valid()) return false;
  state_ = State::kConnecting;
  session_.start(host, port);
  return true;
}

void Connection::disconnect() {
  if (!peer_.valid()) return;
  // At once: a goodbye behind queued packets can be held back for seconds on a lossy link
  // (docs/protocol.md, Session step 10).
  host_->disconnect_at_once(peer_,
                            static_cast<std::uint32_t>(protocol::DisconnectReason::ClientQuit));
  host_->flush();
  peer_ = {};
  state_ = State::kClosed;
  session_.quit();
  session_.forget_resume_token();  // a quit is no lost connection
}

ConnectionStats Connection::stats() const {
  const SessionCounters& c = session_.counters();
  ConnectionStats s;
  s.packets_in = c.packets_in;
  s.packets_out = c.packets_out;
  s.bytes_in = c.bytes_in;
  s.bytes_out = c.bytes_out;
  s.frames = c.frames;
  s.malformed = c.malformed;
  s.corrections = corrections_;
  s.largest_correction = largest_correction_;
  return s;
}

std::uint32_t Connection::round_trip_ms() const {
  return peer_.valid() ? host_->round_trip_ms(peer_) : 0;
}

void Connection::update(double now) {
  const double dt = std::max(0.0, now - now_);
  now_ = now;
  host_->service(0);
  net::NetEvent ev;
  while (host_->next_event(ev)) {
    // A transfer's old connection may still deliver: only the current peer counts.
    if (ev.peer != peer_) continue;
    switch (ev.type) {
      case net::NetEvent::Type::kConnect:
        send_reliable(session_.hello());
        break;
      case net::NetEvent::Type::kDisconnect:
        on_disconnect(ev.data);
        break;
      case net::NetEvent::Type::kReceive:
        session_.receive(ev.channel, ev.bytes, *this);
        break;
    }
  }
  clock_.update(now);
  if (state_ == State::kPlaying && frame_seen_ && clock_.synced()) {
    // One input per server tick, on the server's clock rather than the local one (no
    // drift between the two), sent so that it arrives half-way between two of the
    // server's ticks: the clock's tick is the server's less the one-way delay, so an input
    // sent now arrives at that tick plus the round trip. Half a tick of margin either way
    // keeps jitter from moving an input to a neighbouring tick, which the prediction
    // would have to correct. After a stall one input goes, not a burst the server's rate
    // limit would count as a flood.
    const double rtt_ticks = round_trip_ms() / 1000.0 * welcome().tick_rate;
    const double slot = std::floor(clock_.server_tick(now) + rtt_ticks - 0.5);
    if (slot > input_slot_) {
      input_slot_ = slot;
      send_input();
    } else if (slot < input_slot_ - 1.0) {
      // The round trip estimate fell (ENet starts it at 500 ms and lowers it as
      // acknowledgements come): go on from the new slot rather than wait for the old one.
      input_slot_ = slot;
    }
  }
  predictor_.advance_display(dt);
  if (clock_.synced()) {
    render_tick_ = clock_.server_tick(now) - options_.interpolation_delay * welcome().tick_rate;
  }
  host_->flush();
}

void Connection::send_reliable(std::span<const std::uint8_t> bytes) {
  host_->send(peer_, bytes, net::Delivery::kReliable, protocol::kReliableChannel);
  session_.count_sent(bytes.size());
}

void Connection::send_input() {
  const std::span<const std::uint8_t> bytes = session_.input(move_x_, move_y_);
  if (host_->send(peer_, bytes, net::Delivery::kUnreliable, protocol::kUnreliableChannel)) {
    session_.count_sent(bytes.size());
  }
  // The server reads the intent as float: predict with exactly what was sent.
  predictor_.apply_input(session_.input_sequence(), move_x_, move_y_);
}

void Connection::on_disconnect(std::uint32_t reason) {
  peer_ = {};
  switch (session_.on_disconnect(reason)) {
    case Session::Ending::kTransfer:
      return start_transfer();
    case Session::Ending::kLost:
      // The player waits in the world for players.resume_grace_ms: come back to it.
      if (start_resume()) return;
      break;
    case Session::Ending::kClosed:
      break;
  }
  closed();
}

void Connection::closed() {
  state_ = State::kClosed;
  ClientEvent& e = events_.push();
  e.type = EventType::kDisconnected;
  e.reason = session_.disconnect_reason();
}

void Connection::start_transfer() {
  clear_session();
  session_.begin_transfer();
  state_ = State::kTransferring;
  try {
    peer_ = host_->connect(session_.server_host(), session_.server_port());
  } catch (const net::NetError&) {
    peer_ = {};
  }
  if (!peer_.valid()) closed();
}

bool Connection::start_resume() {
  if (session_.resume_token().empty() || resume_attempts_left_ == 0) return false;
  --resume_attempts_left_;
  clear_session();
  session_.begin_resume();
  state_ = State::kResuming;
  try {
    // A new socket, as after a network switch: the zone may still resend the old
    // session's packets (its goodbye among them) to the old address, and on the old
    // socket a new connection in the same peer slot could take them for its own.
    host_ = std::make_unique<net::EnetHost>(client_host_options(options_.timeout_ms));
    peer_ = host_->connect(session_.server_host(), session_.server_port());
  } catch (const net::NetError&) {
    peer_ = {};
  }
  if (!peer_.valid()) return false;
  ClientEvent& e = events_.push();
  e.type = EventType::kResuming;
  e.entity = welcome().entity_id;
  e.count = resume_attempts_left_;
  return true;
}

void Connection::clear_session() {
  // What one zone said is void in the next (docs/protocol.md, "What carries over").
  welcomed_ = false;
  frame_seen_ = false;
  others_.clear();
  statics_.clear();
  chunks_.clear();
  chunk_layer_ = ChunkLayer{};
}

void Connection::on_snapshot_part(bool completed, std::uint32_t /*previous_ack*/) {
  if (completed) on_frame();
  // The session counted the malformed ones; nothing else of them is kept.
  session_.replica().clear_violations();
}

void Connection::on_frame() {
  const replica::Frame& f = session_.replica().current();
  const WelcomeInfo& welcome = session_.welcome();
  clock_.on_frame(f.tick, now_);
  const protocol::Values self = f.self;
  const double x = protocol::position_metres(self, protocol::kX);
  const double y = protocol::position_metres(self, protocol::kY);
  const auto teleports =
      static_cast<std::uint8_t>(protocol::teleports_of(self[protocol::kMoveState]));
  if (!frame_seen_) {
    frame_seen_ = true;
    PredictorConfig pc;
    pc.max_speed = options_.player_speed > 0.0 ? options_.player_speed : welcome.max_speed;
    pc.tick_rate = welcome.tick_rate;
    pc.min_x = welcome.world_min_x;
    pc.min_y = welcome.world_min_y;
    pc.max_x = welcome.world_max_x;
    pc.max_y = welcome.world_max_y;
    pc.correction_seconds = options_.correction_time;
    predictor_.reset(pc, f.tick, x, y, session_.input_sequence() + 1);
    input_slot_ = -1.0;  // the next slot takes the first input
  }
  const double unit = protocol::position_unit_cm(self) * protocol::kPositionStep;
  const Correction c =
      predictor_.reconcile(f.tick, session_.frame_input_sequence(), x, y, unit, teleports);
  if (c.corrected) {
    ++corrections_;
    largest_correction_ = std::max(largest_correction_, std::hypot(c.dx, c.dy));
    ClientEvent& e = events_.push();
    e.type = EventType::kCorrection;
    e.tick = f.tick;
    e.dx = c.dx;
    e.dy = c.dy;
    e.status = c.snapped ? 1 : 0;
  }
  // Everyone else into their interpolation buffers.
  for (const replica::EntityView v : f.entities) {
    EntitySample s;
    s.tick = f.tick;
    s.x = protocol::position_metres(v.values, protocol::kX);
    s.y = protocol::position_metres(v.values, protocol::kY);
    s.heading = protocol::heading_radians(v.values);
    s.teleports = static_cast<std::uint8_t>(protocol::teleports_of(v.values[protocol::kMoveState]));
    InterpolationBuffer& b = others_[v.id];
    b.push(s);
    b.drop_before(render_tick_);
  }
  // Buffers of entities the frame no longer holds go once nothing can draw them.
  gone_.clear();
  for (const auto& [id, buffer] : others_) {
    if (f.entities.index_of(id) == f.entities.size() && !buffer.empty() &&
        static_cast<double>(buffer.newest().tick) < render_tick_ - 1.0) {
      gone_.push_back(id);
    }
  }
  for (const std::uint32_t id : gone_) others_.erase(id);
}

bool Connection::interpolated(std::uint32_t id, EntitySample& out) const {
  const auto it = others_.find(id);
  return it != others_.end() && it->second.sample(render_tick_, out);
}

void Connection::on_transfer(const TransferInfo& transfer) {
  ClientEvent& e = events_.push();
  e.type = EventType::kTransfer;
  e.entity = transfer.entity_id;
  e.text = transfer.zone;
  // Nothing the old zone sends after this counts; the goodbye (reason 9) follows.
  state_ = State::kTransferring;
}

void Connection::on_zone_params(const protocol::ZoneParams& p) {
  ClientEvent& e = events_.push();
  e.type = EventType::kZoneParams;
  e.tick = p.server_tick();
}

void Connection::on_party(const protocol::PartyStatus& s) {
  ClientEvent& e = events_.push();
  e.type = EventType::kParty;
  e.group = s.party();
  e.status = static_cast<std::uint32_t>(s.result());
  if (s.members() != nullptr) e.members.assign(s.members()->begin(), s.members()->end());
  e.count = static_cast<std::uint32_t>(e.members.size());
}

void Connection::on_guild(const protocol::GuildStatus& g) {
  ClientEvent& e = events_.push();
  e.type = EventType::kGuild;
  e.group = g.guild();
  e.status = static_cast<std::uint32_t>(g.result());
  if (g.members() != nullptr) e.members.assign(g.members()->begin(), g.members()->end());
  e.count = static_cast<std::uint32_t>(e.members.size());
}

void Connection::on_action_result(const protocol::ActionResult& r) {
  ClientEvent& e = events_.push();
  e.type = EventType::kActionResult;
  e.sequence = r.sequence();
  e.status = static_cast<std::uint32_t>(r.status());
  e.tick = r.server_tick();
}

void Connection::on_chat_result(const protocol::ChatResult& r) {
  ClientEvent& e = events_.push();
  e.type = EventType::kChatResult;
  e.status = static_cast<std::uint32_t>(r.status());
  e.channel = r.channel();
}

void Connection::on_unreadable_welcome() {
  // Nothing of this session can be read (the session counted it as malformed).
  disconnect();
  closed();
}

void Connection::on_welcome(const protocol::Welcome& w, const WelcomeNote& /*note*/) {
  resume_attempts_left_ = options_.resume_attempts;
  clock_.reset(w.tick_rate());
  clear_session();
  welcomed_ = true;
  state_ = State::kPlaying;
  ClientEvent& e = events_.push();
  e.type = EventType::kWelcome;
  e.tick = w.server_tick();
  e.entity = w.entity_id();
  e.text = session_.welcome().zone;
}

void Connection::on_chunks(const protocol::ChunkUpdate& u) {
  // A load of a chunk held or an unload of one not held cannot happen on the reliable
  // channel; the set stays right either way.
  const ChunkChange change = apply_chunk_update(chunks_, u, [](bool, util::ChunkCoord) {});
  chunk_layer_ = {u.chunk_size(), u.load_radius(), u.unload_radius()};
  ClientEvent& e = events_.push();
  e.type = EventType::kChunks;
  e.tick = u.server_tick();
  e.count = change.loads;
  e.arg_count = change.unloads;
}

void Connection::on_statics(const protocol::StaticObjects& o) {
  std::uint32_t n = 0;
  if (o.objects() != nullptr) {
    for (const protocol::StaticObject* s : *o.objects()) {
      statics_.push_back(
          {s->id(), s->x(), s->y(), s->radius(), static_cast<std::uint8_t>(s->kind())});
      ++n;
    }
  }
  ClientEvent& e = events_.push();
  e.type = EventType::kStatics;
  e.tick = o.server_tick();
  e.count = n;
}

void Connection::on_events(const protocol::Events& events) {
  if (events.events() == nullptr) return;
  for (const protocol::Event* ev : *events.events()) {
    ClientEvent& e = events_.push();
    e.type = EventType::kGame;
    e.tick = events.server_tick();
    e.sequence = ev->sequence();
    e.kind = ev->kind();
    e.entity = ev->entity();
    e.target = ev->target();
    if (ev->args() != nullptr) {
      for (std::uint32_t i = 0; i < ev->args()->size() && i < e.args.size(); ++i) {
        e.args[i] = ev->args()->Get(i);
        e.arg_count = i + 1;
      }
    }
    if (ev->text() != nullptr) e.text = ev->text()->string_view();
    if (ev->name() != nullptr) e.name = ev->name()->string_view();
  }
}

std::uint32_t Connection::send_action(std::uint16_t action, std::uint32_t target,
                                      std::span<const std::int32_t> args) {
  if (state_ != State::kPlaying) return 0;
  send_reliable(session_.action(action, target, args));
  return session_.action_sequence();
}

bool Connection::send_chat(protocol::ChatChannel channel, std::string_view text,
                           std::string_view to) {
  if (state_ != State::kPlaying) return false;
  send_reliable(session_.chat(channel, text, to));
  return true;
}

bool Connection::join_party(std::uint64_t key) {
  if (state_ != State::kPlaying) return false;
  send_reliable(session_.join_party(key));
  return true;
}

bool Connection::join_guild(std::uint64_t key) {
  if (state_ != State::kPlaying) return false;
  send_reliable(session_.join_guild(key));
  return true;
}

}  // namespace zone::client
