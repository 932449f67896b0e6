// Replication: turns the AOI's enter/leave events and the world's state into per-client
// snapshot packets.
//
// Design (Quake 3's, adapted to AOI interest sets):
// - Every snapshot is encoded against the newest frame the client acknowledged (its
//   inputs carry that tick). Anything the client may have missed since is therefore in
//   the next snapshot again, so spawns, despawns and deltas all survive packet loss
//   without reliable delivery. With no usable baseline (new client, or an ack older
//   than the history) the frame is sent whole, as spawns.
// - The frame a snapshot describes is recorded per client, so the next acknowledgment
//   names an exact baseline.
// - A client's interest set comes only from AOI events: enter -> spawn with full state,
//   in view -> changed fields only, leave -> despawn. Nothing outside it is ever sent.
// - Bandwidth: each client has a token budget. Despawns always go; spawns and updates go
//   nearest-first by an accumulated priority, and what does not fit is deferred to a
//   later tick (its priority keeps growing), never dropped.
// - Packets never exceed max_packet_bytes; a large update is split into parts that the
//   client assembles, acknowledging the tick only once it holds every part.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "aoi/grid_aoi.hpp"
#include "replication/client_view.hpp"
#include "replication/snapshot_writer.hpp"
#include "world/world.hpp"

namespace zone::replication {

struct ReplicationParams {
  std::uint32_t tick_rate = 20;
  std::uint32_t max_packet_bytes = 1200;
  std::uint32_t client_bandwidth = 16000;  // bytes per second per client
  std::uint32_t snapshot_interval = 1;     // ticks between snapshots to one client
  std::uint32_t history_ticks = 32;
};

struct ReplicationStats {
  std::uint64_t snapshots = 0;  // frames sent
  std::uint64_t packets = 0;    // snapshot parts sent
  std::uint64_t bytes = 0;      // snapshot payload bytes
  std::uint64_t spawns = 0;
  std::uint64_t updates = 0;  // entities with changed fields sent
  std::uint64_t despawns = 0;
  std::uint64_t deferred = 0;      // entity records held back by the budget
  std::uint64_t full_resyncs = 0;  // snapshots without a baseline after the first
  std::uint64_t enter_events = 0;
  std::uint64_t leave_events = 0;
};

using ClientId = std::uint32_t;

class Replicator {
 public:
  Replicator(const ReplicationParams& params, const world::World& world);

  ClientId add_client(std::uint32_t player_slot);
  void remove_client(ClientId client);

  // An acknowledgment from the client's input. Returns false (and ignores it) when it
  // names a tick the server never sent to this client.
  bool acknowledge(ClientId client, std::uint32_t ack_tick);
  void set_last_input_sequence(ClientId client, std::uint32_t sequence);

  // Applies one tick's AOI events to the clients' interest sets.
  void apply_events(std::span<const aoi::VisibilityEvent> events);

  // Builds this tick's snapshots; send(client, bytes) is called for every packet.
  template <typename Send>
  void replicate(std::uint32_t tick, Send&& send) {
    for (ClientId c = 0; c < clients_.size(); ++c) {
      if (!clients_[c].active) continue;
      refill_budget(clients_[c]);
      if ((tick + c) % params_.snapshot_interval != 0) continue;
      if (!build_frame(c, tick)) continue;  // saving up budget for a pending record
      stats_.packets += writer_.parts_needed(send_order_);
      stats_.bytes += writer_.write(header_, send_order_, [&](std::span<const std::uint8_t> b) {
        send(c, b);
        clients_[c].tokens -= static_cast<double>(b.size());
        clients_[c].bytes_sent += b.size();
      });
      ++stats_.snapshots;
    }
  }

  const ClientView& client(ClientId c) const { return clients_[c]; }
  // Number of client slots, active or not (iterate with client(c).active).
  ClientId client_slots() const { return static_cast<ClientId>(clients_.size()); }
  std::size_t client_count() const { return active_; }
  const ReplicationStats& stats() const { return stats_; }
  void set_params(const ReplicationParams& params);
  const ReplicationParams& params() const { return params_; }

 private:
  void refill_budget(ClientView& view) const;
  // Builds the client's next frame into the history and the send order. Returns false
  // (leaving the history untouched) when the snapshot should be held back this tick.
  bool build_frame(ClientId c, std::uint32_t tick);
  EntityState current_state(const world::Entity& e) const;

  ReplicationParams params_;
  const world::World& world_;
  std::vector<ClientView> clients_;
  std::vector<ClientId> free_clients_;
  std::vector<ClientId> client_of_slot_;  // observer slot -> client, or kNoClient
  std::size_t active_ = 0;
  SnapshotWriter writer_;
  ReplicationStats stats_;

  // Per-tick scratch, reused so the steady state does not allocate.
  struct Candidate {
    std::uint32_t interest_index;
    std::uint32_t frame_index;
    float priority;
    EntityRecord record;
  };
  std::vector<Candidate> candidates_;
  std::vector<std::uint32_t> order_;
  std::vector<EntityRecord> send_order_;
  Frame next_frame_;
  SnapshotHeader header_;
};

}  // namespace zone::replication
