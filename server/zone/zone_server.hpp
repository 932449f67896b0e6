// The zone: one authoritative fixed-tick loop that owns the network hosts, the world and
// the replicator and wires them together.
//
// Threads (docs/architecture.md, "Threads"):
// - the simulation thread runs tick(): it owns the world, the sessions and every
//   client's replication state;
// - each ENet host (threads.network of them, sharing one UDP port) has a network thread
//   that reads its socket, decodes what clients send (Ingest) and sends what the tick
//   posts;
// - replication is built in parallel over clients by a worker pool (threads.workers,
//   the simulation thread among them), each worker writing its clients' packets into its
//   own arena.
//
// Tick order: take the decoded client events, apply sessions and inputs, run NPC
// behaviour and integrate movement, update the AOI, replicate (in parallel), post the
// packets to the network threads.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "admin/admin_server.hpp"
#include "config/config_loader.hpp"
#include "config/zone_config.hpp"
#include "net/host_thread.hpp"
#include "replication/replicator.hpp"
#include "util/worker_pool.hpp"
#include "world/world.hpp"
#include "zone/ingest.hpp"
#include "zone/load_governor.hpp"
#include "zone/logger.hpp"
#include "zone/map_publisher.hpp"
#include "zone/metrics.hpp"
#include "zone/sessions.hpp"
#include "zone/tick_stats.hpp"
#include "zone/truth_recorder.hpp"

namespace zone {

struct ZoneCounters : SessionCounters {
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

class ZoneServer {
 public:
  // Binds the port (every host), places the NPCs and starts the threads. Throws
  // net::NetError if the port is unusable.
  ZoneServer(const config::ZoneConfig& config, Logger& log, AdminSetup admin = {});
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
  std::future<std::string> request_reload(config::LoadResult result);
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
  std::vector<std::size_t> players_per_host() const { return sessions_.players_per_host(); }

 private:
  void ingest();
  void replicate();
  void post();
  void log_status();
  void init_metrics();
  void publish_map(std::chrono::nanoseconds tick);
  void apply_pending_reload();
  // Tells every player the current view parameters (after a reload changed them).
  void announce_params();
  std::string apply_config(const config::LoadResult& result);
  void update_metrics(std::chrono::nanoseconds tick, std::chrono::nanoseconds aoi,
                      std::chrono::nanoseconds replication);
  void start_admin(AdminSetup setup);
  // interest.load_adaptive (zone_interest.cpp): the level from the tick's time, applied
  // at the start of the next tick; simulated load for tests.
  void observe_load(std::chrono::nanoseconds tick);
  void apply_load_level();
  void simulate_load();
  void close_reloads();

  config::ZoneConfig config_;
  Logger& log_;
  std::chrono::nanoseconds period_;
  double dt_;
  world::World world_;
  replication::Replicator replicator_;
  util::WorkerPool pool_;
  // Each worker's scratch and packet arena. The network threads read the arenas until
  // they report the tick's batch sent, so these outlive the hosts.
  std::vector<replication::ReplicationWorker> workers_;
  std::vector<std::unique_ptr<Ingest>> ingest_;          // per host; outlives the hosts
  std::vector<std::unique_ptr<net::HostThread>> hosts_;  // one thread each
  std::vector<net::SendBatch> batches_;                  // per host, this tick's
  Inbox inbox_;
  Sessions sessions_;
  std::atomic<bool> accepting_{true};
  // Steady-clock time of the last completed tick, for /healthz on the admin thread.
  std::atomic<std::int64_t> last_tick_ns_{0};
  std::unique_ptr<TruthRecorder> truth_;
  std::string admin_token_;                            // set before the admin threads start
  std::function<config::LoadResult()> config_source_;  // likewise
  struct PendingReload {
    config::LoadResult result;
    std::promise<std::string> done;
  };
  std::mutex reload_mutex_;
  std::vector<PendingReload> pending_reloads_;
  bool reloads_closed_ = false;  // under reload_mutex_: shutting down
  std::atomic<bool> reload_pending_{false};
  bool announce_params_ = false;
  MapPublisher map_;
  MapStats map_stats_;
  std::chrono::steady_clock::time_point last_map_publish_;
  std::uint64_t map_bytes_out_ = 0, map_enters_ = 0, map_leaves_ = 0;
  std::array<std::uint64_t, 3> map_tiers_{};  // tier_entities at the last map publish
  std::uint64_t map_crowded_ = 0;
  LoadGovernor load_;
  bool load_changed_ = false;       // apply the new level at the start of the next tick
  std::uint32_t load_applied_ = 0;  // the level replication and the AOI run at
  std::uint64_t load_records_ = 0;  // records sent, for debug.simulated_load_ns_per_record
  ZoneMetrics metrics_;             // the tick thread's live copy
  MetricsBoard metrics_board_;      // what /metrics reads
  std::uint32_t metrics_publish_ticks_ = 1;
  std::chrono::steady_clock::time_point last_rate_sample_;
  std::vector<std::uint64_t> client_bytes_at_sample_;  // per client slot
  std::unique_ptr<admin::AdminServer> admin_;          // last: stopped first, before what it reads
  std::uint32_t tick_ = 0;
  std::uint64_t ticks_ = 0;
  std::uint64_t overruns_ = 0;
  std::chrono::nanoseconds send_wait_{0};  // the tick waiting for the hosts' previous batch
  TickStats tick_stats_;
  flatbuffers::FlatBufferBuilder fbb_{256};
  std::chrono::steady_clock::time_point last_status_;
  std::uint64_t status_bytes_out_ = 0;
  std::uint64_t status_refused_ = 0, status_expired_ = 0;
};

}  // namespace zone
