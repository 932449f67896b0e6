#include "replication/replicator.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "protocol/limits.hpp"
#include "protocol/quantize.hpp"
#include "replication/entity_values.hpp"

namespace zone::replication {
namespace {

constexpr ClientId kNoClient = std::numeric_limits<ClientId>::max();
using Candidate = ReplicationWorker::Candidate;

bool id_less(const InterestEntry& e, world::EntityId id) {
  return e.id < id;
}

bool frame_has(const Frame* frame, world::EntityId id) {
  if (frame == nullptr) return false;
  auto it = std::lower_bound(frame->entities.begin(), frame->entities.end(), id,
                             [](const FrameEntry& e, world::EntityId k) { return e.id < k; });
  return it != frame->entities.end() && it->id == id;
}

}  // namespace

void ReplicationStats::add(const ReplicationStats& o) {
  snapshots += o.snapshots;
  packets += o.packets;
  bytes += o.bytes;
  spawns += o.spawns;
  updates += o.updates;
  despawns += o.despawns;
  deferred += o.deferred;
  forced += o.forced;
  full_resyncs += o.full_resyncs;
  enter_events += o.enter_events;
  leave_events += o.leave_events;
  oldest_deferral_ticks = std::max(oldest_deferral_ticks, o.oldest_deferral_ticks);
  for (std::size_t t = 0; t < tier_entities.size(); ++t) tier_entities[t] += o.tier_entities[t];
  tier_held += o.tier_held;
  crowded += o.crowded;
  behind += o.behind;
  group_entities += o.group_entities;
  event_deliveries += o.event_deliveries;
  event_messages += o.event_messages;
  event_bytes += o.event_bytes;
  events_over_budget += o.events_over_budget;
}

std::uint32_t tier_slack_ticks(const ReplicationParams& p, std::uint8_t tier) {
  const InterestParams& ip = p.interest;
  std::uint32_t divisor = 1;
  if (tier == 1) divisor = ip.middle_divisor;
  if (tier == 2) divisor = ip.far_divisor * std::max(1u, ip.far_slowdown);
  return (std::max(1u, divisor) - 1) * p.snapshot_interval;
}

Replicator::Replicator(const ReplicationParams& params, const world::World& world)
    : params_(params), world_(world) {
  // Never offer a baseline older than clients keep.
  params_.history_ticks =
      std::clamp<std::uint32_t>(params_.history_ticks, 2, protocol::kClientFrameHistory);
  params_.snapshot_interval = std::max(1u, params_.snapshot_interval);
  params_.max_deferral_ticks = std::max(1u, params_.max_deferral_ticks);
}

void Replicator::set_params(const ReplicationParams& params) {
  // Packet size and history length are fixed at start-up (they size buffers); the
  // rest applies from the next tick.
  params_.client_bandwidth = params.client_bandwidth;
  params_.snapshot_interval = std::max(1u, params.snapshot_interval);
  params_.tick_rate = params.tick_rate;
  params_.max_deferral_ticks = std::max(1u, params.max_deferral_ticks);
  params_.interest = params.interest;
}

ClientId Replicator::add_client(std::uint32_t player_slot, std::uint32_t tick) {
  ClientId c;
  if (!free_clients_.empty()) {
    c = free_clients_.back();
    free_clients_.pop_back();
  } else {
    c = static_cast<ClientId>(clients_.size());
    clients_.emplace_back();
  }
  ClientView& v = clients_[c];
  v = ClientView{};
  v.history = FrameHistory(params_.history_ticks);
  v.active = true;
  v.player_slot = player_slot;
  v.player_id = world_.entity(player_slot).id;
  v.tokens = params_.max_packet_bytes;  // room for the first full frame's first part
  if (player_slot >= client_of_slot_.size()) client_of_slot_.resize(player_slot + 1, kNoClient);
  client_of_slot_[player_slot] = c;
  ++active_;
  seed_interest(v, tick);
  return c;
}

void Replicator::seed_interest(ClientView& v, std::uint32_t tick) {
  const world::Entity& e = world_.entity(v.player_slot);
  view_scratch_.clear();
  world_.aoi().view_set(e.aoi, view_scratch_);
  for (const aoi::EntityHandle h : view_scratch_) {
    set_source(v, world_.entity(h.index).id, h.index, tick, kInAoi, true);
  }
  for (const auto kind : {world::GroupKind::kParty, world::GroupKind::kGuild}) {
    const world::Groups& groups = world_.groups(kind);
    if (e.group(kind) == world::kNoGroup || !groups.params().full_range) continue;
    for (const world::Groups::Member& m : groups.members(e.group(kind))) {
      if (m.id == e.id) continue;
      set_source(v, m.id, m.slot, tick, kind == world::GroupKind::kParty ? kInParty : kInGuild,
                 true);
    }
  }
}

void Replicator::remove_client(ClientId c) {
  ClientView& v = clients_[c];
  if (!v.active) return;
  client_of_slot_[v.player_slot] = kNoClient;
  v.active = false;
  v.interest.clear();
  free_clients_.push_back(c);
  --active_;
}

bool Replicator::acknowledge(ClientId c, std::uint32_t ack_tick) {
  ClientView& v = clients_[c];
  if (ack_tick == 0) return true;  // nothing received yet
  if (v.first_sent_tick == 0 || ack_tick < v.first_sent_tick || ack_tick > v.last_sent_tick) {
    return false;  // never sent to this client
  }
  if (ack_tick <= v.acked_tick) return true;  // reordered or repeated: nothing new
  if (v.history.find(ack_tick) != nullptr) {
    v.acked_tick = ack_tick;
    return true;
  }
  // Not in the history: legitimate only if it is too old to be kept (then it is simply
  // not usable as a baseline); inside the history window it was never sent.
  return v.last_sent_tick - ack_tick >= v.history.size();
}

void Replicator::set_last_input_sequence(ClientId c, std::uint32_t sequence) {
  clients_[c].last_input_sequence = sequence;
}

void Replicator::apply_events(std::uint32_t tick, std::span<const aoi::VisibilityEvent> events) {
  for (const aoi::VisibilityEvent& ev : events) {
    const std::uint32_t observer = ev.observer.index;
    if (observer >= client_of_slot_.size() || client_of_slot_[observer] == kNoClient) continue;
    if (ev.kind == aoi::EventKind::kEnter) {
      ++stats_.enter_events;
    } else {
      ++stats_.leave_events;
    }
    ClientView& v = clients_[client_of_slot_[observer]];
    set_source(v, world_.entity(ev.target.index).id, ev.target.index, tick, kInAoi,
               ev.kind == aoi::EventKind::kEnter);
  }
}

void Replicator::apply_group_links(std::uint32_t tick, std::span<const world::GroupLink> links) {
  for (const world::GroupLink& link : links) {
    const std::uint32_t observer = link.observer_slot;
    if (observer >= client_of_slot_.size() || client_of_slot_[observer] == kNoClient) continue;
    set_source(clients_[client_of_slot_[observer]], link.target, link.target_slot, tick,
               link.kind == world::GroupKind::kParty ? kInParty : kInGuild, link.linked);
  }
}

void Replicator::set_source(ClientView& v, world::EntityId id, std::uint32_t slot,
                            std::uint32_t tick, InterestSource source, bool on) {
  auto it = std::lower_bound(v.interest.begin(), v.interest.end(), id, id_less);
  const bool present = it != v.interest.end() && it->id == id;
  if (on) {
    if (present) {
      it->sources |= source;
    } else {
      InterestEntry entry{id, slot, tick, 0.0f};
      entry.sources = source;
      v.interest.insert(it, entry);
    }
  } else if (present) {
    it->sources &= static_cast<std::uint8_t>(~source);
    if (it->sources == 0) v.interest.erase(it);
  }
}

void Replicator::refill_budget(ClientView& v) const {
  const double per_tick = static_cast<double>(params_.client_bandwidth) / params_.tick_rate;
  // A client may save up for one full packet, so even a small budget lets a large
  // spawn through now and then instead of starving it.
  const double cap =
      std::max<double>(params_.max_packet_bytes, per_tick * params_.snapshot_interval * 2.0);
  // Debt is bounded too, so a client recovers within a couple of seconds of starving.
  v.tokens = std::clamp(v.tokens + per_tick, -cap, cap);
}

void Replicator::begin_tick(std::uint32_t) {
  events_.prepare(world_);
  const protocol::Schema& schema = world_.game().schema;
  stride_ = schema.size();
  const bool private_rows = schema.public_mask() != schema.all_mask();
  views_ = private_rows ? 3 : 1;
  current_.resize(static_cast<std::size_t>(world_.slot_count()) * views_ * stride_);
  zeros_.assign(stride_, 0);
  world_.for_each_entity([&](std::uint32_t slot, const world::Entity&) {
    const std::size_t row = static_cast<std::size_t>(slot) * views_ * stride_;
    const protocol::MutableValues full{current_.data() + row, stride_};
    entity_values(world_, slot, full);
    if (!private_rows) return;
    // The party's and everyone's views: the rows they may not receive read 0, so a
    // client's frame holds exactly what it was sent.
    for (std::uint32_t v = 1; v < 3; ++v) {
      const std::uint64_t keep = v == kPartyView ? schema.party_mask() : schema.public_mask();
      std::int32_t* out = current_.data() + row + v * stride_;
      for (std::size_t i = 0; i < stride_; ++i) out[i] = (keep >> i) & 1 ? full[i] : 0;
    }
  });
}

void Replicator::end_tick(std::span<ReplicationWorker> workers) {
  deliveries_.clear();
  for (ReplicationWorker& w : workers) {
    w.stats.event_deliveries += w.events.delivered.size();
    w.stats.event_messages += w.events.messages;
    w.stats.event_bytes += w.events.bytes;
    w.stats.events_over_budget += w.events.over_budget;
    w.events.messages = w.events.bytes = w.events.over_budget = 0;
    stats_.add(w.stats);
    w.stats = ReplicationStats{};
    if (record_deliveries_) {
      deliveries_.insert(deliveries_.end(), w.events.delivered.begin(), w.events.delivered.end());
    }
    w.events.delivered.clear();
  }
  if (record_deliveries_) {
    std::sort(deliveries_.begin(), deliveries_.end(),
              [](const EventDelivery& a, const EventDelivery& b) {
                return a.event != b.event ? a.event < b.event : a.player < b.player;
              });
  }
}

bool Replicator::holds(ClientId c, world::EntityId id) const {
  if (c >= clients_.size() || !clients_[c].active) return false;
  const ClientView& v = clients_[c];
  if (id == v.player_id) return true;
  if (v.last_sent_tick - v.acked_tick >= v.history.size()) return false;
  const Frame* acked = v.history.find(v.acked_tick);
  return frame_has(acked, id) && frame_has(v.history.find(v.last_sent_tick), id);
}

void Replicator::replicate_clients(std::uint32_t tick, ClientId begin, ClientId end,
                                   ReplicationWorker& worker) {
  end = std::min(end, client_slots());
  for (ClientId c = begin; c < end; ++c) {
    if (!clients_[c].active) continue;
    refill_budget(clients_[c]);
    if ((tick + c) % params_.snapshot_interval == 0) replicate_client(c, tick, worker);
    // After the snapshot: its events, about what it holds once that snapshot is sent.
    ClientView& v = clients_[c];
    events_.deliver(tick, v, worker.events, [&](std::span<const std::uint8_t> bytes) {
      std::span<std::uint8_t> room = worker.reliable.reserve(bytes.size());
      std::copy(bytes.begin(), bytes.end(), room.begin());
      worker.reliable.commit(c, bytes.size());
      v.tokens -= static_cast<double>(bytes.size());
    });
  }
}

void Replicator::replicate_client(ClientId c, std::uint32_t tick, ReplicationWorker& w) {
  ClientView& v = clients_[c];
  ReplicationStats& stats = w.stats;
  // The baseline must be younger than one full history: the slot this frame is about
  // to be written into must not be the baseline itself.
  const Frame* baseline =
      tick - v.acked_tick < v.history.size() ? v.history.find(v.acked_tick) : nullptr;
  if (baseline == nullptr && v.acked_tick != 0) ++stats.full_resyncs;
  // The newest frame the client may hold: whatever is in it must stay in view.
  const Frame* last = v.history.find(v.last_sent_tick);
  static const std::vector<FrameEntry> kEmpty;
  const std::vector<FrameEntry>& base = baseline ? baseline->entities : kEmpty;
  const protocol::Schema& schema = world_.game().schema;

  Frame& frame = w.next_frame;
  frame.tick = tick;
  frame.stride = static_cast<std::uint32_t>(stride_);
  frame.entities.clear();
  frame.values.clear();
  frame.deferred_spawns.clear();
  // Frames circulate between the worker and every client's history, so this one may
  // come from a client with a smaller view: grow it once, to the most it can hold.
  frame.entities.reserve(base.size() + v.interest.size());
  frame.values.reserve((base.size() + v.interest.size()) * stride_);
  const protocol::Values self_now = view(v.player_slot, kFullView);
  frame.self.assign(self_now.begin(), self_now.end());
  const protocol::Values base_self = baseline ? protocol::Values(baseline->self) : zeros_;
  const std::uint64_t self_mask = protocol::fields::change_mask(base_self, frame.self);
  const std::int32_t self_party = frame.self[protocol::kParty];

  // Priority falls with distance; squared, in the centimetres at hand (no square root,
  // no visit to the world's entity records, which are cold in cache).
  const double r_cm = std::max(1.0, world_.effective_player_radius()) / protocol::kPositionStep;
  const double inv_r2 = 1.0 / (r_cm * r_cm);
  const double self_x = protocol::position_cm(frame.self, protocol::kX);
  const double self_y = protocol::position_cm(frame.self, protocol::kY);
  // Baseline positions are written as skips between indices, never wider than this.
  const std::uint32_t index_bytes = protocol::varint_size(static_cast<std::uint32_t>(base.size()));
  const std::uint32_t max_wait = params_.max_deferral_ticks;

  // Interest policy: each entity's tier, from its distance, the crowd and the view cone.
  const InterestParams& ip = params_.interest;
  const bool policy = ip.active();
  const std::array<std::uint32_t, 3> slack = {0, tier_slack_ticks(params_, 1),
                                              tier_slack_ticks(params_, 2)};
  const double near2 = ip.near_fraction * ip.near_fraction / inv_r2;
  const double far2 = ip.far_fraction * ip.far_fraction / inv_r2;
  // Crowd: more than K in view. The K nearest keep their tier; ties at the K-th distance
  // go to the lowest ids (the merge below runs in id order), so exactly K are kept.
  double crowd_d2 = std::numeric_limits<double>::infinity();
  std::uint32_t crowd_ties = 0;
  // Party and guild members are not part of the crowd: they keep the near tier whatever
  // it holds.
  const std::uint32_t k_nearest = ip.crowd_threshold;
  std::size_t crowd_size = v.interest.size();
  if (k_nearest > 0 && crowd_size > k_nearest) {
    for (const InterestEntry& e : v.interest) crowd_size -= (e.sources & kInGroup) ? 1 : 0;
  }
  const bool crowded = k_nearest > 0 && crowd_size > k_nearest;
  if (crowded) {
    ++stats.crowded;
    w.nearest.clear();
    for (const InterestEntry& e : v.interest) {
      if (e.sources & kInGroup) continue;
      const protocol::Values p = view(e.slot, kFullView);
      const double dx = protocol::position_cm(p, protocol::kX) - self_x;
      const double dy = protocol::position_cm(p, protocol::kY) - self_y;
      w.nearest.push_back(dx * dx + dy * dy);
    }
    std::nth_element(w.nearest.begin(), w.nearest.begin() + (k_nearest - 1), w.nearest.end());
    crowd_d2 = w.nearest[k_nearest - 1];
    crowd_ties = k_nearest - static_cast<std::uint32_t>(std::count_if(
                                 w.nearest.begin(), w.nearest.begin() + (k_nearest - 1),
                                 [&](double d) { return d < crowd_d2; }));
  }
  // Cone: the player faces its heading (direction of travel); behind is outside half the
  // field of view on either side, beyond cone_radius.
  constexpr double kPi = 3.14159265358979323846;
  double hx = 0.0, hy = 0.0, cos_half2 = 0.0, cone_r2 = 0.0;
  bool cos_half_positive = true;
  if (ip.cone) {  // trigonometry only when asked for: it is most of a small view's cost
    const double heading = protocol::heading_radians(frame.self);
    hx = std::cos(heading);
    hy = std::sin(heading);
    const double cos_half = std::cos(ip.cone_fov_degrees * kPi / 360.0);
    cos_half2 = cos_half * cos_half;
    cos_half_positive = cos_half >= 0.0;
    const double cone_r = ip.cone_radius / protocol::kPositionStep;
    cone_r2 = cone_r * cone_r;
  }
  auto tier_of = [&](double dx, double dy, double d2) -> std::uint8_t {
    std::uint8_t tier = 0;
    if (ip.tiers) tier = d2 <= near2 ? 0 : (d2 <= far2 ? 1 : 2);
    if (crowded) {
      bool kept = d2 < crowd_d2;
      if (d2 == crowd_d2 && crowd_ties > 0) {
        kept = true;
        --crowd_ties;
      }
      if (!kept) tier = 2;
    }
    if (ip.cone && tier < 2 && d2 > cone_r2) {
      const double dot = hx * dx + hy * dy;
      const bool inside = cos_half_positive ? (dot >= 0.0 && dot * dot >= cos_half2 * d2)
                                            : (dot >= 0.0 || dot * dot <= cos_half2 * d2);
      if (!inside) {
        tier = 2;
        ++stats.behind;
      }
    }
    return tier;
  };

  // Merge the baseline frame with the interest set, both sorted by id.
  w.candidates.clear();
  std::size_t i = 0;
  std::uint32_t j = 0;
  while (i < base.size() || j < v.interest.size()) {
    const auto frame_index = static_cast<std::uint32_t>(frame.entities.size());
    if (j == v.interest.size() || (i < base.size() && base[i].id < v.interest[j].id)) {
      // Left the view: a despawn, always sent. Kept in the frame only if it cannot be.
      frame.push(base[i], baseline->values_of(i));
      w.candidates.push_back({Candidate::kDespawn, true, false, 0, static_cast<std::uint32_t>(i),
                              frame_index, index_bytes + 1, 0.0f, 0, nullptr});
      ++i;
      continue;
    }
    InterestEntry& entry = v.interest[j];
    const protocol::Values full = view(entry.slot, kFullView);
    // What this client may know of it: the party's rows too when it is in the client's
    // party (and the party's view is the full one's when every row is everyone's).
    const bool same_party = self_party != 0 && full[protocol::kParty] == self_party;
    const protocol::Values now = view(entry.slot, same_party ? kPartyView : kPublicView);
    const double dx = protocol::position_cm(now, protocol::kX) - self_x;
    const double dy = protocol::position_cm(now, protocol::kY) - self_y;
    const double d2 = dx * dx + dy * dy;
    // A party or guild member ranks as if it stood next to the player, wherever it is.
    const bool member = (entry.sources & kInGroup) != 0;
    const auto weight = member ? 1.0f : static_cast<float>(1.0 / (1.0 + d2 * inv_r2));
    if (!(entry.sources & kInAoi)) ++stats.group_entities;
    entry.tier = policy && !member ? tier_of(dx, dy, d2) : 0;
    entry.slack_ticks = slack[entry.tier];
    ++stats.tier_entities[entry.tier];
    if (i == base.size() || entry.id < base[i].id) {
      // Entering the client's frame. A spawn the client may already hold (it was in the
      // last frame sent, encoded against an older baseline) is not optional.
      const bool mandatory = tick - entry.entered_tick >= max_wait || frame_has(last, entry.id);
      const world::Entity& e = world_.entity(entry.slot);
      frame.push({entry.id, tick}, now);
      w.candidates.push_back({Candidate::kSpawn, mandatory, false, j, 0, frame_index,
                              protocol::spawn_cost(schema, entry.id, e.type, e.name, now),
                              entry.priority + 2.0f * weight,  // appearing beats refreshing
                              0, now.data()});
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
        w.candidates.push_back({Candidate::kUpdate, stale_too_long, false, j,
                                static_cast<std::uint32_t>(i), frame_index, cost,
                                entry.priority + weight, mask, now.data()});
      }
      ++i;
    }
    ++j;
  }

