// The zone: one authoritative fixed-tick loop that owns the transport, the world and
// the replicator and wires them together.
//
// Tick order: drain network events, apply validated inputs, run NPC behaviour and
// integrate movement, update the AOI, replicate, flush the network.
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
#include <vector>

#include <flatbuffers/flatbuffers.h>

#include "admin/admin_server.hpp"
#include "config/config_loader.hpp"
#include "config/zone_config.hpp"
#include "net/enet_host.hpp"
#include "protocol/zone_generated.h"
#include "replication/replicator.hpp"
#include "world/world.hpp"
#include "zone/logger.hpp"
#include "zone/map_publisher.hpp"
#include "zone/metrics.hpp"
#include "zone/session.hpp"
#include "zone/tick_stats.hpp"
#include "zone/truth_recorder.hpp"

namespace zone {

inline constexpr std::size_t kDisconnectReasons =
    static_cast<std::size_t>(protocol::DisconnectReason::MAX) + 1;

struct ZoneCounters {
  std::uint64_t ticks = 0;
  std::uint64_t overruns = 0;  // ticks that took longer than the period
  std::uint64_t joins = 0;
  std::uint64_t leaves = 0;
  std::array<std::uint64_t, kDropReasons> drops{};
  std::array<std::uint64_t, kDisconnectReasons> disconnects{};  // by protocol::DisconnectReason
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
  // Binds the port and places the NPCs. Throws net::NetError if the port is unusable.
  ZoneServer(const config::ZoneConfig& config, Logger& log, AdminSetup admin = {});
  ~ZoneServer();

  std::uint16_t port() const { return host_->port(); }
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
      wait_until(next);
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

  const ZoneCounters& counters() const { return counters_; }
  const world::World& world() const { return world_; }
  const replication::Replicator& replicator() const { return replicator_; }
  const net::TrafficStats& traffic() const { return host_->stats(); }
  std::uint32_t current_tick() const { return tick_; }
  std::size_t players() const { return world_.player_count(); }

 private:
  void wait_until(std::chrono::steady_clock::time_point deadline);
  void drain_network();
  void expire_silent_connections();
  void on_connect(net::PeerId peer);
  void on_disconnect(net::PeerId peer, std::uint32_t data);
  void on_receive(net::PeerId peer, std::span<const std::uint8_t> bytes);
  void on_hello(Session& s, const protocol::Hello& hello);
  void on_input(Session& s, const protocol::Input& input);
  void drop(Session& s, DropReason reason);
  void kick(Session& s, protocol::DisconnectReason reason);
  void end_session(Session& s);
  void apply_inputs();
  void log_status();
  void init_metrics();
  void publish_map(std::chrono::nanoseconds tick);
  void apply_pending_reload();
  std::string apply_config(const config::LoadResult& result);
  void update_metrics(std::chrono::nanoseconds tick, std::chrono::nanoseconds aoi,
                      std::chrono::nanoseconds replication);
  Session* session_of(net::PeerId peer);
  void start_admin(AdminSetup setup);
  void close_reloads();

  config::ZoneConfig config_;
  Logger& log_;
  std::chrono::nanoseconds period_;
  double dt_;
  std::unique_ptr<net::EnetHost> host_;
  world::World world_;
  replication::Replicator replicator_;
  std::vector<Session> sessions_;            // by peer slot index
  std::vector<net::PeerId> peer_of_client_;  // replication client -> its peer
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
  MapPublisher map_;
  MapStats map_stats_;
  std::chrono::steady_clock::time_point last_map_publish_;
  std::uint64_t map_bytes_out_ = 0, map_enters_ = 0, map_leaves_ = 0;
  ZoneMetrics metrics_;         // the tick thread's live copy
  MetricsBoard metrics_board_;  // what /metrics reads
  std::uint32_t metrics_publish_ticks_ = 1;
  std::chrono::steady_clock::time_point last_rate_sample_;
  std::vector<std::uint64_t> client_bytes_at_sample_;  // per client slot
  std::unique_ptr<admin::AdminServer> admin_;          // last: stopped first, before what it reads
  std::uint32_t tick_ = 0;
  ZoneCounters counters_;
  TickStats tick_stats_;
  flatbuffers::FlatBufferBuilder fbb_{256};
  LogRateLimiter bad_input_log_{10, std::chrono::seconds(10)};
  // Joins, leaves and refusals: every one under normal play, a trickle under churn.
  LogRateLimiter session_log_{50, std::chrono::seconds(10)};
  std::chrono::steady_clock::time_point last_status_;
  std::uint64_t status_bytes_out_ = 0;
};

}  // namespace zone
