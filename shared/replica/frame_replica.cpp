#include "replica/frame_replica.hpp"

#include <algorithm>
#include <cmath>

#include "protocol/codec.hpp"
#include "protocol/quantize.hpp"

namespace zone::replica {
namespace {

bool by_id(const EntityState& a, const EntityState& b) { return a.id() < b.id(); }

EntityState* find_in(std::vector<EntityState>& v, std::uint32_t id) {
  auto it = std::lower_bound(v.begin(), v.end(), id,
                             [](const EntityState& e, std::uint32_t k) { return e.id() < k; });
  return (it != v.end() && it->id() == id) ? &*it : nullptr;
}

EntityState with_position(const EntityState& e, std::int32_t x, std::int32_t y) {
  return EntityState(e.id(), x, y, e.heading(), e.health(), e.kind(), e.move_state());
}

}  // namespace

const char* to_string(Violation v) {
  switch (v) {
    case Violation::kUnknownBaseline: return "snapshot on unknown baseline";
    case Violation::kDeltaForUnknown: return "delta for unknown entity";
    case Violation::kDespawnUnknown: return "despawn of unknown entity";
    case Violation::kDuplicateSpawn: return "duplicate spawn";
    case Violation::kImpossibleJump: return "impossible jump";
    case Violation::kSelfInView: return "own entity replicated as foreign";
    case Violation::kInconsistentParts: return "inconsistent snapshot parts";
  }
  return "unknown";
}

void FrameReplica::reset(const ReplicaLimits& limits) {
  *this = FrameReplica{};
  limits_ = limits;
}

const Frame* FrameReplica::frame_at(std::uint32_t tick) const {
  const Frame& f = history_[tick % kFrameHistory];
  return (tick != 0 && f.tick == tick) ? &f : nullptr;
}

const EntityState* FrameReplica::find(std::uint32_t id) const {
  auto it = std::lower_bound(current_.entities.begin(), current_.entities.end(), id,
                             [](const EntityState& e, std::uint32_t k) { return e.id() < k; });
  return (it != current_.entities.end() && it->id() == id) ? &*it : nullptr;
}

const std::string& FrameReplica::name_of(std::uint32_t id) const {
  static const std::string kNone;
  auto it = names_.find(id);
  return it == names_.end() ? kNone : it->second;
}

void FrameReplica::violation(Violation v, std::uint32_t tick, std::uint32_t id) {
  violations_.push_back({v, tick, id});
}

bool FrameReplica::apply(std::span<const std::uint8_t> packet, const protocol::Snapshot& part) {
  const std::uint32_t tick = part.server_tick();
  // The client's own state rides on every part; keep the newest.
  if (part.self_state() != nullptr && tick >= self_tick_) {
    self_state_ = *part.self_state();
    self_tick_ = tick;
    last_input_sequence_ = part.last_input_sequence();
  }
  if (tick <= current_.tick || frame_at(tick) != nullptr) return false;  // old or duplicate
  const std::uint16_t count = std::max<std::uint16_t>(1, part.part_count());
  if (part.part() >= count) {
    violation(Violation::kInconsistentParts, tick, 0);
    return false;
  }
  if (count == 1) {
    const protocol::Snapshot* only = &part;
    complete(tick, part.baseline_tick(), {&only, 1});
    return current_.tick == tick;
  }

  auto it = std::find_if(pending_.begin(), pending_.end(),
                         [&](const PendingFrame& p) { return p.tick == tick; });
  if (it == pending_.end()) {
    // Keep a handful of frames in flight; older incomplete ones are abandoned.
    if (pending_.size() >= 8) pending_.erase(pending_.begin());
    pending_.push_back({tick, part.baseline_tick(), count, {}, 0});
    it = std::prev(pending_.end());
    it->parts.resize(count);
  }
  if (it->baseline != part.baseline_tick() || it->part_count != count) {
    violation(Violation::kInconsistentParts, tick, 0);
    return false;
  }
  auto& slot = it->parts[part.part()];
  if (!slot.empty()) return false;  // duplicate part
  slot.assign(packet.begin(), packet.end());
  if (++it->received < count) return false;

  std::vector<const protocol::Snapshot*> parts;
  parts.reserve(count);
  for (const auto& bytes : it->parts) {
    const protocol::ServerPacket* p = protocol::parse_server_packet(bytes);
    parts.push_back(p->message_as_Snapshot());
  }
  const std::uint32_t baseline = it->baseline;
  complete(tick, baseline, parts);
  pending_.erase(std::remove_if(pending_.begin(), pending_.end(),
                                [&](const PendingFrame& p) { return p.tick <= tick; }),
                 pending_.end());
  return current_.tick == tick;
}

void FrameReplica::complete(std::uint32_t tick, std::uint32_t baseline,
                            std::span<const protocol::Snapshot* const> parts) {
  Frame& next = scratch_;
  next.tick = tick;
  next.entities.clear();
  if (baseline != 0) {
    const Frame* base = frame_at(baseline);
    if (base == nullptr) {
      violation(Violation::kUnknownBaseline, tick, baseline);
      return;  // cannot rebuild: do not acknowledge this tick
    }
    next.entities = base->entities;
  }
  const std::uint32_t elapsed = baseline != 0 ? tick - baseline : 0;
  // Largest legal MoveDelta: max speed over the ticks since the baseline, plus rounding.
  const double max_step_cm =
      limits_.max_speed * elapsed / std::max(1u, limits_.tick_rate) / protocol::kPositionStep + 2.0;

  for (const protocol::Snapshot* s : parts) {
    if (s->despawns() != nullptr) {
      for (const std::uint32_t id : *s->despawns()) {
        auto it = std::lower_bound(next.entities.begin(), next.entities.end(), id,
                                   [](const EntityState& e, std::uint32_t k) { return e.id() < k; });
        if (it == next.entities.end() || it->id() != id) {
          violation(Violation::kDespawnUnknown, tick, id);
          continue;
        }
        next.entities.erase(it);
      }
    }
  }
  for (const protocol::Snapshot* s : parts) {
    if (s->spawns() == nullptr) continue;
    for (const protocol::Spawn* sp : *s->spawns()) {
      if (sp->state() == nullptr) continue;
      const EntityState& st = *sp->state();
      if (st.id() == limits_.self_id) {
        violation(Violation::kSelfInView, tick, st.id());
        continue;
      }
      if (find_in(next.entities, st.id()) != nullptr) {
        violation(Violation::kDuplicateSpawn, tick, st.id());
        continue;
      }
      auto pos = std::lower_bound(next.entities.begin(), next.entities.end(), st, by_id);
      next.entities.insert(pos, st);
      if (sp->name() != nullptr) names_[st.id()] = sp->name()->str();
    }
  }
  for (const protocol::Snapshot* s : parts) {
    if (s->moves() != nullptr) {
      for (const protocol::MoveDelta* m : *s->moves()) {
        EntityState* e = find_in(next.entities, m->id());
        if (e == nullptr) {
          violation(Violation::kDeltaForUnknown, tick, m->id());
          continue;
        }
        if (std::hypot(static_cast<double>(m->dx()), static_cast<double>(m->dy())) > max_step_cm) {
          violation(Violation::kImpossibleJump, tick, m->id());
        }
        *e = with_position(*e, e->x() + m->dx(), e->y() + m->dy());
      }
    }
    if (s->teleports() != nullptr) {
      for (const protocol::MoveAbsolute* m : *s->teleports()) {
        EntityState* e = find_in(next.entities, m->id());
        if (e == nullptr) {
          violation(Violation::kDeltaForUnknown, tick, m->id());
          continue;
        }
        *e = with_position(*e, m->x(), m->y());
      }
    }
    if (s->headings() != nullptr) {
      for (const protocol::HeadingUpdate* h : *s->headings()) {
        EntityState* e = find_in(next.entities, h->id());
        if (e == nullptr) {
          violation(Violation::kDeltaForUnknown, tick, h->id());
          continue;
        }
        *e = EntityState(e->id(), e->x(), e->y(), h->heading(), e->health(), e->kind(),
                         h->move_state());
      }
    }
    if (s->healths() != nullptr) {
      for (const protocol::HealthUpdate* h : *s->healths()) {
        EntityState* e = find_in(next.entities, h->id());
        if (e == nullptr) {
          violation(Violation::kDeltaForUnknown, tick, h->id());
          continue;
        }
        *e = EntityState(e->id(), e->x(), e->y(), e->heading(), h->health(), e->kind(),
                         e->move_state());
      }
    }
  }

  ++frames_completed_;
  Frame& stored = history_[tick % kFrameHistory];
  stored.tick = tick;
  stored.entities = next.entities;
  if (tick > current_.tick) {
    // Count view changes between the frames the client actually displayed.
    auto a = current_.entities.begin();
    auto b = next.entities.begin();
    while (a != current_.entities.end() || b != next.entities.end()) {
      if (b == next.entities.end() || (a != current_.entities.end() && a->id() < b->id())) {
        ++leaves_;
        ++a;
      } else if (a == current_.entities.end() || b->id() < a->id()) {
        ++enters_;
        ++b;
      } else {
        ++a;
        ++b;
      }
    }
    std::swap(current_, next);
  }
}

}  // namespace zone::replica
