#include "world/ghosts.hpp"

#include <algorithm>
#include <cmath>

namespace zone::world {

void collect_near(const World& world, const aoi::Bounds& area, double distance,
                  std::vector<GhostState>& out) {
  const double d2 = distance * distance;
  world.for_each_entity([&](std::uint32_t slot, const Entity& e) {
    if (e.ghost) return;  // only what this zone owns: never a ghost of a ghost
    const double dx = std::max({0.0, area.min.x - e.x, e.x - area.max.x});
    const double dy = std::max({0.0, area.min.y - e.y, e.y - area.max.y});
    if (dx * dx + dy * dy > d2) return;
    GhostState g;
    g.id = e.id;
    g.kind = e.kind;
    g.x = e.x;
    g.y = e.y;
    g.heading = static_cast<float>(e.heading);
    g.vx = static_cast<float>(e.vx);
    g.vy = static_cast<float>(e.vy);
    g.properties = world.property_values(slot);
    g.name = e.name;
    out.push_back(std::move(g));
  });
}

bool Ghosts::apply(std::uint32_t source, std::uint64_t epoch, std::span<const GhostState> list,
                   Clock::time_point now) {
  Source& src = sources_[source];
  if (!src.has_epoch) {
    src.epoch = epoch;
    src.has_epoch = true;
  }
  if (epoch < src.epoch) {
    ++stats_.stale_lists;
    return false;
  }
  src.heard = now;
  if (epoch > src.epoch) {
    stats_.restarted += remove_all(src);
    src.epoch = epoch;
    src.quiet_ticks = std::max(1u, id_reuse_ticks_);
    return true;
  }
  if (src.quiet_ticks > 0) return true;  // heard, but its ids may still be in baselines
  const std::uint64_t list_number = ++src.lists;
  for (const GhostState& g : list) {
    auto it = src.ghosts.find(g.id);
    if (it == src.ghosts.end()) {
      if (const Entity* known = world_.find(g.id)) {
        if (!known->ghost) {
          ++stats_.owned_here;  // refused: this zone owns it (just handed over here)
          owned_listed_.push_back({source, g.id, list_number});
          continue;
        }
        // Another source's ghost: the entity was handed over from that zone to this
        // source. It stays the same entity here, now following this source's reports.
        if (!rehome(g.id, src)) {
          ++stats_.rejected;
          continue;
        }
        it = src.ghosts.find(g.id);
        ++stats_.rehomed;
      }
    }
    if (it == src.ghosts.end()) {
      Ghost ghost;
      ghost.slot = world_.spawn_ghost(g.id, g.kind, g.name, g.properties);
      // A new ghost starts where its owner is: no client has seen it anywhere else.
      world_.set_ghost_state(ghost.slot, g.x, g.y, g.heading, g.vx, g.vy, g.properties);
      it = src.ghosts.emplace(g.id, std::move(ghost)).first;
      ++stats_.spawned;
    }
    it->second.target = g;
    it->second.seen = list_number;
    it->second.unlisted = 0;
  }
  // What the source no longer lists has left its border area (or its world), or went to
  // another zone: it goes once the grace is over, unless another source lists it.
  for (auto& [id, ghost] : src.ghosts) {
    if (ghost.seen != list_number && ghost.unlisted == 0) {
      ghost.unlisted = kUnlistedGraceTicks;
      ghost.target.x = world_.entity(ghost.slot).x;  // stays where it is meanwhile
      ghost.target.y = world_.entity(ghost.slot).y;
      ghost.target.vx = ghost.target.vy = 0.0f;
    }
  }
  return true;
}

bool Ghosts::rehome(EntityId id, Source& to) {
  for (auto& [index, other] : sources_) {
    if (&other == &to) continue;
    const auto it = other.ghosts.find(id);
    if (it == other.ghosts.end()) continue;
    Ghost ghost = it->second;
    other.ghosts.erase(it);
    ghost.unlisted = 0;
    to.ghosts.emplace(id, ghost);
    return true;
  }
  return false;
}

std::optional<std::uint32_t> Ghosts::owner(EntityId id) const {
  for (const auto& [index, src] : sources_) {
    if (src.ghosts.count(id) != 0) return index;
  }
  return std::nullopt;
}

std::uint64_t Ghosts::remove_all(Source& source) {
  for (auto& [id, ghost] : source.ghosts) world_.despawn(ghost.slot);
  const std::uint64_t removed = source.ghosts.size();
  source.ghosts.clear();
  return removed;
}

std::uint32_t Ghosts::release(EntityId id) {
  for (auto& [source, src] : sources_) {
    const auto it = src.ghosts.find(id);
    if (it == src.ghosts.end()) continue;
    const std::uint32_t slot = it->second.slot;
    src.ghosts.erase(it);
    return slot;
  }
  return World::kNoSlot;
}

void Ghosts::adopt(std::uint32_t source, std::uint32_t slot, Clock::time_point now) {
  const auto [found, fresh] = sources_.try_emplace(source);
  Source& src = found->second;
  if (fresh) src.heard = now;  // expires like any other source if it goes silent
  const Entity& e = world_.entity(slot);
  Ghost ghost;
  ghost.slot = slot;
  ghost.target = {e.id,
                  e.kind,
                  e.x,
                  e.y,
                  static_cast<float>(e.heading),
                  0.0f,
                  0.0f,
                  world_.property_values(slot),
                  e.name};
  // Counts as listed by the source's latest list: only a later list that leaves it out
  // removes it.
  ghost.seen = src.lists;
  src.ghosts.insert_or_assign(e.id, std::move(ghost));
}

void Ghosts::expire(Clock::time_point now, Clock::duration timeout) {
  for (auto it = sources_.begin(); it != sources_.end();) {
    if (now - it->second.heard <= timeout) {
      ++it;
      continue;
    }
    stats_.expired += remove_all(it->second);
    it = sources_.erase(it);
  }
}

void Ghosts::follow(double max_step) {
  for (auto& [source, src] : sources_) {
    if (src.quiet_ticks > 0) --src.quiet_ticks;
    for (auto it = src.ghosts.begin(); it != src.ghosts.end();) {
      Ghost& ghost = it->second;
      if (ghost.unlisted == 0 || --ghost.unlisted > 0) {
        ++it;
        continue;
      }
      world_.despawn(ghost.slot);
      ++stats_.removed;
      it = src.ghosts.erase(it);
    }
    for (auto& [id, ghost] : src.ghosts) {
      const Entity& e = world_.entity(ghost.slot);
      const GhostState& t = ghost.target;
      double x = t.x, y = t.y;
      const double dx = t.x - e.x, dy = t.y - e.y;
      const double dist = std::hypot(dx, dy);
      if (dist > max_step) {
        x = e.x + dx * (max_step / dist);
        y = e.y + dy * (max_step / dist);
      }
      world_.set_ghost_state(ghost.slot, x, y, t.heading, t.vx, t.vy, t.properties);
    }
  }
}

}  // namespace zone::world
