// What the zone shows of itself: the Prometheus metrics (/metrics), the live map's data
// (/api/map) and the periodic status line in the log.
//
// Threads: the tick thread calls everything but the two published copies, which the
// admin threads read: metrics_board() (the metrics as of the last publish) and map()
// (select an entity, format a frame), each under its own mutex.
//
// It owns no game state: each call gets the zone's parts as a ZoneView, read-only and
// valid for that call only.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "cluster/ghost_exchange.hpp"
#include "config/zone_config.hpp"
#include "net/host_thread.hpp"
#include "replication/replicator.hpp"
#include "world/world.hpp"
#include "zone/logger.hpp"
#include "zone/map_publisher.hpp"
#include "zone/metrics.hpp"
#include "zone/sessions.hpp"
#include "zone/tick_stats.hpp"
#include "zone/zone_rules.hpp"

namespace zone {

using HostThreads = std::span<const std::unique_ptr<net::HostThread>>;

// Traffic of every host together.
net::TrafficStats total_traffic(HostThreads hosts);

// The zone as observability reads it after a tick.
struct ZoneView {
  std::uint32_t tick;                  // the tick number clients see
  std::uint64_t ticks;                 // ticks completed
  std::uint64_t overruns;              // ticks that took longer than the period
  std::chrono::nanoseconds send_wait;  // total time the tick waited for the hosts to send
  const world::World& world;
  const replication::Replicator& replicator;
  const SessionCounters& sessions;
  const LayerCounters& layers;  // the chunk and static layers
  HostThreads hosts;
  const cluster::GhostExchange* cluster;  // in a world of zones only, else null
  const ZoneRules* rules;                 // with game.scripts_dir only, else null
  const CharacterStore* store;            // with persist.enabled only, else null
  struct Load {
    std::uint32_t level;    // the load level replication and the AOI run at
    double share;           // smoothed tick time as a share of its budget
    std::uint64_t changes;  // level changes so far
  } load;
};

// How long one tick and its phases took.
struct TickTimes {
  std::chrono::nanoseconds tick;
  std::chrono::nanoseconds aoi;
  std::chrono::nanoseconds replication;
};

class Observability {
 public:
  // `config` is the zone's live config (reloads change it in place): the status line's
  // interval is read from it each tick.
  Observability(const config::ZoneConfig& config, Logger& log);

  // Once the hosts are bound: fills in what never changes (threads, the socket buffers
  // the kernel granted, the start time), warns about buffers smaller than asked and
  // publishes the first copy of the metrics.
  void start(HostThreads hosts, std::size_t replication_workers);

  // Tick thread, after each tick: updates the live metrics and publishes a copy about
  // five times a second. `oldest_deferral_ticks` is the replicator's, taken this tick.
  void record_tick(const ZoneView& zone, const TickTimes& took,
                   std::uint64_t oldest_deferral_ticks);
  // Tick thread, after each tick while the admin endpoint runs: the map's frame, a few
  // times a second.
  void publish_map(const ZoneView& zone, std::chrono::nanoseconds tick);
  // Tick thread: the status line (and admission warnings) once per log.status_interval_s.
  void log_status(const ZoneView& zone);

  // Tick thread: a reload's outcome. Refused: the config was invalid and changed nothing.
  // Applied: `every_value_taken` is false when a layer rejected a value it was given.
  void count_reload_refused();
  void count_reload_applied(bool every_value_taken);
  // Tick thread: publishes the metrics now (a reload's outcome, before it is answered).
  void publish_metrics() { metrics_board_.publish(metrics_); }

  // Admin threads (both thread-safe).
  const MetricsBoard& metrics_board() const { return metrics_board_; }
  MapPublisher& map() { return map_; }

 private:
  const config::ZoneConfig& config_;
  Logger& log_;

  // Metrics: the tick thread's live copy and what /metrics reads.
  ZoneMetrics metrics_;
  MetricsBoard metrics_board_;
  const std::uint32_t metrics_publish_ticks_;
  std::chrono::steady_clock::time_point last_rate_sample_;
  std::vector<std::uint64_t> client_bytes_at_sample_;  // per client slot
  // The SessionCounters::group_requests index of each zone_*_requests_total label.
  std::vector<std::size_t> group_request_result_;

  // The live map.
  MapPublisher map_;
  bool map_world_set_ = false;  // in a world of zones: the zone's place given to map_
  MapStats map_stats_;
  std::chrono::steady_clock::time_point last_map_publish_;
  std::uint64_t map_bytes_out_ = 0, map_enters_ = 0, map_leaves_ = 0;
  std::array<std::uint64_t, 3> map_tiers_{};  // tier_entities at the last map publish
  std::uint64_t map_crowded_ = 0;

  // The status line: what it last reported.
  TickStats tick_stats_;
  std::chrono::steady_clock::time_point last_status_;
  std::uint64_t status_bytes_out_ = 0;
  std::uint64_t status_refused_ = 0, status_expired_ = 0;
};

}  // namespace zone
