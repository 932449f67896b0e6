#include "zone/zone_observability.hpp"

#include <algorithm>

namespace zone {

using protocol::DisconnectReason;

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
    case DisconnectReason::Transferred:
      return "transferred";
    case DisconnectReason::TicketRequired:
      return "ticket_required";
    case DisconnectReason::TicketInvalid:
      return "ticket_invalid";
    case DisconnectReason::TicketExpired:
      return "ticket_expired";
    case DisconnectReason::TicketWrongWorld:
      return "ticket_wrong_world";
    case DisconnectReason::LoggedInElsewhere:
      return "logged_in_elsewhere";
    case DisconnectReason::Kicked:
      return "kicked";
    case DisconnectReason::Banned:
      return "banned";
    case DisconnectReason::StoreUnavailable:
      return "store_unavailable";
    case DisconnectReason::ResumeRefused:
      return "resume_refused";
  }
  return "unknown";
}

// Label values for zone_party_requests_total and zone_guild_requests_total.
// "UnknownAction" -> "unknown_action": a protocol enum's name as a metric label.
std::string snake_case(std::string_view name) {
  std::string out;
  for (const char c : name) {
    if (c >= 'A' && c <= 'Z') {
      if (!out.empty()) out += '_';
      out += static_cast<char>(c - 'A' + 'a');
    } else {
      out += c;
    }
  }
  return out;
}

constexpr const char* kChatChannelLabels[] = {"say", "party", "guild", "whisper", "zone", "system"};
static_assert(std::size(kChatChannelLabels) == protocol::kChatChannelCount);

const char* group_label(protocol::GroupResult r) {
  switch (r) {
    case protocol::GroupResult::Joined:
      return "joined";
    case protocol::GroupResult::Left:
      return "left";
    case protocol::GroupResult::Full:
      return "full";
    case protocol::GroupResult::Disabled:
      return "disabled";
    case protocol::GroupResult::Changed:
      return "changed";
    case protocol::GroupResult::TooSoon:
      return "too_soon";
  }
  return "unknown";
}

// The live map's plain copy of the zone's place in a world of zones.
MapWorld map_world(const cluster::ExchangeParams& p) {
  MapWorld w{.name = p.self_name, .index = p.self_index, .neighbours = {}};
  for (const cluster::Neighbour& n : p.neighbours)
    w.neighbours.push_back({n.index, n.name, n.area});
  return w;
}

// The character store's counters (its writer's, read under its lock for a copy).
void record_persist(const ZoneView& zone, PersistMetrics& p) {
  p.loaded_logins = zone.sessions.logins_loaded;
  if (zone.store == nullptr) return;
  const persist::WriterStats s = zone.store->stats();
  p.enabled = true;
  p.healthy = s.healthy;
  p.full = zone.store->full();
  p.queue_depth = s.queue_depth;
  p.saves = s.saves_committed;
  p.saves_stale = s.saves_stale;
  p.save_failures = s.save_failures;
  p.flushes = s.flushes;
  p.loads = s.loads;
  p.load_failures = s.load_failures;
  p.load_seconds = static_cast<double>(s.load_nanoseconds) * 1e-9;
  p.checkpoints_put_off = zone.store->checkpoints_put_off();
}

}  // namespace

net::TrafficStats total_traffic(HostThreads hosts) {
  net::TrafficStats sum;
  for (const auto& h : hosts) {
    const net::TrafficStats t = h->stats();
    sum.packets_in += t.packets_in;
    sum.packets_out += t.packets_out;
    sum.payload_bytes_in += t.payload_bytes_in;
    sum.payload_bytes_out += t.payload_bytes_out;
    sum.wire_bytes_in += t.wire_bytes_in;
    sum.wire_bytes_out += t.wire_bytes_out;
    sum.send_refused += t.send_refused;
    sum.datagrams_in += t.datagrams_in;
    sum.connects_refused_address += t.connects_refused_address;
    sum.connects_refused_half_open += t.connects_refused_half_open;
    sum.connects_refused_cookie += t.connects_refused_cookie;
    sum.cookie_replies += t.cookie_replies;
    sum.half_open_expired += t.half_open_expired;
    sum.half_open += t.half_open;
  }
  return sum;
}