  // Send order: what may not wait first, then highest priority; ties by frame position
  // (that is, by id) keep it deterministic.
  w.order.resize(w.candidates.size());
  for (std::uint32_t k = 0; k < w.order.size(); ++k) w.order[k] = k;
  std::sort(w.order.begin(), w.order.end(), [&](std::uint32_t a, std::uint32_t b) {
    const Candidate& ca = w.candidates[a];
    const Candidate& cb = w.candidates[b];
    if (ca.mandatory != cb.mandatory) return ca.mandatory;
    if (ca.priority != cb.priority) return ca.priority > cb.priority;
    return ca.frame_index < cb.frame_index;
  });

  // Spend the budget. A part costs its header, its two counts and (the first) the
  // client's own record; the budget is an estimate, the packing below is exact.
  const std::uint32_t max_bytes = params_.max_packet_bytes;
  const std::uint32_t part_overhead = protocol::kSnapshotHeaderBytes + 2 * protocol::kMaxCountBytes;
  const std::uint32_t self_cost =
      self_mask ? protocol::fields::encoded_size(schema, self_mask, base_self, frame.self) : 0;
  double budget = v.tokens - part_overhead - self_cost;
  std::uint32_t room = max_bytes - part_overhead - self_cost;  // left in the current part
  w.selected.clear();
  bool budget_left = true;
  for (const std::uint32_t k : w.order) {
    Candidate& cand = w.candidates[k];
    std::uint32_t extra = cand.cost;
    if (extra > room) extra += part_overhead;
    if (!cand.mandatory) budget_left = budget_left && budget >= extra;
    if (cand.mandatory || budget_left) {
      if (cand.mandatory && budget < extra) ++stats.forced;
      budget -= extra;
      room = extra > room ? max_bytes - part_overhead - cand.cost : room - cand.cost;
      w.selected.push_back(k);
    }
  }
  const std::size_t deferred = w.candidates.size() - w.selected.size();
  // Hold the snapshot back when it would carry nothing new while something waits for
  // budget (or the client is in debt): sending headers alone would spend the tokens the
  // waiting record needs. A client still hears from us at least once a second.
  const bool progress = !w.selected.empty() || self_mask != 0;
  const bool saving = deferred > 0 || v.tokens < 0.0;
  const bool heard_recently =
      v.last_sent_tick != 0 && tick - v.last_sent_tick < std::max(1u, params_.tick_rate);
  if (!progress && saving && heard_recently) return;

