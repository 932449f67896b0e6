#include "cluster/ghost_exchange.hpp"

#include <algorithm>

#include "cluster/subjects.hpp"
#include "protocol/player_name.hpp"

namespace zone::cluster {
namespace {

std::int64_t wall_clock_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

GhostExchange::GhostExchange(const ExchangeParams& params, world::World& world)
    : GhostExchange(
          params, world,
          std::make_unique<bus::NatsLink>(bus::LinkOptions{.url = params.nats_url,
                                                           .name = "zone-" + params.self_name,
                                                           .user = params.nats_user,
                                                           .password = params.nats_password,
                                                           .tls = params.nats_tls,
                                                           .ca_file = params.nats_ca_file,
                                                           .cert_file = params.nats_cert_file,
                                                           .key_file = params.nats_key_file})) {}

GhostExchange::GhostExchange(const ExchangeParams& params, world::World& world,
                             std::unique_ptr<bus::Bus> bus)
    : params_(params),
      world_(world),
      ghosts_(world, params.id_reuse_ticks),
      link_(std::move(bus)),
      epoch_(static_cast<std::uint64_t>(wall_clock_us())) {
  // One subscription per neighbour and kind: the subject names the sender, and NATS lets
  // only that zone publish on it.
  const std::string& prefix = params_.subject_prefix;
  const std::string& self = params_.self_name;
  for (const Neighbour& n : params_.neighbours) {
    subjects_out_.push_back(ghost_subject(prefix, n.name, self));
    handoff_subjects_.push_back(handoff_subject(prefix, n.name, self));
    inbound_.emplace(ghost_subject(prefix, self, n.name), n.index);
    inbound_.emplace(handoff_subject(prefix, self, n.name), n.index);
    link_->subscribe(ghost_subject(prefix, self, n.name));
    link_->subscribe(handoff_subject(prefix, self, n.name));
  }
  for (const std::string& z : params_.world_zones) {
    chat_from_.emplace(chat_subject(prefix, z), z);
    link_->subscribe(chat_subject(prefix, z));
    login_from_.emplace(login_subject(prefix, z), z);
    link_->subscribe(login_subject(prefix, z));
  }
  // Room for a tick's actions from every neighbour up front: none is allocated in play.
  actions_in_.reserve(params_.neighbours.size() * params_.max_remote_actions_per_tick);
  actions_in_per_source_.assign(params_.neighbours.size(), 0);
}

std::size_t GhostExchange::neighbour_position(std::uint32_t index) const {
  for (std::size_t i = 0; i < params_.neighbours.size(); ++i) {
    if (params_.neighbours[i].index == index) return i;
  }
  return params_.neighbours.size();
}

ForwardResult GhostExchange::forward_action(const world::Entity& actor, std::uint16_t action,
                                            const world::Entity& target,
                                            std::span<const std::int32_t> args) {
  const std::optional<std::uint32_t> owner = target.ghost ? ghosts_.owner(target.id) : std::nullopt;
  const std::size_t at = owner ? neighbour_position(*owner) : params_.neighbours.size();
  if (at == params_.neighbours.size() || action > 0xFF || args.size() > kMaxActionArgs) {
    ++stats_.actions_forward_refused;
    return ForwardResult::kFailed;
  }
  if (actions_out_this_tick_ >= params_.max_forwarded_actions_per_tick) {
    ++stats_.actions_forward_refused;
    return ForwardResult::kRateLimited;
  }
  ++actions_out_this_tick_;
  action_.sender = static_cast<std::uint8_t>(params_.self_index);
  action_.action = static_cast<std::uint8_t>(action);
  action_.actor = actor.id;
  action_.target = target.id;
  action_.x = actor.x;
  action_.y = actor.y;
  action_.arg_count = static_cast<std::uint8_t>(args.size());
  std::copy(args.begin(), args.end(), action_.args.begin());
  encode(action_, action_bytes_);
  // The neighbour-to-neighbour subject: only this zone may publish on it.
  if (!link_->publish(handoff_subjects_[at], action_bytes_)) {
    ++stats_.actions_forward_refused;
    return ForwardResult::kFailed;
  }
  ++stats_.actions_forwarded;
  return ForwardResult::kSent;
}

void GhostExchange::queue_action(const bus::BusMessage& m, std::uint32_t from) {
  // The sender field must be the zone the subject names (NATS lets only it publish there).
  if (decode(m.data, action_) != ActionDecodeError::kNone || action_.sender != from) {
    ++stats_.remote_actions_dropped;
    return;
  }
  const std::size_t at = neighbour_position(from);
  if (at >= actions_in_per_source_.size() ||
      actions_in_per_source_[at] >= params_.max_remote_actions_per_tick) {
    ++stats_.remote_actions_dropped;
    return;
  }
  ++actions_in_per_source_[at];
  actions_in_.push_back(action_);
}

bool GhostExchange::actor_token(const world::Entity& actor, Clock::time_point now) {
  const std::uint32_t slot = actor.aoi.index;
  if (slot >= actor_buckets_.size()) actor_buckets_.resize(world_.slot_count());
  ActorBucket& b = actor_buckets_[slot];
  const double rate = params_.actor_actions_per_second;
  const double burst = 2.0 * rate;
  if (b.id != actor.id) b = {actor.id, burst, now};
  const double elapsed = std::chrono::duration<double>(now - b.at).count();
  b.tokens = std::min(burst, b.tokens + std::max(0.0, elapsed) * rate);
  b.at = now;
  if (b.tokens < 1.0) return false;
  b.tokens -= 1.0;
  return true;
}

void GhostExchange::resolve_actions(Clock::time_point now, double max_step, HandoffHooks& hooks) {
  const auto actions = world_.game().schema.actions();
  const double slack = max_step * params_.actor_slack_ticks + 1.0;
  for (const RemoteAction& a : actions_in_) {
    // The actor is a player its sender owns (a zone acts only for its own players), seen
    // here as a ghost; the target is this zone's own; the action one of the game's that
    // acts on a target (rule `entity`), with no more arguments than it declares.
    const world::Entity* actor = world_.find(a.actor);
    const world::Entity* target = world_.find(a.target);
    const bool actor_ok = actor != nullptr && actor->ghost && ghosts_.owner(a.actor) == a.sender &&
                          actor->kind == world::EntityKind::kPlayer;
    const bool action_ok = a.action < actions.size() && a.arg_count <= actions[a.action].args &&
                           actions[a.action].target == protocol::ActionTarget::kEntity;
    if (!actor_ok || target == nullptr || target->ghost || !action_ok) {
      ++stats_.remote_actions_dropped;
      continue;
    }
    // The rules measure range and sight from the ghost: it must stand about where the
    // actor stood, not a stale second behind.
    const double dx = actor->x - a.x, dy = actor->y - a.y;
    if (dx * dx + dy * dy > slack * slack) {
      ++stats_.remote_actions_dropped;
      continue;
    }
    if (!actor_token(*actor, now)) {
      ++stats_.remote_actions_rate_limited;
      continue;
    }
    const protocol::ActionStatus status =
        hooks.remote_action(actor->aoi.index, a.action, a.target, {a.args.data(), a.arg_count});
    if (status == protocol::ActionStatus::Ok) {
      ++stats_.remote_actions_ok;
    } else {
      ++stats_.remote_actions_refused;
    }
  }
  actions_in_.clear();
  std::fill(actions_in_per_source_.begin(), actions_in_per_source_.end(), 0u);
}

void GhostExchange::publish_chat(const RemoteChat& line) {
  if (params_.world_zones.empty()) return;
  encode(line, chat_bytes_);
  if (link_->publish(chat_subject(params_.subject_prefix, params_.self_name), chat_bytes_)) {
    ++stats_.chat_out;
  }
}

void GhostExchange::publish_login(const LoginNotice& login) {
  if (params_.world_zones.empty()) return;
  encode(login, login_bytes_);
  if (link_->publish(login_subject(params_.subject_prefix, params_.self_name), login_bytes_)) {
    ++stats_.logins_out;
  }
}

void GhostExchange::receive_chat(const RemoteChat& line, HandoffHooks& hooks) {
  // The speaker's name and the line meet the rules they met at home (a zone whose rules
  // were different, or a forged line, does not get through).
  if (!protocol::valid_player_name(line.speaker_name, params_.max_name_bytes) ||
      !protocol::valid_player_name(line.text, protocol::kMaxEventText) ||
      (!line.to.empty() && !protocol::valid_player_name(line.to, params_.max_name_bytes))) {
    ++stats_.chat_refused;
    return;
  }
  ++stats_.chat_in;
  hooks.remote_chat(line);
}

bool GhostExchange::name_ok(std::string_view name) const {
  return protocol::valid_player_name(name, params_.max_name_bytes);
}

const Neighbour* GhostExchange::neighbour(std::uint32_t index) const {
  for (const Neighbour& n : params_.neighbours) {
    if (n.index == index) return &n;
  }
  return nullptr;
}

void GhostExchange::tick(std::uint32_t tick, double max_step, HandoffHooks& hooks) {
  const auto now = Clock::now();
  actions_out_this_tick_ = 0;
  receive(now, hooks);
  settle_arrivals(now, hooks);
  ghosts_.expire(now, params_.ghost_timeout);
  ghosts_.follow(max_step);
  // After the ghosts moved: the actors stand where this tick's lists put them.
  resolve_actions(now, max_step, hooks);
  offer_crossings(now);
  expire_offers(now);
  publish(tick);
}

void GhostExchange::receive(Clock::time_point now, HandoffHooks& hooks) {
  link_->take(inbox_);
  for (const bus::BusMessage& m : inbox_) {
    if (!m.data.empty() && m.data[0] == kChatMagic) {
      // Only on a chat subject (whose sender NATS vouches for).
      if (chat_from_.count(m.subject) == 0 || decode(m.data, chat_) != ChatDecodeError::kNone) {
        ++stats_.chat_refused;
        continue;
      }
      receive_chat(chat_, hooks);
      continue;
    }
    if (!m.data.empty() && m.data[0] == kLoginMagic) {
      // Only on a login subject (whose sender NATS vouches for).
      const auto from = login_from_.find(m.subject);
      if (from == login_from_.end() || decode(m.data, login_) != LoginDecodeError::kNone) {
        ++stats_.logins_refused;
        continue;
      }
      ++stats_.logins_in;
      hooks.remote_login(login_, from->second > params_.self_name);
      continue;
    }
    // The neighbour the subject names as the sender (only it may publish there).
    const auto from = inbound_.find(m.subject);
    if (!m.data.empty() && m.data[0] == kActionMagic) {
      if (from == inbound_.end()) {
        ++stats_.remote_actions_dropped;
        continue;
      }
      queue_action(m, from->second);
      continue;
    }
    if (!m.data.empty() && m.data[0] == kTransferMagic) {
      if (decode(m.data, transfer_) != TransferDecodeError::kNone ||
          transfer_.sender == params_.self_index || !is_neighbour(transfer_.sender) ||
          from == inbound_.end() || from->second != transfer_.sender) {
        ++stats_.handoff_messages_dropped;
        continue;
      }
      receive_handoff(transfer_, now, hooks);
      continue;
    }
    receive_ghosts(m, from == inbound_.end() ? std::optional<std::uint32_t>() : from->second, now);
  }
}

void GhostExchange::receive_ghosts(const bus::BusMessage& m, std::optional<std::uint32_t> from,
                                   Clock::time_point now) {
  const GhostDecodeError error = decode(m.data, message_);
  switch (error) {
    case GhostDecodeError::kNone:
      break;
    case GhostDecodeError::kNotGhost:
      ++stats_.dropped_not_ghost;
      return;
    case GhostDecodeError::kVersion:
      ++stats_.dropped_version;
      return;
    case GhostDecodeError::kTruncated:
      ++stats_.dropped_truncated;
      return;
    case GhostDecodeError::kBadValue:
      ++stats_.dropped_bad_value;
      return;
    case GhostDecodeError::kTrailing:
      ++stats_.dropped_trailing;
      return;
  }
  // Only a neighbour's entities can be near this zone; anything else is a
  // misconfigured or foreign sender on our subject.
  if (message_.source == params_.self_index || !is_neighbour(message_.source)) {
    ++stats_.dropped_unknown_source;
    return;
  }
  // A neighbour speaking for another: the subject's sender is the one NATS checked.
  if (!from || *from != message_.source) {
    ++stats_.dropped_wrong_sender;
    return;
  }
  // Names cross into this zone's clients and logs: the rule a Hello's name meets.
  for (const world::GhostState& g : message_.ghosts) {
    if (!name_ok(g.name)) {
      ++stats_.dropped_bad_name;
      return;
    }
  }
  if (!ghosts_.apply(message_.source, message_.epoch, message_.ghosts, now)) return;
  ++stats_.messages_in;
  relay_events(message_);
  const double lag = static_cast<double>(wall_clock_us() - message_.sent_us) / 1e6;
  stats_.lag_seconds_sum += std::max(0.0, lag);
  ++stats_.lag_count;
  stats_.last_lag_seconds = std::max(0.0, lag);
}

void GhostExchange::add_events(GhostMessage& m) {
  m.events.clear();
  const world::EventLog& log = world_.events();
  if (log.events().empty() || m.ghosts.empty()) return;
  listed_.clear();
  for (const world::GhostState& g : m.ghosts) listed_.push_back(g.id);
  std::sort(listed_.begin(), listed_.end());
  for (const world::WorldEvent& e : log.events()) {
    // Only events about an entity (a say line, a hit), and only this zone's own: an event
    // about a ghost here came from its owner, who tells its neighbours itself.
    if (e.route != world::EventRoute::kEntity) continue;
    if (!std::binary_search(listed_.begin(), listed_.end(), e.entity)) continue;
    GhostEvent g;
    g.kind = e.kind;
    g.entity = e.entity;
    g.target = e.target;
    g.arg_count = e.arg_count;
    g.args = e.args;
    g.text = log.text(e);
    g.name = log.name(e);
    m.events.push_back(std::move(g));
  }
  stats_.events_out += m.events.size();
}

void GhostExchange::relay_events(const GhostMessage& m) {
  for (const GhostEvent& e : m.events) {
    // Only about a ghost the sender owns: a sender cannot speak for another zone's
    // entities, nor for this zone's.
    const world::Entity* about = world_.find(e.entity);
    if (about == nullptr || !about->ghost || ghosts_.owner(e.entity) != m.source) {
      ++stats_.events_refused;
      continue;
    }
    // A speaker's name and a chat line meet the rules they met in their own zone (a name
    // or a line the name rule refuses never reaches a client through a neighbour).
    const bool chat = e.kind == protocol::kChatEvent;
    if ((!e.name.empty() && !protocol::valid_player_name(e.name, 64)) ||
        (chat && !protocol::valid_player_name(e.text, protocol::kMaxEventText))) {
      ++stats_.events_refused;
      continue;
    }
    world::EventDraft draft;
    draft.kind = e.kind;
    draft.route = world::EventRoute::kEntity;
    draft.entity = e.entity;
    draft.target = e.target;
    draft.args = {e.args.data(), e.arg_count};
    draft.text = e.text;
    draft.name = e.name;
    if (world_.events().emit(world_.game().schema, draft)) {
      ++stats_.events_refused;  // the schema refuses it (another game) or the tick is full
      continue;
    }
    ++stats_.events_in;
  }
}

void GhostExchange::publish(std::uint32_t tick) {
  for (std::size_t i = 0; i < params_.neighbours.size(); ++i) {
    message_.source = params_.self_index;
    message_.tick = tick;
    message_.epoch = epoch_;
    message_.ghosts.clear();
    world::collect_near(world_, params_.neighbours[i].area, params_.ghost_distance,
                        message_.ghosts);
    add_events(message_);
    message_.sent_us = wall_clock_us();
    encode(message_, bytes_);
    // An empty list is sent too: it is how a neighbour learns that the last ghost left,
    // and that this zone is alive.
    if (link_->publish(subjects_out_[i], bytes_)) {
      ++stats_.messages_out;
      stats_.ghosts_out += message_.ghosts.size();
    }
  }
}

ClusterStats GhostExchange::stats() const {
  ClusterStats s = stats_;
  const world::GhostStats& g = ghosts_.stats();
  s.ghosts_in = ghosts_.count();
  s.ghost_sources = ghosts_.sources();
  s.ghosts_spawned = g.spawned;
  s.ghosts_removed = g.removed;
  s.ghosts_expired = g.expired;
  s.ghosts_rejected = g.rejected;
  s.ghosts_owned_here = g.owned_here;
  s.ghosts_rehomed = g.rehomed;
  s.ghosts_restarted = g.restarted;
  s.dropped_stale_epoch = g.stale_lists;
  const bus::LinkStats l = link_->stats();
  s.connected = l.connected;
  s.publish_failed = l.publish_failed;
  s.dropped_queue_full = l.dropped;
  s.bytes_out = l.bytes_out;
  s.bytes_in = l.bytes_in;
  s.disconnects = l.disconnects;
  s.reconnects = l.reconnects;
  s.bus_errors = l.errors;
  return s;
}

}  // namespace zone::cluster