Observability::Observability(const config::ZoneConfig& config, Logger& log)
    : config_(config),
      log_(log),
      // About 5 times a second: fresh enough for any scrape interval and for the map.
      metrics_publish_ticks_(std::max(1u, config.tick.rate_hz / 5)),
      map_(metrics_publish_ticks_),
      last_status_(std::chrono::steady_clock::now()) {}

void Observability::start(HostThreads hosts, std::size_t replication_workers) {
  metrics_.start_time_seconds =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  for (std::size_t i = 0; i < kDropReasons; ++i) {
    metrics_.drops.push_back({to_string(static_cast<DropReason>(i)), 0});
  }
  for (std::size_t i = 0; i < kDisconnectReasons; ++i) {
    metrics_.disconnects.push_back({metric_label(static_cast<DisconnectReason>(i)), 0});
  }
  for (std::size_t i = 0; i < kTicketRefusals; ++i) {
    metrics_.tickets_refused.push_back({to_string(static_cast<TicketRefusal>(i)), 0});
  }
  metrics_.ticket_mode = config_.auth.mode == config::AuthMode::kTicket;
  // Changed is a notice, never an answer to a request.
  for (std::size_t i = 0; i < kGroupResults; ++i) {
    const auto result = static_cast<protocol::GroupResult>(i);
    if (result == protocol::GroupResult::Changed) continue;
    for (auto& requests : metrics_.group_requests) requests.push_back({group_label(result), 0});
    group_request_result_.push_back(i);
  }
  for (std::size_t i = 0; i < kActionStatuses; ++i) {
    metrics_.actions.push_back(
        {snake_case(protocol::EnumNameActionStatus(static_cast<protocol::ActionStatus>(i))), 0});
  }
  for (const char* channel : kChatChannelLabels) metrics_.chat_lines.push_back({channel, 0});
  for (std::size_t i = 1; i < kChatStatuses; ++i) {  // Sent is not a refusal
    metrics_.chat_refused.push_back(
        {snake_case(protocol::EnumNameChatStatus(static_cast<protocol::ChatStatus>(i))), 0});
  }
  metrics_.events_dropped = {{"tick_budget", 0}, {"client_budget", 0}};
  metrics_.network_hosts = hosts.size();
  metrics_.replication_workers = replication_workers;
  // What the kernel granted, which may be less than asked (net.core.rmem_max/wmem_max):
  // a receive buffer too small for a tick's inputs loses them at the socket.
  int receive = 0, send = 0, requested = 0;
  for (const auto& h : hosts) {
    const net::SocketBuffers b = h->socket_buffers();
    receive = receive == 0 ? b.receive : std::min(receive, b.receive);
    send = send == 0 ? b.send : std::min(send, b.send);
    requested = b.requested;
  }
  metrics_.socket_receive_buffer_bytes = static_cast<std::uint64_t>(std::max(0, receive));
  metrics_.socket_send_buffer_bytes = static_cast<std::uint64_t>(std::max(0, send));
  if (receive < requested || send < requested) {
    log_.warn(
        "socket buffers: asked for {} bytes, the kernel granted {} (receive) and {} (send); "
        "raise net.core.rmem_max and net.core.wmem_max for a busy zone",
        requested, receive, send);
  } else {
    log_.info("socket buffers: {} bytes receive, {} bytes send, on each of {} host(s)", receive,
              send, hosts.size());
  }
  last_rate_sample_ = std::chrono::steady_clock::now();
  metrics_board_.publish(metrics_);
}

