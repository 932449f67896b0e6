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
// - Bandwidth: each client has a token budget. Despawns always go, and so does anything
//   the client may already hold (an entity in the last frame sent is never left out of
//   the next, so nothing it displays vanishes without a despawn). Other spawns and
//   updates go by an accumulated priority; what does not fit waits (its priority keeps
//   growing), never longer than max_deferral_ticks, and is never dropped.
// - Packets never exceed max_packet_bytes; a large update is split into parts that the
//   client assembles, acknowledging the tick only once it holds every part.
//
// Threads: begin_tick() and apply_events() run on the simulation thread; then
// replicate_clients() may run on several threads at once, each with its own
// ReplicationWorker and a disjoint range of clients. A client's bytes depend only on its
// own state and the world, never on which worker built them.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "aoi/grid_aoi.hpp"
#include "protocol/compact.hpp"
#include "protocol/record.hpp"
#include "replication/candidate.hpp"
#include "replication/client_view.hpp"
#include "replication/event_delivery.hpp"
#include "replication/interest_stage.hpp"
#include "replication/packet_arena.hpp"
#include "replication/replication_params.hpp"
#include "replication/tick_values.hpp"
#include "world/world.hpp"

namespace zone::replication {

// A worker's scratch space and output; reused every tick, so the steady state does not
// allocate.
struct ReplicationWorker {
  PacketArena out;       // snapshot parts: unreliable
  PacketArena reliable;  // Events messages: reliable, in order, after the tick's snapshot
  ReplicationStats stats;
  EventWorker events;

  using Candidate = replication::Candidate;
  std::vector<Candidate> candidates;
  std::vector<std::uint32_t> order;     // candidates by send order
  std::vector<std::uint32_t> selected;  // candidates to send, then by wire order
  std::vector<std::uint32_t> part_ends;
  std::vector<double> nearest;  // crowd: squared distances, partially sorted
  InterestTiers tiers;          // the client's interest policy, this snapshot
  Frame next_frame;
};

class Replicator {
 public:
  Replicator(const ReplicationParams& params, const world::World& world);

  // A client for the player at `player_slot`. A player already in the world (a new
  // connection taking it over, a resume) has a view and groups the AOI and the group
  // tables will not announce again: its interest starts from them (as of `tick`'s AOI
  // update), so its first snapshot holds everything it sees. A new player has none yet.
  ClientId add_client(std::uint32_t player_slot, std::uint32_t tick = 0);
  void remove_client(ClientId client);

  // An acknowledgment from the client's input. Returns false (and ignores it) when it
  // names a tick the server never sent to this client.
  bool acknowledge(ClientId client, std::uint32_t ack_tick);
  void set_last_input_sequence(ClientId client, std::uint32_t sequence);

  // Applies tick's AOI events to the clients' interest sets (simulation thread).
  void apply_events(std::uint32_t tick, std::span<const aoi::VisibilityEvent> events);
  // Then the party and guild links made or broken this tick (world::Groups): a linked
  // member is in the client's interest set at any distance, in the near tier, ranked for
  // bandwidth as if it stood next to the player, and never counted in a crowd nor put
  // behind by the view cone.
  void apply_group_links(std::uint32_t tick, std::span<const world::GroupLink> links);

  // Simulation thread, once per tick before replicate_clients(): the world's values
  // for this tick, quantised once for every client.
  void begin_tick(std::uint32_t tick);
  // Builds this tick's snapshots for clients [begin, end) into worker.out.
  void replicate_clients(std::uint32_t tick, ClientId begin, ClientId end,
                         ReplicationWorker& worker);
  // Simulation thread: folds the workers' counters into stats() (and their event
  // deliveries into deliveries(), when recorded).
  void end_tick(std::span<ReplicationWorker> workers);

  // Events: at most this many game events to one client per tick (chat not counted).
  void set_max_events_per_client(std::uint32_t n) { events_.set_max_per_client(n); }
  // Keep this tick's deliveries (for the truth check), sorted by (event, player).
  void set_record_deliveries(bool on) { record_deliveries_ = on; }
  std::span<const EventDelivery> deliveries() const { return deliveries_; }
  // Whether `c` holds entity `id` (docs/protocol.md, "Events"): the snapshot it
  // acknowledged last has it and the last one sent to it has it; its own player counts.
  bool holds(ClientId c, world::EntityId id) const;

  // The whole tick on the calling thread; send(client, bytes) is called for every
  // snapshot packet, send_reliable(client, bytes) for every Events message.
  template <typename Send, typename SendReliable>
  void replicate(std::uint32_t tick, Send&& send, SendReliable&& send_reliable) {
    begin_tick(tick);
    own_worker_.out.clear();
    own_worker_.reliable.clear();
    replicate_clients(tick, 0, client_slots(), own_worker_);
    for (const PacketArena::Packet& p : own_worker_.out.packets()) {
      send(p.client, own_worker_.out.bytes(p));
    }
    for (const PacketArena::Packet& p : own_worker_.reliable.packets()) {
      send_reliable(p.client, own_worker_.reliable.bytes(p));
    }
    end_tick({&own_worker_, 1});
  }
  template <typename Send>
  void replicate(std::uint32_t tick, Send&& send) {
    replicate(tick, std::forward<Send>(send), [](ClientId, std::span<const std::uint8_t>) {});
  }

  const ClientView& client(ClientId c) const { return clients_[c]; }
  // Number of client slots, active or not (iterate with client(c).active).
  ClientId client_slots() const { return static_cast<ClientId>(clients_.size()); }
  std::size_t client_count() const { return active_; }
  const ReplicationStats& stats() const { return stats_; }
  // The longest wait of a record sent since the last call (for metrics), then resets.
  std::uint32_t take_oldest_deferral() {
    const std::uint32_t v = stats_.oldest_deferral_ticks;
    stats_.oldest_deferral_ticks = 0;
    return v;
  }
  void set_params(const ReplicationParams& params);
  const ReplicationParams& params() const { return params_; }
  // This tick's quantised values of the entity in `slot`, every row (valid after
  // begin_tick()).
  protocol::Values current_values(std::uint32_t slot) const {
    return values_.of(slot, RowView::kFull);
  }
  const protocol::Schema& schema() const { return world_.game().schema; }

 private:
  void refill_budget(ClientView& view) const;
  // Sets or clears one reason for `id` to be in the client's interest set; the entry
  // goes when no reason is left.
  static void set_source(ClientView& v, world::EntityId id, std::uint32_t slot, std::uint32_t tick,
                         InterestSource source, bool on);
  // add_client's start for a player already in the world: its AOI view and its groups.
  void seed_interest(ClientView& v, std::uint32_t tick);
  std::vector<aoi::EntityHandle> view_scratch_;
  void replicate_client(ClientId c, std::uint32_t tick, ReplicationWorker& w);

  ReplicationParams params_;
  const world::World& world_;
  std::vector<ClientView> clients_;
  std::vector<ClientId> free_clients_;
  std::vector<ClientId> client_of_slot_;  // observer slot -> client, or kNoClient
  std::size_t active_ = 0;
  ReplicationStats stats_;
  TickValues values_;  // this tick's, quantised once for every client
  ReplicationWorker own_worker_;
  EventRouter events_;
  bool record_deliveries_ = false;
  std::vector<EventDelivery> deliveries_;
};

}  // namespace zone::replication
