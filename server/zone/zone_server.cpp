#include "zone/zone_server.hpp"

#include <vector>

#include "config/capacity.hpp"
#include "protocol/codec.hpp"
#include "zone/cluster_params.hpp"
#include "zone/script_files.hpp"
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

// The static layer's objects: those the caller loaded, else static.map_file's.
world::StaticParams load_statics(const config::ZoneConfig& config, world::StaticParams given) {
  if (given.objects || config.statics.map_file.empty()) return given;
  const config::StaticMapResult map = config::load_static_map_file(config.statics.map_file, config);
  if (!map.ok()) throw std::runtime_error("static map: " + map.error_report());
  return make_static_params(map, config.statics);
}

// The game's entity types and properties: game.data_file's, or the built-in game.
world::GameTypes load_game(const config::ZoneConfig& config) {
  if (config.game.data_file.empty()) return make_game_types(config::builtin_game_data());
  const config::GameDataResult game = config::load_game_data_file(config.game.data_file);
  if (!game.ok()) throw std::runtime_error("game data: " + game.error_report());
  return make_game_types(game.data);
}

// Handoff between the world's zones and this zone's sessions, for one tick.
class SessionHandoff final : public cluster::HandoffHooks {
 public:
  SessionHandoff(Sessions& sessions, world::World& world, ZoneRules* rules,
                 std::span<net::SendBatch> out, std::chrono::milliseconds arrival_timeout)
      : sessions_(sessions),
        world_(world),
        rules_(rules),
        out_(out),
        arrival_timeout_(arrival_timeout) {}
  bool can_take_player() const override { return sessions_.can_take_player(); }
  void player_left(std::uint32_t slot, const cluster::Destination& to) override {
    sessions_.transfer_out(slot, to.zone, to.host, to.port, to.token, out_);
  }
  void player_arrived(std::uint32_t slot, const cluster::TransferToken& token,
                      std::uint64_t party_key, std::uint64_t guild_key) override {
    sessions_.expect_arrival(slot, token, party_key, guild_key, arrival_timeout_);
  }
  bool cancel_arrival(world::EntityId id) override { return sessions_.cancel_arrival(id); }
  void npc_arrived(std::uint32_t slot) override {
    if (rules_ != nullptr) rules_->npc_arrived(slot);
  }
  void remote_chat(const cluster::RemoteChat& line) override {
    deliver_remote_chat(world_, sessions_.names(), line);
  }
  void remote_login(const cluster::LoginNotice& login, bool wins_tie) override {
    sessions_.logged_in_elsewhere(login, wins_tie, out_);
  }
  protocol::ActionStatus remote_action(std::uint32_t actor_slot, std::uint16_t action,
                                       world::EntityId target,
                                       std::span<const std::int32_t> args) override {
    if (rules_ == nullptr) return protocol::ActionStatus::NotAllowed;
    return rules_->act_remote(actor_slot, action, target, args);
  }

 private:
  Sessions& sessions_;
  world::World& world_;
  ZoneRules* rules_;
  std::span<net::SendBatch> out_;
  std::chrono::milliseconds arrival_timeout_;
};

// The zone's world parameters, with the ghost margin and the neighbours' rectangles of
// its place in a world of zones.
world::WorldParams world_params(const config::ZoneConfig& config, const WorldSetup& setup,
                                world::StaticParams statics) {
  if (!setup.map) {
    world::WorldParams p = make_world_params(config, 0, 0.0, std::move(statics));
    p.game = load_game(config);
    return p;
  }
  world::WorldParams p = make_world_params(config, static_cast<std::uint32_t>(setup.zone_index),
                                           setup.map->ghost_distance, std::move(statics));
  p.open_areas = neighbour_areas(*setup.map, setup.zone_index);
  p.game = load_game(config);
  return p;
}

}  // namespace

