// The zone: one authoritative fixed-tick loop. ZoneServer owns the parts and sequences
// the tick; each part does one job: the world and its AOI (World), building each client's
// snapshots (Replicator, in parallel on a WorkerPool), the network (HostThread, with an
// Ingest queue each), the session layer (Sessions), config reloads (ReloadController),
// metrics, the live map and the status line (Observability), and the admin endpoint.
//
// Tick order: apply a pending reload, take the decoded client events, apply sessions and
// inputs, run NPC behaviour and integrate movement, update the AOI, replicate (in
// parallel), post the packets to the network threads, then record what the tick did.
//
// Threads (docs/architecture.md, "Threads") and what each touches:
//   tick thread      run() and tick(), then shutdown(): every member not marked otherwise.
//   network threads  one per host: its HostThread and Ingest queue; they read the
//                    arenas a tick's batch points into (the workers', then, from the
//                    next tick on, sent_arenas_) until the host reports that batch sent.
//   workers          pool_, inside replicate(): disjoint clients, an arena each; and inside
//                    the AOI update (World::update_aoi): disjoint candidate lists, each
//                    piece of work with an output of its own, merged in order.
//   admin threads    admin_: published copies only (the metrics board and map frame in
//                    observability_, the truth_ ring), the atomics, what was set before
//                    they started; they queue reloads in reloads_.
//   any thread       request_reload() (the SIGHUP reloader, tests).
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "admin/admin_server.hpp"
#include "cluster/ghost_exchange.hpp"
#include "config/config_loader.hpp"
#include "config/world_map.hpp"
#include "config/zone_config.hpp"
#include "net/host_thread.hpp"
#include "replication/replicator.hpp"
#include "util/worker_pool.hpp"
#include "world/world.hpp"
#include "zone/action_router.hpp"
#include "zone/gm_commands.hpp"
#include "zone/ingest.hpp"
#include "zone/layer_streams.hpp"
#include "zone/load_governor.hpp"
#include "zone/logger.hpp"
#include "zone/reload_controller.hpp"
#include "zone/sessions.hpp"
#include "zone/truth_recorder.hpp"
#include "zone/zone_observability.hpp"
#include "zone/zone_rules.hpp"

namespace zone {

struct ZoneCounters : SessionCounters, LayerCounters {
  std::uint64_t ticks = 0;
  std::uint64_t overruns = 0;  // ticks that took longer than the period
};

// What the admin endpoint needs from whoever starts the zone. Given to the constructor,
// so it is in place before the admin threads start.
struct AdminSetup {
  // Bearer token for the protected routes; empty: a random one is generated and logged.
  std::string token;
  // Where POST /admin/reload loads the config from (main: the file plus the command
  // line's overrides); runs on an admin thread. Empty: the route answers 501.
  std::function<config::LoadResult()> config_source;
};

// The zone's place in a world of zones (main: --world and --zone). Without a map the
// zone runs alone, as zone 0, and never touches NATS.
struct WorldSetup {
  std::optional<config::WorldMap> map;
  std::size_t zone_index = 0;
  // How it logs in to NATS (config::load_bus_secrets; main reads them at start-up).
  config::BusSecrets bus_secrets;
  // The static layer's objects, already loaded from static.map_file; without them the
  // zone loads the file itself (and throws if it does not load).
  world::StaticParams statics;
};

// The character store's secret (main reads it at start-up, so that --check-config checks
// it): backend postgres, the connection string of persist.conninfo_file. Empty: the zone
// reads the file itself.
struct StoreSetup {
  std::string postgres_conninfo;
};

class ZoneServer {
 public:
  // Binds the port (every host), places the NPCs and starts the threads. Throws
  // net::NetError if the port is unusable.
  ZoneServer(const config::ZoneConfig& config, Logger& log, AdminSetup admin = {},
             WorldSetup world_setup = {}, StoreSetup store_setup = {});
  ~ZoneServer();

  std::uint16_t port() const { return hosts_.front()->port(); }
  // The admin HTTP port, or 0 when admin.enabled is false.
  std::uint16_t admin_port() const { return admin_ ? admin_->port() : 0; }
  // The admin endpoint's bearer token (given or generated); empty when admin is disabled.
  const std::string& admin_token() const { return admin_token_; }
  // Runs ticks at the configured rate until should_stop() returns true.
  template <typename StopFn>
  void run(StopFn&& should_stop) {
    using clock = std::chrono::steady_clock;
    auto next = clock::now();
    while (!should_stop()) {
      tick();
      next += period_;
      const auto now = clock::now();
      if (now >= next) {
        // Overran: start the next tick now, without trying to catch up on missed ones.
        next = now;
        continue;
      }
      std::this_thread::sleep_until(next);
    }
  }
  // One tick of the loop (tests drive it directly).
  void tick();
  // Tells every client the zone is shutting down and gives the goodbyes up to `grace`
  // to leave. Reloads still pending, or requested from now on, are answered at once
  // without being applied.
  void shutdown(std::chrono::milliseconds grace);

  // Config reload. `result` is a freshly loaded and validated config (or its errors); it
  // is applied at the start of the next tick. Thread-safe. The returned future yields a
  // one-line report of what happened.
  std::future<std::string> request_reload(config::LoadResult result) {
    return reloads_.request(std::move(result));
  }
  const config::ZoneConfig& config() const { return config_; }