void Observability::publish_map(const ZoneView& zone, std::chrono::nanoseconds tick) {
  // Smoothed tick time for the map's side panel.
  const double ms = std::chrono::duration<double, std::milli>(tick).count();
  map_stats_.tick_ms = map_stats_.tick_ms == 0.0 ? ms : 0.9 * map_stats_.tick_ms + 0.1 * ms;
  map_.note_events(zone.tick, zone.world);
  if (!map_.due(zone.ticks)) return;
  const auto now = std::chrono::steady_clock::now();
  const double secs = std::chrono::duration<double>(now - last_map_publish_).count();
  const std::uint64_t out = total_traffic(zone.hosts).wire_bytes_out;
  const replication::ReplicationStats& r = zone.replicator.stats();
  if (secs > 0.0 && last_map_publish_.time_since_epoch().count() != 0) {
    map_stats_.bytes_out_per_s = static_cast<double>(out - map_bytes_out_) / secs;
    map_stats_.enters_per_s = static_cast<double>(r.enter_events - map_enters_) / secs;
    map_stats_.leaves_per_s = static_cast<double>(r.leave_events - map_leaves_) / secs;
    map_stats_.crowded_per_s = static_cast<double>(r.crowded - map_crowded_) / secs;
  }
  // Shares of the entities in view per interest tier since the last publish.
  std::uint64_t in_view = 0;
  for (std::size_t t = 0; t < 3; ++t) in_view += r.tier_entities[t] - map_tiers_[t];
  for (std::size_t t = 0; t < 3; ++t) {
    map_stats_.tier_share[t] =
        in_view ? static_cast<double>(r.tier_entities[t] - map_tiers_[t]) / in_view : 0.0;
  }
  map_tiers_ = r.tier_entities;
  map_crowded_ = r.crowded;
  map_bytes_out_ = out;
  map_enters_ = r.enter_events;
  map_leaves_ = r.leave_events;
  last_map_publish_ = now;
  map_stats_.load_level = zone.load.level;
  map_stats_.load_share = zone.load.share;
  const config::ChunkConfig& chunks = config_.chunks;
  map_stats_.chunk_size = chunks.enabled ? chunks.size : 0.0;
  map_stats_.chunk_load_radius = chunks.load_radius;
  map_stats_.chunk_unload_radius = chunks.load_radius + chunks.hysteresis;
  map_stats_.players = zone.world.player_count();
  map_stats_.npcs = zone.world.npc_count();
  map_stats_.engaged_npcs = zone.world.engaged_npc_count();
  map_stats_.ambient = zone.world.ambient_count();
  if (zone.cluster && !map_world_set_) {
    map_.set_world(map_world(zone.cluster->params()));
    map_world_set_ = true;
  }
  map_.publish(zone.tick, zone.world, map_stats_,
               zone.cluster != nullptr ? &zone.cluster->ghosts() : nullptr);
}