  // Wire order: changes by baseline position, then spawns by id; split into parts.
  auto wire_less = [&](std::uint32_t a, std::uint32_t b) {
    const Candidate& ca = w.candidates[a];
    const Candidate& cb = w.candidates[b];
    const bool sa = ca.kind == Candidate::kSpawn, sb = cb.kind == Candidate::kSpawn;
    if (sa != sb) return sb;
    return sa ? ca.frame_index < cb.frame_index : ca.base_index < cb.base_index;
  };
  std::sort(w.selected.begin(), w.selected.end(), wire_less);
  auto split_into_parts = [&] {
    w.part_ends.clear();
    std::uint32_t used = part_overhead + self_cost;
    std::uint32_t in_part = 0;
    for (std::uint32_t k = 0; k < w.selected.size(); ++k) {
      const std::uint32_t cost = w.candidates[w.selected[k]].cost;
      if (in_part > 0 && used + cost > max_bytes) {
        w.part_ends.push_back(k);
        used = part_overhead;
        in_part = 0;
      }
      used += cost;
      ++in_part;
    }
    w.part_ends.push_back(static_cast<std::uint32_t>(w.selected.size()));
  };
  split_into_parts();
  // Part numbers are one byte: a frame that needs more (thousands of entities in view
  // with small packets) sends what fits and keeps the rest for the next one. The spawns
  // the client may already hold go first, or cutting them off would make entities it
  // displays vanish; each part is then put back in wire order (costs are bounds that do
  // not depend on the order within a part).
  if (w.part_ends.size() > 255) {
    std::stable_partition(w.selected.begin(), w.selected.end(), [&](std::uint32_t k) {
      const Candidate& cand = w.candidates[k];
      return cand.kind == Candidate::kSpawn && frame_has(last, v.interest[cand.interest_index].id);
    });
    // The spawns the client does not hold yet come in only as far as they are sure to
    // fit again in the next frame, when they are held too and packed in another order:
    // greedy packing leaves less than the largest record unused in any part, so a total
    // within 255 parts of (room - largest + 1) fits whatever the order. (Without this
    // bound, a frame filled to its last byte could not carry its own entities again.)
    std::uint32_t largest = 0;
    for (const std::uint32_t k : w.selected) largest = std::max(largest, w.candidates[k].cost);
    const std::uint32_t part_room = max_bytes - part_overhead;
    const std::uint64_t sure =
        part_room > largest ? 255ull * (part_room - largest + 1) - self_cost : 0;
    std::uint64_t total = 0;
    std::erase_if(w.selected, [&](std::uint32_t k) {
      const Candidate& cand = w.candidates[k];
      const bool fresh =
          cand.kind == Candidate::kSpawn && !frame_has(last, v.interest[cand.interest_index].id);
      if (fresh && total + cand.cost > sure) return true;
      total += cand.cost;
      return false;
    });
    split_into_parts();
    w.part_ends.resize(std::min<std::size_t>(w.part_ends.size(), 255));
    w.selected.resize(w.part_ends.back());
    std::uint32_t begin = 0;
    for (const std::uint32_t end : w.part_ends) {
      std::sort(w.selected.begin() + begin, w.selected.begin() + end, wire_less);
      begin = end;
    }
  }

