#include "sim/truth_check.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "protocol/quantize.hpp"

namespace zone::sim {

const TruthEntity* Truth::find(std::uint32_t id) const {
  auto it = std::lower_bound(entities.begin(), entities.end(), id,
                             [](const TruthEntity& e, std::uint32_t k) { return e.id < k; });
  return it != entities.end() && it->id == id ? &*it : nullptr;
}

bool Truth::lists_player(std::uint32_t id) const {
  return per_player && (all_players || std::binary_search(players.begin(), players.end(), id));
}

void Truth::merge_players(Truth&& other) {
  deferred.merge(other.deferred);
  tier_slack.merge(other.tier_slack);
  all_players = all_players || other.all_players;
  players.insert(players.end(), other.players.begin(), other.players.end());
  std::sort(players.begin(), players.end());
  players.erase(std::unique(players.begin(), players.end()), players.end());
}

bool parse_truth(const std::string& json, Truth& out, std::string& error) {
  try {
    const auto j = nlohmann::json::parse(json);
    out.tick = j.at("tick").get<std::uint32_t>();
    out.view_radius = j.at("view_radius").get<double>();
    out.hysteresis = j.at("hysteresis").get<double>();
    out.party_full_range = j.at("party_full_range").get<bool>();
    out.guild_full_range = j.at("guild_full_range").get<bool>();
    out.max_deferral_ticks = j.at("max_deferral_ticks").get<std::uint32_t>();
    out.max_staleness_ticks = j.at("max_staleness_ticks").get<std::uint32_t>();
    out.entities.clear();
    for (const auto& e : j.at("entities")) {
      out.entities.push_back(
          {e.at(0).get<std::uint32_t>(), e.at(1).get<double>(), e.at(2).get<double>(),
           e.at(3).get<std::uint32_t>(), e.at(4).get<std::uint32_t>(), e.at(5).get<std::uint32_t>(),
           e.size() > 6 ? e.at(6).get<std::vector<std::int32_t>>() : std::vector<std::int32_t>()});
    }
    std::sort(out.entities.begin(), out.entities.end(),
              [](const TruthEntity& a, const TruthEntity& b) { return a.id < b.id; });
    out.deferred.clear();
    out.tier_slack.clear();
    out.per_player = j.contains("deferred");
    out.all_players = !j.contains("players");
    out.players.clear();
    if (!out.per_player) return true;
    if (!out.all_players) {
      out.players = j.at("players").get<std::vector<std::uint32_t>>();
      std::sort(out.players.begin(), out.players.end());
    }
    for (const auto& [player, list] : j.at("deferred").items()) {
      auto& held = out.deferred[static_cast<std::uint32_t>(std::stoul(player))];
      for (const auto& d : list) held[d.at(0).get<std::uint32_t>()] = d.at(1).get<std::uint32_t>();
    }
    for (const auto& [player, list] : j.at("tier_slack").items()) {
      auto& slack = out.tier_slack[static_cast<std::uint32_t>(std::stoul(player))];
      for (const auto& d : list) slack[d.at(0).get<std::uint32_t>()] = d.at(1).get<std::uint32_t>();
    }
    return true;
  } catch (const std::exception& e) {
    error = e.what();
    return false;
  }
}

bool parse_event_truth(const std::string& json, TickEvents& out, std::string& error) {
  try {
    const auto j = nlohmann::json::parse(json);
    out.tick = j.at("tick").get<std::uint32_t>();
    out.events.clear();
    for (const auto& e : j.at("events")) {
      TruthEvent t;
      t.sequence = e.at(0).get<std::uint32_t>();
      t.kind = e.at(1).get<std::uint16_t>();
      t.entity = e.at(2).get<std::uint32_t>();
      t.target = e.at(3).get<std::uint32_t>();
      t.recipients = e.at(4).get<std::vector<std::uint32_t>>();
      std::sort(t.recipients.begin(), t.recipients.end());
      out.events.push_back(std::move(t));
    }
    return true;
  } catch (const std::exception& e) {
    error = e.what();
    return false;
  }
}

void EventReport::add(const EventReport& o, std::size_t max_details) {
  checks += o.checks;
  missing += o.missing;
  extra += o.extra;
  duplicate += o.duplicate;
  skipped += o.skipped;
  ticks += o.ticks;
  for (const std::string& d : o.details) {
    if (details.size() < max_details) details.push_back(d);
  }
}

void check_events(std::uint32_t self_id, std::string_view name, const TickEvents& truth,
                  std::span<const client::ReceivedEvent> received, EventReport& report,
                  std::size_t max_details) {
  auto fail = [&](std::uint64_t& counter, std::string what) {
    ++counter;
    if (report.details.size() < max_details) {
      report.details.push_back(
          fmt::format("{} (entity {}) tick {}: {}", name, self_id, truth.tick, what));
    }
  };
  // How often each received event came (a tick holds few of a bot's events).
  std::vector<std::pair<client::ReceivedEvent, std::uint32_t>> got;
  for (const client::ReceivedEvent& r : received) {
    if (r.tick != truth.tick) continue;
    auto it = std::find_if(got.begin(), got.end(), [&](const auto& g) { return g.first == r; });
    if (it == got.end()) {
      got.emplace_back(r, 1);
    } else {
      ++it->second;
    }
  }
  std::vector<bool> listed(got.size(), false);
  for (const TruthEvent& e : truth.events) {
    if (!std::binary_search(e.recipients.begin(), e.recipients.end(), self_id)) continue;
    ++report.checks;
    const client::ReceivedEvent want{truth.tick, e.sequence, e.kind, e.entity, e.target};
    auto it = std::find_if(got.begin(), got.end(), [&](const auto& g) { return g.first == want; });
    if (it == got.end()) {
      fail(report.missing, fmt::format("event {} (kind {}, entity {}, target {}) not received",
                                       e.sequence, e.kind, e.entity, e.target));
      continue;
    }
    listed[static_cast<std::size_t>(it - got.begin())] = true;
  }
  for (std::size_t i = 0; i < got.size(); ++i) {
    const client::ReceivedEvent& r = got[i].first;
    if (got[i].second > 1) {
      report.duplicate += got[i].second - 2;  // fail() counts one
      fail(report.duplicate, fmt::format("event {} (kind {}, entity {}) received {} times",
                                         r.sequence, r.kind, r.entity, got[i].second));
    }
    if (!listed[i]) {
      fail(report.extra,
           fmt::format("event {} (kind {}, entity {}, target {}) received, but the truth {}",
                       r.sequence, r.kind, r.entity, r.target,
                       std::any_of(truth.events.begin(), truth.events.end(),
                                   [&](const TruthEvent& e) { return e.sequence == r.sequence; })
                           ? "does not list this bot for it (or differs)"
                           : "has no such event at this tick"));
    }
  }
}

void TruthReport::add(const TruthReport& o, std::size_t max_details) {
  checks += o.checks;
  entity_checks += o.entity_checks;
  mismatches += o.mismatches;
  skipped += o.skipped;
  stale_entities += o.stale_entities;
  deferred_spawns += o.deferred_spawns;
  tier_stale_entities += o.tier_stale_entities;
  party_checks += o.party_checks;
  property_checks += o.property_checks;
  coarse_checks += o.coarse_checks;
  max_staleness_ticks = std::max(max_staleness_ticks, o.max_staleness_ticks);
  for (const std::string& d : o.details) {
    if (details.size() < max_details) details.push_back(d);
  }
}

namespace {

// Position (in the units of the entity's precision tier, which must be the tier's),
// party, guild and the game's properties the client may receive (`visible`: the rows of
// its audience; the others must read 0): a record carries every field as of one tick, so a
// held-back one matches an older tick in all of them.
bool at_truth(const replica::EntityView& held, const TruthEntity& truth, std::uint64_t visible) {
  const std::uint32_t unit = truth.position_cm;
  if (protocol::position_unit_cm(held.values) != unit ||
      held.x() != protocol::quantize_position(truth.x, unit) ||
      held.y() != protocol::quantize_position(truth.y, unit) || held.party() != truth.party ||
      held.guild() != truth.guild) {
    return false;
  }
  // A truth without properties (an older server's) has nothing to compare.
  if (truth.properties.empty()) return true;
  if (held.values.size() != protocol::kEngineFieldCount + truth.properties.size()) return false;
  for (std::size_t p = 0; p < truth.properties.size(); ++p) {
    const std::size_t row = protocol::kEngineFieldCount + p;
    const std::int32_t expected = (visible >> row) & 1 ? truth.properties[p] : 0;
    if (held.values[row] != expected) return false;
  }
  return true;
}

// The rows the bot may receive of `other`, by the party relation at that tick.
std::uint64_t visible_rows(const TakenFrame& taken, const TruthEntity* self,
                           const TruthEntity& other) {
  const bool same_party = self != nullptr && self->party != 0 && other.party == self->party;
  return same_party ? taken.party_mask : taken.public_mask;
}

}  // namespace

TakenFrame take_frame(const replica::FrameReplica& replica, std::uint32_t self_id,
                      std::string_view name, std::uint32_t from, std::uint32_t to) {
  TakenFrame taken;
  taken.name = name;
  taken.self_id = self_id;
  taken.public_mask = replica.schema().public_mask();
  taken.party_mask = replica.schema().party_mask();
  for (std::uint32_t t = to; t >= from && t > 0; --t) {
    if (const replica::Frame* frame = replica.frame_at(t)) {
      taken.frame = *frame;
      break;
    }
  }
  return taken;
}

void check_frame(const TakenFrame& taken, const TruthWindow& window, TruthReport& report,
                 std::size_t max_details) {
  // The frame's tick must be in the window with its per-player lists, and so must every
  // tick a held-back record may come from. Ticks count from 1: a young zone's first ticks
  // need only the history it has.
  const replica::Frame* frame = taken.frame.tick != 0 ? &taken.frame : nullptr;
  const Truth* truth = frame ? window.at(frame->tick) : nullptr;
  if (truth != nullptr) {
    const std::uint32_t at = truth->tick;
    const std::uint32_t bound = truth->max_staleness_ticks;
    const std::uint32_t needed_from = at + 1 > bound ? at + 1 - bound : 1;
    bool complete = truth->lists_player(taken.self_id);
    for (std::uint32_t t = needed_from; t < at && complete; ++t) complete = window.at(t) != nullptr;
    if (!complete) truth = nullptr;
  }
  const std::uint32_t self_id = taken.self_id;
  const std::string_view name = taken.name;
  const TruthEntity* self = truth ? truth->find(self_id) : nullptr;
  if (frame == nullptr || self == nullptr) {
    ++report.skipped;
    return;
  }
  ++report.checks;
  const std::uint32_t tick = truth->tick;
  auto fail = [&](std::string what) {
    ++report.mismatches;
    if (report.details.size() < max_details) {
      report.details.push_back(
          fmt::format("{} (entity {}) tick {}: {}", name, self_id, tick, what));
    }
  };
  if (!at_truth({self_id, frame->self}, *self, ~0ull)) {
    fail(fmt::format(
        "own position ({:.2f}, {:.2f}) m in {} cm units party {} guild {}, truth ({:.3f}, {:.3f}) "
        "m in {} cm units party {} guild {}",
        protocol::position_metres(frame->self, protocol::kX),
        protocol::position_metres(frame->self, protocol::kY),
        protocol::position_unit_cm(frame->self), frame->self[protocol::kParty],
        frame->self[protocol::kGuild], self->x, self->y, self->position_cm, self->party,
        self->guild));
  }
  static const std::unordered_map<std::uint32_t, std::uint32_t> kNone;
  const auto d_it = truth->deferred.find(self_id);
  const auto& deferred = d_it == truth->deferred.end() ? kNone : d_it->second;
  const std::uint32_t bound = truth->max_deferral_ticks;
  const auto t_it = truth->tier_slack.find(self_id);
  const auto& tiered = t_it == truth->tier_slack.end() ? kNone : t_it->second;

  const double r = truth->view_radius;
  const double outer = r + truth->hysteresis;
  const auto& seen = frame->entities;  // sorted by id
  std::size_t s = 0;
  for (const TruthEntity& e : truth->entities) {
    if (e.id == self_id) continue;
    for (; s < seen.size() && seen[s].id < e.id; ++s) {
      fail(fmt::format("entity {} is in the replica but not in the world", seen[s].id));
    }
    const bool present = s < seen.size() && seen[s].id == e.id;
    // Same arithmetic as the AOI's decision: squared distances in double.
    const double dx = e.x - self->x;
    const double dy = e.y - self->y;
    const double d2 = dx * dx + dy * dy;
    // A member of the bot's party or guild is in view at any distance (full_range).
    const bool member = (truth->party_full_range && self->party != 0 && e.party == self->party) ||
                        (truth->guild_full_range && self->guild != 0 && e.guild == self->guild);
    if (member) ++report.party_checks;
    ++report.entity_checks;
    if (e.position_cm > 1) ++report.coarse_checks;
    if (!present) {
      if (d2 > r * r && !member) continue;
      const auto held = deferred.find(e.id);
      if (held == deferred.end()) {
        fail(fmt::format("entity {} at {:.3f} m (view radius {:.2f} m) missing from the replica",
                         e.id, std::sqrt(d2), r));
      } else if (tick - held->second >= bound) {
        fail(fmt::format("entity {}'s spawn held back {} ticks (limit {})", e.id,
                         tick - held->second, bound));
      } else {
        ++report.deferred_spawns;
      }
      continue;
    }
    const replica::EntityView have = seen[s];
    const std::uint32_t updated = frame->updated[s];
    ++s;
    if (d2 > outer * outer && !member) {
      fail(fmt::format("entity {} at {:.3f} m (beyond radius + hysteresis {:.2f} m) in the replica",
                       e.id, std::sqrt(d2), outer));
      continue;
    }
    if (at_truth(have, e, visible_rows(taken, self, e))) {
      if (!e.properties.empty()) ++report.property_checks;
      continue;
    }
    // Not where the entity is now: its update was held back. Then it must be exactly where
    // it was at some recent tick, less than max_deferral_ticks before T. (The tick the
    // client last got a record for it says nothing here: an entity that stood still for
    // a long time and has just started to move is held at a position that was true a
    // moment ago.)
    // Its tier may let it wait longer (the server's tier for this frame).
    const auto slack_it = tiered.find(e.id);
    const std::uint32_t slack = slack_it == tiered.end() ? 0 : slack_it->second;
    const std::uint32_t limit = bound + slack;
    std::uint32_t age = 0;
    for (std::uint32_t back = 1; back < limit && back < tick; ++back) {
      const Truth* then = window.at(tick - back);
      const TruthEntity* was = then ? then->find(e.id) : nullptr;
      if (was != nullptr && at_truth(have, *was, visible_rows(taken, then->find(self_id), *was))) {
        age = back;
        break;
      }
    }
    if (age == 0) {
      fail(fmt::format(
          "entity {} at ({:.2f}, {:.2f}) m in {} cm units party {} guild {}, truth ({:.3f}, "
          "{:.3f}) m in {} cm units party {} guild {}, and at none of the {} ticks before (last "
          "record at tick {})",
          e.id, protocol::position_metres(have.values, protocol::kX),
          protocol::position_metres(have.values, protocol::kY),
          protocol::position_unit_cm(have.values), have.party(), have.guild(), e.x, e.y,
          e.position_cm, e.party, e.guild, limit - 1, updated));
    } else {
      if (!e.properties.empty()) ++report.property_checks;
      ++report.stale_entities;
      if (slack > 0) ++report.tier_stale_entities;
      report.max_staleness_ticks = std::max(report.max_staleness_ticks, age);
    }
  }
  for (; s < seen.size(); ++s) {
    fail(fmt::format("entity {} is in the replica but not in the world", seen[s].id));
  }
}

}  // namespace zone::sim
