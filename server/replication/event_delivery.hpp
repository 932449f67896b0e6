// Event delivery: the replication stage that takes the world's events of a tick (hits,
// deaths, chat lines: world/event_log.hpp) to exactly the clients their route names, as
// reliable Events messages sent after the tick's snapshot (docs/protocol.md, "Events").
//
// An event about an entity (EventRoute::kEntity) goes to the clients that *hold* the
// entity: the newest snapshot the client acknowledged has it and the newest snapshot sent
// to it still has it (no despawn sent since). So a client never receives an event about
// an entity before it has that entity's spawn, and never about an entity outside its
// view. Its own player always receives the events about itself. The event kind's audience
// narrows the holders (owner: its player only; party: its player and its party's members).
// Direct routes (one player, a party, a guild, the zone) need no holding.
//
// Threads: prepare() on the simulation thread once per tick; deliver() on the workers, a
// client at a time, reading only the prepared tick and that client's own view.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include <flatbuffers/flatbuffers.h>

#include "protocol/codec.hpp"
#include "replication/client_view.hpp"
#include "world/event_log.hpp"
#include "world/world.hpp"

namespace zone::replication {

// One delivery, kept for the truth check and the counters.
struct EventDelivery {
  std::uint32_t event = 0;                    // index in the tick's event log
  world::EntityId player = world::kNoEntity;  // the receiving client's player
};

// A worker's event scratch and output; reused every tick.
struct EventWorker {
  flatbuffers::FlatBufferBuilder fbb{1024};
  std::vector<std::uint32_t> chosen;  // indices into the log, for one client
  std::vector<protocol::EventView> views;
  std::vector<EventDelivery> delivered;  // this tick's, every client of this worker
  std::uint64_t messages = 0;
  std::uint64_t bytes = 0;
  std::uint64_t over_budget = 0;  // deliveries dropped by max_per_client
};

class EventRouter {
 public:
  // At most this many events to one client in one tick (beyond: dropped and counted;
  // chat lines are never dropped here: chat has its own rate limits).
  explicit EventRouter(std::uint32_t max_per_client = 256) : max_per_client_(max_per_client) {}
  void set_max_per_client(std::uint32_t n) { max_per_client_ = n; }

  // Simulation thread: this tick's events, sorted for the workers.
  void prepare(const world::World& world);
  bool empty() const { return entity_events_.empty() && direct_events_.empty(); }

  // Appends client `c`'s Events messages (if any) to `out`, after its snapshot of
  // `tick` was built (its view's history and last_sent_tick are this tick's).
  template <typename Out>
  void deliver(std::uint32_t tick, const ClientView& view, EventWorker& w, Out&& out) const {
    if (empty()) return;
    collect(tick, view, w);
    write(tick, view, w, out);
  }

 private:
  void collect(std::uint32_t tick, const ClientView& view, EventWorker& w) const;
  template <typename Out>
  void write(std::uint32_t tick, const ClientView& view, EventWorker& w, Out& out) const;

  struct EntityEvent {
    world::EntityId entity;
    std::uint32_t index;  // in the log
    protocol::Audience audience;
    world::GroupId party;  // the entity's party (for the party audience)
  };
  std::uint32_t max_per_client_;
  const world::World* world_ = nullptr;
  std::vector<EntityEvent> entity_events_;    // by (entity, index)
  std::vector<std::uint32_t> direct_events_;  // by index
};

template <typename Out>
void EventRouter::write(std::uint32_t tick, const ClientView& view, EventWorker& w,
                        Out& out) const {
  if (w.chosen.empty()) return;
  const world::EventLog& log = world_->events();
  const auto events = log.events();
  w.views.clear();
  for (const std::uint32_t i : w.chosen) {
    const world::WorldEvent& e = events[i];
    w.views.push_back(
        {e.sequence, e.kind, e.entity, e.target, e.arg_span(), log.text(e), log.name(e)});
    w.delivered.push_back({i, view.player_id});
  }
  for (std::size_t at = 0; at < w.views.size(); at += protocol::kMaxEventsPerMessage) {
    const std::size_t n = std::min(protocol::kMaxEventsPerMessage, w.views.size() - at);
    protocol::build_events(w.fbb, tick, std::span(w.views).subspan(at, n));
    out(protocol::bytes_of(w.fbb));
    ++w.messages;
    w.bytes += w.fbb.GetSize();
  }
}

}  // namespace zone::replication