ZoneServer::ZoneServer(const config::ZoneConfig& config, Logger& log, AdminSetup admin,
                       WorldSetup world_setup, StoreSetup store_setup)
    : config_(config),
      log_(log),
      period_(std::chrono::nanoseconds(1'000'000'000LL / config.tick.rate_hz)),
      dt_(1.0 / config.tick.rate_hz),
      world_(world_params(config, world_setup, load_statics(config, world_setup.statics))),
      replicator_(make_replication_params(config), world_),
      pool_(config::replication_workers(config)),
      workers_(pool_.size()),
      sent_arenas_(pool_.size()),
      sessions_(config_, log_, world_, replicator_),
      layers_(config_, world_, replicator_),
      reloads_(std::move(admin.config_source)),
      bans_(config.admin.bans_file),
      observability_(config_, log_) {
  // A zone that cannot read its bans would let banned accounts in: it does not start.
  if (const auto error = bans_.load()) throw std::runtime_error("admin.bans_file: " + *error);
  if (bans_.size() > 0) log_.info("gm: {} banned account(s) from {}", bans_.size(), bans_.path());
  sessions_.set_moderation(&gm_desk_);
  // The first host claims the port (an ephemeral one if 0 was asked): no other socket may
  // hold it; the others join it.
  verifier_ = make_ticket_verifier(config);
  const std::uint32_t hosts = config::network_hosts(config);
  for (std::uint32_t h = 0; h < hosts; ++h) {
    net::HostOptions o = make_host_options(config, h);
    if (h > 0) o.port = hosts_.front()->port();
    ingest_.push_back(std::make_unique<Ingest>(make_ingest_limits(config), verifier_.get()));
    Ingest* in = ingest_.back().get();
    hosts_.push_back(std::make_unique<net::HostThread>(
        o, [in](const net::NetEvent& ev) { in->on_event(ev); }, [in] { in->publish(); }));
  }
  batches_.resize(hosts_.size());
  posted_last_.assign(hosts_.size(), 0);  // batch 0: sent before anything was posted
  posted_before_.assign(hosts_.size(), 0);
  // The AOI update uses the replication workers too: they are idle until replicate().
  world_.set_aoi_parallel(
      [this](std::uint32_t pieces, const aoi::GridAoi::PieceFn& fn) { pool_.run(pieces, fn); },
      pool_.size());
  sessions_.size_hosts(peers_of(hosts_));
  world_.spawn_npcs();
  store_ = CharacterStore::open(config_, world_, log_, std::move(store_setup.postgres_conninfo));
  sessions_.set_store(store_.get());
  if (!config.game.scripts_dir.empty()) {
    rules_ = std::make_unique<ZoneRules>(world_, config_, read_script_dir(config.game.scripts_dir),
                                         log_);
    sessions_.set_game(rules_.get());
    log_.info("game rules: {} loaded", config.game.scripts_dir);
  }
  if (world_setup.map) {
    cluster::ExchangeParams exchange = make_exchange_params(
        *world_setup.map, world_setup.zone_index, config.network.history_ticks, port(),
        config.tick.rate_hz, world_setup.bus_secrets, config.players.max_name_length);
    // A remote actor is held to the rate a client of this zone is.
    exchange.actor_actions_per_second = config.game.actions_per_second;
    cluster_ = std::make_unique<cluster::GhostExchange>(exchange, world_);
    arrival_timeout_ = std::chrono::milliseconds(world_setup.map->arrival_timeout_ms);
    // Whispers to names elsewhere and guild lines go to the other zones of the world.
    sessions_.set_chat_forward([exchange = cluster_.get()](const cluster::RemoteChat& line) {
      exchange->publish_chat(line);
    });
    // Ticket logins go to them too: a copy of the character elsewhere leaves.
    sessions_.set_login_notices([exchange = cluster_.get()](const cluster::LoginNotice& login) {
      exchange->publish_login(login);
    });
    // Actions on a neighbour's entity go to the zone that owns it.
    if (rules_) {
      actions_ = std::make_unique<ActionRouter>(*rules_, world_, *cluster_);
      sessions_.set_game(actions_.get());
    }
  }
  load_.configure(make_load_params(config));
  apply_game_limits();
  if (config.debug.truth) {
    truth_ = std::make_unique<TruthRecorder>(config.debug.truth_history_ticks);
    replicator_.set_record_deliveries(true);
  }
  observability_.start(hosts_, pool_.size());
  if (config.admin.enabled) start_admin(std::move(admin.token));
}

ZoneServer::~ZoneServer() = default;

void ZoneServer::apply_game_limits() {
  world_.events().set_max_per_tick(config_.game.max_events_per_tick);
  replicator_.set_max_events_per_client(config_.game.max_events_per_client);
}

ZoneCounters ZoneServer::counters() const {
  ZoneCounters c;
  static_cast<SessionCounters&>(c) = sessions_.counters();
  static_cast<LayerCounters&>(c) = layers_.counters();
  c.ticks = ticks_;
  c.overruns = overruns_;
  return c;
}

net::TrafficStats ZoneServer::traffic() const {
  return total_traffic(hosts_);
}

ZoneView ZoneServer::view() const {
  return {.tick = tick_,
          .ticks = ticks_,
          .overruns = overruns_,
          .send_wait = send_wait_,
          .world = world_,
          .replicator = replicator_,
          .sessions = sessions_.counters(),
          .layers = layers_.counters(),
          .hosts = hosts_,
          .cluster = cluster_.get(),
          .rules = rules_.get(),
          .store = store_.get(),
          .load = {load_applied_, load_.share(), load_.changes()}};
}

void ZoneServer::tick() {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  ++tick_;
  world_.events().clear();
  if (reloads_.pending()) apply_pending_reloads();
  if (gm_queue_.pending()) apply_gm_commands();
  if (load_changed_) apply_load_level();
  ingest();
  sessions_.apply_inputs();
  if (rules_) rules_->tick(tick_, dt_);
  world_.step(dt_);
  if (store_) store_->checkpoint(world_, tick_);  // queued for the writer thread, no wait
  // Ghosts move by the same per-tick bound as the zone's own entities.
  if (cluster_) {
    SessionHandoff handoff(sessions_, world_, rules_.get(), batches_, arrival_timeout_);
    cluster_->tick(tick_, std::max(config_.players.max_speed, config_.npcs.speed) * dt_, handoff);
  }
  const auto aoi_start = clock::now();
  const auto events = world_.update_aoi();
  const auto aoi_end = clock::now();
  replicator_.apply_events(tick_, events);
  replicator_.apply_group_links(tick_, world_.parties().links());
  replicator_.apply_group_links(tick_, world_.guilds().links());
  world_.clear_group_links();
  layers_.update_chunks(tick_, sessions_, batches_);
  layers_.update_statics(tick_, sessions_, batches_);
  replicate();
  post();
  simulate_load();
  const auto replication_end = clock::now();
  if (truth_) truth_->record(tick_, world_, replicator_);
  const auto took = std::chrono::duration_cast<std::chrono::nanoseconds>(clock::now() - start);
  ++ticks_;
  if (took > period_) ++overruns_;
  observe_load(took);
  const ZoneView zone = view();
  observability_.record_tick(zone, {took, aoi_end - aoi_start, replication_end - aoi_end},
                             replicator_.take_oldest_deferral());
  if (admin_) observability_.publish_map(zone, took);
  last_tick_ns_ = std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now().time_since_epoch())
                      .count();
  observability_.log_status(zone);
}

void ZoneServer::ingest() {
  for (auto& in : ingest_) {
    in->take(inbox_);
    sessions_.handle(inbox_, tick_, batches_);
  }
  sessions_.finish_loads(tick_, batches_);
  if (tick_ % config_.tick.rate_hz == 0)
    sessions_.expire(std::chrono::steady_clock::now(), batches_);
  sessions_.send_group_notices(batches_);
}

void ZoneServer::replicate() {
  // The workers' arenas hold the previous tick's packets, which the hosts may still be
  // sending; sent_arenas_ holds the packets of the tick before that. Wait only for those
  // (a host a whole tick late), then swap: the previous tick's packets stay where the
  // hosts read them, and the workers write into the arenas just sent.
  const auto wait_start = std::chrono::steady_clock::now();
  for (std::size_t h = 0; h < hosts_.size(); ++h) hosts_[h]->wait_sent(posted_before_[h]);
  send_wait_ += std::chrono::steady_clock::now() - wait_start;
  for (std::size_t i = 0; i < workers_.size(); ++i) {
    replication::ReplicationWorker& w = workers_[i];
    std::swap(w.out, sent_arenas_[i].out);
    std::swap(w.reliable, sent_arenas_[i].reliable);
    w.out.clear();
    w.reliable.clear();  // those Events messages went with their tick's batches
  }
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
    // Events after the snapshots, on the reliable channel (docs/protocol.md, "Events").
    for (const replication::PacketArena::Packet& p : w.reliable.packets()) {
      const net::PeerId peer = sessions_.peer_of(p.client);
      batches_[peer.host].add(peer, w.reliable.bytes(p), net::Delivery::kReliable,
                              protocol::kReliableChannel);
    }
  }
  posted_before_.swap(posted_last_);
  for (std::size_t h = 0; h < hosts_.size(); ++h) posted_last_[h] = hosts_[h]->post(batches_[h]);
}

