#include "zone/layer_streams.hpp"

#include <algorithm>

#include "config/static_map.hpp"
#include "protocol/quantize.hpp"
#include "zone/sessions.hpp"

namespace zone {

LayerStreams::LayerStreams(const config::ZoneConfig& config, const world::World& world,
                           const replication::Replicator& replicator)
    : config_(config), world_(world), replicator_(replicator) {}

void LayerStreams::update_chunks(std::uint32_t tick, Sessions& sessions,
                                 std::span<net::SendBatch> out) {
  const config::ChunkConfig& cc = config_.chunks;
  if (!cc.enabled) return;
  const bool due = tick % cc.interval_ticks == 0;
  const config::WorldConfig& w = config_.world;
  const util::ChunkGrid grid{w.min_x, w.min_y, w.max_x, w.max_y, cc.size};
  const double unload_radius = cc.load_radius + cc.hysteresis;
  sessions.for_each_playing([&](Session& session) {
    ClientLayers& s = session.layers;
    if (!due && s.chunks_checked) return;
    s.chunks_checked = true;
    chunk_load_.clear();
    chunk_unload_.clear();
    const world::Entity& e = world_.entity(session.player_slot);
    grid.update(e.x, e.y, cc.load_radius, unload_radius, s.chunks, chunk_load_, chunk_unload_,
                chunk_scratch_);
    if (chunk_load_.empty() && chunk_unload_.empty()) return;
    fbb_.Clear();
    auto wire = [&](const std::vector<util::ChunkCoord>& chunks) {
      wire_chunks_.clear();
      for (const util::ChunkCoord c : chunks) wire_chunks_.emplace_back(c.col, c.row);
      return fbb_.CreateVectorOfStructs(wire_chunks_);
    };
    const auto load = wire(chunk_load_);
    const auto unload = wire(chunk_unload_);
    const auto update = protocol::CreateChunkUpdate(
        fbb_, tick, static_cast<float>(cc.size), static_cast<float>(cc.load_radius),
        static_cast<float>(unload_radius), load, unload);
    fbb_.Finish(
        protocol::CreateServerPacket(fbb_, protocol::ServerMessage::ChunkUpdate, update.Union()));
    out[session.peer.host].add_copy(session.peer, protocol::bytes_of(fbb_),
                                    net::Delivery::kReliable, protocol::kReliableChannel);
    ++counters_.chunk_updates;
    counters_.chunk_loads += chunk_load_.size();
    counters_.chunk_unloads += chunk_unload_.size();
  });
}

void LayerStreams::update_statics(std::uint32_t tick, Sessions& sessions,
                                  std::span<net::SendBatch> out) {
  const aoi::StaticGrid& grid = world_.static_grid();
  if (grid.empty()) return;
  const config::StaticConfig& sc = config_.statics;
  const config::WorldConfig& w = config_.world;
  const util::ChunkGrid cells{w.min_x, w.min_y, w.max_x, w.max_y, grid.cell_size()};
  const std::span<const world::StaticObject> objects = world_.statics();
  // What network.client_bandwidth pays off per tick of what static messages cost.
  const double per_tick =
      static_cast<double>(config_.network.client_bandwidth) / std::max(1u, config_.tick.rate_hz);
  sessions.for_each_playing([&](Session& session) {
    ClientLayers& s = session.layers;
    s.static_debt = std::max(0.0, s.static_debt - per_tick);
    // Each player on its own tick of the interval (by its slot): the checks of a full
    // zone spread over the interval instead of landing on one tick.
    const bool due = (tick + session.player_slot) % sc.interval_ticks == 0;
    if (due || !s.statics_checked) {
      s.statics_checked = true;
      s.static_sent.resize((grid.cell_count() + 63) / 64, 0);
      const world::Entity& e = world_.entity(session.player_slot);
      chunk_scratch_.clear();
      cells.within(e.x, e.y, sc.view_radius, chunk_scratch_);
      // Every cell within view_radius at this tick is now sent or due: once those due
      // have gone, the last message can say so for this tick's position.
      s.static_check_tick = tick;
      for (const util::ChunkCoord c : chunk_scratch_) {
        const std::uint32_t k =
            static_cast<std::uint32_t>(c.row) * grid.cols() + static_cast<std::uint32_t>(c.col);
        // A cell is marked when it is queued: it is sent once a session.
        if (s.static_sent[k / 64] & (std::uint64_t{1} << (k % 64))) continue;
        s.static_sent[k / 64] |= std::uint64_t{1} << (k % 64);
        s.static_queue.push_back(k);
      }
    }
    send_statics(s, session.peer, session.client, tick, grid, objects, out);
  });
}

void LayerStreams::send_statics(ClientLayers& s, net::PeerId peer, replication::ClientId client,
                                std::uint32_t tick, const aoi::StaticGrid& grid,
                                std::span<const world::StaticObject> objects,
                                std::span<net::SendBatch> out) {
  if (s.static_next == s.static_queue.size()) return;
  // What the client has acknowledged (a snapshot tick it holds) it is alive to take: the
  // bytes sent at or before that tick no longer count against it.
  const std::uint32_t acked = replicator_.client(client).acked_tick;
  std::size_t done = 0;
  while (done < s.static_unacked.size() && s.static_unacked[done].first <= acked) {
    s.static_unacked_bytes -= s.static_unacked[done].second;
    ++done;
  }
  s.static_unacked.erase(s.static_unacked.begin(),
                         s.static_unacked.begin() + static_cast<std::ptrdiff_t>(done));
  // One message a tick at most, and only once the budget has paid for the last one (so a
  // message larger than a tick's budget goes, and the next waits until it is paid for):
  // the first check's first message goes at once.
  if (s.static_debt > 0.0) {
    ++counters_.static_waits_budget;
    return;
  }
  if (s.static_unacked_bytes >= kStaticUnackedBytes) {
    ++counters_.static_waits_unacked;
    return;
  }
  const config::StaticConfig& sc = config_.statics;
  // Whole cells per message, at most a cell's cap of objects and a bounded number of
  // cells each: every message fits one reliable packet.
  while (s.static_next < s.static_queue.size()) {
    const std::uint32_t k = s.static_queue[s.static_next];
    const std::uint32_t col = k % grid.cols(), row = k / grid.cols();
    const std::span<const std::uint32_t> in_cell = grid.cell(col, row);
    if (!wire_cells_.empty() &&
        (wire_objects_.size() + in_cell.size() > config::kMaxStaticObjectsPerCell ||
         wire_cells_.size() == config::kMaxStaticCellsPerMessage)) {
      break;
    }
    ++s.static_next;
    wire_cells_.emplace_back(static_cast<std::int32_t>(col), static_cast<std::int32_t>(row));
    for (const std::uint32_t i : in_cell) {
      const world::StaticObject& o = objects[i];
      wire_objects_.emplace_back(o.id, protocol::quantize_position(o.x),
                                 protocol::quantize_position(o.y),
                                 static_cast<std::uint32_t>(protocol::quantize_position(o.radius)),
                                 static_cast<protocol::StaticKind>(o.kind));
    }
  }
  // `more` until the last cell due has gone: then every cell within view_radius of the
  // player's position at the newest check has been sent (server_tick names that check).
  const bool more = s.static_next < s.static_queue.size();
  fbb_.Clear();
  const auto message = protocol::CreateStaticObjects(
      fbb_, s.static_check_tick, static_cast<float>(grid.cell_size()),
      static_cast<float>(sc.view_radius), fbb_.CreateVectorOfStructs(wire_cells_),
      fbb_.CreateVectorOfStructs(wire_objects_), more);
  fbb_.Finish(
      protocol::CreateServerPacket(fbb_, protocol::ServerMessage::StaticObjects, message.Union()));
  const std::span<const std::uint8_t> bytes = protocol::bytes_of(fbb_);
  out[peer.host].add_copy(peer, bytes, net::Delivery::kReliable, protocol::kReliableChannel);
  ++counters_.static_messages;
  counters_.static_objects_sent += wire_objects_.size();
  counters_.static_bytes_sent += bytes.size();
  s.static_debt += static_cast<double>(bytes.size());
  s.static_unacked.emplace_back(tick, static_cast<std::uint32_t>(bytes.size()));
  s.static_unacked_bytes += bytes.size();
  wire_cells_.clear();
  wire_objects_.clear();
  if (!more) {
    s.static_queue.clear();
    s.static_next = 0;
  }
}

}  // namespace zone
