#include "zone/zone_server.hpp"

#include "config/capacity.hpp"
#include "protocol/codec.hpp"
#include "zone/zone_params.hpp"

namespace zone {

using protocol::DisconnectReason;

namespace {

// Clients per work item of the replication phase: small enough to balance two to a few
// dozen workers, large enough that taking an item costs nothing.
constexpr replication::ClientId kClientsPerChunk = 64;

std::vector<std::size_t> peers_of(const std::vector<std::unique_ptr<net::HostThread>>& hosts) {
  std::vector<std::size_t> peers;
  for (const auto& h : hosts) peers.push_back(h->max_peers());
  return peers;
}

}  // namespace

ZoneServer::ZoneServer(const config::ZoneConfig& config, Logger& log, AdminSetup admin)
    : config_(config),
      log_(log),
      period_(std::chrono::nanoseconds(1'000'000'000LL / config.tick.rate_hz)),
      dt_(1.0 / config.tick.rate_hz),
      world_(make_world_params(config)),
      replicator_(make_replication_params(config), world_),
      pool_(config::replication_workers(config)),
      workers_(pool_.size()),
      sessions_(config_, log_, world_, replicator_),
      map_(std::max(1u, config.tick.rate_hz / 5)),
      last_status_(std::chrono::steady_clock::now()) {
  // The first host binds the port (an ephemeral one if 0 was asked); the others join it.
  const std::uint32_t hosts = config::network_hosts(config);
  for (std::uint32_t h = 0; h < hosts; ++h) {
    net::HostOptions o = make_host_options(config, h);
    if (h > 0) o.port = hosts_.front()->port();
    ingest_.push_back(std::make_unique<Ingest>(make_ingest_limits(config)));
    Ingest* in = ingest_.back().get();
    hosts_.push_back(std::make_unique<net::HostThread>(
        o, [in](const net::NetEvent& ev) { in->on_event(ev); }, [in] { in->publish(); }));
  }
  batches_.resize(hosts_.size());
  sessions_.size_hosts(peers_of(hosts_));
  world_.spawn_npcs();
  load_.configure(make_load_params(config));
  if (config.debug.truth)
    truth_ = std::make_unique<TruthRecorder>(config.debug.truth_history_ticks);
  init_metrics();
  if (config.admin.enabled) start_admin(std::move(admin));
}

ZoneServer::~ZoneServer() = default;

ZoneCounters ZoneServer::counters() const {
  ZoneCounters c;
  static_cast<SessionCounters&>(c) = sessions_.counters();
  c.ticks = ticks_;
  c.overruns = overruns_;
  return c;
}

net::TrafficStats ZoneServer::traffic() const {
  net::TrafficStats sum;
  for (const auto& h : hosts_) {
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
    sum.half_open_expired += t.half_open_expired;
    sum.half_open += t.half_open;
  }
  return sum;
}

void ZoneServer::tick() {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  ++tick_;
  if (reload_pending_.load()) apply_pending_reload();
  if (load_changed_) apply_load_level();
  ingest();
  sessions_.apply_inputs();
  world_.step(dt_);
  const auto aoi_start = clock::now();
  const auto events = world_.update_aoi();
  const auto aoi_end = clock::now();
  replicator_.apply_events(tick_, events);
  replicate();
  post();
  simulate_load();
  const auto replication_end = clock::now();
  if (truth_) truth_->record(tick_, world_, replicator_);
  const auto took = std::chrono::duration_cast<std::chrono::nanoseconds>(clock::now() - start);
  ++ticks_;
  if (took > period_) ++overruns_;
  tick_stats_.add(took);
  observe_load(took);
  update_metrics(took, aoi_end - aoi_start, replication_end - aoi_end);
  if (admin_) publish_map(took);
  last_tick_ns_ = std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now().time_since_epoch())
                      .count();
  log_status();
}

void ZoneServer::ingest() {
  for (auto& in : ingest_) {
    in->take(inbox_);
    sessions_.handle(inbox_, tick_, batches_);
  }
  if (tick_ % config_.tick.rate_hz == 0)
    sessions_.expire(std::chrono::steady_clock::now(), batches_);
}

void ZoneServer::replicate() {
  // The arenas still hold the previous tick's packets until every host has sent them.
  const auto wait_start = std::chrono::steady_clock::now();
  for (auto& h : hosts_) h->wait_sent();
  send_wait_ += std::chrono::steady_clock::now() - wait_start;
  for (replication::ReplicationWorker& w : workers_) w.out.clear();
  replicator_.begin_tick(tick_);
  const replication::ClientId clients = replicator_.client_slots();
  const std::uint32_t chunks = (clients + kClientsPerChunk - 1) / kClientsPerChunk;
  pool_.run(chunks, [&](std::uint32_t chunk, std::uint32_t worker) {
    replicator_.replicate_clients(tick_, chunk * kClientsPerChunk, (chunk + 1) * kClientsPerChunk,
                                  workers_[worker]);
  });
  replicator_.end_tick(workers_);
}

void ZoneServer::post() {
  for (const replication::ReplicationWorker& w : workers_) {
    for (const replication::PacketArena::Packet& p : w.out.packets()) {
      const net::PeerId peer = sessions_.peer_of(p.client);
      batches_[peer.host].add(peer, w.out.bytes(p), net::Delivery::kUnreliable,
                              protocol::kUnreliableChannel);
    }
  }
  for (std::size_t h = 0; h < hosts_.size(); ++h) hosts_[h]->post(batches_[h]);
}

void ZoneServer::shutdown(std::chrono::milliseconds grace) {
  accepting_ = false;
  close_reloads();
  for (auto& h : hosts_) h->wait_sent();
  const std::size_t told = sessions_.close_all(DisconnectReason::ServerShutdown, batches_);
  for (std::size_t h = 0; h < hosts_.size(); ++h) hosts_[h]->post(batches_[h]);
  log_.info("shutting down: told {} clients", told);
  // Keep the network threads running until every goodbye is confirmed (ENet resends a
  // lost one) or the grace time is up. ENet stops counting a peer as connected as soon
  // as its disconnect is queued, so count the confirmations instead.
  const auto deadline = std::chrono::steady_clock::now() + grace;
  std::size_t pending = told;
  while (pending > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    for (auto& in : ingest_) {
      in->take(inbox_);
      for (const InboundEvent& ev : inbox_.events) {
        if (ev.kind == InboundEvent::Kind::kDisconnect && pending > 0) --pending;
      }
    }
  }
  for (auto& h : hosts_) h->wait_sent();
}

}  // namespace zone