void ZoneServer::shutdown(std::chrono::milliseconds grace) {
  accepting_ = false;
  reloads_.close();
  gm_queue_.close();
  for (auto& h : hosts_) h->wait_sent();
  std::vector<net::PeerId> unconfirmed =
      sessions_.close_all(DisconnectReason::ServerShutdown, batches_);
  for (std::size_t h = 0; h < hosts_.size(); ++h) hosts_[h]->post(batches_[h]);
  const std::size_t told = unconfirmed.size();
  log_.info("shutting down: told {} clients", told);
  // Keep the network threads running until every goodbye is confirmed (ENet resends a
  // lost one) or the grace time is up. ENet stops counting a peer as connected as soon
  // as its disconnect is queued, so count the confirmations instead: the disconnects of
  // the players told (another peer's, such as a connection that never said hello, does
  // not count).
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + grace;
  while (!unconfirmed.empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    for (auto& in : ingest_) {
      in->take(inbox_);
      for (const InboundEvent& ev : inbox_.events) {
        if (ev.kind == InboundEvent::Kind::kDisconnect) std::erase(unconfirmed, ev.peer);
      }
    }
  }
  const std::size_t pending = unconfirmed.size();
  const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - start);
  if (pending > 0) {
    log_.warn("shutting down: {} of {} goodbyes unconfirmed after the grace of {} ms", pending,
              told, grace.count());
  } else if (told > 0) {
    log_.info("shutting down: every goodbye confirmed after {} ms", waited.count());
  }
  for (auto& h : hosts_) h->wait_sent();
  flush_store(deadline);
}

void ZoneServer::flush_store(std::chrono::steady_clock::time_point deadline) {
  if (!store_) return;
  // close_all queued every player's last save; the writer has been committing them while
  // the goodbyes were confirmed. Whatever is left gets the rest of the grace.
  if (store_->flush(deadline)) {
    log_.info("shutting down: character store flushed ({} saves committed in all)",
              store_->stats().saves_committed);
  } else {
    log_.error("shutting down: {} characters not saved within the grace ({}): {}",
               store_->stats().queue_depth, store_->path(), store_->last_error());
  }
}

}  // namespace zone
