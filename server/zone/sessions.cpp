#include "zone/sessions.hpp"

#include "protocol/player_name.hpp"
#include "protocol/quantize.hpp"

#include <algorithm>
#include <cmath>

namespace zone {

using protocol::DisconnectReason;
using Clock = std::chrono::steady_clock;

namespace {

// A movement intent is a direction of length <= 1; components far beyond that mean a
// broken or hostile client, not a fast one.
constexpr float kMaxIntentComponent = 16.0f;

// Session lines (joins, leaves, refusals) through a rate limiter: churn must not turn
// the log into the bottleneck.
template <typename... Args>
void log_session(Logger& log, LogRateLimiter& limit, fmt::format_string<Args...> format,
                 Args&&... args) {
  std::uint64_t suppressed = 0;
  if (!limit.allow(Clock::now(), suppressed)) return;
  const std::string line = fmt::format(format, std::forward<Args>(args)...);
  if (suppressed == 0) {
    log.info("{}", line);
  } else {
    log.info("{} ({} similar lines suppressed)", line, suppressed);
  }
}

// Compared in full whatever the first bytes: the time taken says nothing about a token.
bool same_token(std::span<const std::uint8_t> token, const std::array<std::uint8_t, 16>& mine) {
  if (token.size() != mine.size()) return false;
  std::uint8_t diff = 0;
  for (std::size_t i = 0; i < mine.size(); ++i) diff |= token[i] ^ mine[i];
  return diff == 0;
}

}  // namespace

Sessions::Sessions(const config::ZoneConfig& config, Logger& log, world::World& world,
                   replication::Replicator& replicator)
    : config_(config), log_(log), world_(world), replicator_(replicator) {}

void Sessions::size_hosts(std::span<const std::size_t> peers_per_host) {
  table_.clear();
  for (const std::size_t peers : peers_per_host) table_.emplace_back(peers);
}

Session* Sessions::find(net::PeerId peer) {
  if (peer.host >= table_.size() || peer.index >= table_[peer.host].size()) return nullptr;
  Session& s = table_[peer.host][peer.index];
  return (s.phase != Session::Phase::kFree && s.peer == peer) ? &s : nullptr;
}

void Sessions::handle(const Inbox& inbox, std::uint32_t tick, std::span<net::SendBatch> out) {
  counters_.drops[static_cast<std::size_t>(DropReason::kOverload)] += inbox.overflowed;
  for (const InboundEvent& ev : inbox.events) {
    switch (ev.kind) {
      case InboundEvent::Kind::kConnect:
        on_connect(ev, out);
        break;
      case InboundEvent::Kind::kDisconnect:
        on_disconnect(ev);
        break;
      case InboundEvent::Kind::kHello:
        if (Session* s = find(ev.peer)) {
          on_hello(*s, inbox, ev, tick, out);
        }
        break;
      case InboundEvent::Kind::kInput:
        if (Session* s = find(ev.peer)) on_input(*s, ev, out);
        break;
      case InboundEvent::Kind::kJoinParty:
        if (Session* s = find(ev.peer)) on_join_group(*s, world::GroupKind::kParty, ev, out);
        break;
      case InboundEvent::Kind::kJoinGuild:
        if (Session* s = find(ev.peer)) on_join_group(*s, world::GroupKind::kGuild, ev, out);
        break;
      case InboundEvent::Kind::kAction:
        if (Session* s = find(ev.peer)) on_action(*s, ev, tick, out);
        break;
      case InboundEvent::Kind::kChat:
        if (Session* s = find(ev.peer)) on_chat(*s, inbox, ev, out);
        break;
      case InboundEvent::Kind::kBad: {
        const auto why = static_cast<DropReason>(ev.data);
        if (why == DropReason::kOverload) {
          ++counters_.drops[ev.data];  // the zone fell behind; not the client's fault
        } else if (Session* s = find(ev.peer)) {
          drop(*s, why, out);
        }
        break;
      }
    }
  }
}

void Sessions::expire(Clock::time_point now, std::span<net::SendBatch> out) {
  // A connection that never says hello would hold a peer slot for ever; a player whose
  // inputs stopped (its ENet connection may still be alive) is gone for the game.
  const auto hello_limit = std::chrono::milliseconds(config_.limits.hello_timeout_ms);
  const auto input_limit = std::chrono::milliseconds(config_.network.timeout_ms);
  expire_arrivals(now);
  expire_holds(now);
  expire_loads(now, out);
  for (auto& host : table_) {
    for (Session& s : host) {
      if (s.phase == Session::Phase::kAwaitingHello && now - s.connected_at > hello_limit) {
        kick(s, DisconnectReason::BadHello, out);
      } else if (s.phase == Session::Phase::kPlaying && now - s.last_input_at > input_limit) {
        // Its inputs stopped: the connection is told so and closed, and the player waits
        // for its client to resume (or leaves, with no grace).
        ++counters_.disconnects[static_cast<std::size_t>(DisconnectReason::Timeout)];
        log_session(log_, session_log_, "player '{}' disconnected: {}", s.name,
                    protocol::to_string(DisconnectReason::Timeout));
        out[s.peer.host].close(s.peer, static_cast<std::uint32_t>(DisconnectReason::Timeout),
                               false);
        if (!hold(s)) end_session(s);
      }
    }
  }
}

void Sessions::apply_inputs() {
  for (const auto& host : table_) {
    for (const Session& s : host) {
      if (s.phase == Session::Phase::kPlaying)
        world_.set_intent(s.player_slot, s.intent_x, s.intent_y);
    }
  }
}

std::vector<net::PeerId> Sessions::close_all(DisconnectReason reason,
                                             std::span<net::SendBatch> out) {
  accepting_ = false;
  std::vector<net::PeerId> told;
  // Nobody comes back to a zone that closes: the held players leave now, saved.
  while (!held_.empty()) release_hold(held_.back().slot);
  for (auto& host : table_) {
    for (Session& s : host) {
      if (s.phase == Session::Phase::kFree) continue;
      // Players' goodbyes are confirmed by their clients; the others are closed at once.
      if (s.phase == Session::Phase::kPlaying) told.push_back(s.peer);
      kick(s, reason, out);
    }
  }
  return told;
}

void Sessions::broadcast(std::span<const std::uint8_t> bytes, std::span<net::SendBatch> out) {
  for (auto& host : table_) {
    for (const Session& s : host) {
      if (s.phase != Session::Phase::kPlaying) continue;
      out[s.peer.host].add_copy(s.peer, bytes, net::Delivery::kReliable,
                                protocol::kReliableChannel);
    }
  }
}

void Sessions::on_connect(const InboundEvent& ev, std::span<net::SendBatch> out) {
  if (ev.peer.host >= table_.size() || ev.peer.index >= table_[ev.peer.host].size()) return;
  Session& s = table_[ev.peer.host][ev.peer.index];
  if (s.phase != Session::Phase::kFree) end_session(s);  // its goodbye was never reported
  s.peer = ev.peer;
  s.phase = Session::Phase::kAwaitingHello;
  s.connected_at = ev.at;
  s.input_refill = ev.at;
  s.input_tokens = config_.limits.max_inputs_per_second;
  ++awaiting_hello_;
  if (!accepting_) return kick(s, DisconnectReason::ServerShutdown, out);
  // Connections that have not said hello share a fixed allowance of slots. Beyond it the
  // one that has been silent longest makes room: a newcomer says hello within a round
  // trip, so strangers that connect and say nothing can never hold the allowance.
  if (awaiting_hello_ > config_.limits.max_awaiting_hello) {
    Session* oldest = nullptr;
    for (auto& host : table_) {
      for (Session& other : host) {
        if (other.phase == Session::Phase::kAwaitingHello && &other != &s &&
            (oldest == nullptr || other.connected_at < oldest->connected_at)) {
          oldest = &other;
        }
      }
    }
    ++counters_.evicted_silent;
    kick(oldest != nullptr ? *oldest : s, DisconnectReason::BadHello, out);
  }
}

void Sessions::on_disconnect(const InboundEvent& ev) {
  Session* s = find(ev.peer);
  if (s == nullptr) return;
  // ENet 1.3 reports a timeout as a disconnect with no data; a client that quits
  // politely says so.
  const auto reason = ev.data == static_cast<std::uint32_t>(DisconnectReason::ClientQuit)
                          ? DisconnectReason::ClientQuit
                          : DisconnectReason::Timeout;
  ++counters_.disconnects[static_cast<std::size_t>(reason)];
  if (s->phase == Session::Phase::kPlaying) {
    log_session(log_, session_log_, "player '{}' {} (entity {}): {}", s->name,
                reason == DisconnectReason::Timeout ? "lost its connection" : "left",
                world_.entity(s->player_slot).id, protocol::to_string(reason));
    // A lost connection (not a quit) may come back: the player waits in the world.
    if (reason == DisconnectReason::Timeout && hold(*s)) return;
  }
  end_session(*s);
}

void Sessions::end_session(Session& s, bool keep_entity) {
  if (s.phase == Session::Phase::kAwaitingHello || s.phase == Session::Phase::kLoading) {
    --awaiting_hello_;
  }
  if (s.phase == Session::Phase::kPlaying) {
    // Another zone claimed the character (a shared store): its leave is not saved here.
    const bool save = !s.character_lost;
    const std::string name = std::move(s.name);
    leave_world(s.player_slot, name, keep_entity, &s, save);
  }
  s = Session{};
}

void Sessions::leave_world(std::uint32_t slot, const std::string& name, bool keep_entity,
                           Session* s, bool save) {
  // Despawning makes the AOI emit leave events to everyone who saw this player, and
  // takes it out of its party and guild, whose other members are told. A player handed
  // over stays (its new zone's ghost) and leaves its groups here when it turns into one.
  const world::GroupId party = world_.entity(slot).party;
  const world::GroupId guild = world_.entity(slot).guild;
  if (game_ != nullptr) game_->player_leaving(slot, keep_entity);
  // Its last state, after the rules' leave (which may change it). A player handed over
  // was saved by transfer_out.
  if (store_ != nullptr && !keep_entity && save) store_->save(world_, slot, /*leaving=*/true);
  names_.remove(name, slot);
  if (s != nullptr) {
    detach_player(*s);
  } else if (const std::uint64_t character = world_.entity(slot).character; character != 0) {
    const auto it = slot_of_character_.find(character);
    if (it != slot_of_character_.end() && it->second.slot == slot) slot_of_character_.erase(it);
  }
  if (!keep_entity) {
    world_.despawn(slot);
    ++counters_.leaves;
  }
  if (party != world::kNoGroup) group_changed(world::GroupKind::kParty, party, kNobody);
  if (guild != world::kNoGroup) group_changed(world::GroupKind::kGuild, guild, kNobody);
}

void Sessions::detach_player(Session& s, bool keep_character) {
  replicator_.remove_client(s.client);
  peer_of_slot_[s.player_slot] = net::PeerId{};
  if (s.character_id != 0 && !keep_character) {
    const auto it = slot_of_character_.find(s.character_id);
    if (it != slot_of_character_.end() && it->second.slot == s.player_slot) {
      slot_of_character_.erase(it);
    }
  }
  s = Session{};
}

void Sessions::kick(Session& s, DisconnectReason reason, std::span<net::SendBatch> out) {
  ++counters_.disconnects[static_cast<std::size_t>(reason)];
  if (s.phase == Session::Phase::kPlaying) {
    log_session(log_, session_log_, "player '{}' disconnected: {}", s.name,
                protocol::to_string(reason));
  }
  // A player's goodbye is delivered reliably (ENet finishes it on its own); a connection
  // that never said hello gets one unreliable word and its slot is freed at once.
  out[s.peer.host].close(s.peer, static_cast<std::uint32_t>(reason),
                         s.phase == Session::Phase::kAwaitingHello);
  end_session(s);
}

void Sessions::drop(Session& s, DropReason reason, std::span<net::SendBatch> out) {
  ++counters_.drops[static_cast<std::size_t>(reason)];
  std::uint64_t suppressed = 0;
  if (bad_input_log_.allow(Clock::now(), suppressed)) {
    log_.warn("dropped packet from peer {}.{}: {}{}", s.peer.host, s.peer.index, to_string(reason),
              suppressed ? fmt::format(" ({} similar lines suppressed)", suppressed) : "");
  }
  // Stale inputs are normal on a lossy network (reordering); everything else counts
  // against the client.
  if (reason == DropReason::kStaleInput) return;
  if (++s.bad_packets > config_.limits.max_bad_packets) {
    kick(s,
         reason == DropReason::kFlood ? DisconnectReason::InputFlood
                                      : DisconnectReason::MalformedPackets,
         out);
  }
}

void Sessions::on_hello(Session& s, const Inbox& inbox, const InboundEvent& ev, std::uint32_t tick,
                        std::span<net::SendBatch> out) {
  const auto version = static_cast<std::uint16_t>(ev.data);
  const std::string_view name = inbox.name_of(ev);
  if (s.phase != Session::Phase::kAwaitingHello) return drop(s, DropReason::kDuplicateHello, out);
  if (version != protocol::kProtocolVersion) {
    log_session(log_, session_log_, "refused peer {}.{}: protocol version {} (server speaks {})",
                s.peer.host, s.peer.index, version, protocol::kProtocolVersion);
    return kick(s, DisconnectReason::ProtocolMismatch, out);
  }
  // In ticket mode the name is the ticket's, checked like any other.
  if (ev.ticket_checked) {
    if (!admit_ticket(s, ev, name, out) || refuse_banned(s, out)) return;
  } else if (!protocol::valid_player_name(name, config_.players.max_name_length)) {
    return kick(s, DisconnectReason::BadHello, out);
  }
  if (ev.has_resume) {
    // A transfer token and a resume token name two ways in; a client sends one.
    if (ev.has_token) return kick(s, DisconnectReason::BadHello, out);
    return on_resume(s, inbox.token_of(ev), tick, out);
  }
  if (ev.has_token) return on_arrival(s, inbox.token_of(ev), tick, out);
  if (ev.ticket_checked && take_over(s, tick, out)) return;
  if (store_ != nullptr) return begin_load(s, name, out);
  join_new(s, name, tick, out, nullptr);
}

void Sessions::join_new(Session& s, std::string_view name, std::uint32_t tick,
                        std::span<net::SendBatch> out, const persist::CharacterRecord* saved) {
  // Out of entity ids (67 million spawns in one run) counts as full, too.
  if (world_.player_count() >= config_.players.max_players || !world_.can_spawn()) {
    return kick(s, DisconnectReason::ServerFull, out);
  }
  s.name = std::string(name);
  s.player_slot = world_.spawn_player(s.name);
  // Before the Welcome, which names the player's type, and its first snapshot.
  if (saved != nullptr) store_->restore(world_, s.player_slot, *saved);
  start_playing(s, tick, out);
  announce_login(s);
  if (saved != nullptr) rejoin_groups(s, saved->party_key, saved->guild_key, out);
  ++counters_.joins;
  const world::Entity& e = world_.entity(s.player_slot);
  log_session(log_, session_log_,
              "player '{}' joined as entity {} at ({:.1f}, {:.1f}){}; {} players", s.name, e.id,
              e.x, e.y, saved != nullptr ? " (saved)" : "", world_.player_count());
}

void Sessions::announce_login(const Session& s) {
  // A login that played, not a way back in (an arrival, a resume): a copy of the
  // character in another zone of the world leaves. One refused here (full, the store
  // unavailable) leaves the other copy be.
  if (s.character_id == 0 || !login_notice_) return;
  login_notice_({.account = s.account_id, .character = s.character_id, .login_ms = s.login_ms});
}

bool Sessions::admit_ticket(Session& s, const InboundEvent& ev, std::string_view name,
                            std::span<net::SendBatch> out) {
  if (!ev.has_ticket) {
    refuse_ticket(s, TicketRefusal::kMissing, out);
    return false;
  }
  if (ev.ticket_error != auth::TicketError::kNone) {
    refuse_ticket(s, refusal_of(ev.ticket_error), out);
    return false;
  }
  // Signed, so the login service and this zone disagree on names (players.max_name_length):
  // the client can do nothing about it but the operator must hear of it.
  if (!protocol::valid_player_name(name, config_.players.max_name_length)) {
    refuse_ticket(s, TicketRefusal::kBadName, out);
    return false;
  }
  s.account_id = ev.account_id;
  s.character_id = ev.character_id;
  s.login_ms = wall_clock_ms();
  ++counters_.tickets_accepted;
  return true;
}

void Sessions::refuse_ticket(Session& s, TicketRefusal why, std::span<net::SendBatch> out) {
  ++counters_.tickets_refused[static_cast<std::size_t>(why)];
  log_session(log_, session_log_, "refused peer {}.{}: ticket {}", s.peer.host, s.peer.index,
              to_string(why));
  kick(s, disconnect_reason_of(why), out);
}

bool Sessions::take_over(Session& s, std::uint32_t tick, std::span<net::SendBatch> out) {
  const auto it = slot_of_character_.find(s.character_id);
  if (it == slot_of_character_.end()) return false;
  const std::uint32_t slot = it->second.slot;
  if (is_held(slot)) {
    // Its connection was lost and it waits for a resume: a new login takes it as well.
    held_.erase(find_hold(slot));
    counters_.players_held = held_.size();
    log_session(log_, session_log_,
                "character {} (account {}) logged in again: peer {}.{} takes held entity {}",
                s.character_id, s.account_id, s.peer.host, s.peer.index, world_.entity(slot).id);
    ++counters_.takeovers;
    reattach(s, slot, tick, out);
    announce_login(s);
    return true;
  }
  Session* old = find(peer_of_slot_[slot]);
  if (old == nullptr || old->phase != Session::Phase::kPlaying) return false;
  // The newest login wins: a player whose old connection is not dead yet (a network
  // switch, a client restarted) gets straight back in. The entity stays, so nobody
  // around sees it leave and come back; the old connection is told why it ends.
  log_session(log_, session_log_,
              "character {} (account {}) logged in again: peer {}.{} takes entity {} over from "
              "peer {}.{}",
              s.character_id, s.account_id, s.peer.host, s.peer.index, world_.entity(slot).id,
              old->peer.host, old->peer.index);
  ++counters_.disconnects[static_cast<std::size_t>(DisconnectReason::LoggedInElsewhere)];
  ++counters_.takeovers;
  out[old->peer.host].close(old->peer,
                            static_cast<std::uint32_t>(DisconnectReason::LoggedInElsewhere), false);
  detach_player(*old);
  reattach(s, slot, tick, out);
  announce_login(s);
  return true;
}

void Sessions::reattach(Session& s, std::uint32_t slot, std::uint32_t tick,
                        std::span<net::SendBatch> out) {
  s.player_slot = slot;
  s.name = world_.entity(slot).name;  // the entity keeps its name
  start_playing(s, tick, out, /*fresh=*/false);
  // Its party and guild are still its own: the new connection hears of them as after a
  // join.
  for (const auto kind : {world::GroupKind::kParty, world::GroupKind::kGuild}) {
    if (world_.entity(slot).group(kind) != world::kNoGroup) {
      send_group_status(kind, slot, protocol::GroupResult::Joined, out);
    }
  }
}

void Sessions::new_resume_token(Session& s) {
  s.has_resume_token = config_.players.resume_grace_ms > 0;
  if (!s.has_resume_token) return;
  for (std::size_t i = 0; i < s.resume_token.size(); i += 4) {
    const std::uint32_t v = random_();
    for (std::size_t b = 0; b < 4; ++b)
      s.resume_token[i + b] = static_cast<std::uint8_t>(v >> (8 * b));
  }
}

std::vector<Sessions::Hold>::iterator Sessions::find_hold(std::uint32_t slot) {
  return std::find_if(held_.begin(), held_.end(), [slot](const Hold& h) { return h.slot == slot; });
}

bool Sessions::is_held(std::uint32_t slot) const {
  return std::any_of(held_.begin(), held_.end(), [slot](const Hold& h) { return h.slot == slot; });
}

bool Sessions::hold(Session& s) {
  if (config_.players.resume_grace_ms == 0 || !accepting_ || !s.has_resume_token) return false;
  const std::uint32_t slot = s.player_slot;
  // It stands still, visible and in its groups, for the rules like any player; nobody
  // around sees it leave unless the grace runs out.
  world_.set_intent(slot, 0.0, 0.0);
  held_.push_back(Hold{s.resume_token, slot, s.name,
                       Clock::now() + std::chrono::milliseconds(config_.players.resume_grace_ms)});
  ++counters_.holds;
  counters_.players_held = held_.size();
  detach_player(s, /*keep_character=*/true);
  return true;
}

void Sessions::on_resume(Session& s, std::span<const std::uint8_t> token, std::uint32_t tick,
                         std::span<net::SendBatch> out) {
  const auto refuse = [&](std::string_view why) {
    ++counters_.resumes_refused;
    log_session(log_, session_log_, "refused peer {}.{}: resume token {}", s.peer.host,
                s.peer.index, why);
    kick(s, DisconnectReason::ResumeRefused, out);
  };
  // The player it names: held, or still played by an older connection (the client moved
  // to a new address before the zone noticed the old one was gone).
  std::uint32_t slot = kNobody;
  const auto held = std::find_if(held_.begin(), held_.end(),
                                 [&token](const Hold& h) { return same_token(token, h.token); });
  Session* old = nullptr;
  if (held != held_.end()) {
    if (Clock::now() >= held->deadline) return refuse("expired");  // expire runs once a second
    slot = held->slot;
  } else {
    for (auto& host : table_) {
      for (Session& other : host) {
        if (other.phase == Session::Phase::kPlaying && other.has_resume_token && &other != &s &&
            same_token(token, other.resume_token)) {
          old = &other;
        }
      }
    }
    if (old == nullptr) return refuse("unknown");
    slot = old->player_slot;
  }
  // In ticket mode a token is honoured only with a ticket of its character (a token seen
  // on the way is no way into someone else's character). The refusal leaves the token
  // valid for its owner.
  const world::Entity& e = world_.entity(slot);
  if (s.account_id != 0 && (e.account != s.account_id || e.character != s.character_id)) {
    return refuse("of another character");
  }
  if (held != held_.end()) {
    held_.erase(held);
    counters_.players_held = held_.size();
  } else {
    ++counters_.disconnects[static_cast<std::size_t>(DisconnectReason::LoggedInElsewhere)];
    out[old->peer.host].close(
        old->peer, static_cast<std::uint32_t>(DisconnectReason::LoggedInElsewhere), false);
    detach_player(*old);
  }
  ++counters_.resumes;
  reattach(s, slot, tick, out);
  log_session(log_, session_log_, "player '{}' resumed entity {} from peer {}.{}", s.name,
              world_.entity(slot).id, s.peer.host, s.peer.index);
}

void Sessions::expire_holds(Clock::time_point now) {
  for (std::size_t i = 0; i < held_.size();) {
    if (now < held_[i].deadline) {
      ++i;
      continue;
    }
    ++counters_.holds_expired;
    log_session(log_, session_log_, "player '{}' (entity {}) did not come back: left",
                held_[i].name, world_.entity(held_[i].slot).id);
    release_hold(held_[i].slot);
  }
}

bool Sessions::release_hold(std::uint32_t slot, bool save) {
  const auto it = find_hold(slot);
  if (it == held_.end()) return false;
  const Hold h = std::move(*it);
  held_.erase(it);
  counters_.players_held = held_.size();
  leave_world(h.slot, h.name, /*keep_entity=*/false, nullptr, save);
  return true;
}

void Sessions::on_arrival(Session& s, std::span<const std::uint8_t> token, std::uint32_t tick,
                          std::span<net::SendBatch> out) {
  const auto it = std::find_if(arrivals_.begin(), arrivals_.end(),
                               [&token](const Arrival& a) { return same_token(token, a.token); });
  if (it == arrivals_.end()) {
    ++counters_.arrival_tokens_refused;
    return kick(s, DisconnectReason::BadHello, out);
  }
  if (Clock::now() >= it->deadline) {  // expired (expire_arrivals runs once a second)
    ++counters_.arrival_tokens_refused;
    return kick(s, DisconnectReason::BadHello, out);
  }
  // In ticket mode a token is honoured only with a ticket of the login it was issued to
  // (a token seen on the way is no way into someone else's character). The refusal
  // leaves the token valid for its owner, like any refused Hello.
  const world::Entity& arriving = world_.entity(it->slot);
  if (s.account_id != 0 &&
      (arriving.account != s.account_id || arriving.character != s.character_id)) {
    ++counters_.arrival_tokens_refused;
    log_session(log_, session_log_,
                "refused peer {}.{}: transfer token of entity {} with the ticket of account {} "
                "character {}",
                s.peer.host, s.peer.index, arriving.id, s.account_id, s.character_id);
    return kick(s, DisconnectReason::BadHello, out);
  }
  const Arrival arrival = *it;
  arrivals_.erase(it);
  s.player_slot = arrival.slot;
  s.name = world_.entity(arrival.slot).name;
  world_.attach_player(arrival.slot);
  start_playing(s, tick, out);
  ++counters_.arrivals;
  // The state it arrived with claims its row here: from now on this zone writes it.
  if (store_ != nullptr) store_->arrive(world_, s.player_slot);
  rejoin_groups(s, arrival.party_key, arrival.guild_key, out);
  const world::Entity& e = world_.entity(s.player_slot);
  log_session(log_, session_log_,
              "player '{}' arrived as entity {} at ({:.1f}, {:.1f}); {} players", s.name, e.id, e.x,
              e.y, world_.player_count());
}

void Sessions::rejoin_groups(Session& s, std::uint64_t party_key, std::uint64_t guild_key,
                             std::span<net::SendBatch> out) {
  // Membership is by invitation key: the player is back in its party and guild, under
  // this zone's ids for them (or refused, if a group filled up meanwhile).
  for (const auto kind : {world::GroupKind::kParty, world::GroupKind::kGuild}) {
    const std::uint64_t key = kind == world::GroupKind::kParty ? party_key : guild_key;
    if (key == 0 || !world_.groups(kind).params().enabled) continue;
    const world::GroupChange change = world_.join_group(kind, s.player_slot, key);
    const auto result = change.result == world::GroupResult::kJoined ? protocol::GroupResult::Joined
                                                                     : protocol::GroupResult::Full;
    send_group_status(kind, s.player_slot, result, out);
    if (change.group != world::kNoGroup) group_changed(kind, change.group, s.player_slot);
  }
}

void Sessions::start_playing(Session& s, std::uint32_t tick, std::span<net::SendBatch> out,
                             bool fresh) {
  --awaiting_hello_;
  s.client = replicator_.add_client(s.player_slot, tick);
  if (s.player_slot >= peer_of_slot_.size()) peer_of_slot_.resize(s.player_slot + 1);
  peer_of_slot_[s.player_slot] = s.peer;
  if (s.character_id != 0) {
    // Since when it is here: this login's time, or now (an arrival, a resume).
    slot_of_character_[s.character_id] = {
        .slot = s.player_slot, .since_ms = s.login_ms != 0 ? s.login_ms : wall_clock_ms()};
    world_.set_login(s.player_slot, s.account_id, s.character_id);  // it travels with the entity
  }
  if (s.client >= peer_of_client_.size()) peer_of_client_.resize(s.client + 1);
  peer_of_client_[s.client] = s.peer;
  s.phase = Session::Phase::kPlaying;
  s.last_input_at = Clock::now();
  new_resume_token(s);

  const world::Entity& e = world_.entity(s.player_slot);
  const config::WorldConfig& w = config_.world;
  fbb_.Clear();
  const auto zone = fbb_.CreateString(config_.name);
  const auto schema = protocol::build_schema(fbb_, world_.game().schema);
  const auto resume = s.has_resume_token
                          ? fbb_.CreateVector(s.resume_token.data(), s.resume_token.size())
                          : flatbuffers::Offset<flatbuffers::Vector<std::uint8_t>>();
  const auto welcome = protocol::CreateWelcome(
      fbb_, e.id, tick, static_cast<std::uint16_t>(config_.tick.rate_hz),
      static_cast<float>(world_.effective_player_radius()),
      static_cast<float>(config_.aoi.hysteresis), static_cast<float>(w.min_x),
      static_cast<float>(w.min_y), static_cast<float>(w.max_x), static_cast<float>(w.max_y),
      config_.aoi.enabled,
      static_cast<float>(std::max(config_.players.max_speed, config_.npcs.speed)), zone, schema,
      e.type, resume);
  fbb_.Finish(
      protocol::CreateServerPacket(fbb_, protocol::ServerMessage::Welcome, welcome.Union()));
  out[s.peer.host].add_copy(s.peer, protocol::bytes_of(fbb_), net::Delivery::kReliable,
                            protocol::kReliableChannel);
  // A take-over (the same character, a new connection) is not a new player: the rules
  // and the names already know it.
  if (!fresh) return;
  names_.add(s.name, s.player_slot);
  if (game_ != nullptr) game_->player_joined(s.player_slot);
}

void Sessions::transfer_out(std::uint32_t slot, std::string_view zone, std::string_view host,
                            std::uint16_t port, std::span<const std::uint8_t> token,
                            std::span<net::SendBatch> out) {
  if (const auto it = find_hold(slot); it != held_.end()) {
    // Moved across while held (the rules teleported it): the other zone has it now, and
    // this zone no client to send there; its resume here will be refused. Its row goes
    // to that zone, as for any player handed over.
    if (store_ != nullptr) store_->hand_over(world_, slot, zone);
    const Hold h = std::move(*it);
    held_.erase(it);
    counters_.players_held = held_.size();
    leave_world(slot, h.name, /*keep_entity=*/true, nullptr);
    return;
  }
  if (slot >= peer_of_slot_.size()) return;
  Session* s = find(peer_of_slot_[slot]);
  if (s == nullptr || s->phase != Session::Phase::kPlaying || s->player_slot != slot) return;
  fbb_.Clear();
  const auto transfer = protocol::CreateTransfer(fbb_, fbb_.CreateString(zone.data(), zone.size()),
                                                 fbb_.CreateString(host.data(), host.size()), port,
                                                 fbb_.CreateVector(token.data(), token.size()),
                                                 world_.entity(slot).id);
  fbb_.Finish(
      protocol::CreateServerPacket(fbb_, protocol::ServerMessage::Transfer, transfer.Union()));
  out[s->peer.host].add_copy(s->peer, protocol::bytes_of(fbb_), net::Delivery::kReliable,
                             protocol::kReliableChannel);
  // The goodbye follows the Transfer on the same reliable channel, so it arrives first.
  out[s->peer.host].close(s->peer, static_cast<std::uint32_t>(DisconnectReason::Transferred),
                          false);
  ++counters_.disconnects[static_cast<std::size_t>(DisconnectReason::Transferred)];
  ++counters_.transfers_out;
  log_session(log_, session_log_, "player '{}' (entity {}) went to zone {}", s->name,
              world_.entity(slot).id, zone);
  // Its state as it left: the zone that took it over owns it from now on. With a shared
  // store the row is handed to that zone, so nothing this zone writes of it later is
  // taken; with a file per zone this zone's row keeps its state as it left
  // (docs/persistence.md).
  if (store_ != nullptr) store_->hand_over(world_, slot, zone);
  // The entity stays (a ghost of its new zone from now on); it leaves its groups here.
  end_session(*s, /*keep_entity=*/true);
}

void Sessions::expect_arrival(std::uint32_t slot, std::span<const std::uint8_t> token,
                              std::uint64_t party_key, std::uint64_t guild_key,
                              std::chrono::milliseconds timeout) {
  Arrival a{};
  std::copy_n(token.begin(), std::min(token.size(), a.token.size()), a.token.begin());
  a.slot = slot;
  a.id = world_.entity(slot).id;
  a.party_key = party_key;
  a.guild_key = guild_key;
  a.deadline = Clock::now() + timeout;
  arrivals_.push_back(a);
}

bool Sessions::cancel_arrival(world::EntityId id) {
  const auto it = std::find_if(arrivals_.begin(), arrivals_.end(),
                               [id](const Arrival& a) { return a.id == id; });
  if (it == arrivals_.end()) return false;
  arrivals_.erase(it);
  return true;
}

bool Sessions::can_take_player() const {
  return accepting_ && world_.player_count() < config_.players.max_players;
}

void Sessions::expire_arrivals(Clock::time_point now) {
  std::erase_if(arrivals_, [&](const Arrival& a) {
    if (now < a.deadline) return false;
    // The client never came: the player has left the world, as if it had quit.
    world_.despawn(a.slot);
    ++counters_.arrivals_expired;
    return true;
  });
}

void Sessions::on_input(Session& s, const InboundEvent& ev, std::span<net::SendBatch> out) {
  // Waiting for its character's row: a client that did not wait for its Welcome; no fault.
  if (s.phase == Session::Phase::kLoading) return;
  if (s.phase != Session::Phase::kPlaying) return drop(s, DropReason::kBeforeHello, out);
  if (!take_token(s, ev.at, out)) return;
  const protocol::InputMessage& in = ev.input;
  if (!std::isfinite(in.move_x) || !std::isfinite(in.move_y) ||
      std::abs(in.move_x) > kMaxIntentComponent || std::abs(in.move_y) > kMaxIntentComponent) {
    return drop(s, DropReason::kBadValue, out);
  }
  if (!replicator_.acknowledge(s.client, in.ack_tick)) return drop(s, DropReason::kBadAck, out);
  if (in.sequence <= s.last_sequence) return drop(s, DropReason::kStaleInput, out);
  s.last_sequence = in.sequence;
  s.intent_x = in.move_x;
  s.intent_y = in.move_y;
  s.last_input_at = ev.at;
  ++counters_.inputs;
  replicator_.set_last_input_sequence(s.client, s.last_sequence);
}

bool Sessions::take_token(Session& s, Clock::time_point at, std::span<net::SendBatch> out) {
  // Flood control: a token bucket of one second's worth of inputs, refilled by the time
  // each packet arrived, so a slow tick or a network stall followed by a burst is not a
  // flood.
  const double rate = config_.limits.max_inputs_per_second;
  s.input_tokens = std::min(
      rate, s.input_tokens + rate * std::chrono::duration<double>(at - s.input_refill).count());
  s.input_refill = std::max(s.input_refill, at);
  if (s.input_tokens < 1.0) {
    drop(s, DropReason::kFlood, out);
    return false;
  }
  s.input_tokens -= 1.0;
  return true;
}

protocol::ActionStatus Sessions::check_action(const Session& s, const InboundEvent& ev) const {
  using protocol::ActionStatus;
  const auto actions = world_.game().schema.actions();
  if (ev.action >= actions.size()) return ActionStatus::UnknownAction;
  const protocol::ActionSpec& spec = actions[ev.action];
  if (ev.too_many_args || ev.arg_count > spec.args) return ActionStatus::BadArguments;
  if (spec.target == protocol::ActionTarget::kNone && ev.target != world::kNoEntity) {
    return ActionStatus::BadArguments;
  }
  if (ev.target == world::kNoEntity) {
    return spec.target == protocol::ActionTarget::kEntity ? ActionStatus::NoTarget
                                                          : ActionStatus::Ok;
  }
  // The target must be an entity the client holds: nothing outside its view can be
  // probed (the answer would say whether it exists). A ghost (a neighbour zone's entity)
  // counts: the game hooks forward the action to its owner.
  if (!replicator_.holds(s.client, ev.target)) return ActionStatus::NoTarget;
  if (world_.find(ev.target) == nullptr) return ActionStatus::NoTarget;
  return ActionStatus::Ok;
}

void Sessions::on_action(Session& s, const InboundEvent& ev, std::uint32_t tick,
                         std::span<net::SendBatch> out) {
  using protocol::ActionStatus;
  if (s.phase != Session::Phase::kPlaying) return drop(s, DropReason::kBeforeHello, out);
  if (!take_token(s, ev.at, out)) return;
  const double rate = config_.game.actions_per_second;
  ActionStatus status = ActionStatus::RateLimited;
  if (s.actions.take(ev.at, rate, rate)) {
    status = check_action(s, ev);
    if (status == ActionStatus::Ok) {
      status = game_ != nullptr ? game_->act(s.player_slot, ev.action, ev.target,
                                             std::span(ev.args.data(), ev.arg_count))
                                : ActionStatus::NotAllowed;
    }
  }
  ++counters_.actions[static_cast<std::size_t>(status)];
  protocol::build_action_result(fbb_, ev.action_sequence, status, tick);
  out[s.peer.host].add_copy(s.peer, protocol::bytes_of(fbb_), net::Delivery::kReliable,
                            protocol::kReliableChannel);
}

void Sessions::on_chat(Session& s, const Inbox& inbox, const InboundEvent& ev,
                       std::span<net::SendBatch> out) {
  using protocol::ChatStatus;
  if (s.phase != Session::Phase::kPlaying) return drop(s, DropReason::kBeforeHello, out);
  if (!take_token(s, ev.at, out)) return;
  ChatStatus status = ChatStatus::RateLimited;
  if (muted(s, ev.at)) {
    status = ChatStatus::Muted;
  } else if (s.chat.take(ev.at, config_.chat.lines_per_second, config_.chat.burst)) {
    status =
        send_chat(config_.chat, config_.players.max_name_length, world_, names_,
                  {s.player_slot, ev.chat_channel, inbox.chat_text_of(ev), inbox.chat_to_of(ev)},
                  chat_forward_);
  }
  if (status == ChatStatus::Sent) {
    ++counters_.chat_lines[ev.chat_channel];
    return;
  }
  ++counters_.chat_refused[static_cast<std::size_t>(status)];
  protocol::build_chat_result(fbb_, status, ev.chat_channel);
  out[s.peer.host].add_copy(s.peer, protocol::bytes_of(fbb_), net::Delivery::kReliable,
                            protocol::kReliableChannel);
}

bool Sessions::muted(const Session& s, Clock::time_point at) const {
  return moderation_ != nullptr && moderation_->muted(world_.entity(s.player_slot), at);
}

bool Sessions::refuse_banned(Session& s, std::span<net::SendBatch> out) {
  if (moderation_ == nullptr || !moderation_->banned(s.account_id)) return false;
  log_session(log_, session_log_, "refused peer {}.{}: account {} is banned", s.peer.host,
              s.peer.index, s.account_id);
  kick(s, DisconnectReason::Banned, out);
  return true;
}

bool Sessions::logged_in_elsewhere(const cluster::LoginNotice& login, bool wins_tie,
                                   std::span<net::SendBatch> out) {
  const auto it = slot_of_character_.find(login.character);
  if (it == slot_of_character_.end()) return false;
  const CharacterHere here = it->second;
  // The copy that came to its zone later stays (see cluster::LoginNotice).
  if (here.since_ms > login.login_ms || (here.since_ms == login.login_ms && !wins_tie)) {
    return false;
  }
  const world::EntityId id = world_.entity(here.slot).id;
  if (!kick_player(here.slot, DisconnectReason::LoggedInElsewhere, out)) return false;
  log_session(log_, session_log_,
              "character {} (account {}) logged in in another zone: entity {} left here",
              login.character, login.account, id);
  ++counters_.logged_in_elsewhere;
  return true;
}

bool Sessions::kick_player(std::uint32_t slot, DisconnectReason reason,
                           std::span<net::SendBatch> out) {
  if (release_hold(slot)) return true;  // no connection to tell
  if (slot >= peer_of_slot_.size()) return false;
  Session* s = find(peer_of_slot_[slot]);
  if (s == nullptr || s->phase != Session::Phase::kPlaying || s->player_slot != slot) return false;
  kick(*s, reason, out);
  return true;
}

const Session* Sessions::session_of(std::uint32_t slot) const {
  if (slot >= peer_of_slot_.size()) return nullptr;
  const net::PeerId peer = peer_of_slot_[slot];
  if (!peer.valid() || peer.host >= table_.size() || peer.index >= table_[peer.host].size()) {
    return nullptr;
  }
  const Session& s = table_[peer.host][peer.index];
  return s.phase == Session::Phase::kPlaying && s.player_slot == slot ? &s : nullptr;
}

const config::GroupConfig& Sessions::group_config(world::GroupKind kind) const {
  return kind == world::GroupKind::kParty ? config_.party : config_.guild;
}

void Sessions::on_join_group(Session& s, world::GroupKind kind, const InboundEvent& ev,
                             std::span<net::SendBatch> out) {
  if (s.phase != Session::Phase::kPlaying) return drop(s, DropReason::kBeforeHello, out);
  if (!take_token(s, ev.at, out)) return;
  const auto interval = std::chrono::milliseconds(group_config(kind).min_request_interval_ms);
  using protocol::GroupResult;
  GroupResult result = GroupResult::Disabled;
  Clock::time_point& last = s.last_group_request[static_cast<std::size_t>(kind)];
  if (last != Clock::time_point{} && ev.at - last < interval) {
    result = GroupResult::TooSoon;
  } else {
    last = ev.at;
    const world::GroupId before = world_.entity(s.player_slot).group(kind);
    const world::GroupChange change = world_.join_group(kind, s.player_slot, ev.group_key);
    switch (change.result) {
      case world::GroupResult::kJoined:
        result = GroupResult::Joined;
        break;
      case world::GroupResult::kLeft:
        result = GroupResult::Left;
        break;
      case world::GroupResult::kFull:
        result = GroupResult::Full;
        break;
      case world::GroupResult::kDisabled:
        result = GroupResult::Disabled;
        break;
    }
    // The requester gets its answer below; the other members of both groups a notice
    // after the tick's requests. Asking again for one's own group changes nothing.
    if (change.left_group != world::kNoGroup) group_changed(kind, change.left_group, kNobody);
    if (change.group != world::kNoGroup && change.group != before &&
        change.result == world::GroupResult::kJoined) {
      group_changed(kind, change.group, s.player_slot);
    }
  }
  ++counters_.group_requests[static_cast<std::size_t>(kind)][static_cast<std::size_t>(result)];
  send_group_status(kind, s.player_slot, result, out);
}

void Sessions::group_changed(world::GroupKind kind, world::GroupId group,
                             std::uint32_t answered_slot) {
  for (ChangedGroup& c : changed_groups_) {
    if (c.kind == kind && c.group == group) {
      c.answered_slot = answered_slot;  // any earlier answer is out of date now
      return;
    }
  }
  changed_groups_.push_back({kind, group, answered_slot});
}

void Sessions::send_group_notices(std::span<net::SendBatch> out) {
  // Shutting down: everyone is leaving, nobody needs to hear about it (it would be one
  // notice per member per leaver).
  if (accepting_) {
    for (const ChangedGroup& c : changed_groups_) {
      for (const world::Groups::Member& m : world_.groups(c.kind).members(c.group)) {
        if (m.slot != c.answered_slot) {
          send_group_status(c.kind, m.slot, protocol::GroupResult::Changed, out);
        }
      }
    }
  }
  changed_groups_.clear();
}

void Sessions::send_group_status(world::GroupKind kind, std::uint32_t slot,
                                 protocol::GroupResult result, std::span<net::SendBatch> out) {
  if (slot >= peer_of_slot_.size() || !peer_of_slot_[slot].valid()) return;
  const net::PeerId peer = peer_of_slot_[slot];
  const world::GroupId group = world_.entity(slot).group(kind);
  fbb_.Clear();
  std::vector<std::uint32_t>& ids = member_ids_;
  ids.clear();
  for (const world::Groups::Member& m : world_.groups(kind).members(group)) ids.push_back(m.id);
  const auto members = fbb_.CreateVector(ids);
  if (kind == world::GroupKind::kParty) {
    const auto status = protocol::CreatePartyStatus(fbb_, group, result, members);
    fbb_.Finish(
        protocol::CreateServerPacket(fbb_, protocol::ServerMessage::PartyStatus, status.Union()));
  } else {
    const auto status = protocol::CreateGuildStatus(fbb_, group, result, members);
    fbb_.Finish(
        protocol::CreateServerPacket(fbb_, protocol::ServerMessage::GuildStatus, status.Union()));
  }
  out[peer.host].add_copy(peer, protocol::bytes_of(fbb_), net::Delivery::kReliable,
                          protocol::kReliableChannel);
}

std::vector<std::size_t> Sessions::players_per_host() const {
  std::vector<std::size_t> out;
  for (const auto& host : table_) {
    out.push_back(
        static_cast<std::size_t>(std::count_if(host.begin(), host.end(), [](const Session& s) {
          return s.phase == Session::Phase::kPlaying;
        })));
  }
  return out;
}

}  // namespace zone
