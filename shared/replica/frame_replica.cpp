#include "replica/frame_replica.hpp"

#include <algorithm>
#include <cmath>

#include "protocol/quantize.hpp"

namespace zone::replica {

namespace fields = protocol::fields;
using protocol::kEntityFields;

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
    case Violation::kMalformed:
      return "malformed snapshot part";
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
                             [](const EntityState& e, std::uint32_t k) { return e.id < k; });
  return (it != current_.entities.end() && it->id == id) ? &*it : nullptr;
}

const EntityInfo* FrameReplica::info(std::uint32_t id) const {
  auto it = info_.find(id);
  return it == info_.end() ? nullptr : &it->second;
}

void FrameReplica::violation(Violation v, std::uint32_t tick, std::uint32_t id) {
  violations_.push_back({v, tick, id});
}

bool FrameReplica::apply(std::span<const std::uint8_t> packet) {
  protocol::SnapshotPart& part = parts_[0];
  if (protocol::parse_snapshot_part(packet, part) != protocol::ParseError::kNone) {
    violation(Violation::kMalformed, 0, 0);
    return false;
  }
  const protocol::SnapshotHeader& header = part.header;
  const std::uint32_t tick = header.server_tick;
  if (tick >= newest_part_tick_) {
    newest_part_tick_ = tick;
    last_input_sequence_ = header.last_input_sequence;
  }
  if (tick <= current_.tick || frame_at(tick) != nullptr) return false;  // old or duplicate
  if (header.part_count == 1) {
    complete(tick, header.baseline_tick(), {parts_.data(), 1});
    return current_.tick == tick;
  }

  auto it = std::find_if(pending_.begin(), pending_.end(),
                         [&](const PendingFrame& p) { return p.tick == tick; });
  if (it == pending_.end()) {
    // Keep a handful of frames in flight; older incomplete ones are abandoned.
    if (pending_.size() >= 8) pending_.erase(pending_.begin());
    pending_.push_back({tick, header.baseline_age, header.part_count, {}, 0});
    it = std::prev(pending_.end());
    it->parts.resize(header.part_count);
  }
  if (it->baseline_age != header.baseline_age || it->part_count != header.part_count) {
    violation(Violation::kInconsistentParts, tick, 0);
    return false;
  }
  auto& slot = it->parts[header.part];
  if (!slot.empty()) return false;  // duplicate part
  slot.assign(packet.begin(), packet.end());
  if (++it->received < it->part_count) return false;

  // Every part is here: parse them all (each was checked on arrival) and rebuild.
  const std::uint32_t baseline = header.baseline_tick();
  PendingFrame done = std::move(*it);
  pending_.erase(std::remove_if(pending_.begin(), pending_.end(),
                                [&](const PendingFrame& p) { return p.tick <= tick; }),
                 pending_.end());
  if (parts_.size() < done.parts.size()) parts_.resize(done.parts.size());
  for (std::size_t p = 0; p < done.parts.size(); ++p) {
    protocol::parse_snapshot_part(done.parts[p], parts_[p]);
  }
  complete(tick, baseline, {parts_.data(), done.parts.size()});
  return current_.tick == tick;
}

