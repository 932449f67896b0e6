// Handoff of players between neighbouring zones (docs/world.md, "Handoff"): the part of
// GhostExchange that offers this zone's crossing players and answers the neighbours'.
//
// The offering zone keeps its player, standing still, until the answer: accepted, the
// entity becomes its ghost of the taker in place and the client is sent there; refused
// or unanswered, it steps back inside. The taking zone turns its ghost of the player into
// its own entity when it accepts, so that at every moment exactly one zone owns it, and
// clients of both zones see the same entity (same id, same slot) all along.
#include <algorithm>

#include "cluster/ghost_exchange.hpp"

namespace zone::cluster {

void GhostExchange::send_handoff(std::uint32_t to, const TransferMessage& m) {
  for (std::size_t i = 0; i < params_.neighbours.size(); ++i) {
    if (params_.neighbours[i].index != to) continue;
    encode(m, bytes_);
    link_->publish(handoff_subjects_[i], bytes_);
    return;
  }
}

void GhostExchange::send_cancel(std::uint32_t to, std::uint32_t request, world::EntityId id) {
  TransferMessage cancel;
  cancel.kind = TransferKind::kCancel;
  cancel.sender = params_.self_index;
  cancel.request = request;
  cancel.entity.id = id;
  send_handoff(to, cancel);
}

TransferToken GhostExchange::new_token() {
  TransferToken token;
  for (std::size_t i = 0; i < token.size(); i += 4) {
    const std::uint32_t v = random_();
    for (std::size_t b = 0; b < 4; ++b) token[i + b] = static_cast<std::uint8_t>(v >> (8 * b));
  }
  return token;
}

void GhostExchange::receive_handoff(const TransferMessage& m, Clock::time_point now,
                                    HandoffHooks& hooks) {
  switch (m.kind) {
    case TransferKind::kOffer:
      on_offer(m, now, hooks);
      break;
    case TransferKind::kAnswer:
      on_answer(m, now, hooks);
      break;
    case TransferKind::kCancel: {
      // The offer it answers, not an older one for the same entity (an offer given up,
      // then a new one accepted).
      const auto it = std::find_if(arrivals_.begin(), arrivals_.end(), [&m](const Arrival& a) {
        return a.from == m.sender && a.request == m.request && a.id == m.entity.id;
      });
      if (it == arrivals_.end()) break;
      give_back(*it, now, hooks);
      arrivals_.erase(it);
      break;
    }
  }
}

void GhostExchange::give_back(const Arrival& a, Clock::time_point now, HandoffHooks& hooks) {
  // A player whose client came is ours whatever its old zone says: it let the client go.
  if (a.player && !hooks.cancel_arrival(a.id)) return;
  const world::Entity& e = world_.entity(a.slot);
  if (!e.live() || e.ghost || e.id != a.id) return;
  // Its old zone kept it: the copy becomes our ghost of it again, in place, so nobody
  // here sees it leave and come back.
  world_.release(a.slot);
  ghosts_.adopt(a.from, a.slot, now);
  ++stats_.handoffs_in_cancelled;
}

void GhostExchange::settle_arrivals(Clock::time_point now, HandoffHooks& hooks) {
  for (const world::Ghosts::OwnedListed& l : ghosts_.owned_listed()) {
    for (Arrival& a : arrivals_) {
      if (a.from == l.source && a.id == l.id) a.last_listed = std::max(a.last_listed, l.list);
    }
  }
  ghosts_.owned_listed().clear();
  std::erase_if(arrivals_, [&](const Arrival& a) {
    // A list from its old zone, newer than the handoff and than any that still named it
    // as that zone's own: the old zone let it go. The handoff is done.
    if (ghosts_.lists_from(a.from) > std::max(a.lists_at, a.last_listed)) return true;
    if (now < a.deadline) return false;
    // Still named as the old zone's own long after its answer was due: that zone never
    // got the answer and kept it. Silent all along: it is gone, and the entity is ours.
    if (a.last_listed > a.lists_at) give_back(a, now, hooks);
    return true;
  });
}

void GhostExchange::on_offer(const TransferMessage& m, Clock::time_point now, HandoffHooks& hooks) {
  TransferMessage answer;
  answer.kind = TransferKind::kAnswer;
  answer.sender = params_.self_index;
  answer.request = m.request;
  answer.entity.id = m.entity.id;
  const aoi::Bounds& own = world_.params().grid.bounds;
  const world::Entity* known = world_.find(m.entity.id);
  const bool player = m.entity.kind == world::EntityKind::kPlayer;
  if (!name_ok(m.entity.name)) {
    // A name a Hello could not carry would reach this zone's clients and logs.
    answer.result = TransferResult::kBadName;
    ++stats_.handoff_offers_bad_name;
  } else if (!player && world_.params().npcs.behaviour != world::NpcBehaviour::kWander) {
    answer.result = TransferResult::kUnavailable;
  } else if (!aoi::contains(own, {m.entity.x, m.entity.y})) {
    answer.result = TransferResult::kNotMine;
  } else if (known != nullptr && !known->ghost) {
    answer.result = TransferResult::kIdInUse;
  } else if (player && !hooks.can_take_player()) {
    answer.result = TransferResult::kFull;
  } else {
    ghosts_.release(m.entity.id);  // our ghost of it, if any, becomes the entity itself
    const std::uint32_t slot = world_.adopt({.id = m.entity.id,
                                             .kind = m.entity.kind,
                                             .x = m.entity.x,
                                             .y = m.entity.y,
                                             .heading = m.entity.heading,
                                             .properties = m.entity.properties,
                                             .name = m.entity.name,
                                             .account = m.entity.account,
                                             .character = m.entity.character});
    if (slot == world::World::kNoSlot) {
      answer.result = TransferResult::kIdInUse;
    } else {
      answer.result = TransferResult::kAccepted;
      if (player) {
        answer.token = new_token();
        answer.host = params_.game_host;
        answer.port = params_.game_port;
        hooks.player_arrived(slot, answer.token, m.entity.party_key, m.entity.guild_key);
      } else {
        hooks.npc_arrived(slot);
      }
      arrivals_.push_back({.id = m.entity.id,
                           .slot = slot,
                           .from = m.sender,
                           .request = m.request,
                           .lists_at = ghosts_.lists_from(m.sender),
                           .last_listed = 0,
                           .deadline = now + 2 * params_.handoff_timeout,
                           .player = player});
    }
  }
  ++(answer.result == TransferResult::kAccepted ? stats_.handoffs_in_accepted
                                                : stats_.handoffs_in_refused);
  send_handoff(m.sender, answer);
}

void GhostExchange::on_answer(const TransferMessage& m, Clock::time_point now,
                              HandoffHooks& hooks) {
  const auto it = std::find_if(offers_.begin(), offers_.end(), [&m](const Offer& o) {
    return o.request == m.request && o.to == m.sender && o.id == m.entity.id;
  });
  if (it == offers_.end()) {
    // An answer to an offer this zone gave up on (it sent a cancel then) or never made.
    if (m.result == TransferResult::kAccepted) {
      send_cancel(m.sender, m.request, m.entity.id);
    }
    return;
  }
  const Offer offer = *it;
  offers_.erase(it);
  const world::Entity& e = world_.entity(offer.slot);
  const bool still_here = e.live() && !e.ghost && e.id == offer.id;
  if (m.result != TransferResult::kAccepted) {
    ++stats_.handoffs_out_refused;
    if (still_here) world_.take_back(offer.slot, params_.cross_cooldown_ticks);
    return;
  }
  if (!still_here) {
    // The client quit while the offer was out: the neighbour must not keep a copy.
    ++stats_.handoffs_out_lost;
    send_cancel(m.sender, m.request, m.entity.id);
    return;
  }
  ++stats_.handoffs_out_accepted;
  if (e.kind == world::EntityKind::kPlayer) {
    const Neighbour* to = neighbour(m.sender);
    hooks.player_left(offer.slot, {to->name, m.host, m.port, m.token});
  }
  world_.release(offer.slot);
  ghosts_.adopt(m.sender, offer.slot, now);
}

void GhostExchange::offer_crossings(Clock::time_point now) {
  for (const std::uint32_t slot : world_.crossings()) {
    const world::Entity& e = world_.entity(slot);
    // Gone or given back since the step.
    if (!e.live() || e.ghost || !world_.crossing(slot)) continue;
    const Neighbour* to = nullptr;
    for (const Neighbour& n : params_.neighbours) {
      if (aoi::contains(n.area, {e.x, e.y})) {
        to = &n;
        break;
      }
    }
    if (to == nullptr || !link_->stats().connected) {
      world_.take_back(slot, params_.cross_cooldown_ticks);
      ++stats_.handoffs_out_refused;
      continue;
    }
    TransferMessage offer;
    offer.kind = TransferKind::kOffer;
    offer.sender = params_.self_index;
    offer.request = next_request_++;
    offer.entity = {.id = e.id,
                    .kind = e.kind,
                    .x = e.x,
                    .y = e.y,
                    .heading = e.heading,
                    .properties = world_.property_values(slot),
                    .party_key = world_.parties().key_of(e.party),
                    .guild_key = world_.guilds().key_of(e.guild),
                    .account = e.account,
                    .character = e.character,
                    .name = e.name};
    send_handoff(to->index, offer);
    offers_.push_back({offer.request, slot, e.id, to->index, now + params_.handoff_timeout});
  }
}

void GhostExchange::expire_offers(Clock::time_point now) {
  std::erase_if(offers_, [&](const Offer& o) {
    if (now < o.deadline) return false;
    ++stats_.handoffs_out_timed_out;
    const world::Entity& e = world_.entity(o.slot);
    if (e.live() && !e.ghost && e.id == o.id) {
      world_.take_back(o.slot, params_.cross_cooldown_ticks);
    }
    send_cancel(o.to, o.request, o.id);
    return true;
  });
}

}  // namespace zone::cluster
