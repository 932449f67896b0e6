#include "replica/frame_replica.hpp"

#include <algorithm>
#include <cmath>

#include "protocol/codec.hpp"
#include "protocol/quantize.hpp"

namespace zone::replica {
namespace {

bool by_id(const EntityState& a, const EntityState& b) {
  return a.id() < b.id();
}

}  // namespace

const char* to_string(Violation v) {
  switch (v) {
    case Violation::kUnknownBaseline:
      return "snapshot on unknown baseline";
    case Violation::kDeltaForUnknown:
      return "delta for unknown entity";
    case Violation::kDespawnUnknown:
      return "despawn of unknown entity";
    case Violation::kDuplicateSpawn:
      return "duplicate spawn";
    case Violation::kImpossibleJump:
      return "impossible jump";
    case Violation::kSelfInView:
      return "own entity replicated as foreign";
    case Violation::kInconsistentParts:
      return "inconsistent snapshot parts";
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
  if (part.header() == nullptr) {
    violation(Violation::kInconsistentParts, 0, 0);
    return false;
  }
  const protocol::SnapshotHeader& header = *part.header();
  const std::uint32_t tick = header.server_tick();
  // The client's own state rides on every part; keep the newest.
  if (part.self_state() != nullptr && tick >= self_tick_) {
    self_state_ = *part.self_state();
    self_tick_ = tick;
    last_input_sequence_ = header.last_input_sequence();
  }
  if (tick <= current_.tick || frame_at(tick) != nullptr) return false;  // old or duplicate
  const std::uint16_t count = std::max<std::uint16_t>(1, header.part_count());
  if (header.part() >= count) {
    violation(Violation::kInconsistentParts, tick, 0);
    return false;
  }
  if (count == 1) {
    const protocol::Snapshot* only = &part;
    complete(tick, header.baseline_tick(), {&only, 1});
    return current_.tick == tick;
  }

  auto it = std::find_if(pending_.begin(), pending_.end(),
                         [&](const PendingFrame& p) { return p.tick == tick; });
  if (it == pending_.end()) {
    // Keep a handful of frames in flight; older incomplete ones are abandoned.
    if (pending_.size() >= 8) pending_.erase(pending_.begin());
    pending_.push_back({tick, header.baseline_tick(), count, {}, 0});
    it = std::prev(pending_.end());
    it->parts.resize(count);
  }
  if (it->baseline != header.baseline_tick() || it->part_count != count) {
    violation(Violation::kInconsistentParts, tick, 0);
    return false;
  }
  auto& slot = it->parts[header.part()];
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
  next.updated.clear();
  if (baseline != 0) {
    const Frame* base = frame_at(baseline);
    if (base == nullptr) {
      violation(Violation::kUnknownBaseline, tick, baseline);
      return;  // cannot rebuild: do not acknowledge this tick
    }
    next.entities = base->entities;
    next.updated = base->updated;
  }
  auto index_of = [&](std::uint32_t id) -> std::ptrdiff_t {
    auto it = std::lower_bound(next.entities.begin(), next.entities.end(), id,
                               [](const EntityState& e, std::uint32_t k) { return e.id() < k; });
    return (it != next.entities.end() && it->id() == id) ? it - next.entities.begin() : -1;
  };
  // Largest legal move of an entity whose state dates from tick `since`: max speed over
  // the elapsed ticks, plus rounding.
  auto max_step_cm = [&](std::uint32_t since) {
    return limits_.max_speed * (tick - since) / std::max(1u, limits_.tick_rate) /
               protocol::kPositionStep +
           2.0;
  };

  for (const protocol::Snapshot* s : parts) {
    if (s->despawns() == nullptr) continue;
    for (const std::uint32_t id : *s->despawns()) {
      const std::ptrdiff_t i = index_of(id);
      if (i < 0) {
        violation(Violation::kDespawnUnknown, tick, id);
        continue;
      }
      next.entities.erase(next.entities.begin() + i);
      next.updated.erase(next.updated.begin() + i);
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
      if (index_of(st.id()) >= 0) {
        violation(Violation::kDuplicateSpawn, tick, st.id());
        continue;
      }
      auto pos = std::lower_bound(next.entities.begin(), next.entities.end(), st, by_id);
      next.updated.insert(next.updated.begin() + (pos - next.entities.begin()), tick);
      next.entities.insert(pos, st);
      if (sp->name() != nullptr) names_[st.id()] = sp->name()->str();
    }
  }
  // Every update record carries all of an entity's changed fields, so after one the
  // entity's whole state is as of this tick.
  auto updatable = [&](std::uint32_t id) -> EntityState* {
    const std::ptrdiff_t i = index_of(id);
    if (i < 0) {
      violation(Violation::kDeltaForUnknown, tick, id);
      return nullptr;
    }
    return &next.entities[static_cast<std::size_t>(i)];
  };
  auto mark_updated = [&](const EntityState* e) {
    next.updated[static_cast<std::size_t>(e - next.entities.data())] = tick;
  };
  for (const protocol::Snapshot* s : parts) {
    if (s->moves() != nullptr) {
      for (const protocol::MoveDelta* m : *s->moves()) {
        EntityState* e = updatable(m->id());
        if (e == nullptr) continue;
        const std::uint32_t since =
            next.updated[static_cast<std::size_t>(e - next.entities.data())];
        if (std::hypot(static_cast<double>(m->dx()), static_cast<double>(m->dy())) >
            max_step_cm(since)) {
          violation(Violation::kImpossibleJump, tick, m->id());
        }
        *e = EntityState(e->id(), e->x() + m->dx(), e->y() + m->dy(), m->heading(), e->health(),
                         e->kind(), m->move_state());
        mark_updated(e);
      }
    }
    if (s->teleports() != nullptr) {
      for (const protocol::MoveAbsolute* m : *s->teleports()) {
        EntityState* e = updatable(m->id());
        if (e == nullptr) continue;
        *e = EntityState(e->id(), m->x(), m->y(), m->heading(), e->health(), e->kind(),
                         m->move_state());
        mark_updated(e);
      }
    }
    if (s->headings() != nullptr) {
      for (const protocol::HeadingUpdate* h : *s->headings()) {
        EntityState* e = updatable(h->id());
        if (e == nullptr) continue;
        *e = EntityState(e->id(), e->x(), e->y(), h->heading(), e->health(), e->kind(),
                         h->move_state());
        mark_updated(e);
      }
    }
    if (s->healths() != nullptr) {
      for (const protocol::HealthUpdate* h : *s->healths()) {
        EntityState* e = updatable(h->id());
        if (e == nullptr) continue;
        *e = EntityState(e->id(), e->x(), e->y(), e->heading(), h->health(), e->kind(),
                         e->move_state());
        mark_updated(e);
      }
    }
  }

  ++frames_completed_;
  Frame& stored = history_[tick % kFrameHistory];
  stored.tick = tick;
  stored.entities = next.entities;
  stored.updated = next.updated;
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