void Observability::record_tick(const ZoneView& zone, const TickTimes& took,
                                std::uint64_t oldest_deferral_ticks) {
  tick_stats_.add(took.tick);
  ZoneMetrics& m = metrics_;
  m.tick_seconds.observe(std::chrono::duration<double>(took.tick).count());
  m.aoi_seconds.observe(std::chrono::duration<double>(took.aoi).count());
  m.replication_seconds.observe(std::chrono::duration<double>(took.replication).count());
  const SessionCounters& sc = zone.sessions;
  m.ticks = zone.ticks;
  m.overruns = zone.overruns;
  m.players = zone.world.player_count();
  m.npcs = zone.world.npc_count();
  m.entities = m.players + m.npcs;
  m.engaged_npcs = zone.world.engaged_npc_count();
  m.ambient_entities = zone.world.ambient_count();
  m.engagements = zone.world.engagements();
  if (zone.cluster != nullptr) {
    m.in_world = true;
    m.cluster = zone.cluster->stats();
  }
  const replication::ReplicationStats& r = zone.replicator.stats();
  m.enter_events = r.enter_events;
  m.leave_events = r.leave_events;
  m.spawns_sent = r.spawns;
  m.updates_sent = r.updates;
  m.despawns_sent = r.despawns;
  m.deferred = r.deferred;
  m.forced = r.forced;
  m.snapshots_sent = r.snapshots;
  m.snapshot_parts_sent = r.packets;
  m.snapshot_bytes_sent = r.bytes;
  m.tier_entities = r.tier_entities;
  m.tier_held = r.tier_held;
  m.crowded_snapshots = r.crowded;
  m.behind_cone = r.behind;
  m.group_entities = r.group_entities;
  m.chunk_updates = zone.layers.chunk_updates;
  m.chunk_loads = zone.layers.chunk_loads;
  m.chunk_unloads = zone.layers.chunk_unloads;
  m.static_objects = zone.world.statics().size();
  m.static_messages = zone.layers.static_messages;
  m.static_objects_sent = zone.layers.static_objects_sent;
  m.static_bytes_sent = zone.layers.static_bytes_sent;
  m.static_waits_budget = zone.layers.static_waits_budget;
  m.static_waits_unacked = zone.layers.static_waits_unacked;
  m.static_collisions = zone.world.collisions();
  for (std::size_t kind = 0; kind < kGroupKinds; ++kind) {
    const world::Groups& groups = zone.world.groups(static_cast<world::GroupKind>(kind));
    m.groups[kind] = groups.group_count();
    m.group_members[kind] = groups.member_count();
    for (std::size_t k = 0; k < m.group_requests[kind].size(); ++k) {
      m.group_requests[kind][k].value = sc.group_requests[kind][group_request_result_[k]];
    }
  }
  m.oldest_deferral_ticks = std::max(m.oldest_deferral_ticks, oldest_deferral_ticks);
  m.load_level = zone.load.level;
  m.load_level_max = std::max<std::uint64_t>(m.load_level_max, zone.load.level);
  m.load_level_changes = zone.load.changes;
  m.load_share = zone.load.share;
  m.view_radius = zone.world.effective_player_radius();
  std::uint64_t full_drains = 0;
  for (const auto& h : zone.hosts) full_drains += h->full_drains();
  m.full_drains = full_drains;
  m.send_wait_seconds = std::chrono::duration<double>(zone.send_wait).count();
  const net::TrafficStats t = total_traffic(zone.hosts);
  m.bytes_out = t.wire_bytes_out;
  m.connects_refused_address = t.connects_refused_address;
  m.connects_refused_handshakes = t.connects_refused_half_open;
  m.connects_refused_cookie = t.connects_refused_cookie;
  m.handshakes_expired = t.half_open_expired;
  m.handshakes = t.half_open;
  m.evicted_silent = sc.evicted_silent;
  for (std::size_t i = 0; i < m.actions.size(); ++i) m.actions[i].value = sc.actions[i];
  for (std::size_t i = 0; i < m.chat_lines.size(); ++i) m.chat_lines[i].value = sc.chat_lines[i];
  for (std::size_t i = 0; i < m.chat_refused.size(); ++i) {
    m.chat_refused[i].value = sc.chat_refused[i + 1];
  }
  const world::EventLog& events = zone.world.events();
  m.events_emitted = events.emitted();
  m.events_refused = events.refused();
  m.events_dropped[0].value = events.dropped();
  m.events_dropped[1].value = r.events_over_budget;
  m.event_deliveries = r.event_deliveries;
  m.event_messages = r.event_messages;
  m.event_bytes = r.event_bytes;
  if (zone.rules != nullptr) {
    m.rules = zone.rules->stats();
    m.rules_seconds = std::chrono::duration<double>(zone.rules->time()).count();
  }
  m.bytes_in = t.wire_bytes_in;
  m.packets_out = t.packets_out;
  m.packets_in = t.packets_in;
  m.joins = sc.joins;
  m.transfers_out = sc.transfers_out;
  m.arrivals = sc.arrivals;
  m.arrival_tokens_refused = sc.arrival_tokens_refused;
  m.arrivals_expired = sc.arrivals_expired;
  m.inputs = sc.inputs;
  m.leaves = sc.leaves;
  for (std::size_t i = 0; i < kDropReasons; ++i) m.drops[i].value = sc.drops[i];
  for (std::size_t i = 0; i < kDisconnectReasons; ++i) m.disconnects[i].value = sc.disconnects[i];
  for (std::size_t i = 0; i < kTicketRefusals; ++i)
    m.tickets_refused[i].value = sc.tickets_refused[i];
  m.tickets_accepted = sc.tickets_accepted;
  m.takeovers = sc.takeovers;
  m.logged_in_elsewhere = sc.logged_in_elsewhere;
  m.players_held = sc.players_held;
  m.holds = sc.holds;
  m.holds_expired = sc.holds_expired;
  m.resumes = sc.resumes;
  m.resumes_refused = sc.resumes_refused;
  record_persist(zone, m.persist);

  // Once a second: grid statistics (a pass over every cell) and per-client send rates.
  const auto now = std::chrono::steady_clock::now();
  const double since = std::chrono::duration<double>(now - last_rate_sample_).count();
  if (since >= 1.0) {
    const aoi::GridStats g = zone.world.aoi().stats();
    m.occupied_cells = g.occupied_cells;
    m.max_cell_entities = g.max_cell_population;
    m.visible_pairs = g.visible_pairs;
    m.mutual_observers = g.mutual_observers;
    m.crowd_members = g.crowd_members;
    const replication::Replicator& rep = zone.replicator;
    client_bytes_at_sample_.resize(rep.client_slots(), 0);
    for (replication::ClientId c = 0; c < rep.client_slots(); ++c) {
      const replication::ClientView& v = rep.client(c);
      if (!v.active) continue;
      // A slot reused by a new client starts again from its own count.
      const std::uint64_t before = std::min(client_bytes_at_sample_[c], v.bytes_sent);
      m.client_send_rate.observe(static_cast<double>(v.bytes_sent - before) / since);
      client_bytes_at_sample_[c] = v.bytes_sent;
    }
    last_rate_sample_ = now;
  }
  if (zone.ticks % metrics_publish_ticks_ == 0) {
    metrics_board_.publish(m);
    m.oldest_deferral_ticks = 0;  // a fresh maximum for the next period
  }
}

