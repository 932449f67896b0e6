#include "zone/chat.hpp"

#include <algorithm>
#include <array>

#include "protocol/player_name.hpp"

namespace zone {

using protocol::ChatChannel;
using protocol::ChatStatus;

void PlayerNames::remove(const std::string& name, std::uint32_t slot) {
  const auto it = slots_.find(name);
  if (it == slots_.end()) return;
  std::erase(it->second, slot);
  if (it->second.empty()) slots_.erase(it);
}

const std::vector<std::uint32_t>* PlayerNames::find(std::string_view name) const {
  const auto it = slots_.find(name);
  return it == slots_.end() ? nullptr : &it->second;
}

namespace {

// The engine's chat event of a line: about its speaker, its channel the one argument (the
// route is the caller's). `args` holds the channel and must outlive the draft.
world::EventDraft chat_draft(world::EntityId speaker, std::string_view name, std::string_view text,
                             std::span<const std::int32_t> args) {
  world::EventDraft draft;
  draft.kind = protocol::kChatEvent;
  draft.entity = speaker;
  draft.text = text;
  draft.name = name;
  draft.args = args;
  return draft;
}

}  // namespace

ChatStatus send_chat(const config::ChatConfig& config, std::size_t max_name_bytes,
                     world::World& world, const PlayerNames& names, const ChatLine& line,
                     const ChatForward& forward) {
  if (!config.enabled || line.channel >= protocol::kChatChannelCount) return ChatStatus::BadChannel;
  const auto channel = static_cast<ChatChannel>(line.channel);
  if (channel == ChatChannel::kSystem) return ChatStatus::BadChannel;
  if (channel == ChatChannel::kZone && !config.zone_channel) return ChatStatus::BadChannel;
  if (!protocol::valid_player_name(line.text, config.max_length)) return ChatStatus::BadText;
  const world::Entity& speaker = world.entity(line.speaker_slot);
  const std::array<std::int32_t, 1> args = {line.channel};
  world::EventDraft draft = chat_draft(speaker.id, speaker.name, line.text, args);
  switch (channel) {
    case ChatChannel::kSay:
      draft.route = world::EventRoute::kEntity;
      break;
    case ChatChannel::kParty:
    case ChatChannel::kGuild: {
      const world::GroupKind kind =
          channel == ChatChannel::kParty ? world::GroupKind::kParty : world::GroupKind::kGuild;
      draft.group = speaker.group(kind);
      if (draft.group == world::kNoGroup) return ChatStatus::NoGroup;
      draft.route =
          kind == world::GroupKind::kParty ? world::EventRoute::kParty : world::EventRoute::kGuild;
      break;
    }
    case ChatChannel::kWhisper: {
      if (!protocol::valid_player_name(line.to, max_name_bytes)) return ChatStatus::NoSuchPlayer;
      const std::vector<std::uint32_t>* slots = names.find(line.to);
      if (slots == nullptr) {
        if (!forward) return ChatStatus::NoSuchPlayer;
        forward({.channel = line.channel,
                 .speaker = speaker.id,
                 .guild_key = 0,
                 .speaker_name = speaker.name,
                 .to = std::string(line.to),
                 .text = std::string(line.text)});
        return ChatStatus::Sent;
      }
      draft.route = world::EventRoute::kPlayer;
      // One event per receiver of that name; the speaker sees its own line only if it
      // whispers to itself.
      for (const std::uint32_t slot : *slots) {
        draft.target = world.entity(slot).id;
        if (world.events().emit(world.game().schema, draft)) return ChatStatus::RateLimited;
      }
      return ChatStatus::Sent;
    }
    case ChatChannel::kZone:
      draft.route = world::EventRoute::kZone;
      break;
    case ChatChannel::kSystem:
      return ChatStatus::BadChannel;
  }
  // The zone's event budget for the tick is spent: the line is refused, not lost silently.
  if (world.events().emit(world.game().schema, draft)) return ChatStatus::RateLimited;
  // A guild spans the world (its key does); a party is its zone's. Only a line this zone
  // took goes on: a refused one reaches nobody anywhere.
  if (draft.route == world::EventRoute::kGuild && forward) {
    forward({.channel = line.channel,
             .speaker = speaker.id,
             .guild_key = world.guilds().key_of(draft.group),
             .speaker_name = speaker.name,
             .to = {},
             .text = std::string(line.text)});
  }
  return ChatStatus::Sent;
}

void deliver_remote_chat(world::World& world, const PlayerNames& names,
                         const cluster::RemoteChat& line) {
  const std::array<std::int32_t, 1> args = {line.channel};
  world::EventDraft draft = chat_draft(line.speaker, line.speaker_name, line.text, args);
  if (line.channel == static_cast<std::uint8_t>(ChatChannel::kWhisper)) {
    const std::vector<std::uint32_t>* slots = names.find(line.to);
    if (slots == nullptr) return;
    draft.route = world::EventRoute::kPlayer;
    for (const std::uint32_t slot : *slots) {
      draft.target = world.entity(slot).id;
      world.events().emit(world.game().schema, draft);
    }
    return;
  }
  draft.group = world.guilds().group_of_key(line.guild_key);
  if (draft.group == world::kNoGroup) return;
  draft.route = world::EventRoute::kGuild;
  world.events().emit(world.game().schema, draft);
}

}  // namespace zone
