// A chat line that crosses zones (docs/world.md, "Chat across zones"): a whisper to a name
// the speaker's zone does not have, or a guild line (guild ids are each zone's own: the
// line names the guild by its invitation key). Published on "<prefix>.chat.<from>", which
// every zone of the world subscribes to.
//
// Layout: u8 magic 0x43 ('C'), u8 version 1, u8 channel (2 guild, 3 whisper), u32 speaker
// id, u64 guild key (0 but for guild lines), u8 name length, the speaker's name, u8 to
// length, the receiver's name (whispers), u8 text length, the text. decode() checks every
// field and never reads past the buffer.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace zone::cluster {

inline constexpr std::uint8_t kChatMagic = 0x43;  // 'C'
inline constexpr std::uint8_t kChatVersion = 1;

struct RemoteChat {
  std::uint8_t channel = 0;  // protocol::ChatChannel: kGuild or kWhisper
  std::uint32_t speaker = 0;
  std::uint64_t guild_key = 0;
  std::string speaker_name;
  std::string to;
  std::string text;
};

enum class ChatDecodeError : std::uint8_t {
  kNone,
  kNotChat,
  kVersion,
  kTruncated,
  kBadValue,
  kTrailing
};

void encode(const RemoteChat& chat, std::vector<std::uint8_t>& out);
ChatDecodeError decode(std::span<const std::uint8_t> bytes, RemoteChat& out);

}  // namespace zone::cluster
