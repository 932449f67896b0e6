#include "replication/gather_stage.hpp"

#include <algorithm>

#include "protocol/compact.hpp"
#include "protocol/quantize.hpp"
#include "protocol/record.hpp"
#include "replication/rank_stage.hpp"

namespace zone::replication {

void start_frame(Frame& frame, std::uint32_t tick, protocol::Values self, std::size_t entities) {
  frame.tick = tick;
  frame.stride = static_cast<std::uint32_t>(self.size());
  frame.entities.clear();
  frame.values.clear();
  frame.deferred_spawns.clear();
  // Frames circulate between the worker and every client's history, so this one may
  // come from a client with a smaller view: grow it once, to the most it can hold.
  frame.entities.reserve(entities);
  frame.values.reserve(entities * self.size());
  frame.self.assign(self.begin(), self.end());
}

void gather_candidates(const GatherContext& ctx, std::vector<InterestEntry>& interest,
                       const TickValues& values, const world::World& world, InterestTiers& tiers,
                       Frame& frame, std::vector<Candidate>& out, ReplicationStats& stats) {
  static const std::vector<FrameEntry> kEmpty;
  const Frame* baseline = ctx.baseline;
  const std::vector<FrameEntry>& base = baseline ? baseline->entities : kEmpty;
  const protocol::Schema& schema = world.game().schema;
  // The context in locals: the loop's stores (frame, candidates, interest entries) could
  // otherwise alias it, and it would be read from memory again for every entity.
  const std::uint32_t tick = ctx.tick;
  const std::uint32_t max_wait = ctx.max_wait;
  const Frame* const last = ctx.last;
  const double self_x = ctx.self_x, self_y = ctx.self_y, inv_r2 = ctx.inv_r2;
  const std::int32_t self_party = ctx.self_party;
  // Baseline positions are written as skips between indices, never wider than this.
  const std::uint32_t index_bytes = protocol::varint_size(static_cast<std::uint32_t>(base.size()));
  const bool policy = tiers.active();

  out.clear();
  std::size_t i = 0;
  std::uint32_t j = 0;
  while (i < base.size() || j < interest.size()) {
    const auto frame_index = static_cast<std::uint32_t>(frame.entities.size());
    if (j == interest.size() || (i < base.size() && base[i].id < interest[j].id)) {
      // Left the view: a despawn, always sent. Kept in the frame only if it cannot be.
      frame.push(base[i], baseline->values_of(i));
      out.push_back({Candidate::kDespawn, true, false, 0, static_cast<std::uint32_t>(i),
                     frame_index, index_bytes + 1, 0.0f, 0, nullptr});
      ++i;
      continue;
    }
    InterestEntry& entry = interest[j];
    const protocol::Values full = values.of(entry.slot, RowView::kFull);
    // What this client may know of it: the party's rows too when it is in the client's
    // party (and the party's view is the full one's when every row is everyone's).
    const bool same_party = self_party != 0 && full[protocol::kParty] == self_party;
    const protocol::Values now =
        values.of(entry.slot, same_party ? RowView::kParty : RowView::kPublic);
    const double dx = protocol::position_cm(now, protocol::kX) - self_x;
    const double dy = protocol::position_cm(now, protocol::kY) - self_y;
    const double d2 = dx * dx + dy * dy;
    const bool member = (entry.sources & kInGroup) != 0;
    const float weight = proximity_weight(member, d2, inv_r2);
    if (!(entry.sources & kInAoi)) ++stats.group_entities;
    entry.tier = policy && !member ? tiers.tier_of(dx, dy, d2, stats) : 0;
    entry.slack_ticks = tiers.slack(entry.tier);
    ++stats.tier_entities[entry.tier];
    if (i == base.size() || entry.id < base[i].id) {
      // Entering the client's frame. A spawn the client may already hold (it was in the
      // last frame sent, encoded against an older baseline) is not optional.
      const bool mandatory = tick - entry.entered_tick >= max_wait || frame_has(last, entry.id);
      const world::Entity& e = world.entity(entry.slot);
      frame.push({entry.id, tick}, now);
      out.push_back({Candidate::kSpawn, mandatory, false, j, 0, frame_index,
                     protocol::spawn_cost(schema, entry.id, e.type, e.name, now),
                     spawn_priority(entry.priority, weight), 0, now.data()});
    } else {
      const FrameEntry& was = base[i];
      const protocol::Values was_values = baseline->values_of(i);
      const std::uint64_t mask = protocol::fields::change_mask(was_values, now);
      if (mask == 0) {
        frame.push({was.id, tick}, was_values);  // still true now
        entry.priority = 0.0f;
        entry.deferred = false;
      } else if (tick - was.sent_tick <= entry.slack_ticks &&
                 (mask & schema.immediate_mask()) == 0) {
        // Changed, but not its tier's turn yet: the client keeps the baseline values.
        // (entry.slack_ticks is 0 without the policy, and a baseline is always older
        // than this tick, so this never holds then.) A change of an immediate row
        // (health, a state) is due now whatever the tier.
        frame.push(was, was_values);
        ++stats.tier_held;
      } else {
        // Stays at the baseline values unless sent; how long those have been out of date
        // bounds the wait.
        frame.push(was, was_values);
        const bool stale_too_long = tick - was.sent_tick >= max_wait + entry.slack_ticks;
        const std::uint32_t cost =
            index_bytes + protocol::fields::encoded_size(schema, mask, was_values, now);
        out.push_back({Candidate::kUpdate, stale_too_long, false, j, static_cast<std::uint32_t>(i),
                       frame_index, cost, update_priority(entry.priority, weight), mask,
                       now.data()});
      }
      ++i;
    }
    ++j;
  }
}

}  // namespace zone::replication
