#include "zone/zone_server.hpp"

#include <cmath>
#include <thread>

#include <httplib.h>

#include "admin/map_page.hpp"
#include "protocol/codec.hpp"
#include "zone/reload_policy.hpp"
#include "zone/zone_params.hpp"

namespace zone {

using protocol::DisconnectReason;

namespace {

// Admin JSON is sent uncompressed: see the /api/map handler.
constexpr const char* kJsonUncompressed = "application/json; charset=utf-8";
constexpr std::uint8_t kReliableChannel = 0;
constexpr std::uint8_t kSnapshotChannel = 1;
// Bound on events taken from the transport in one tick, so a flood cannot stall it;
// the rest wait for the next tick.
constexpr std::size_t kMaxEventsPerTick = 20000;
// A movement intent is a direction of length <= 1; components far beyond that mean a
// broken or hostile client, not a fast one.
constexpr float kMaxIntentComponent = 16.0f;

bool printable_name(std::string_view name) {
  for (const unsigned char ch : name) {
    if (ch < 0x20 || ch == 0x7F) return false;
  }
  return true;
}

}  // namespace

namespace {

// Label values for zone_disconnects_total: stable, lower case, no spaces.
const char* metric_label(DisconnectReason r) {
  switch (r) {
    case DisconnectReason::None:
      return "none";
    case DisconnectReason::ServerShutdown:
      return "server_shutdown";
    case DisconnectReason::ProtocolMismatch:
      return "protocol_mismatch";
    case DisconnectReason::ServerFull:
      return "server_full";
    case DisconnectReason::MalformedPackets:
      return "malformed_packets";
    case DisconnectReason::InputFlood:
      return "input_flood";
    case DisconnectReason::BadHello:
      return "bad_hello";
    case DisconnectReason::Timeout:
      return "timeout";
    case DisconnectReason::ClientQuit:
      return "client_quit";
  }
  return "unknown";
}

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

ZoneServer::ZoneServer(const config::ZoneConfig& config, Logger& log)
    : config_(config),
      log_(log),
      period_(std::chrono::nanoseconds(1'000'000'000LL / config.tick.rate_hz)),
      dt_(1.0 / config.tick.rate_hz),
      host_(std::make_unique<net::EnetHost>(make_host_options(config))),
      world_(make_world_params(config)),
      replicator_(make_replication_params(config), world_),
      map_(std::max(1u, config.tick.rate_hz / 5)),
      last_status_(std::chrono::steady_clock::now()) {
  sessions_.resize(make_host_options(config).max_peers);
  world_.spawn_npcs();
  if (config.debug.truth)
    truth_ = std::make_unique<TruthRecorder>(config.debug.truth_history_ticks);
  // Publish metrics about 5 times a second: fresh enough for any scrape interval.
  metrics_publish_ticks_ = std::max(1u, config.tick.rate_hz / 5);
  metrics_.start_time_seconds =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  for (std::size_t i = 0; i < kDropReasons; ++i) {
    metrics_.drops.push_back({to_string(static_cast<DropReason>(i)), 0});
  }
  for (std::size_t i = 0; i < kDisconnectReasons; ++i) {
    metrics_.disconnects.push_back({metric_label(static_cast<DisconnectReason>(i)), 0});
  }
  last_rate_sample_ = std::chrono::steady_clock::now();
  metrics_board_.publish(metrics_);
  if (config.admin.enabled) start_admin();
}

void ZoneServer::start_admin() {
  admin_ = std::make_unique<admin::AdminServer>(config_.admin.bind_address, config_.admin.port);
  admin_->get("/healthz", [this](const httplib::Request&, httplib::Response& res) {
    // Healthy while the loop completes ticks: a stall of a second or ten periods fails it.
    const auto now = std::chrono::steady_clock::now().time_since_epoch();
    const auto age = std::chrono::nanoseconds(
        std::chrono::duration_cast<std::chrono::nanoseconds>(now).count() - last_tick_ns_.load());
    const auto limit = std::max<std::chrono::nanoseconds>(std::chrono::seconds(1), period_ * 10);
    const bool ok = last_tick_ns_.load() != 0 && age <= limit;
    res.status = ok ? 200 : 503;
    res.set_content(ok ? "ok\n" : "tick loop stalled\n", "text/plain");
  });
  admin_->get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(render_prometheus(metrics_board_.latest(), config_.name),
                    "text/plain; version=0.0.4; charset=utf-8");
  });
  admin_->get("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(std::string(admin::kMapPage), "text/html; charset=utf-8");
  });
  admin_->get("/api/map", [this](const httplib::Request& req, httplib::Response& res) {
    MapWindow w;
    auto number = [&](const char* key, double& out) {
      if (!req.has_param(key)) return true;
      try {
        out = std::stod(req.get_param_value(key));
        return std::isfinite(out);
      } catch (const std::exception&) {
        return false;
      }
    };
    double max = static_cast<double>(w.max_entities);
    if (!number("x0", w.x0) || !number("y0", w.y0) || !number("x1", w.x1) || !number("y1", w.y1) ||
        !number("max", max) || max < 0) {
      res.status = 400;
      res.set_content("x0, y0, x1, y1 and max must be finite numbers (max >= 0)\n", "text/plain");
      return;
    }
    w.max_entities = static_cast<std::size_t>(std::min(max, 1e6));
    if (req.has_param("select")) {
      try {
        map_.select(static_cast<std::uint32_t>(std::stoul(req.get_param_value("select"))));
      } catch (const std::exception&) {
        res.status = 400;
        res.set_content("select must be an entity id\n", "text/plain");
        return;
      }
    }
    // Not exactly "application/json": cpp-httplib compresses that type with brotli at
    // its top quality, ~0.8 s for a 450 KB whole-world answer; plain it takes ~10 ms.
    res.set_content(map_.frame_json(w), kJsonUncompressed);
  });
  admin_->post("/admin/reload", [this](const httplib::Request&, httplib::Response& res) {
    if (!config_source_) {
      res.status = 501;
      res.set_content("this server has no config file to reload\n", "text/plain");
      return;
    }
    config::LoadResult loaded = config_source_();
    const bool ok = loaded.ok();
    auto done = request_reload(std::move(loaded));
    if (done.wait_for(std::chrono::seconds(5)) != std::future_status::ready) {
      res.status = 504;
      res.set_content("reload scheduled, but the tick loop did not apply it within 5 s\n",
                      "text/plain");
      return;
    }
    res.status = ok ? 200 : 400;
    res.set_content(done.get() + "\n", "text/plain");
  });
  admin_->get("/readyz", [this](const httplib::Request&, httplib::Response& res) {
    const bool ok = accepting_.load() && last_tick_ns_.load() != 0;
    res.status = ok ? 200 : 503;
    res.set_content(ok ? "ready\n" : "not accepting players\n", "text/plain");
  });
  if (truth_) {
    admin_->get("/debug/truth", [this](const httplib::Request& req, httplib::Response& res) {
      std::uint32_t tick = truth_->newest_tick();
      if (req.has_param("tick")) {
        try {
          tick = static_cast<std::uint32_t>(std::stoul(req.get_param_value("tick")));
        } catch (const std::exception&) {
          res.status = 400;
          res.set_content("tick must be a non-negative integer\n", "text/plain");
          return;
        }
      }
      if (auto json = truth_->json_for(tick)) {
        res.set_content(*json, kJsonUncompressed);
      } else {
        res.status = 404;
        res.set_content(
            fmt::format("tick {} is not recorded (newest {})\n", tick, truth_->newest_tick()),
            "text/plain");
      }
    });
  }
  admin_->start();
}

ZoneServer::~ZoneServer() = default;

Session* ZoneServer::session_of(net::PeerId peer) {
  if (peer.index >= sessions_.size()) return nullptr;
  Session& s = sessions_[peer.index];
  return (s.phase != Session::Phase::kFree && s.peer == peer) ? &s : nullptr;
}

void ZoneServer::wait_until(std::chrono::steady_clock::time_point deadline) {
  // Receive while waiting, so packets are queued by the time the next tick drains them.
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  if (left.count() > 1) host_->service(static_cast<std::uint32_t>(left.count() - 1));
  std::this_thread::sleep_until(deadline);
}

void ZoneServer::tick() {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  ++tick_;
  if (reload_pending_.load()) apply_pending_reload();
  drain_network();
  apply_inputs();
  world_.step(dt_);
  const auto aoi_start = clock::now();
  const auto events = world_.update_aoi();
  const auto aoi_end = clock::now();
  replicator_.apply_events(events);
  replicator_.replicate(tick_, [&](replication::ClientId c, std::span<const std::uint8_t> bytes) {
    host_->send(peer_of_client_[c], bytes, net::Delivery::kUnreliable, kSnapshotChannel);
  });
  host_->flush();
  const auto replication_end = clock::now();
  if (truth_) truth_->record(tick_, world_, replicator_);
  const auto took = std::chrono::duration_cast<std::chrono::nanoseconds>(clock::now() - start);
  ++counters_.ticks;
  if (took > period_) ++counters_.overruns;
  tick_stats_.add(took);
  update_metrics(took, aoi_end - aoi_start, replication_end - aoi_end);
  if (admin_) publish_map(took);
  last_tick_ns_ = std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now().time_since_epoch())
                      .count();
  log_status();
}