  // Record in the frame what is sent, and let the rest wait with a higher priority.
  for (const std::uint32_t k : w.selected) w.candidates[k].sent = true;
  for (const Candidate& cand : w.candidates) {
    const bool sent = cand.sent;
    FrameEntry& entry = frame.entities[cand.frame_index];
    if (cand.kind == Candidate::kDespawn) {
      if (sent) {
        entry.id = world::kNoEntity;
        ++stats.despawns;
      }
      continue;
    }
    InterestEntry& interest = v.interest[cand.interest_index];
    if (sent) {
      interest.priority = 0.0f;
      if (interest.deferred) {
        stats.oldest_deferral_ticks =
            std::max(stats.oldest_deferral_ticks, tick - interest.deferred_since);
        interest.deferred = false;
      }
      if (cand.kind == Candidate::kSpawn) {
        ++stats.spawns;
      } else {
        std::copy_n(cand.now, stride_, frame.values_of(cand.frame_index).begin());
        entry.sent_tick = tick;
        ++stats.updates;
      }
    } else {
      interest.priority = cand.priority;  // the accumulator: waits longer, ranks higher
      if (!interest.deferred) {
        interest.deferred = true;
        interest.deferred_since = tick;
      }
      ++stats.deferred;
      if (cand.kind == Candidate::kSpawn) {
        frame.deferred_spawns.push_back(entry.id);
        entry.id = world::kNoEntity;  // not in the frame: the client will not have it
      }
    }
  }

