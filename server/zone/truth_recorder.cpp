#include "zone/truth_recorder.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

namespace zone {

void TruthRecorder::record(std::uint32_t tick, const world::World& world,
                           const replication::Replicator& replicator) {
  TruthFrame& f = scratch_;
  f.tick = tick;
  f.view_radius = world.effective_player_radius();
  f.max_deferral_ticks = replicator.params().max_deferral_ticks;
  f.hysteresis = world.params().grid.hysteresis;
  f.party_full_range = world.parties().params().enabled && world.parties().params().full_range;
  f.guild_full_range = world.guilds().params().enabled && world.guilds().params().full_range;
  f.entities.clear();
  f.properties.clear();
  f.property_count = world.game().property_count();
  world.for_each_entity([&](std::uint32_t slot, const world::Entity& e) {
    f.entities.push_back({e.id, e.x, e.y, e.party, e.guild, e.precision.position_cm});
    const auto properties = world.properties(slot);
    f.properties.insert(f.properties.end(), properties.begin(), properties.end());
  });
  std::size_t n = 0;
  for (replication::ClientId c = 0; c < replicator.client_slots(); ++c) {
    const replication::ClientView& v = replicator.client(c);
    if (!v.active) continue;
    const replication::Frame* frame = v.history.find(tick);
    if (frame == nullptr || frame->deferred_spawns.empty()) continue;
    if (n == f.deferred.size()) f.deferred.emplace_back();
    f.deferred[n].player = v.player_id;
    f.deferred[n].spawns.clear();
    for (const world::EntityId id : frame->deferred_spawns) {
      auto it = std::lower_bound(
          v.interest.begin(), v.interest.end(), id,
          [](const replication::InterestEntry& e, world::EntityId k) { return e.id < k; });
      const std::uint32_t since = it != v.interest.end() && it->id == id ? it->entered_tick : tick;
      f.deferred[n].spawns.push_back({id, since});
    }
    ++n;
  }
  f.deferred.resize(n);
  f.max_staleness_ticks =
      f.max_deferral_ticks + replication::tier_slack_ticks(replicator.params(), 2);
  n = 0;
  for (replication::ClientId c = 0; c < replicator.client_slots(); ++c) {
    const replication::ClientView& v = replicator.client(c);
    if (!v.active || v.history.find(tick) == nullptr) continue;
    if (n == f.tiers.size()) f.tiers.emplace_back();
    Tiered& t = f.tiers[n];
    t.player = v.player_id;
    t.entities.clear();
    for (const replication::InterestEntry& e : v.interest) {
      if (e.slack_ticks > 0) t.entities.push_back({e.id, e.slack_ticks});
    }
    if (!t.entities.empty()) ++n;
  }
  f.tiers.resize(n);
  // Events, and their deliveries (sorted by event, then player).
  f.events.clear();
  f.recipients.clear();
  const auto deliveries = replicator.deliveries();
  std::size_t d = 0;
  const auto events = world.events().events();
  for (std::uint32_t i = 0; i < events.size(); ++i) {
    const world::WorldEvent& e = events[i];
    const auto first = static_cast<std::uint32_t>(f.recipients.size());
    while (d < deliveries.size() && deliveries[d].event < i) ++d;
    for (; d < deliveries.size() && deliveries[d].event == i; ++d) {
      f.recipients.push_back(deliveries[d].player);
    }
    f.events.push_back({e.sequence, e.kind, e.entity, e.target, first,
                        static_cast<std::uint32_t>(f.recipients.size()) - first});
  }

  std::lock_guard lock(mutex_);
  std::swap(frames_[tick % frames_.size()], scratch_);
  newest_ = tick;
}

std::uint32_t TruthRecorder::newest_tick() const {
  std::lock_guard lock(mutex_);
  return newest_;
}

std::optional<std::string> TruthRecorder::json_for(
    std::uint32_t tick, TruthDetail detail, const std::vector<std::uint32_t>* players) const {
  const auto wanted = [players](std::uint32_t player) {
    return players == nullptr || std::binary_search(players->begin(), players->end(), player);
  };
  TruthFrame copy;
  {
    std::lock_guard lock(mutex_);
    const TruthFrame& f = frames_[tick % frames_.size()];
    if (tick == 0 || f.tick != tick) return std::nullopt;
    copy.tick = f.tick;
    copy.view_radius = f.view_radius;
    copy.hysteresis = f.hysteresis;
    copy.max_deferral_ticks = f.max_deferral_ticks;
    copy.max_staleness_ticks = f.max_staleness_ticks;
    copy.party_full_range = f.party_full_range;
    copy.guild_full_range = f.guild_full_range;
    if (detail != TruthDetail::kEvents) {
      copy.entities = f.entities;
      copy.property_count = f.property_count;
      copy.properties = f.properties;
    }
    if (detail == TruthDetail::kFull) {
      for (const Deferred& d : f.deferred) {
        if (wanted(d.player)) copy.deferred.push_back(d);
      }
      for (const Tiered& t : f.tiers) {
        if (wanted(t.player)) copy.tiers.push_back(t);
      }
    }
    if (detail != TruthDetail::kPositions) {
      for (const EventTruth& e : f.events) {
        EventTruth mine = e;
        mine.first = static_cast<std::uint32_t>(copy.recipients.size());
        for (std::uint32_t k = e.first; k < e.first + e.count; ++k) {
          if (wanted(f.recipients[k])) copy.recipients.push_back(f.recipients[k]);
        }
        mine.count = static_cast<std::uint32_t>(copy.recipients.size()) - mine.first;
        copy.events.push_back(mine);
      }
    }
  }
  nlohmann::json j;
  j["tick"] = copy.tick;
  // Each event: sequence, kind, entity, target, and the players it was sent to (of the
  // players asked for, with `players`), ascending.
  const auto events_json = [&copy] {
    nlohmann::json events = nlohmann::json::array();
    for (const EventTruth& e : copy.events) {
      const auto first = copy.recipients.begin() + e.first;
      events.push_back({e.sequence, e.kind, e.entity, e.target,
                        std::vector<std::uint32_t>(first, first + e.count)});
    }
    return events;
  };
  if (detail == TruthDetail::kEvents) {
    if (players != nullptr) j["players"] = *players;
    j["events"] = events_json();
    return j.dump();
  }
  j["view_radius"] = copy.view_radius;
  j["hysteresis"] = copy.hysteresis;
  j["max_deferral_ticks"] = copy.max_deferral_ticks;
  j["max_staleness_ticks"] = copy.max_staleness_ticks;
  j["party_full_range"] = copy.party_full_range;
  j["guild_full_range"] = copy.guild_full_range;
  auto& entities = j["entities"] = nlohmann::json::array();
  // Each entity: id, x, y, party, guild, position_cm, then its game properties in the
  // schema's order (rows 8.. of the Welcome's schema).
  for (std::size_t i = 0; i < copy.entities.size(); ++i) {
    const Position& p = copy.entities[i];
    const auto first =
        copy.properties.begin() + static_cast<std::ptrdiff_t>(i * copy.property_count);
    entities.push_back({p.id, p.x, p.y, p.party, p.guild, p.position_cm,
                        std::vector<std::int32_t>(
                            first, first + static_cast<std::ptrdiff_t>(copy.property_count))});
  }
  if (detail == TruthDetail::kPositions) return j.dump();
  if (players != nullptr) j["players"] = *players;
  auto& deferred = j["deferred"] = nlohmann::json::object();
  for (const Deferred& d : copy.deferred) {
    auto& list = deferred[std::to_string(d.player)] = nlohmann::json::array();
    for (const DeferredSpawn& s : d.spawns) list.push_back({s.id, s.since});
  }
  auto& tiers = j["tier_slack"] = nlohmann::json::object();
  for (const Tiered& t : copy.tiers) {
    auto& list = tiers[std::to_string(t.player)] = nlohmann::json::array();
    for (const TierSlack& e : t.entities) list.push_back({e.id, e.slack});
  }
  j["events"] = events_json();
  return j.dump();
}

}  // namespace zone
