// A zone loop without a network: World + Replicator on the server side, one
// FrameReplica per client fed with the exact bytes the replicator sends, with optional
// seeded packet loss, late acknowledgments, shuffled parts, and replication on several
// workers (begin_tick + replicate_clients on threads, as the zone does).
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <random>
#include <span>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "protocol/quantize.hpp"
#include "replica/frame_replica.hpp"
#include "replication/entity_values.hpp"
#include "replication/replicator.hpp"
#include "wire.hpp"
#include "world/world.hpp"

namespace zone::test {

// One snapshot part as sent (before loss), decoded, with the ids its changes name
// (resolved against the client's baseline frame when it was sent).
struct SentPart {
  Decoded part;
  std::size_t size = 0;
  std::vector<std::uint32_t> despawned;
  std::vector<std::uint32_t> changed;
};

// An event as a client received it (Events messages, reliable: never lost here), and
// whether the client's replica held its entity when it arrived (after the tick's snapshot).
struct ReceivedEvent {
  std::uint32_t tick = 0;
  std::uint32_t sequence = 0;
  std::uint16_t kind = 0;
  world::EntityId entity = world::kNoEntity;
  world::EntityId target = world::kNoEntity;
  std::vector<std::int32_t> args;
  bool held = false;
};

struct LoopClient {
  std::uint32_t slot = 0;
  replication::ClientId id = 0;
  world::EntityId entity = 0;
  bool connected = true;
  bool acks = true;                     // acknowledges a complete frame before every tick
  std::uint32_t ack_delay = 0;          // ... the one it completed this many ticks ago
  std::deque<std::uint32_t> completed;  // ack_tick() after each tick, newest last
  bool keep_bytes = false;              // log every packet in `log`
  replica::FrameReplica replica;
  // This tick's parts as sent (before loss).
  std::vector<SentPart> sent;
  std::uint32_t acked_before_tick = 0;  // what the client acknowledged for this tick
  std::uint64_t packets = 0;
  std::uint64_t dropped = 0;
  std::size_t max_packet = 0;
  std::uint64_t bad_acks = 0;  // acknowledge() returned false
  std::uint64_t malformed = 0;
  std::uint64_t unresolved = 0;                      // changes naming a position the baseline lacks
  std::uint64_t baseline_mismatches = 0;             // server's and client's baseline frames differ
  std::vector<std::pair<std::uint32_t, Bytes>> log;  // (tick, packet) when keep_bytes
  std::vector<ReceivedEvent> events;                 // every event received, in order
  std::vector<Bytes> event_bytes;                    // every Events message, in order

  std::size_t bytes_this_tick() const {
    std::size_t n = 0;
    for (const SentPart& p : sent) n += p.size;
    return n;
  }
};

// The zone's built-in game (zone::make_game_types): the engine's rows, health
// (immediate) and max_health, players and NPCs starting at `max_health` hit points.
// Its schema is test_schema() (wire.hpp): health is row kHealth.
inline world::GameTypes test_game(std::int32_t max_health = 100) {
  world::GameTypes game;
  game.schema = test_schema();
  game.defaults = {{{max_health, max_health}}, {{max_health, max_health}}};
  game.player_type = kPlayerType;
  game.npc_type = kNpcType;
  return game;
}

// Default world for the tests: 200 m square, idle NPCs, 30 m view, 2 m hysteresis, the
// game of test_game() (health and max_health 100).
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
  p.game = test_game();
  return p;
}

// Replication as the tests run it: 20 Hz, a snapshot every tick, 32 frames of history,
// records wait at most 20 ticks; the budget and the packet size as given.
inline replication::ReplicationParams rparams(std::uint32_t bandwidth = 16000,
                                              std::uint32_t max_packet = 1200) {
  replication::ReplicationParams p;
  p.tick_rate = 20;
  p.max_packet_bytes = max_packet;
  p.client_bandwidth = bandwidth;
  p.snapshot_interval = 1;
  p.history_ticks = 32;
  p.max_deferral_ticks = 20;
  return p;
}

