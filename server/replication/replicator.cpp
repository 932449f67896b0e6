#include "replication/replicator.hpp"

#include <algorithm>
#include <limits>

#include "protocol/limits.hpp"
#include "protocol/quantize.hpp"
#include "replication/budget_stage.hpp"
#include "replication/gather_stage.hpp"
#include "replication/pack_stage.hpp"
#include "replication/rank_stage.hpp"
#include "replication/settle_stage.hpp"

namespace zone::replication {
namespace {

constexpr ClientId kNoClient = std::numeric_limits<ClientId>::max();

bool id_less(const InterestEntry& e, world::EntityId id) {
  return e.id < id;
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
  values_.fill(world_);
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

// The stages, in order (docs/architecture.md, "Replication"): gather what the client may
// know (interest and gather stages), rank it, fit it to the budget, pack it, settle what
// went and what waits. Each reads and writes only this client's view and the worker's
// scratch.
void Replicator::replicate_client(ClientId c, std::uint32_t tick, ReplicationWorker& w) {
  ClientView& v = clients_[c];
  ReplicationStats& stats = w.stats;
  // The baseline must be younger than one full history: the slot this frame is about
  // to be written into must not be the baseline itself.
  const Frame* baseline =
      tick - v.acked_tick < v.history.size() ? v.history.find(v.acked_tick) : nullptr;
  if (baseline == nullptr && v.acked_tick != 0) ++stats.full_resyncs;
  const std::size_t base_size = baseline ? baseline->entities.size() : 0;
  const protocol::Schema& schema = world_.game().schema;

  Frame& frame = w.next_frame;
  start_frame(frame, tick, values_.of(v.player_slot, RowView::kFull),
              base_size + v.interest.size());
  const protocol::Values base_self = baseline ? protocol::Values(baseline->self) : values_.zeros();
  const std::uint64_t self_mask = protocol::fields::change_mask(base_self, frame.self);
  const double r_cm = std::max(1.0, world_.effective_player_radius()) / protocol::kPositionStep;
  GatherContext gather{.tick = tick,
                       .baseline = baseline,
                       .last = v.history.find(v.last_sent_tick),
                       .max_wait = params_.max_deferral_ticks,
                       .self_x = protocol::position_cm(frame.self, protocol::kX),
                       .self_y = protocol::position_cm(frame.self, protocol::kY),
                       .inv_r2 = 1.0 / (r_cm * r_cm),
                       .self_party = frame.self[protocol::kParty]};

  w.tiers.prepare(params_, v.interest, values_, frame.self, gather.self_x, gather.self_y,
                  gather.inv_r2, w.nearest, stats);
  gather_candidates(gather, v.interest, values_, world_, w.tiers, frame, w.candidates, stats);
  rank_candidates(w.candidates, w.order);
  const PartCosts costs{
      .max_bytes = params_.max_packet_bytes,
      .part_overhead = protocol::kSnapshotHeaderBytes + 2 * protocol::kMaxCountBytes,
      .self_cost =
          self_mask ? protocol::fields::encoded_size(schema, self_mask, base_self, frame.self) : 0};
  stats.forced += select_within_budget(w.candidates, w.order, v.tokens, costs, w.selected);
  if (hold_back({.selected = w.selected.size(),
                 .deferred = w.candidates.size() - w.selected.size(),
                 .self_changed = self_mask != 0,
                 .tokens = v.tokens,
                 .tick = tick,
                 .last_sent_tick = v.last_sent_tick,
                 .tick_rate = params_.tick_rate})) {
    return;
  }
  plan_parts(w.candidates, v.interest, gather.last, costs, w.selected, w.part_ends);
  mark_sent(w.candidates, w.selected);
  settle_candidates(w.candidates, v.interest, tick, frame, stats);
  const PartsHeader header{.tick = tick,
                           .last_input_sequence = v.last_input_sequence,
                           .baseline = baseline,
                           .self_mask = self_mask,
                           .base_self = base_self,
                           .self = frame.self};
  v.bytes_sent += write_parts(w.candidates, v.interest, w.selected, w.part_ends, header, world_,
                              params_.max_packet_bytes, c, w.out, v.tokens, stats);
  ++stats.snapshots;

  frame.compact();
  v.history.commit(frame);  // after the last use of `baseline`, which may share its slot
  if (v.first_sent_tick == 0) v.first_sent_tick = tick;
  v.last_sent_tick = tick;
}

}  // namespace zone::replication
