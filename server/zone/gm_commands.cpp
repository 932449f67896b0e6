#include "zone/gm_commands.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "protocol/player_name.hpp"
#include "protocol/schema.hpp"

namespace zone {

using Clock = std::chrono::steady_clock;

const char* to_string(GmCommand c) {
  switch (c) {
    case GmCommand::kKick:
      return "kick";
    case GmCommand::kBan:
      return "ban";
    case GmCommand::kUnban:
      return "unban";
    case GmCommand::kMute:
      return "mute";
    case GmCommand::kUnmute:
      return "unmute";
    case GmCommand::kTeleport:
      return "teleport";
    case GmCommand::kBroadcast:
      return "broadcast";
    case GmCommand::kInspect:
      return "inspect";
  }
  return "unknown";
}

const char* to_string(GmResult r) {
  switch (r) {
    case GmResult::kOk:
      return "ok";
    case GmResult::kInvalid:
      return "invalid";
    case GmResult::kNotFound:
      return "not_found";
    case GmResult::kRefused:
      return "refused";
    case GmResult::kError:
      return "error";
  }
  return "unknown";
}

int http_status(GmResult r) {
  switch (r) {
    case GmResult::kOk:
      return 200;
    case GmResult::kInvalid:
      return 400;
    case GmResult::kNotFound:
      return 404;
    case GmResult::kRefused:
      return 409;
    case GmResult::kError:
      return 500;
  }
  return 500;
}

std::string GmCounters::render() const {
  std::string out =
      "# HELP zone_gm_commands_total GM commands through the admin endpoint (after the token "
      "and origin checks), by command and result: ok, invalid (arguments), not_found (no such "
      "player), refused (the zone would not), error (could not).\n"
      "# TYPE zone_gm_commands_total counter\n";
  for (std::size_t c = 0; c < kGmCommands; ++c) {
    for (std::size_t r = 0; r < kGmResults; ++r) {
      out += fmt::format("zone_gm_commands_total{{command=\"{}\",result=\"{}\"}} {}\n",
                         to_string(static_cast<GmCommand>(c)), to_string(static_cast<GmResult>(r)),
                         counts_[c][r].load(std::memory_order_relaxed));
    }
  }
  return out;
}

std::future<GmAnswer> GmQueue::request(GmRequest request) {
  std::lock_guard lock(mutex_);
  const auto refuse = [](GmResult result, std::string message) {
    std::promise<GmAnswer> p;
    p.set_value({result, std::move(message), nlohmann::json::object()});
    return p.get_future();
  };
  // No tick will ever apply it: answer now rather than leave the caller waiting.
  if (closed_) return refuse(GmResult::kRefused, "the zone is shutting down");
  if (queue_.size() >= kMaxPending) {
    return refuse(GmResult::kError, "too many GM commands waiting for the tick");
  }
  queue_.push_back({std::move(request), {}});
  auto future = queue_.back().done.get_future();
  pending_ = true;
  return future;
}

void GmQueue::close() {
  std::lock_guard lock(mutex_);
  closed_ = true;
  for (PendingGm& p : queue_) {
    p.done.set_value({GmResult::kRefused, "the zone is shutting down", nlohmann::json::object()});
  }
  queue_.clear();
  pending_ = false;
}

std::vector<PendingGm> GmQueue::take() {
  std::vector<PendingGm> batch;
  std::lock_guard lock(mutex_);
  batch.swap(queue_);
  pending_ = false;
  return batch;
}

bool GmDesk::muted(const world::Entity& player, Clock::time_point now) const {
  if (player.account != 0) {
    const auto it = muted_accounts_.find(player.account);
    if (it != muted_accounts_.end() && now < it->second) return true;
  }
  const auto it = muted_entities_.find(player.id);
  return it != muted_entities_.end() && now < it->second;
}

GmAnswer GmDesk::apply(const GmRequest& r, GmContext& zone) {
  switch (r.command) {
    case GmCommand::kKick:
      return kick(r, zone);
    case GmCommand::kBan:
      return kick_account(r, zone);
    case GmCommand::kMute:
      return mute(r, zone, true);
    case GmCommand::kUnmute:
      return mute(r, zone, false);
    case GmCommand::kTeleport:
      return teleport(r, zone);
    case GmCommand::kBroadcast:
      return broadcast(r, zone);
    case GmCommand::kInspect:
      return inspect(r, zone);
    case GmCommand::kUnban:
      break;  // the ban list alone: never queued
  }
  return {GmResult::kInvalid, "not a tick command", nlohmann::json::object()};
}

std::optional<std::uint32_t> GmDesk::resolve(const GmTarget& target, const world::World& world,
                                             bool players_only, GmAnswer& why) const {
  why.detail = nlohmann::json::object();
  const auto acceptable = [&](const world::Entity& e) {
    return e.live() && !e.ghost && (!players_only || e.kind == world::EntityKind::kPlayer);
  };
  if (target.id != 0) {
    const world::Entity* e = world.find(target.id);
    if (e == nullptr || !acceptable(*e)) {
      why.result = GmResult::kNotFound;
      why.message = fmt::format("no {} with entity id {} in this zone",
                                players_only ? "player" : "player or NPC", target.id);
      return std::nullopt;
    }
    return e->aoi.index;
  }
  // Names are not unique (open mode: anyone picks any name): a name must name one
  // entity, or the operator chooses by id.
  std::vector<std::uint32_t> slots;
  std::vector<world::EntityId> ids;
  world.for_each_entity([&](std::uint32_t slot, const world::Entity& e) {
    if (acceptable(e) && e.name == target.name) {
      slots.push_back(slot);
      ids.push_back(e.id);
    }
  });
  if (slots.empty()) {
    why.result = GmResult::kNotFound;
    why.message = fmt::format("no {} named '{}' in this zone",
                              players_only ? "player" : "player or NPC", target.name);
    return std::nullopt;
  }
  if (slots.size() > 1) {
    why.result = GmResult::kRefused;
    why.message = fmt::format("{} entities are named '{}' (ids {}): name one by id", slots.size(),
                              target.name, fmt::join(ids, ", "));
    why.detail["ids"] = ids;
    return std::nullopt;
  }
  return slots.front();
}

namespace {

nlohmann::json who(const world::Entity& e) {
  return {{"entity", e.id}, {"name", e.name}, {"account", e.account}};
}

}  // namespace

GmAnswer GmDesk::kick(const GmRequest& r, GmContext& zone) {
  GmAnswer a;
  const auto slot = resolve(r.target, zone.world, true, a);
  if (!slot) return a;
  const world::Entity& e = zone.world.entity(*slot);
  a.detail = who(e);
  const std::string name = e.name;
  const world::EntityId id = e.id;
  if (!zone.sessions.kick_player(*slot, protocol::DisconnectReason::Kicked, zone.out)) {
    return {GmResult::kNotFound,
            fmt::format("player '{}' (entity {}) has no client here to kick", name, id), a.detail};
  }
  a.message = fmt::format("player '{}' (entity {}) disconnected: kicked", name, id);
  return a;
}

GmAnswer GmDesk::kick_account(const GmRequest& r, GmContext& zone) {
  // The ban itself is in the BanList already: this ends the account's sessions here.
  std::vector<std::uint32_t> slots;
  zone.world.for_each_entity([&](std::uint32_t slot, const world::Entity& e) {
    if (!e.ghost && e.kind == world::EntityKind::kPlayer && e.account == r.account) {
      slots.push_back(slot);
    }
  });
  nlohmann::json kicked = nlohmann::json::array();
  for (const std::uint32_t slot : slots) {
    const world::Entity& e = zone.world.entity(slot);
    const nlohmann::json one = who(e);
    if (zone.sessions.kick_player(slot, protocol::DisconnectReason::Banned, zone.out)) {
      kicked.push_back(one);
    }
  }
  GmAnswer a;
  a.message = fmt::format("account {} banned; {} player(s) online here disconnected", r.account,
                          kicked.size());
  a.detail = {{"account", r.account}, {"kicked", std::move(kicked)}};
  return a;
}

GmAnswer GmDesk::mute(const GmRequest& r, GmContext& zone, bool on) {
  GmAnswer a;
  const auto slot = resolve(r.target, zone.world, true, a);
  if (!slot) return a;
  const world::Entity& e = zone.world.entity(*slot);
  a.detail = who(e);
  const Clock::time_point now = Clock::now();
  if (!on) {
    const bool was = muted(e, now);
    if (e.account != 0) muted_accounts_.erase(e.account);
    muted_entities_.erase(e.id);
    a.message =
        fmt::format("player '{}' (entity {}) {}", e.name, e.id, was ? "unmuted" : "was not muted");
    return a;
  }
  // Forget the mutes that are over before counting against the bound.
  const auto over = [now](const auto& entry) { return entry.second <= now; };
  std::erase_if(muted_accounts_, over);
  std::erase_if(muted_entities_, over);
  if (muted_accounts_.size() + muted_entities_.size() >= kMaxMutes) {
    return {GmResult::kRefused, fmt::format("{} players are muted already", kMaxMutes), a.detail};
  }
  const Clock::time_point until = now + std::chrono::seconds(r.seconds);
  // In ticket mode the account: logging in again does not lift it.
  if (e.account != 0) {
    muted_accounts_[e.account] = until;
  } else {
    muted_entities_[e.id] = until;
  }
  a.detail["seconds"] = r.seconds;
  a.detail["by"] = e.account != 0 ? "account" : "entity";
  a.message = fmt::format("player '{}' (entity {}) muted for {} s", e.name, e.id, r.seconds);
  return a;
}

GmAnswer GmDesk::teleport(const GmRequest& r, GmContext& zone) {
  GmAnswer a;
  const auto slot = resolve(r.target, zone.world, false, a);
  if (!slot) return a;
  const world::Entity& e = zone.world.entity(*slot);
  a.detail = who(e);
  a.detail["x"] = r.x;
  a.detail["y"] = r.y;
  if (!zone.world.teleport(*slot, r.x, r.y)) {
    a.result = GmResult::kRefused;
    a.message = fmt::format(
        "entity {} not moved: ({:.2f}, {:.2f}) is outside the zone or inside a static object, "
        "or the entity is being handed over",
        e.id, r.x, r.y);
    return a;
  }
  a.message =
      fmt::format("'{}' (entity {}) teleported to ({:.2f}, {:.2f})", e.name, e.id, r.x, r.y);
  return a;
}

GmAnswer GmDesk::broadcast(const GmRequest& r, GmContext& zone) {
  // The chat rule's characters and length: a client shows it like any line.
  if (!protocol::valid_player_name(r.text, zone.config.chat.max_length)) {
    return {GmResult::kInvalid,
            fmt::format("text must be 1 to {} bytes without control, bidirectional or invisible "
                        "characters (the chat rule)",
                        zone.config.chat.max_length),
            nlohmann::json::object()};
  }
  world::EventDraft draft;
  draft.kind = protocol::kChatEvent;
  draft.route = world::EventRoute::kZone;
  draft.entity = world::kNoEntity;  // from the server, about no entity
  draft.text = r.text;
  const std::array<std::int32_t, 1> args = {
      static_cast<std::int32_t>(protocol::ChatChannel::kSystem)};
  draft.args = args;
  if (const auto refused = zone.world.events().emit(zone.world.game().schema, draft)) {
    return {GmResult::kError, "not sent: " + *refused, nlohmann::json::object()};
  }
  const std::uint32_t players = zone.world.player_count();
  return {GmResult::kOk,
          fmt::format("broadcast to {} player(s): {} bytes", players, r.text.size()),
          {{"players", players}, {"bytes", r.text.size()}}};
}

GmAnswer GmDesk::inspect(const GmRequest& r, GmContext& zone) {
  GmAnswer a;
  const auto slot = resolve(r.target, zone.world, false, a);
  if (!slot) return a;
  const world::World& world = zone.world;
  const world::Entity& e = world.entity(*slot);
  const protocol::Schema& schema = world.game().schema;
  nlohmann::json d = who(e);
  d["kind"] = e.kind == world::EntityKind::kPlayer ? "player" : "npc";
  d["character"] = e.character;
  d["x"] = e.x;
  d["y"] = e.y;
  d["heading"] = e.heading;
  d["velocity"] = {e.vx, e.vy};
  d["type"] = e.type < schema.types().size() ? schema.types()[e.type].name : std::string();
  nlohmann::json props = nlohmann::json::object();
  const auto values = world.properties(*slot);
  for (std::size_t i = 0; i < values.size(); ++i) {
    props[schema.field(protocol::kEngineFieldCount + i).name] = values[i];
  }
  d["properties"] = std::move(props);
  d["party"] = e.party;
  d["guild"] = e.guild;
  d["frozen"] = e.frozen;
  const Clock::time_point now = Clock::now();
  d["muted"] = e.kind == world::EntityKind::kPlayer && muted(e, now);
  d["banned"] = e.account != 0 && bans_.banned(e.account);
  // The game port's address and round trip live on the network threads, which the tick
  // does not ask: the session's own facts only.
  if (const Session* s = zone.sessions.session_of(*slot)) {
    using std::chrono::duration;
    d["connection"] = {
        {"host", s->peer.host},
        {"peer", s->peer.index},
        {"connected_seconds", duration<double>(now - s->connected_at).count()},
        {"last_input_ms", duration<double, std::milli>(now - s->last_input_at).count()},
        {"address", nullptr},
        {"ping_ms", nullptr}};
  } else {
    d["connection"] = nullptr;
  }
  d["held"] = e.kind == world::EntityKind::kPlayer && zone.sessions.is_held(*slot);
  // The newest state this zone queued for the character (persist.enabled): null means
  // "not known here" (no store, an NPC, nothing queued since it came), not "nothing saved".
  d["saved"] = nullptr;
  if (zone.store != nullptr && e.kind == world::EntityKind::kPlayer) {
    if (const CharacterStore::LastSave* last =
            zone.store->last_save(persist::character_key(e.character, e.name))) {
      nlohmann::json saved_props = nlohmann::json::object();
      for (const persist::Property& p : last->record.properties) saved_props[p.name] = p.value;
      d["saved"] = {
          {"type", last->record.type},
          {"x", last->record.x},
          {"y", last->record.y},
          {"properties", std::move(saved_props)},
          {"party_key", last->record.party_key},
          {"guild_key", last->record.guild_key},
          {"committed", zone.store->committed(last->sequence)},
          {"seconds_ago",
           std::chrono::duration<double>(std::chrono::system_clock::now() - last->at).count()}};
    }
  }
  a.detail = std::move(d);
  a.message = fmt::format("'{}' (entity {})", e.name, e.id);
  return a;
}

}  // namespace zone