  ZoneCounters counters() const;
  const world::World& world() const { return world_; }
  const replication::Replicator& replicator() const { return replicator_; }
  // Traffic of every host together.
  net::TrafficStats traffic() const;
  std::size_t network_hosts() const { return hosts_.size(); }
  std::size_t replication_workers() const { return pool_.size(); }
  std::uint32_t current_tick() const { return tick_; }
  std::size_t players() const { return world_.player_count(); }
  // The character store, or null (persist.enabled false). Its stats are thread-safe.
  const CharacterStore* store() const { return store_.get(); }
  std::vector<std::size_t> players_per_host() const { return sessions_.players_per_host(); }

 private:
  // The event budgets (game.max_events_per_tick, game.max_events_per_client).
  void apply_game_limits();
  void ingest();
  void replicate();
  void post();
  // The zone's parts as Observability reads them.
  ZoneView view() const;
  // Applies the reloads queued since the last tick, in order, and answers each.
  void apply_pending_reloads();
  std::string apply_config(PendingReload& pending);
  // The game rules' part of a reload (its scripts, read by the thread that asked): the
  // report's tail.
  std::string apply_rules(PendingReload& pending);
  // Shutdown: waits (until `deadline`) for the character store to commit what is queued.
  void flush_store(std::chrono::steady_clock::time_point deadline);
  // Tells every player the current view parameters (after a reload changed them).
  void announce_params();
  void start_admin(std::string token);
  // GM commands (zone_gm_routes.cpp): the routes, and the queue applied at a tick start.
  void add_gm_routes();
  void apply_gm_commands();
  // interest.load_adaptive (zone_interest.cpp): the level from the tick's time, applied
  // at the start of the next tick; simulated load for tests.
  void observe_load(std::chrono::nanoseconds tick);
  void apply_load_level();
  void simulate_load();

  // The simulation.
  config::ZoneConfig config_;  // the live config: reloads change it
  Logger& log_;                // thread-safe: lines are queued for a writer thread
  std::chrono::nanoseconds period_;
  double dt_;
  world::World world_;
  replication::Replicator replicator_;
  std::uint32_t tick_ = 0;
  std::uint64_t ticks_ = 0;
  std::uint64_t overruns_ = 0;
  // The tick waiting for the hosts to send the batch of two ticks before (its arenas).
  std::chrono::nanoseconds send_wait_{0};

  // Load-adaptive interest (interest.load_adaptive).
  LoadGovernor load_;
  bool load_changed_ = false;       // apply the new level at the start of the next tick
  std::uint32_t load_applied_ = 0;  // the level replication and the AOI run at
  std::uint64_t load_records_ = 0;  // records sent, for debug.simulated_load_ns_per_record

  // Replication in parallel: each worker's scratch and packet arenas. The network threads
  // read the arenas until they report the tick's batch sent, so these outlive the hosts.
  util::WorkerPool pool_;
  std::vector<replication::ReplicationWorker> workers_;
  // Double buffering: the arenas of the previous tick's batch, which the hosts may still
  // be sending, one pair per worker. A tick swaps them with the workers' (then holding
  // the batch it is about to replace) after waiting only for the batch before that, so a
  // network thread late by less than a tick costs the tick nothing.
  struct SentArenas {
    replication::PacketArena out, reliable;
  };
  std::vector<SentArenas> sent_arenas_;
  std::vector<std::uint64_t> posted_last_;    // per host: the previous tick's batch number
  std::vector<std::uint64_t> posted_before_;  // per host: the one before (in sent_arenas_)

  // The network: one host and one decoding queue per network thread, and in ticket mode
  // (auth.mode) the verifier the decoders check tickets with.
  std::unique_ptr<const auth::TicketVerifier> verifier_;  // outlives the decoders
  std::vector<std::unique_ptr<Ingest>> ingest_;           // per host; outlives the hosts
  std::vector<std::unique_ptr<net::HostThread>> hosts_;   // one thread each
  std::vector<net::SendBatch> batches_;                   // per host, this tick's
  Inbox inbox_;                                           // the events taken from one host's queue

  // The character store (persist.enabled; else null): before the sessions, which hold a
  // pointer to it, so that it is destroyed after them (its writer's last flush).
  std::unique_ptr<CharacterStore> store_;
  Sessions sessions_;    // who is connected, and the session layer's rules
  LayerStreams layers_;  // the chunk and static layers, streamed to the sessions
  // The game's rules (game.scripts_dir; none: every action is answered NotAllowed). The
  // sessions hold a pointer to it: they never call it after the zone's shutdown().
  std::unique_ptr<ZoneRules> rules_;
  std::unique_ptr<cluster::GhostExchange> cluster_;  // in a world of zones only
  // With rules in a world: the sessions' actions, forwarded when they target a ghost.
  std::unique_ptr<ActionRouter> actions_;
  std::chrono::milliseconds arrival_timeout_{0};  // handoff.arrival_timeout_ms

  // Reloads: queued from any thread, applied here at the start of a tick.
  ReloadController reloads_;
  bool announce_params_ = false;  // a reload changed the view parameters
  flatbuffers::FlatBufferBuilder fbb_{256};

  // GM commands: banned accounts (admin threads write, the tick reads), the tick's desk
  // (mutes; it answers the sessions' questions), the queue between them, the counters.
  BanList bans_;
  GmDesk gm_desk_{bans_};
  GmQueue gm_queue_;
  GmCounters gm_counters_;

  // What the admin threads see.
  Observability observability_;
  std::atomic<bool> accepting_{true};
  // Steady-clock time of the last completed tick, for /healthz.
  std::atomic<std::int64_t> last_tick_ns_{0};
  std::unique_ptr<TruthRecorder> truth_;
  std::string admin_token_;                    // set before the admin threads start
  std::unique_ptr<admin::AdminServer> admin_;  // last: stopped first, before what it reads
};

}  // namespace zone
