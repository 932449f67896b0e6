// The world's fixed layers, streamed to each playing client beside its snapshots: the
// chunk layer (which chunks to have loaded: ChunkUpdate) and the static layer (the static
// objects by cell: StaticObjects, paced). The zone loop calls them on the tick thread
// after the AOI update and before replication; what each client has been told is kept in
// its session (ClientLayers), so a new session starts from nothing.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include <flatbuffers/flatbuffers.h>

#include "config/zone_config.hpp"
#include "net/host_thread.hpp"
#include "protocol/codec.hpp"
#include "replication/replicator.hpp"
#include "util/chunk_grid.hpp"
#include "world/world.hpp"

namespace zone {

class Sessions;

struct LayerCounters {
  // Chunk layer: ChunkUpdate messages sent, and the chunk loads and unloads they carried.
  std::uint64_t chunk_updates = 0;
  std::uint64_t chunk_loads = 0;
  std::uint64_t chunk_unloads = 0;
  std::uint64_t static_messages = 0;      // StaticObjects messages sent
  std::uint64_t static_objects_sent = 0;  // objects in them
  std::uint64_t static_bytes_sent = 0;    // their bytes
  // Ticks a player with static cells due waited: for its bandwidth budget, or because it
  // had kStaticUnackedBytes sent at ticks it has not acknowledged.
  std::uint64_t static_waits_budget = 0;
  std::uint64_t static_waits_unacked = 0;
};

// What one client has been told of the layers.
struct ClientLayers {
  // Chunk layer: the chunks the client was told to have loaded, ascending; whether it
  // has had its first ChunkUpdate check.
  std::vector<util::ChunkCoord> chunks;
  bool chunks_checked = false;
  // Static layer pacing (update_statics): the cells due but not sent yet (cell indices,
  // in order, from static_next on), the tick of the newest check, the bytes
  // network.client_bandwidth has not yet paid for, and the StaticObjects bytes sent at
  // ticks the client has not acknowledged (ack_tick), by tick.
  std::vector<std::uint32_t> static_queue;
  std::size_t static_next = 0;
  std::uint32_t static_check_tick = 0;
  double static_debt = 0.0;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> static_unacked;
  std::uint64_t static_unacked_bytes = 0;
  // Static layer: one bit per static cell, set once the cell's objects were sent (they
  // are sent once a session); whether it has had its first check.
  std::vector<std::uint64_t> static_sent;
  bool statics_checked = false;
};

// What one client may hold of StaticObjects bytes sent at ticks it has not acknowledged
// (beyond this, its static cells wait; one message may go over it).
inline constexpr std::uint64_t kStaticUnackedBytes = 64 * 1024;

class LayerStreams {
 public:
  // `config` is the zone's live config (reloads change it in place).
  LayerStreams(const config::ZoneConfig& config, const world::World& world,
               const replication::Replicator& replicator);

  // Chunk layer (chunks.enabled): brings each player's loaded chunks up to date with its
  // position at `tick` and sends the changes (ChunkUpdate). Players are checked every
  // chunks.interval_ticks, and a newcomer at once.
  void update_chunks(std::uint32_t tick, Sessions& sessions, std::span<net::SendBatch> out);
  // Static layer (static.map_file): sends each player the objects of every static cell
  // within static.view_radius that it has not been sent yet (StaticObjects), checked
  // every static.interval_ticks, and a newcomer at once. Paced: at most one message a
  // tick, and only once network.client_bandwidth has paid for the previous ones, and
  // none while the client has kStaticUnackedBytes sent at ticks it has not acknowledged;
  // cells due meanwhile wait in the session, in order.
  void update_statics(std::uint32_t tick, Sessions& sessions, std::span<net::SendBatch> out);

  const LayerCounters& counters() const { return counters_; }

 private:
  void send_statics(ClientLayers& s, net::PeerId peer, replication::ClientId client,
                    std::uint32_t tick, const aoi::StaticGrid& grid,
                    std::span<const world::StaticObject> objects, std::span<net::SendBatch> out);

  const config::ZoneConfig& config_;
  const world::World& world_;
  const replication::Replicator& replicator_;
  LayerCounters counters_;
  flatbuffers::FlatBufferBuilder fbb_{256};
  // Scratch, reused every tick.
  std::vector<util::ChunkCoord> chunk_load_, chunk_unload_, chunk_scratch_;
  std::vector<protocol::Chunk> wire_chunks_;
  std::vector<protocol::StaticCell> wire_cells_;
  std::vector<protocol::StaticObject> wire_objects_;
};

}  // namespace zone