void ZoneServer::drain_network() {
  host_->service(0);
  net::NetEvent ev;
  for (std::size_t n = 0; n < kMaxEventsPerTick && host_->next_event(ev); ++n) {
    switch (ev.type) {
      case net::NetEvent::Type::kConnect:
        on_connect(ev.peer);
        break;
      case net::NetEvent::Type::kDisconnect:
        on_disconnect(ev.peer, ev.data);
        break;
      case net::NetEvent::Type::kReceive:
        on_receive(ev.peer, ev.bytes);
        break;
    }
  }
  if (tick_ % config_.tick.rate_hz == 0) expire_silent_connections();
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
  if (name.empty() || name.size() > config_.players.max_name_length || !printable_name(name)) {
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

void ZoneServer::apply_inputs() {
  for (const Session& s : sessions_) {
    if (s.phase == Session::Phase::kPlaying)
      world_.set_intent(s.player_slot, s.intent_x, s.intent_y);
  }
}

std::future<std::string> ZoneServer::request_reload(config::LoadResult result) {
  std::lock_guard lock(reload_mutex_);
  pending_reloads_.push_back({std::move(result), {}});
  auto future = pending_reloads_.back().done.get_future();
  reload_pending_ = true;
  return future;
}

void ZoneServer::apply_pending_reload() {
  std::vector<PendingReload> batch;
  {
    std::lock_guard lock(reload_mutex_);
    batch.swap(pending_reloads_);
    reload_pending_ = false;
  }
  std::vector<std::string> reports;
  for (PendingReload& r : batch) reports.push_back(apply_config(r.result));
  // Publish before answering, so whoever asked sees the outcome in /metrics at once.
  metrics_board_.publish(metrics_);
  for (std::size_t i = 0; i < batch.size(); ++i) batch[i].done.set_value(std::move(reports[i]));
}

// Applies the keys that can change while running; reports the rest as needing a restart.
// An invalid config changes nothing.
std::string ZoneServer::apply_config(const config::LoadResult& result) {
  if (!result.ok()) {
    ++metrics_.reloads_failed;
    metrics_.last_reload_ok = false;
    log_.error("config reload from {} failed; nothing changed:\n{}", result.source,
               result.error_report());
    return "reload failed, nothing changed:\n" + result.error_report();
  }
  const config::ZoneConfig& next = result.config;
  std::vector<std::string> applied, restart;
  config::ZoneConfig merged = config_;
  for (const config::KeyChange& c : config::diff(config_, next)) {
    const std::string line = fmt::format("{} {} -> {}", c.key, c.before, c.after);
    if (needs_restart(c.key)) {
      restart.push_back(line);
    } else {
      applied.push_back(line);
      config::set_value(merged, c.key, c.after);
    }
  }
  // Push the live values down to the layers that hold copies.
  world_.set_broadcast(!merged.aoi.enabled);
  bool ok = world_.set_player_view_radius(merged.aoi.view_radius);
  ok &= world_.set_hysteresis(merged.aoi.hysteresis);
  ok &= world_.set_cell_size(merged.aoi.cell_size);
  world_.set_npc_params(make_npc_params(merged.npcs));
  world_.set_player_max_speed(merged.players.max_speed);
  replicator_.set_params(make_replication_params(merged));
  log_.set_level(merged.log.level);
  config_ = merged;
  ++metrics_.reloads_ok;
  metrics_.last_reload_ok = ok;
  std::string report = fmt::format("config reloaded from {}: {} applied{}{}", result.source,
                                   applied.size(), applied.empty() ? "" : " (", "");
  for (std::size_t i = 0; i < applied.size(); ++i) report += (i ? ", " : "") + applied[i];
  if (!applied.empty()) report += ")";
  if (!restart.empty()) {
    report += fmt::format("; {} need a restart and were not applied (", restart.size());
    for (std::size_t i = 0; i < restart.size(); ++i) report += (i ? ", " : "") + restart[i];
    report += ")";
  }
  if (restart.empty()) {
    log_.info("{}", report);
  } else {
    log_.warn("{}", report);
  }
  return report;
}

void ZoneServer::publish_map(std::chrono::nanoseconds tick) {
  // Smoothed tick time for the map's side panel.
  const double ms = std::chrono::duration<double, std::milli>(tick).count();
  map_stats_.tick_ms = map_stats_.tick_ms == 0.0 ? ms : 0.9 * map_stats_.tick_ms + 0.1 * ms;
  if (!map_.due(counters_.ticks)) return;
  const auto now = std::chrono::steady_clock::now();
  const double secs = std::chrono::duration<double>(now - last_map_publish_).count();
  const std::uint64_t out = host_->stats().wire_bytes_out;
  const replication::ReplicationStats& r = replicator_.stats();
  if (secs > 0.0 && last_map_publish_.time_since_epoch().count() != 0) {
    map_stats_.bytes_out_per_s = static_cast<double>(out - map_bytes_out_) / secs;
    map_stats_.enters_per_s = static_cast<double>(r.enter_events - map_enters_) / secs;
    map_stats_.leaves_per_s = static_cast<double>(r.leave_events - map_leaves_) / secs;
  }
  map_bytes_out_ = out;
  map_enters_ = r.enter_events;
  map_leaves_ = r.leave_events;
  last_map_publish_ = now;
  map_stats_.players = world_.player_count();
  map_stats_.npcs = world_.npc_count();
  map_.publish(tick_, world_, map_stats_);
}

void ZoneServer::update_metrics(std::chrono::nanoseconds tick, std::chrono::nanoseconds aoi,
                                std::chrono::nanoseconds replication) {
  ZoneMetrics& m = metrics_;
  m.tick_seconds.observe(std::chrono::duration<double>(tick).count());
  m.aoi_seconds.observe(std::chrono::duration<double>(aoi).count());
  m.replication_seconds.observe(std::chrono::duration<double>(replication).count());
  m.ticks = counters_.ticks;
  m.overruns = counters_.overruns;
  m.players = world_.player_count();
  m.npcs = world_.npc_count();
  m.entities = m.players + m.npcs;
  const replication::ReplicationStats& r = replicator_.stats();
  m.enter_events = r.enter_events;
  m.leave_events = r.leave_events;
  m.spawns_sent = r.spawns;
  m.updates_sent = r.updates;
  m.despawns_sent = r.despawns;
  m.deferred = r.deferred;
  const net::TrafficStats& t = host_->stats();
  m.bytes_out = t.wire_bytes_out;
  m.bytes_in = t.wire_bytes_in;
  m.packets_out = t.packets_out;
  m.packets_in = t.packets_in;
  m.joins = counters_.joins;
  m.leaves = counters_.leaves;
  for (std::size_t i = 0; i < kDropReasons; ++i) m.drops[i].value = counters_.drops[i];
  for (std::size_t i = 0; i < kDisconnectReasons; ++i) {
    m.disconnects[i].value = counters_.disconnects[i];
  }

  // Once a second: grid statistics (a pass over every cell) and per-client send rates.
  const auto now = std::chrono::steady_clock::now();
  const double since = std::chrono::duration<double>(now - last_rate_sample_).count();
  if (since >= 1.0) {
    const aoi::GridStats g = world_.aoi().stats();
    m.occupied_cells = g.occupied_cells;
    m.max_cell_entities = g.max_cell_population;
    m.visible_pairs = g.visible_pairs;
    client_bytes_at_sample_.resize(replicator_.client_slots(), 0);
    for (replication::ClientId c = 0; c < replicator_.client_slots(); ++c) {
      const replication::ClientView& v = replicator_.client(c);
      if (!v.active) continue;
      // A slot reused by a new client starts again from its own count.
      const std::uint64_t before = std::min(client_bytes_at_sample_[c], v.bytes_sent);
      m.client_send_rate.observe(static_cast<double>(v.bytes_sent - before) / since);
      client_bytes_at_sample_[c] = v.bytes_sent;
    }
    last_rate_sample_ = now;
  }
  if (counters_.ticks % metrics_publish_ticks_ == 0) metrics_board_.publish(m);
}

void ZoneServer::log_status() {
  const auto now = std::chrono::steady_clock::now();
  const auto elapsed = now - last_status_;
  if (elapsed < std::chrono::seconds(config_.log.status_interval_s)) return;
  const double secs = std::chrono::duration<double>(elapsed).count();
  const std::uint64_t out = host_->stats().wire_bytes_out;
  log_.info(
      "status: tick {} players {} npcs {} tick p50 {:.2f} ms p99 {:.2f} ms max {:.2f} ms "
      "overruns {} out {:.1f} kB/s",
      tick_, world_.player_count(), world_.npc_count(), tick_stats_.percentile_ms(0.5),
      tick_stats_.percentile_ms(0.99), tick_stats_.max_ms(), counters_.overruns,
      static_cast<double>(out - status_bytes_out_) / secs / 1000.0);
  tick_stats_.reset();
  status_bytes_out_ = out;
  last_status_ = now;
}

void ZoneServer::shutdown(std::chrono::milliseconds grace) {
  accepting_ = false;
  std::size_t told = 0;
  for (Session& s : sessions_) {
    if (s.phase == Session::Phase::kFree) continue;
    kick(s, DisconnectReason::ServerShutdown);
    ++told;
  }
  log_.info("shutting down: told {} clients", told);
  // Keep the network running until every goodbye is confirmed (ENet resends a lost
  // one) or the grace time is up. ENet stops counting a peer as connected as soon as
  // its disconnect is queued, so count the confirmations instead.
  const auto deadline = std::chrono::steady_clock::now() + grace;
  std::size_t pending = told;
  net::NetEvent ev;
  while (pending > 0 && std::chrono::steady_clock::now() < deadline) {
    host_->service(10);
    while (host_->next_event(ev)) {
      if (ev.type == net::NetEvent::Type::kDisconnect && pending > 0) --pending;
    }
  }
  host_->flush();
}

}  // namespace zone