// Walks a player through a fixed tour of the world at full speed.
struct Tour {
  std::vector<std::pair<double, double>> points;
  std::size_t next = 0;
  void steer(world::World& w, std::uint32_t slot) {
    const world::Entity& e = w.entity(slot);
    auto [tx, ty] = points[next % points.size()];
    double dx = tx - e.x, dy = ty - e.y;
    if (std::hypot(dx, dy) < 1.0) {
      ++next;
      std::tie(tx, ty) = points[next % points.size()];
      dx = tx - e.x;
      dy = ty - e.y;
    }
    const double len = std::max(1e-9, std::hypot(dx, dy));
    w.set_intent(slot, dx / len, dy / len);
  }
};

inline Tour square_tour(double lo, double hi) {
  return Tour{{{lo, lo}, {hi, lo}, {hi, hi}, {lo, hi}}};
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
                     params.tick_rate, c.entity},
                    world.game().schema);
    return c;
  }
  void disconnect(LoopClient& c) {
    rep.remove_client(c.id);
    c.connected = false;
  }

  // One server tick: acknowledgments (the inputs received since the last tick), world
  // step, AOI, replication, delivery.
  void step() {
    world.events().clear();  // as the zone does at the start of each tick
    for (LoopClient& c : clients) {
      if (!c.connected) continue;
      std::uint32_t ack = 0;
      if (c.acks && c.completed.size() > c.ack_delay) {
        ack = c.completed[c.completed.size() - 1 - c.ack_delay];
      }
      c.acked_before_tick = c.acks ? ack : 0;
      if (c.acks && !rep.acknowledge(c.id, ack)) ++c.bad_acks;
      c.sent.clear();
    }
    ++tick;
    world.step(1.0 / params.tick_rate);
    if (before_aoi) before_aoi();
    rep.apply_events(tick, world.update_aoi());
    rep.apply_group_links(tick, world.parties().links());
    rep.apply_group_links(tick, world.guilds().links());
    world.clear_group_links();
    outbox.clear();
    if (workers.empty()) {
      rep.replicate(
          tick,
          [&](replication::ClientId id, std::span<const std::uint8_t> bytes) {
            outbox.push_back({id, Bytes(bytes.begin(), bytes.end())});
          },
          [&](replication::ClientId id, std::span<const std::uint8_t> bytes) {
            reliable_outbox.push_back({id, Bytes(bytes.begin(), bytes.end())});
          });
    } else {
      replicate_on_workers();
    }
    deliver();
    deliver_events();
    for (LoopClient& c : clients) {
      if (!c.connected) continue;
      c.completed.push_back(c.replica.ack_tick());
      if (c.completed.size() > 64) c.completed.pop_front();
    }
  }

  // Called each tick between the world's step and the AOI update (where a zone of a
  // world runs its ghost exchange and handoffs).
  std::function<void()> before_aoi;

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
  // view and every other member of its party and guild (full range), quantised, sorted
  // by id.
  //
  // Of another entity the client holds only the rows its audience allows: everyone's,
  // and the party's when both are in the same party; the rest read 0.
  std::vector<EntityState> truth(const LoopClient& c) const {
    std::vector<aoi::EntityHandle> view;
    world.aoi().view_set(world.entity(c.slot).aoi, view);
    std::vector<EntityState> out;
    for (const aoi::EntityHandle h : view) {
      out.push_back({world.entity(h.index).id, seen_values(c, h.index)});
    }
    for (const world::GroupKind kind : {world::GroupKind::kParty, world::GroupKind::kGuild}) {
      const world::Groups& groups = world.groups(kind);
      const world::GroupId group = world.entity(c.slot).group(kind);
      if (group == world::kNoGroup || !groups.params().full_range) continue;
      for (const world::Groups::Member& m : groups.members(group)) {
        const bool listed =
            std::any_of(out.begin(), out.end(), [&](const EntityState& s) { return s.id == m.id; });
        if (m.id != c.entity && !listed) {
          out.push_back({m.id, seen_values(c, m.slot)});
        }
      }
    }
    std::sort(out.begin(), out.end(),
              [](const EntityState& a, const EntityState& b) { return a.id < b.id; });
    return out;
  }

  // "" when the client's current frame equals the truth, else the first differences.
  std::string diff(const LoopClient& c) const {
    const std::vector<EntityState> want = truth(c);
    std::vector<EntityState> have;
    for (const replica::EntityView e : c.replica.current().entities) have.emplace_back(e);
    std::ostringstream o;
    int shown = 0;
    std::size_t i = 0, j = 0;
    while ((i < want.size() || j < have.size()) && shown < 6) {
      if (j == have.size() || (i < want.size() && want[i].id < have[j].id)) {
        o << "missing " << describe(want[i++]) << "; ";
        ++shown;
      } else if (i == want.size() || have[j].id < want[i].id) {
        o << "extra " << describe(have[j++]) << "; ";
        ++shown;
      } else {
        if (want[i] != have[j]) {
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

  // True when the client's own values in its newest frame are the player's.
  bool self_ok(const LoopClient& c) const { return same(c.replica.self(), values_of(c.slot)); }

  // Every row of the entity in `slot`, quantised as the replicator sends them.
  std::vector<std::int32_t> values_of(std::uint32_t slot) const {
    std::vector<std::int32_t> v(world.game().schema.size(), 0);
    replication::entity_values(world, slot, v);
    return v;
  }

  // The rows of the entity in `slot` that client `c` may receive; the others 0.
  std::vector<std::int32_t> seen_values(const LoopClient& c, std::uint32_t slot) const {
    std::vector<std::int32_t> v = values_of(slot);
    if (slot == c.slot) return v;
    const protocol::Schema& schema = world.game().schema;
    const world::GroupId party = world.entity(c.slot).party;
    const bool same_party = party != world::kNoGroup && world.entity(slot).party == party;
    const std::uint64_t keep = same_party ? schema.party_mask() : schema.public_mask();
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (((keep >> i) & 1) == 0) v[i] = 0;
    }
    return v;
  }

  world::World world;
  replication::Replicator rep;
  replication::ReplicationParams params;
  std::deque<LoopClient> clients;
  std::uint32_t tick = 0;
  double loss = 0.0;
  bool shuffle_parts = false;  // deliver each client's parts of a tick in random order
  std::mt19937_64 loss_rng;
  std::uint64_t stray_packets = 0;
  // Replication on this many workers over disjoint client ranges, on threads; none:
  // Replicator::replicate() on this thread.
  std::vector<replication::ReplicationWorker> workers;

 private:
  struct Outgoing {
    replication::ClientId client;
    Bytes bytes;
  };
  std::vector<Outgoing> reliable_outbox;

  void replicate_on_workers() {
    rep.begin_tick(tick);
    const replication::ClientId slots = rep.client_slots();
    const auto n = static_cast<replication::ClientId>(workers.size());
    std::vector<std::thread> threads;
    for (replication::ClientId k = 0; k < n; ++k) {
      workers[k].out.clear();
      workers[k].reliable.clear();
      const replication::ClientId begin = slots * k / n;
      const replication::ClientId end = slots * (k + 1) / n;
      threads.emplace_back(
          [this, k, begin, end] { rep.replicate_clients(tick, begin, end, workers[k]); });
    }
    for (std::thread& t : threads) t.join();
    rep.end_tick(workers);
    for (const replication::ReplicationWorker& w : workers) {
      for (const replication::PacketArena::Packet& p : w.out.packets()) {
        const auto b = w.out.bytes(p);
        outbox.push_back({p.client, Bytes(b.begin(), b.end())});
      }
      for (const replication::PacketArena::Packet& p : w.reliable.packets()) {
        const auto b = w.reliable.bytes(p);
        reliable_outbox.push_back({p.client, Bytes(b.begin(), b.end())});
      }
    }
  }

  // The tick's Events messages, after its snapshots (reliable: none lost), in order.
  void deliver_events() {
    for (const Outgoing& o : reliable_outbox) {
      LoopClient* c = find(o.client);
      if (c == nullptr) {
        ++stray_packets;
        continue;
      }
      c->event_bytes.push_back(o.bytes);
      const protocol::ServerPacket* p = protocol::parse_server_packet(o.bytes);
      const protocol::Events* events = p ? p->message_as_Events() : nullptr;
      if (events == nullptr || events->events() == nullptr) {
        ++c->malformed;
        continue;
      }
      for (const protocol::Event* e : *events->events()) {
        ReceivedEvent r{
            events->server_tick(), e->sequence(), e->kind(), e->entity(), e->target(), {}, false};
        if (e->args()) r.args.assign(e->args()->begin(), e->args()->end());
        r.held = e->entity() == c->entity || c->replica.find(e->entity()) != nullptr;
        c->events.push_back(std::move(r));
      }
    }
    reliable_outbox.clear();
  }

  // Decodes what was sent to each client, then delivers it (minus losses) to its replica.
  void deliver() {
    std::vector<std::vector<const Bytes*>> per_client(clients.size());
    for (const Outgoing& o : outbox) {
      std::size_t k = 0;
      while (k < clients.size() && !(clients[k].connected && clients[k].id == o.client)) ++k;
      if (k == clients.size()) {
        ++stray_packets;
        continue;
      }
      per_client[k].push_back(&o.bytes);
    }
    for (std::size_t k = 0; k < clients.size(); ++k) {
      LoopClient& c = clients[k];
      if (per_client[k].empty()) continue;
      for (const Bytes* b : per_client[k]) record(c, *b);
      check_baseline(c);
      if (shuffle_parts) std::shuffle(per_client[k].begin(), per_client[k].end(), loss_rng);
      for (const Bytes* b : per_client[k]) {
        if (loss > 0.0 && std::uniform_real_distribution<double>(0.0, 1.0)(loss_rng) < loss) {
          ++c.dropped;
          continue;
        }
        c.replica.apply(*b);
      }
    }
  }

  void record(LoopClient& c, const Bytes& bytes) {
    ++c.packets;
    c.max_packet = std::max(c.max_packet, bytes.size());
    if (c.keep_bytes) c.log.emplace_back(tick, bytes);
    std::optional<Decoded> d = decode(bytes, world.game().schema);
    if (!d) {
      ++c.malformed;
      return;
    }
    SentPart sp;
    sp.size = bytes.size();
    const replica::Frame* base = d->baseline() ? c.replica.frame_at(d->baseline()) : nullptr;
    for (const DecodedChange& ch : d->changes) {
      if (base == nullptr || ch.index >= base->entities.size()) {
        ++c.unresolved;
        continue;
      }
      (ch.mask == 0 ? sp.despawned : sp.changed).push_back(base->entities.id(ch.index));
    }
    sp.part = std::move(*d);
    c.sent.push_back(std::move(sp));
  }

  // The frame the server encoded against must be exactly the one the client holds.
  void check_baseline(LoopClient& c) {
    if (c.sent.empty() || c.sent[0].part.baseline() == 0) return;
    const std::uint32_t baseline = c.sent[0].part.baseline();
    const replication::Frame* server = rep.client(c.id).history.find(baseline);
    const replica::Frame* client = c.replica.frame_at(baseline);
    bool same = server != nullptr && client != nullptr && server->self == client->self &&
                server->entities.size() == client->entities.size();
    for (std::size_t i = 0; same && i < server->entities.size(); ++i) {
      same = server->entities[i].id == client->entities.id(i) &&
             test::same(server->values_of(i), client->entities.values(i));
    }
    if (!same) ++c.baseline_mismatches;
  }

  std::vector<Outgoing> outbox;
};

// The replica's violations, one line.
inline std::string violations_of(const LoopClient& c) {
  std::string s;
  for (const auto& v : c.replica.violations()) {
    s += std::string(replica::to_string(v.kind)) + " tick " + std::to_string(v.server_tick) +
         " id " + std::to_string(v.entity_id) + "; ";
  }
  return s;
}

// The checks every scenario ends with.
inline void check_clean(const Loopback& lb, const LoopClient& c) {
  CHECK_MESSAGE(c.replica.violations().empty(), violations_of(c));
  CHECK(c.max_packet <= lb.params.max_packet_bytes);
  CHECK(c.malformed == 0);
  CHECK(c.bad_acks == 0);
  CHECK(c.unresolved == 0);
  CHECK(c.baseline_mismatches == 0);
  CHECK(lb.stray_packets == 0);
}

}  // namespace zone::test
