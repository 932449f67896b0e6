#include "replication/pack_stage.hpp"

#include <algorithm>
#include <stdexcept>

#include "protocol/record.hpp"
#include "replication/gather_stage.hpp"

namespace zone::replication {

void plan_parts(std::span<const Candidate> candidates, std::span<const InterestEntry> interest,
                const Frame* last, const PartCosts& costs, std::vector<std::uint32_t>& selected,
                std::vector<std::uint32_t>& part_ends) {
  const std::uint32_t max_bytes = costs.max_bytes;
  const std::uint32_t part_overhead = costs.part_overhead;
  const std::uint32_t self_cost = costs.self_cost;
  const Candidate* const c = candidates.data();  // held by value: see rank_candidates
  auto wire_less = [c](std::uint32_t a, std::uint32_t b) {
    const Candidate& ca = c[a];
    const Candidate& cb = c[b];
    const bool sa = ca.kind == Candidate::kSpawn, sb = cb.kind == Candidate::kSpawn;
    if (sa != sb) return sb;
    return sa ? ca.frame_index < cb.frame_index : ca.base_index < cb.base_index;
  };
  std::sort(selected.begin(), selected.end(), wire_less);
  auto split_into_parts = [&] {
    part_ends.clear();
    std::uint32_t used = part_overhead + self_cost;
    std::uint32_t in_part = 0;
    for (std::uint32_t k = 0; k < selected.size(); ++k) {
      const std::uint32_t cost = candidates[selected[k]].cost;
      if (in_part > 0 && used + cost > max_bytes) {
        part_ends.push_back(k);
        used = part_overhead;
        in_part = 0;
      }
      used += cost;
      ++in_part;
    }
    part_ends.push_back(static_cast<std::uint32_t>(selected.size()));
  };
  split_into_parts();
  if (part_ends.size() <= 255) return;
  // Part numbers are one byte: a frame that needs more (thousands of entities in view
  // with small packets) sends what fits and keeps the rest for the next one. The spawns
  // the client may already hold go first, or cutting them off would make entities it
  // displays vanish; each part is then put back in wire order (costs are bounds that do
  // not depend on the order within a part).
  std::stable_partition(selected.begin(), selected.end(), [&](std::uint32_t k) {
    const Candidate& cand = candidates[k];
    return cand.kind == Candidate::kSpawn && frame_has(last, interest[cand.interest_index].id);
  });
  // The spawns the client does not hold yet come in only as far as they are sure to
  // fit again in the next frame, when they are held too and packed in another order:
  // greedy packing leaves less than the largest record unused in any part, so a total
  // within 255 parts of (room - largest + 1) fits whatever the order. (Without this
  // bound, a frame filled to its last byte could not carry its own entities again.)
  std::uint32_t largest = 0;
  for (const std::uint32_t k : selected) largest = std::max(largest, candidates[k].cost);
  const std::uint32_t part_room = max_bytes - part_overhead;
  const std::uint64_t sure =
      part_room > largest ? 255ull * (part_room - largest + 1) - self_cost : 0;
  std::uint64_t total = 0;
  std::erase_if(selected, [&](std::uint32_t k) {
    const Candidate& cand = candidates[k];
    const bool fresh =
        cand.kind == Candidate::kSpawn && !frame_has(last, interest[cand.interest_index].id);
    if (fresh && total + cand.cost > sure) return true;
    total += cand.cost;
    return false;
  });
  split_into_parts();
  part_ends.resize(std::min<std::size_t>(part_ends.size(), 255));
  selected.resize(part_ends.back());
  std::uint32_t begin = 0;
  for (const std::uint32_t end : part_ends) {
    std::sort(selected.begin() + begin, selected.begin() + end, wire_less);
    begin = end;
  }
}

std::uint64_t write_parts(std::span<const Candidate> candidates,
                          std::span<const InterestEntry> interest,
                          std::span<const std::uint32_t> selected,
                          std::span<const std::uint32_t> part_ends, const PartsHeader& in,
                          const world::World& world, std::uint32_t max_bytes, ClientId client,
                          PacketArena& out, double& tokens, ReplicationStats& stats) {
  const protocol::Schema& schema = world.game().schema;
  const Frame* baseline = in.baseline;
  const std::size_t stride = in.self.size();
  protocol::SnapshotHeader header;
  header.server_tick = in.tick;
  header.last_input_sequence = in.last_input_sequence;
  header.baseline_age = baseline ? static_cast<std::uint8_t>(in.tick - baseline->tick) : 0;
  header.part_count = static_cast<std::uint8_t>(part_ends.size());
  std::uint64_t written = 0;
  std::uint32_t first = 0;
  for (std::uint32_t p = 0; p < part_ends.size(); ++p) {
    const std::uint32_t end = part_ends[p];
    std::uint32_t changes = first;
    while (changes < end && candidates[selected[changes]].kind != Candidate::kSpawn) ++changes;
    header.part = static_cast<std::uint8_t>(p);
    header.flags = (p == 0 && in.self_mask) ? protocol::kSnapshotHasSelf : 0;
    protocol::SnapshotPartWriter part(out.reserve(max_bytes), schema);
    part.header(header);
    if (header.flags) part.self(in.self_mask, in.base_self, in.self);
    part.begin_changes(changes - first);
    for (std::uint32_t k = first; k < changes; ++k) {
      const Candidate& cand = candidates[selected[k]];
      if (cand.kind == Candidate::kDespawn) {
        part.despawn(cand.base_index);
      } else {
        part.change(cand.base_index, cand.mask, baseline->values_of(cand.base_index),
                    {cand.now, stride});
      }
    }
    part.begin_spawns(end - changes);
    for (std::uint32_t k = changes; k < end; ++k) {
      const Candidate& cand = candidates[selected[k]];
      const InterestEntry& entry = interest[cand.interest_index];
      const world::Entity& e = world.entity(entry.slot);
      part.spawn(entry.id, e.type, e.name, {cand.now, stride});
    }
    // The plan bounds every record, so a part can only overflow through a bug.
    if (part.overflow()) throw std::logic_error("replication: snapshot part overflowed its plan");
    out.commit(client, part.size());
    ++stats.packets;
    stats.bytes += part.size();
    tokens -= static_cast<double>(part.size());
    written += part.size();
    first = end;
  }
  return written;
}

}  // namespace zone::replication