  // Write the parts.
  protocol::SnapshotHeader header;
  header.server_tick = tick;
  header.last_input_sequence = v.last_input_sequence;
  header.baseline_age = baseline ? static_cast<std::uint8_t>(tick - baseline->tick) : 0;
  header.part_count = static_cast<std::uint8_t>(w.part_ends.size());
  std::uint32_t first = 0;
  for (std::uint32_t p = 0; p < w.part_ends.size(); ++p) {
    const std::uint32_t end = w.part_ends[p];
    std::uint32_t changes = first;
    while (changes < end && w.candidates[w.selected[changes]].kind != Candidate::kSpawn) ++changes;
    header.part = static_cast<std::uint8_t>(p);
    header.flags = (p == 0 && self_mask) ? protocol::kSnapshotHasSelf : 0;
    protocol::SnapshotPartWriter out(w.out.reserve(max_bytes), schema);
    out.header(header);
    if (header.flags) out.self(self_mask, base_self, frame.self);
    out.begin_changes(changes - first);
    for (std::uint32_t k = first; k < changes; ++k) {
      const Candidate& cand = w.candidates[w.selected[k]];
      if (cand.kind == Candidate::kDespawn) {
        out.despawn(cand.base_index);
      } else {
        out.change(cand.base_index, cand.mask, baseline->values_of(cand.base_index),
                   {cand.now, stride_});
      }
    }
    out.begin_spawns(end - changes);
    for (std::uint32_t k = changes; k < end; ++k) {
      const Candidate& cand = w.candidates[w.selected[k]];
      const InterestEntry& entry = v.interest[cand.interest_index];
      const world::Entity& e = world_.entity(entry.slot);
      out.spawn(entry.id, e.type, e.name, {cand.now, stride_});
    }
    // The plan above bounds every record, so a part can only overflow through a bug.
    if (out.overflow()) throw std::logic_error("replication: snapshot part overflowed its plan");
    w.out.commit(c, out.size());
    ++stats.packets;
    stats.bytes += out.size();
    v.tokens -= static_cast<double>(out.size());
    v.bytes_sent += out.size();
    first = end;
  }
  ++stats.snapshots;

  frame.compact();
  v.history.commit(frame);  // after the last use of `baseline`, which may share its slot
  if (v.first_sent_tick == 0) v.first_sent_tick = tick;
  v.last_sent_tick = tick;
}

}  // namespace zone::replication