void Observability::count_reload_refused() {
  ++metrics_.reloads_failed;
  metrics_.last_reload_ok = false;
}

void Observability::count_reload_applied(bool every_value_taken) {
  ++metrics_.reloads_ok;
  metrics_.last_reload_ok = every_value_taken;
}

void Observability::log_status(const ZoneView& zone) {
  const auto now = std::chrono::steady_clock::now();
  const auto elapsed = now - last_status_;
  if (elapsed < std::chrono::seconds(config_.log.status_interval_s)) return;
  const double secs = std::chrono::duration<double>(elapsed).count();
  const net::TrafficStats t = total_traffic(zone.hosts);
  const std::uint64_t out = t.wire_bytes_out;
  // Refused connection attempts: one line per status interval at most, however many.
  const std::uint64_t refused = t.connects_refused_address + t.connects_refused_half_open +
                                t.connects_refused_cookie + zone.sessions.evicted_silent;
  const std::uint64_t expired = t.half_open_expired;
  if (refused != status_refused_ || expired != status_expired_) {
    log_.warn(
        "admission: refused {} connection attempts and dropped {} unfinished handshakes in "
        "{:.0f} s (totals: {} without a valid cookie, {} for one address's share, {} for too "
        "many handshakes, {} silent connections closed for newcomers; {} expired)",
        refused - status_refused_, expired - status_expired_, secs, t.connects_refused_cookie,
        t.connects_refused_address, t.connects_refused_half_open, zone.sessions.evicted_silent,
        expired);
    status_refused_ = refused;
    status_expired_ = expired;
  }
  log_.info(
      "status: tick {} players {} npcs {} tick p50 {:.2f} ms p99 {:.2f} ms max {:.2f} ms "
      "overruns {} out {:.1f} kB/s",
      zone.tick, zone.world.player_count(), zone.world.npc_count(), tick_stats_.percentile_ms(0.5),
      tick_stats_.percentile_ms(0.99), tick_stats_.max_ms(), zone.overruns,
      static_cast<double>(out - status_bytes_out_) / secs / 1000.0);
  tick_stats_.reset();
  status_bytes_out_ = out;
  last_status_ = now;
}

}  // namespace zone
