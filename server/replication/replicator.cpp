#include "replication/replicator.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "protocol/limits.hpp"
#include "protocol/quantize.hpp"

namespace zone::replication {
namespace {

constexpr ClientId kNoClient = std::numeric_limits<ClientId>::max();

bool id_less(const InterestEntry& e, world::EntityId id) {
  return e.id < id;
}

}  // namespace

Replicator::Replicator(const ReplicationParams& params, const world::World& world)
    : params_(params), world_(world), writer_(params.max_packet_bytes) {
  // Never offer a baseline older than clients keep.
  params_.history_ticks =
      std::clamp<std::uint32_t>(params_.history_ticks, 2, protocol::kClientFrameHistory);
  params_.snapshot_interval = std::max(1u, params_.snapshot_interval);
}

void Replicator::set_params(const ReplicationParams& params) {
  // Packet size and history length are fixed at start-up (they size buffers); the
  // rest applies from the next tick.
  params_.client_bandwidth = params.client_bandwidth;
  params_.snapshot_interval = std::max(1u, params.snapshot_interval);
  params_.tick_rate = params.tick_rate;
}

ClientId Replicator::add_client(std::uint32_t player_slot) {
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
  return c;
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

void Replicator::apply_events(std::span<const aoi::VisibilityEvent> events) {
  for (const aoi::VisibilityEvent& ev : events) {
    const std::uint32_t observer = ev.observer.index;
    if (observer >= client_of_slot_.size() || client_of_slot_[observer] == kNoClient) continue;
    ClientView& v = clients_[client_of_slot_[observer]];
    const world::Entity& target = world_.entity(ev.target.index);
    auto it = std::lower_bound(v.interest.begin(), v.interest.end(), target.id, id_less);
    const bool present = it != v.interest.end() && it->id == target.id;
    if (ev.kind == aoi::EventKind::kEnter) {
      ++stats_.enter_events;
      if (!present) v.interest.insert(it, InterestEntry{target.id, ev.target.index, 0.0f});
    } else {
      ++stats_.leave_events;
      if (present) v.interest.erase(it);
    }
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

EntityState Replicator::current_state(const world::Entity& e) const {
  return EntityState(e.id, protocol::quantize_position(e.x), protocol::quantize_position(e.y),
                     protocol::quantize_heading(e.heading), e.health,
                     e.kind == world::EntityKind::kPlayer ? protocol::EntityKind::Player
                                                          : protocol::EntityKind::Npc,
                     e.moving() ? protocol::MoveState::Walking : protocol::MoveState::Idle);
}

bool Replicator::build_frame(ClientId c, std::uint32_t tick) {
  ClientView& v = clients_[c];
  // The baseline must be older than one full history: the slot this frame is about to
  // be written into must not be the baseline itself.
  const Frame* baseline =
      tick - v.acked_tick < v.history.size() ? v.history.find(v.acked_tick) : nullptr;
  if (baseline == nullptr && v.acked_tick != 0) ++stats_.full_resyncs;
  static const std::vector<EntityState> kEmpty;
  const std::vector<EntityState>& base = baseline ? baseline->entities : kEmpty;

  Frame& frame = next_frame_;
  frame.tick = tick;
  frame.entities.clear();
  frame.deferred.clear();
  candidates_.clear();
  send_order_.clear();

  const world::Entity& self = world_.entity(v.player_slot);
  const double r = std::max(1.0, world_.effective_player_radius());

  // Bytes this snapshot may spend, and how its records will fill parts.
  PartPlan plan(params_.max_packet_bytes);
  double budget = v.tokens - SnapshotWriter::kPartOverhead;
  auto room_for = [&](std::uint32_t cost) {
    return !(plan.opens_part(cost) && plan.parts() >= SnapshotWriter::kMaxParts);
  };

  // Merge the baseline frame with the interest set, both sorted by id.
  std::size_t i = 0;
  std::uint32_t j = 0;
  while (i < base.size() || j < v.interest.size()) {
    if (j == v.interest.size() || (i < base.size() && base[i].id() < v.interest[j].id)) {
      EntityRecord rec;
      rec.fields = EntityRecord::kDespawn;
      rec.state = base[i];
      const std::uint32_t cost = record_cost(rec);
      if (room_for(cost)) {
        budget -= plan.extra_for(cost);  // despawns go first, whatever the budget
        plan.add(cost);
        send_order_.push_back(rec);
      } else {
        // Only a frame of more than 255 parts gets here: keep it for the next one.
        frame.entities.push_back(base[i]);
        frame.deferred.push_back(base[i].id());
      }
      ++i;
      continue;
    }
    InterestEntry& entry = v.interest[j];
    const world::Entity& e = world_.entity(entry.slot);
    const EntityState now = current_state(e);
    const double dist = std::hypot(e.x - self.x, e.y - self.y);
    const float weight = static_cast<float>(1.0 / (1.0 + dist / r));
    Candidate cand{j, static_cast<std::uint32_t>(frame.entities.size()), 0.0f, {}};
    cand.record.state = now;
    if (i == base.size() || v.interest[j].id < base[i].id()) {
      cand.record.fields = EntityRecord::kSpawn;
      cand.record.max_health = e.max_health;
      cand.record.name = e.name;
      cand.priority = entry.priority + 2.0f * weight;  // appearing beats refreshing
      frame.entities.push_back(now);                   // placeholder until selected
      candidates_.push_back(cand);
    } else {
      const EntityState& was = base[i];
      std::uint8_t f = 0;
      const std::int64_t dx = std::int64_t{now.x()} - was.x();
      const std::int64_t dy = std::int64_t{now.y()} - was.y();
      if (dx != 0 || dy != 0) {
        if (std::abs(dx) <= 32767 && std::abs(dy) <= 32767) {
          f |= EntityRecord::kMove;
          cand.record.dx = static_cast<std::int16_t>(dx);
          cand.record.dy = static_cast<std::int16_t>(dy);
        } else {
          f |= EntityRecord::kTeleport;
        }
      }
      if (f == 0 && (now.heading() != was.heading() || now.move_state() != was.move_state())) {
        f |= EntityRecord::kHeading;  // moves carry heading and state with them
      }
      if (now.health() != was.health()) f |= EntityRecord::kHealth;
      frame.entities.push_back(was);  // stays at the baseline state unless sent
      if (f != 0) {
        cand.record.fields = f;
        cand.priority = entry.priority + weight;
        candidates_.push_back(cand);
      } else {
        entry.priority = 0.0f;
      }
      ++i;
    }
    ++j;
  }

  // Highest priority first; ties by id keep the order deterministic.
  order_.resize(candidates_.size());
  for (std::uint32_t k = 0; k < order_.size(); ++k) order_[k] = k;
  std::sort(order_.begin(), order_.end(), [&](std::uint32_t a, std::uint32_t b) {
    if (candidates_[a].priority != candidates_[b].priority) {
      return candidates_[a].priority > candidates_[b].priority;
    }
    return candidates_[a].record.state.id() < candidates_[b].record.state.id();
  });

  // Spend the budget, highest priority first; the first part's overhead is always paid.
  bool budget_left = true;
  std::uint32_t selected = 0;
  for (const std::uint32_t k : order_) {
    Candidate& cand = candidates_[k];
    const std::uint32_t cost = record_cost(cand.record);
    const std::uint32_t extra = plan.extra_for(cost);
    budget_left = budget_left && budget >= extra && room_for(cost);
    InterestEntry& entry = v.interest[cand.interest_index];
    if (budget_left) {
      budget -= extra;
      plan.add(cost);
      frame.entities[cand.frame_index] = cand.record.state;
      send_order_.push_back(cand.record);
      entry.priority = 0.0f;
      ++selected;
    } else {
      entry.priority = cand.priority;  // the accumulator: waits longer, ranks higher
      frame.deferred.push_back(cand.record.state.id());
      // A deferred spawn is not part of this frame: the client will not have it.
      if (cand.record.fields & EntityRecord::kSpawn) {
        frame.entities[cand.frame_index] = EntityState();  // id 0: removed below
      }
    }
  }
  const std::size_t despawns = send_order_.size() - selected;
  // Hold the snapshot back when it would carry nothing while something waits for budget
  // (or the client is in debt): sending headers alone would spend the tokens the
  // waiting record needs. A client still hears from us at least once a second.
  const bool progress = selected > 0 || despawns > 0;
  const bool saving = !candidates_.empty() || v.tokens < 0.0;
  const bool heard_recently =
      v.last_sent_tick != 0 && tick - v.last_sent_tick < std::max(1u, params_.tick_rate);
  if (!progress && saving && heard_recently) return false;

  stats_.despawns += despawns;
  stats_.deferred += candidates_.size() - selected;
  for (std::size_t k = despawns; k < send_order_.size(); ++k) {
    if (send_order_[k].fields & EntityRecord::kSpawn) {
      ++stats_.spawns;
    } else {
      ++stats_.updates;
    }
  }
  std::erase_if(frame.entities, [](const EntityState& s) { return s.id() == 0; });

  header_.server_tick = tick;
  header_.baseline_tick = baseline ? baseline->tick : 0;
  header_.self_state = current_state(self);
  header_.last_input_sequence = v.last_input_sequence;
  v.history.commit(frame);  // after the last use of `baseline`, which may share its slot
  if (v.first_sent_tick == 0) v.first_sent_tick = tick;
  v.last_sent_tick = tick;
  return true;
}

}  // namespace zone::replication
