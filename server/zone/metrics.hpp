// Zone metrics in the Prometheus text format.
//
// The tick thread owns the live values (plain integers, no atomics on the hot path) and
// publishes a copy to the admin thread once per tick under a mutex; /metrics renders the
// last published copy. Names follow Prometheus conventions: base units (seconds,
// bytes), counters end in _total, no per-player labels.
#pragma once

#include "game/game_rules.hpp"

#include <array>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "cluster/cluster_stats.hpp"

namespace zone {

// A fixed-bucket histogram (cumulative on output, as Prometheus expects).
class Histogram {
 public:
  explicit Histogram(std::vector<double> upper_bounds)
      : bounds_(std::move(upper_bounds)), counts_(bounds_.size() + 1, 0) {}
  void observe(double v) {
    std::size_t i = 0;
    while (i < bounds_.size() && v > bounds_[i]) ++i;
    ++counts_[i];
    sum_ += v;
    ++count_;
  }
  const std::vector<double>& bounds() const { return bounds_; }
  const std::vector<std::uint64_t>& counts() const { return counts_; }  // per bucket, +Inf last
  double sum() const { return sum_; }
  std::uint64_t count() const { return count_; }

 private:
  std::vector<double> bounds_;
  std::vector<std::uint64_t> counts_;
  double sum_ = 0.0;
  std::uint64_t count_ = 0;
};

struct LabelledCount {
  std::string label;  // the label value
  std::uint64_t value = 0;
};

// The character store (docs/persistence.md); zeros when persist.enabled is false.
struct PersistMetrics {
  bool enabled = false;
  bool healthy = true;
  bool full = false;
  std::uint64_t queue_depth = 0;
  std::uint64_t saves = 0;
  std::uint64_t saves_stale = 0;
  std::uint64_t save_failures = 0;
  std::uint64_t flushes = 0;
  std::uint64_t loads = 0;
  std::uint64_t load_failures = 0;
  double load_seconds = 0.0;
  std::uint64_t loaded_logins = 0;
  std::uint64_t checkpoints_put_off = 0;
};

struct ZoneMetrics {
  // Fine between 10 and 50 ms, where a 20 Hz tick's percentiles are read for capacity.
  Histogram tick_seconds{{0.0005, 0.001, 0.002, 0.003, 0.004, 0.005, 0.006, 0.008, 0.010, 0.012,
                          0.014,  0.016, 0.018, 0.020, 0.022, 0.024, 0.025, 0.026, 0.028, 0.030,
                          0.035,  0.040, 0.045, 0.050, 0.060, 0.075, 0.1,   0.25}};
  Histogram aoi_seconds{{0.0001, 0.00025, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05}};
  Histogram replication_seconds{{0.0001, 0.00025, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05}};
  Histogram client_send_rate{{250, 500, 1000, 2000, 4000, 8000, 16000, 32000, 64000, 128000}};
  std::uint64_t ticks = 0;
  std::uint64_t overruns = 0;
  std::uint64_t players = 0;
  std::uint64_t npcs = 0;
  std::uint64_t entities = 0;
  std::uint64_t engaged_npcs = 0;  // precision tiers
  std::uint64_t ambient_entities = 0;
  std::uint64_t engagements = 0;
  std::uint64_t occupied_cells = 0;
  std::uint64_t max_cell_entities = 0;
  std::uint64_t visible_pairs = 0;
  std::uint64_t mutual_observers = 0;  // observers whose pairs are decided once for both ways
  std::uint64_t crowd_members = 0;     // of those, in a crowd (pairs decided by a crowd tier)
  std::uint64_t enter_events = 0;
  std::uint64_t leave_events = 0;
  std::uint64_t bytes_out = 0;  // UDP payload incl. ENet headers
  std::uint64_t bytes_in = 0;
  std::uint64_t packets_out = 0;
  std::uint64_t packets_in = 0;
  std::uint64_t spawns_sent = 0;
  std::uint64_t updates_sent = 0;
  std::uint64_t despawns_sent = 0;
  std::uint64_t deferred = 0;
  std::uint64_t forced = 0;          // records sent over budget (held or waited too long)
  std::uint64_t snapshots_sent = 0;  // frames
  std::uint64_t snapshot_parts_sent = 0;
  std::uint64_t snapshot_bytes_sent = 0;    // payload of the parts
  std::uint64_t oldest_deferral_ticks = 0;  // longest wait of a record sent since last publish
  // Interest policy: entities in view per tier (near, middle, far), summed over the
  // snapshots built; changed entities whose update waited for its tier's turn.
  std::array<std::uint64_t, 3> tier_entities{};
  std::uint64_t tier_held = 0;
  std::uint64_t crowded_snapshots = 0;  // built for a view above interest.crowd_threshold
  std::uint64_t behind_cone = 0;        // entities made far by interest.cone
  std::uint64_t group_entities = 0;     // entities in view through a party or guild link alone
  // Parties and guilds (index: world::GroupKind): groups now, players in one now, and the
  // JoinParty / JoinGuild requests by answer.
  std::array<std::uint64_t, 2> groups{};
  std::array<std::uint64_t, 2> group_members{};
  std::array<std::vector<LabelledCount>, 2> group_requests;
  // Gameplay: actions by answer, chat lines sent by channel and refused by answer, the
  // events the rules and chat emitted, refused (malformed) and dropped (by label: the
  // zone's or a client's per-tick bound), their deliveries, messages and bytes.
  std::vector<LabelledCount> actions;
  std::vector<LabelledCount> chat_lines;
  std::vector<LabelledCount> chat_refused;
  std::uint64_t events_emitted = 0;
  std::uint64_t events_refused = 0;
  std::vector<LabelledCount> events_dropped;
  std::uint64_t event_deliveries = 0;
  std::uint64_t event_messages = 0;
  std::uint64_t event_bytes = 0;
  // The game's rules (zeros without game.scripts_dir).
  game::RulesStats rules;
  double rules_seconds = 0.0;       // the tick thread's time in them
  std::uint64_t chunk_updates = 0;  // chunk layer: ChunkUpdate messages sent
  std::uint64_t chunk_loads = 0;
  std::uint64_t chunk_unloads = 0;
  std::uint64_t static_objects = 0;  // in the zone's map
  std::uint64_t static_messages = 0;
  std::uint64_t static_objects_sent = 0;
  std::uint64_t static_bytes_sent = 0;
  std::uint64_t static_waits_budget = 0;
  std::uint64_t static_waits_unacked = 0;
  std::uint64_t static_collisions = 0;
  std::uint64_t load_level = 0;      // interest.load_adaptive
  std::uint64_t load_level_max = 0;  // highest level since start
  std::uint64_t load_level_changes = 0;
  double load_share = 0.0;   // smoothed tick time / budget
  double view_radius = 0.0;  // metres, as the AOI uses it now
  std::uint64_t network_hosts = 0;
  std::uint64_t replication_workers = 0;
  std::uint64_t socket_receive_buffer_bytes = 0;  // granted by the kernel (smallest host's)
  std::uint64_t socket_send_buffer_bytes = 0;
  std::uint64_t full_drains = 0;  // ingest passes that found more than one ENet batch waiting
  std::uint64_t connects_refused_address = 0;     // handshakes refused: one address's share
  std::uint64_t connects_refused_handshakes = 0;  // refused: too many unfinished
  std::uint64_t connects_refused_cookie = 0;      // refused: no valid cookie
  std::uint64_t handshakes_expired = 0;
  std::uint64_t handshakes = 0;      // unfinished handshakes now
  std::uint64_t evicted_silent = 0;  // closed for a newcomer: silent longest
  double send_wait_seconds = 0.0;    // the tick waiting for the hosts to finish sending
  std::uint64_t inputs = 0;          // client inputs applied
  std::uint64_t joins = 0;
  // Handoff (in a world): players sent to another zone, arrived with their token, tokens
  // refused, arrivals whose clients never came.
  std::uint64_t transfers_out = 0;
  std::uint64_t arrivals = 0;
  std::uint64_t arrival_tokens_refused = 0;
  std::uint64_t arrivals_expired = 0;
  std::uint64_t leaves = 0;
  std::vector<LabelledCount> drops;        // by reason
  std::vector<LabelledCount> disconnects;  // by reason
  // Login tickets (auth.mode): the mode, hellos refused by why, let in, take-overs.
  bool ticket_mode = false;
  std::vector<LabelledCount> tickets_refused;
  std::uint64_t tickets_accepted = 0;
  std::uint64_t takeovers = 0;
  std::uint64_t logged_in_elsewhere = 0;
  // Reconnects (players.resume_grace_ms).
  std::uint64_t players_held = 0;
  std::uint64_t holds = 0;
  std::uint64_t holds_expired = 0;
  std::uint64_t resumes = 0;
  std::uint64_t resumes_refused = 0;
  PersistMetrics persist;
  std::uint64_t reloads_ok = 0;
  std::uint64_t reloads_failed = 0;
  bool last_reload_ok = true;
  double start_time_seconds = 0.0;  // Unix time the process started
  // In a world of zones only (rendered only then): ghosts and the bus.
  bool in_world = false;
  cluster::ClusterStats cluster;
};

std::string render_prometheus(const ZoneMetrics& m, const std::string& zone_name);

// The tick thread's copy goes in; the admin thread takes the newest out.
class MetricsBoard {
 public:
  void publish(const ZoneMetrics& m) {
    std::lock_guard lock(mutex_);
    published_ = m;
  }
  ZoneMetrics latest() const {
    std::lock_guard lock(mutex_);
    return published_;
  }

 private:
  mutable std::mutex mutex_;
  ZoneMetrics published_;
};

}  // namespace zone
