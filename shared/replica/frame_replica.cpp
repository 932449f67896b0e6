#include "replica/frame_replica.hpp"

#include <algorithm>
#include <cmath>

#include "protocol/quantize.hpp"

namespace zone::replica {

namespace fields = protocol::fields;

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

std::size_t EntityList::lower_bound(std::uint32_t id) const {
  return static_cast<std::size_t>(std::lower_bound(ids_.begin(), ids_.end(), id) - ids_.begin());
}

std::size_t EntityList::index_of(std::uint32_t id) const {
  const std::size_t i = lower_bound(id);
  return (i < ids_.size() && ids_[i] == id) ? i : size();
}

void clear_frame(Frame& frame, std::size_t stride) {
  frame.tick = 0;
  frame.self.assign(stride, 0);
  frame.entities.reset(stride);
  frame.updated.clear();
}

void FrameReplica::reset(const ReplicaLimits& limits, const protocol::Schema& schema) {
  *this = FrameReplica{};
  limits_ = limits;
  schema_ = schema;
  clear_frames();
}

void FrameReplica::clear_frames() {
  clear_frame(current_, schema_.size());
  for (Frame& f : history_) clear_frame(f, schema_.size());
  clear_frame(scratch_, schema_.size());
  spawned_.reset(schema_.size());
  zeros_.assign(schema_.size(), 0);
}

const Frame* FrameReplica::frame_at(std::uint32_t tick) const {
  const Frame& f = history_[tick % kFrameHistory];
  return (tick != 0 && f.tick == tick) ? &f : nullptr;
}

FoundEntity FrameReplica::find(std::uint32_t id) const {
  const std::size_t i = current_.entities.index_of(id);
  if (i == current_.entities.size()) return std::nullopt;
  return current_.entities[i];
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
  if (protocol::parse_snapshot_part(packet, schema_, part) != protocol::ParseError::kNone) {
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
    protocol::parse_snapshot_part(done.parts[p], schema_, parts_[p]);
  }
  complete(tick, baseline, {parts_.data(), done.parts.size()});
  return current_.tick == tick;
}

void FrameReplica::complete(std::uint32_t tick, std::uint32_t baseline,
                            std::span<const protocol::SnapshotPart> parts) {
  Frame& next = scratch_;
  clear_frame(next, schema_.size());
  next.tick = tick;
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
        fields::apply(schema_, part.self_mask, part.wire_at(part.self_wire_begin), next.self);
      }
      self_seen = true;
    }
    for (const protocol::ChangeRecord& c : part.changes) {
      if (c.index >= next.entities.size()) {
        violation(c.mask == 0 ? Violation::kDespawnUnknown : Violation::kDeltaForUnknown, tick,
                  c.index);
        continue;
      }
      const std::uint32_t id = next.entities.id(c.index);
      const protocol::MutableValues values = next.entities.values(c.index);
      if (touched_[c.index] != 0) {
        violation(Violation::kInconsistentParts, tick, id);
        continue;
      }
      if (c.mask == 0) {
        touched_[c.index] = 2;
        continue;
      }
      touched_[c.index] = 1;
      before_.assign(values.begin(), values.end());
      const protocol::Values before = before_;
      fields::apply(schema_, c.mask, part.wire_at(c.wire_begin), values);
      // In centimetres: a record may change the entity's precision tier, and with it
      // the units of x and y; each end is rounded to half its own unit.
      const double dx =
          protocol::position_cm(values, protocol::kX) - protocol::position_cm(before, protocol::kX);
      const double dy =
          protocol::position_cm(values, protocol::kY) - protocol::position_cm(before, protocol::kY);
      const double rounding =
          0.5 * (protocol::position_unit_cm(values) + protocol::position_unit_cm(before));
      // A teleport (its count in move_state changed) may jump any distance.
      const bool teleported = protocol::teleports_of(values[protocol::kMoveState]) !=
                              protocol::teleports_of(before[protocol::kMoveState]);
      if (!teleported &&
          std::hypot(dx, dy) > max_step_cm(next.updated[c.index]) + rounding * std::sqrt(2.0)) {
        violation(Violation::kImpossibleJump, tick, id);
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
      spawned_.push_back(s.id, zeros_);
      fields::apply(schema_, s.mask, part.wire_at(s.wire_begin),
                    spawned_.values(spawned_.size() - 1));
      EntityInfo& info = info_[s.id];
      info.type = s.type;
      info.kind = schema_.types()[s.type].kind;
      info.name.assign(s.name);
    }
  }

  // Drop the despawned, then merge the spawns in by id.
  std::size_t kept = 0;
  for (std::size_t i = 0; i < next.entities.size(); ++i) {
    if (touched_[i] == 2) continue;
    next.entities.move_down(i, kept);
    next.updated[kept] = next.updated[i];
    ++kept;
  }
  next.entities.truncate(kept);
  next.updated.resize(kept);
  spawn_order_.resize(spawned_.size());
  for (std::uint32_t k = 0; k < spawn_order_.size(); ++k) spawn_order_[k] = k;
  std::sort(spawn_order_.begin(), spawn_order_.end(), [&](std::uint32_t a, std::uint32_t b) {
    return spawned_.id(a) != spawned_.id(b) ? spawned_.id(a) < spawned_.id(b) : a < b;
  });
  std::uint32_t previous = 0;
  for (std::size_t k = 0; k < spawn_order_.size(); ++k) {
    const std::uint32_t id = spawned_.id(spawn_order_[k]);
    const std::size_t at = next.entities.index_of(id);
    if (at != next.entities.size() || (k > 0 && previous == id)) {
      violation(Violation::kDuplicateSpawn, tick, id);
      continue;
    }
    previous = id;
    const std::size_t pos = next.entities.lower_bound(id);
    next.updated.insert(next.updated.begin() + static_cast<std::ptrdiff_t>(pos), tick);
    next.entities.insert(pos, id, spawned_.values(spawn_order_[k]));
  }

  ++frames_completed_;
  Frame& stored = history_[tick % kFrameHistory];
  stored.tick = tick;
  stored.self = next.self;
  stored.entities = next.entities;
  stored.updated = next.updated;
  if (tick > current_.tick) {
    // Count view changes between the frames the client actually displayed.
    std::size_t a = 0, b = 0;
    const EntityList& was = current_.entities;
    const EntityList& now = next.entities;
    while (a < was.size() || b < now.size()) {
      if (b == now.size() || (a < was.size() && was.id(a) < now.id(b))) {
        ++leaves_;
        ++a;
      } else if (a == was.size() || now.id(b) < was.id(a)) {
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
        if (f.entities.index_of(kv.first) != f.entities.size()) return false;
      }
      return true;
    });
  }
}

}  // namespace zone::replica
