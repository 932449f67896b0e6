// A zone loop without a network: World + Replicator on the server side, one
// FrameReplica per client fed with the exact bytes the replicator sends (through the
// verified parser, as client-sim's Bot does), with optional seeded packet loss.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <random>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "protocol/quantize.hpp"
#include "replica/frame_replica.hpp"
#include "replication/replicator.hpp"
#include "wire.hpp"
#include "world/world.hpp"

namespace zone::test {

struct LoopClient {
  std::uint32_t slot = 0;
  replication::ClientId id = 0;
  world::EntityId entity = 0;
  bool connected = true;
  bool acks = true;  // acknowledges its newest complete frame before every tick
  replica::FrameReplica replica;
  // This tick's packets as sent (before loss), decoded, with their sizes.
  std::vector<SnapshotSpec> sent;
  std::vector<std::size_t> sizes;
  std::uint32_t acked_before_tick = 0;  // what the client acknowledged for this tick
  std::uint64_t packets = 0;
  std::uint64_t dropped = 0;
  std::size_t max_packet = 0;
  std::uint64_t bad_acks = 0;  // acknowledge() returned false
  std::uint64_t malformed = 0;
};

// Default world for the tests: 200 m square, idle NPCs, 30 m view, 2 m hysteresis.
inline world::WorldParams small_world(std::uint32_t npcs,
                                      world::NpcBehaviour behaviour = world::NpcBehaviour::kIdle) {
  world::WorldParams p;
  p.grid.bounds = {{0.0, 0.0}, {200.0, 200.0}};
  p.grid.cell_size = 16.0;
  p.grid.hysteresis = 2.0;
  p.player_view_radius = 30.0;
  p.player_max_speed = 7.0;
  p.spawn_seed = 11;
  p.npcs.count = npcs;
  p.npcs.seed = 5;
  p.npcs.behaviour = behaviour;
  p.npcs.speed = 3.0;
  return p;
}

class Loopback {
 public:
  Loopback(const world::WorldParams& wp, const replication::ReplicationParams& rp,
           std::uint64_t loss_seed = 1)
      : world(wp), rep(rp, world), params(rp), loss_rng(loss_seed) {
    world.spawn_npcs();
  }

  // A player with a client. The player is placed by the world's seeded spawner.
  LoopClient& connect(const std::string& name) {
    const std::uint32_t slot = world.spawn_player(name);
    return attach(slot);
  }
  // A client for an existing player slot (before its first AOI update).
  LoopClient& attach(std::uint32_t slot) {
    LoopClient& c = clients.emplace_back();
    c.slot = slot;
    c.entity = world.entity(slot).id;
    c.id = rep.add_client(slot);
    c.replica.reset({std::max(world.params().player_max_speed, world.params().npcs.speed),
                     params.tick_rate, c.entity});
    return c;
  }
  void disconnect(LoopClient& c) {
    rep.remove_client(c.id);
    c.connected = false;
  }

  // One server tick: acknowledgments (the inputs received since the last tick), world
  // step, AOI, replication, delivery.
  void step() {
    for (LoopClient& c : clients) {
      if (!c.connected) continue;
      c.acked_before_tick = c.acks ? c.replica.ack_tick() : 0;
      if (c.acks && !rep.acknowledge(c.id, c.replica.ack_tick())) ++c.bad_acks;
      c.sent.clear();
      c.sizes.clear();
    }
    ++tick;
    world.step(1.0 / params.tick_rate);
    rep.apply_events(world.update_aoi());
    rep.replicate(tick, [&](replication::ClientId id, std::span<const std::uint8_t> bytes) {
      LoopClient* c = find(id);
      if (c == nullptr) {
        ++stray_packets;
        return;
      }
      ++c->packets;
      c->max_packet = std::max(c->max_packet, bytes.size());
      c->sizes.push_back(bytes.size());
      const protocol::Snapshot* s = snapshot_of(bytes);
      if (s == nullptr) {
        ++c->malformed;
        return;
      }
      c->sent.push_back(decode(*s));
      if (loss > 0.0 && std::uniform_real_distribution<double>(0.0, 1.0)(loss_rng) < loss) {
        ++c->dropped;
        return;
      }
      c->replica.apply(bytes, *s);
    });
  }

