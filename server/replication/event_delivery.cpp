#include "replication/event_delivery.hpp"

#include <algorithm>

namespace zone::replication {
namespace {

// The position of the first entry with id >= `id` at or after `from` (ids ascending):
// a gallop, since a tick's events name few of a frame's entities.
std::size_t seek(const std::vector<FrameEntry>& entries, std::size_t from, world::EntityId id) {
  std::size_t step = 1;
  std::size_t lo = from;
  std::size_t hi = from;
  while (hi < entries.size() && entries[hi].id < id) {
    lo = hi + 1;
    hi += step;
    step *= 2;
  }
  hi = std::min(hi, entries.size());
  return static_cast<std::size_t>(
      std::lower_bound(entries.begin() + static_cast<std::ptrdiff_t>(lo),
                       entries.begin() + static_cast<std::ptrdiff_t>(hi), id,
                       [](const FrameEntry& e, world::EntityId k) { return e.id < k; }) -
      entries.begin());
}

}  // namespace

void EventRouter::prepare(const world::World& world) {
  world_ = &world;
  entity_events_.clear();
  direct_events_.clear();
  const auto events = world.events().events();
  const auto specs = world.game().schema.events();
  for (std::uint32_t i = 0; i < events.size(); ++i) {
    const world::WorldEvent& e = events[i];
    if (e.route != world::EventRoute::kEntity) {
      direct_events_.push_back(i);
      continue;
    }
    const world::Entity* subject = world.find(e.entity);
    if (subject == nullptr) continue;  // gone this tick: nobody holds it any more
    entity_events_.push_back({e.entity, i, specs[e.kind].audience, subject->party});
  }
  std::sort(entity_events_.begin(), entity_events_.end(),
            [](const EntityEvent& a, const EntityEvent& b) {
              return a.entity != b.entity ? a.entity < b.entity : a.index < b.index;
            });
}

void EventRouter::collect(std::uint32_t tick, const ClientView& view, EventWorker& w) const {
  w.chosen.clear();
  const world::Entity& me = world_->entity(view.player_slot);
  // Direct routes first: they do not depend on what the client holds.
  for (const std::uint32_t i : direct_events_) {
    const world::WorldEvent& e = world_->events().events()[i];
    bool to_me = false;
    switch (e.route) {
      case world::EventRoute::kPlayer:
        to_me = e.target == view.player_id;
        break;
      case world::EventRoute::kParty:
        to_me = e.group != world::kNoGroup && me.party == e.group;
        break;
      case world::EventRoute::kGuild:
        to_me = e.group != world::kNoGroup && me.guild == e.group;
        break;
      case world::EventRoute::kZone:
        to_me = true;
        break;
      case world::EventRoute::kEntity:
        break;
    }
    if (to_me) w.chosen.push_back(i);
  }
  // Events about entities: those the client holds (the acknowledged frame has it, and the
  // last frame sent still has it), and those about its own player.
  const Frame* acked =
      tick - view.acked_tick < view.history.size() ? view.history.find(view.acked_tick) : nullptr;
  const Frame* last = view.history.find(view.last_sent_tick);
  std::size_t in_acked = 0;
  std::size_t in_last = 0;
  std::uint32_t game_events = 0;
  for (const EntityEvent& ev : entity_events_) {
    bool held = false;
    const bool own = ev.entity == view.player_id;
    if (own) {
      held = view.acked_tick != 0;  // it has its Welcome and a snapshot
    } else if (acked != nullptr && last != nullptr) {
      in_acked = seek(acked->entities, in_acked, ev.entity);
      in_last = seek(last->entities, in_last, ev.entity);
      held = in_acked < acked->entities.size() && acked->entities[in_acked].id == ev.entity &&
             in_last < last->entities.size() && last->entities[in_last].id == ev.entity;
    }
    if (!held) continue;
    if (ev.audience == protocol::Audience::kOwner && !own) continue;
    if (ev.audience == protocol::Audience::kParty && !own &&
        (ev.party == world::kNoGroup || me.party != ev.party)) {
      continue;
    }
    const bool chat = world_->events().events()[ev.index].kind == protocol::kChatEvent;
    if (!chat && game_events >= max_per_client_) {
      ++w.over_budget;
      continue;
    }
    if (!chat) ++game_events;
    w.chosen.push_back(ev.index);
  }
  // In the order they happened.
  std::sort(w.chosen.begin(), w.chosen.end());
}

}  // namespace zone::replication
