#include "zone/zone_server.hpp"

#include <thread>

#include "zone/channels.hpp"
#include "zone/zone_params.hpp"

namespace zone {

using protocol::DisconnectReason;

namespace {

// Bound on events taken from the transport in one tick, so a flood cannot stall it;
// the rest wait for the next tick.
constexpr std::size_t kMaxEventsPerTick = 20000;

}  // namespace

ZoneServer::ZoneServer(const config::ZoneConfig& config, Logger& log, AdminSetup admin)
    : config_(config),
      log_(log),
      period_(std::chrono::nanoseconds(1'000'000'000LL / config.tick.rate_hz)),
      dt_(1.0 / config.tick.rate_hz),
      host_(std::make_unique<net::EnetHost>(make_host_options(config))),
      world_(make_world_params(config)),
      replicator_(make_replication_params(config), world_),
      map_(std::max(1u, config.tick.rate_hz / 5)),
      last_status_(std::chrono::steady_clock::now()) {
  sessions_.resize(host_->max_peers());
  world_.spawn_npcs();
  if (config.debug.truth)
    truth_ = std::make_unique<TruthRecorder>(config.debug.truth_history_ticks);
  init_metrics();
  if (config.admin.enabled) start_admin(std::move(admin));
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

void ZoneServer::apply_inputs() {
  for (const Session& s : sessions_) {
    if (s.phase == Session::Phase::kPlaying)
      world_.set_intent(s.player_slot, s.intent_x, s.intent_y);
  }
}

void ZoneServer::shutdown(std::chrono::milliseconds grace) {
  accepting_ = false;
  close_reloads();
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