  void run(int ticks) {
    for (int i = 0; i < ticks; ++i) step();
  }

  LoopClient* find(replication::ClientId id) {
    for (LoopClient& c : clients) {
      if (c.connected && c.id == id) return &c;
    }
    return nullptr;
  }

  // The state the server means the client to hold: every entity in the player's AOI
  // view, quantised, sorted by id.
  std::vector<EntityState> truth(const LoopClient& c) const {
    std::vector<aoi::EntityHandle> view;
    world.aoi().view_set(world.entity(c.slot).aoi, view);
    std::vector<EntityState> out;
    for (const aoi::EntityHandle h : view) out.push_back(quantised(world.entity(h.index)));
    std::sort(out.begin(), out.end(),
              [](const EntityState& a, const EntityState& b) { return a.id() < b.id(); });
    return out;
  }

  static EntityState quantised(const world::Entity& e) {
    return EntityState(e.id, protocol::quantize_position(e.x), protocol::quantize_position(e.y),
                       protocol::quantize_heading(e.heading), e.health,
                       e.kind == world::EntityKind::kPlayer ? protocol::EntityKind::Player
                                                            : protocol::EntityKind::Npc,
                       e.moving() ? protocol::MoveState::Walking : protocol::MoveState::Idle);
  }

  // "" when the client's current frame equals the truth, else the first differences.
  std::string diff(const LoopClient& c) const {
    const std::vector<EntityState> want = truth(c);
    const std::vector<EntityState>& have = c.replica.current().entities;
    std::ostringstream o;
    int shown = 0;
    std::size_t i = 0, j = 0;
    while ((i < want.size() || j < have.size()) && shown < 6) {
      if (j == have.size() || (i < want.size() && want[i].id() < have[j].id())) {
        o << "missing " << describe(want[i++]) << "; ";
        ++shown;
      } else if (i == want.size() || have[j].id() < want[i].id()) {
        o << "extra " << describe(have[j++]) << "; ";
        ++shown;
      } else {
        if (!same_state(want[i], have[j])) {
          o << "want " << describe(want[i]) << " have " << describe(have[j]) << "; ";
          ++shown;
        }
        ++i;
        ++j;
      }
    }
    if (!o.str().empty()) {
      o << "(tick " << tick << ", client frame " << c.replica.ack_tick() << ", " << want.size()
        << " wanted, " << have.size() << " held)";
    }
    return o.str();
  }

  // Checks the AOI rule directly on the world: live entities within the view radius
  // must be held, those beyond radius + hysteresis must not. "" when it holds.
  std::string geometry(const LoopClient& c) const {
    const world::Entity& self = world.entity(c.slot);
    const double r = world.effective_player_radius();
    const double h = world.params().grid.hysteresis;
    std::ostringstream o;
    world.for_each_entity([&](std::uint32_t slot, const world::Entity& e) {
      if (slot == c.slot) return;
      const double d = std::hypot(e.x - self.x, e.y - self.y);
      const bool held = c.replica.find(e.id) != nullptr;
      if (d <= r && !held) o << "entity " << e.id << " at " << d << " m not held; ";
      if (d > r + h && held) o << "entity " << e.id << " at " << d << " m still held; ";
    });
    return o.str();
  }

  // True when the client's own state in the newest snapshot is the player's.
  bool self_ok(const LoopClient& c) const {
    return same_state(c.replica.self_state(), quantised(world.entity(c.slot)));
  }

  world::World world;
  replication::Replicator rep;
  replication::ReplicationParams params;
  std::deque<LoopClient> clients;
  std::uint32_t tick = 0;
  double loss = 0.0;
  std::mt19937_64 loss_rng;
  std::uint64_t stray_packets = 0;
};

}  // namespace zone::test