void FrameReplica::complete(std::uint32_t tick, std::uint32_t baseline,
                            std::span<const protocol::SnapshotPart> parts) {
  Frame& next = scratch_;
  next.tick = tick;
  next.self = {};
  next.entities.clear();
  next.updated.clear();
  if (baseline != 0) {
    const Frame* base = frame_at(baseline);
    if (base == nullptr) {
      violation(Violation::kUnknownBaseline, tick, baseline);
      return;  // cannot rebuild: do not acknowledge this tick
    }
    next.self = base->self;
    next.entities = base->entities;
    next.updated = base->updated;
  }
  // Largest legal move of an entity whose values date from tick `since`: max speed over
  // the elapsed ticks, plus rounding.
  auto max_step_cm = [&](std::uint32_t since) {
    return limits_.max_speed * (tick - since) / std::max(1u, limits_.tick_rate) /
               protocol::kPositionStep +
           2.0;
  };

  touched_.assign(next.entities.size(), 0);
  spawned_.clear();
  bool self_seen = false;
  for (const protocol::SnapshotPart& part : parts) {
    if (part.header.flags & protocol::kSnapshotHasSelf) {
      // A delta against the baseline's self: a second one would apply twice.
      if (self_seen) {
        violation(Violation::kInconsistentParts, tick, limits_.self_id);
      } else {
        fields::apply(kEntityFields, part.self_mask, part.self_wire, next.self);
      }
      self_seen = true;
    }
    for (const protocol::ChangeRecord& c : part.changes) {
      if (c.index >= next.entities.size()) {
        violation(c.mask == 0 ? Violation::kDespawnUnknown : Violation::kDeltaForUnknown, tick,
                  c.index);
        continue;
      }
      EntityState& e = next.entities[c.index];
      if (touched_[c.index] != 0) {
        violation(Violation::kInconsistentParts, tick, e.id);
        continue;
      }
      if (c.mask == 0) {
        touched_[c.index] = 2;
        continue;
      }
      touched_[c.index] = 1;
      const FieldValues before = e.values;
      fields::apply(kEntityFields, c.mask, c.wire, e.values);
      // In centimetres: a record may change the entity's precision tier, and with it
      // the units of x and y; each end is rounded to half its own unit.
      const double dx = protocol::position_cm(e.values, protocol::kX) -
                        protocol::position_cm(before, protocol::kX);
      const double dy = protocol::position_cm(e.values, protocol::kY) -
                        protocol::position_cm(before, protocol::kY);
      const double rounding =
          0.5 * (protocol::position_unit_cm(e.values) + protocol::position_unit_cm(before));
      if (std::hypot(dx, dy) > max_step_cm(next.updated[c.index]) + rounding * std::sqrt(2.0)) {
        violation(Violation::kImpossibleJump, tick, e.id);
      }
      // Every record carries all of an entity's changed fields, so after one the
      // entity's values are as of this tick.
      next.updated[c.index] = tick;
    }
    for (const protocol::SpawnRecord& s : part.spawns) {
      if (s.id == limits_.self_id) {
        violation(Violation::kSelfInView, tick, s.id);
        continue;
      }
      EntityState e{s.id, {}};
      fields::apply(kEntityFields, s.mask, s.wire, e.values);
      spawned_.push_back(e);
      EntityInfo& info = info_[s.id];
      info.kind = s.kind;
      info.max_health = s.max_health;
      info.name.assign(s.name);
    }
  }

  // Drop the despawned, then merge the spawns in by id.
  std::size_t kept = 0;
  for (std::size_t i = 0; i < next.entities.size(); ++i) {
    if (touched_[i] == 2) continue;
    next.entities[kept] = next.entities[i];
    next.updated[kept] = next.updated[i];
    ++kept;
  }
  next.entities.resize(kept);
  next.updated.resize(kept);
  std::sort(spawned_.begin(), spawned_.end(),
            [](const EntityState& a, const EntityState& b) { return a.id < b.id; });
  for (std::size_t k = 0; k < spawned_.size(); ++k) {
    const EntityState& s = spawned_[k];
    auto pos = std::lower_bound(next.entities.begin(), next.entities.end(), s.id,
                                [](const EntityState& e, std::uint32_t id) { return e.id < id; });
    if ((pos != next.entities.end() && pos->id == s.id) || (k > 0 && spawned_[k - 1].id == s.id)) {
      violation(Violation::kDuplicateSpawn, tick, s.id);
      continue;
    }
    next.updated.insert(next.updated.begin() + (pos - next.entities.begin()), tick);
    next.entities.insert(pos, s);
  }

  ++frames_completed_;
  Frame& stored = history_[tick % kFrameHistory];
  stored.tick = tick;
  stored.self = next.self;
  stored.entities = next.entities;
  stored.updated = next.updated;
  if (tick > current_.tick) {
    // Count view changes between the frames the client actually displayed.
    auto a = current_.entities.begin();
    auto b = next.entities.begin();
    while (a != current_.entities.end() || b != next.entities.end()) {
      if (b == next.entities.end() || (a != current_.entities.end() && a->id < b->id)) {
        ++leaves_;
        ++a;
      } else if (a == current_.entities.end() || b->id < a->id) {
        ++enters_;
        ++b;
      } else {
        ++a;
        ++b;
      }
    }
    std::swap(current_, next);
  }
  // Forget what no kept frame holds any more, so the table does not grow with every
  // entity ever seen (a later spawn carries the info again).
  if (frames_completed_ % kFrameHistory == 0 && info_.size() > 2 * current_.entities.size() + 64) {
    std::erase_if(info_, [&](const auto& kv) {
      for (const Frame& f : history_) {
        if (std::binary_search(
                f.entities.begin(), f.entities.end(), EntityState{kv.first, {}},
                [](const EntityState& a, const EntityState& b) { return a.id < b.id; })) {
          return false;
        }
      }
      return true;
    });
  }
}

}  // namespace zone::replica
