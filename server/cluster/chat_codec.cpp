#include "cluster/chat_codec.hpp"

#include <algorithm>

#include "protocol/byte_io.hpp"
#include "protocol/schema.hpp"

namespace zone::cluster {
namespace {

constexpr std::size_t kHeaderBytes = 1 + 1 + 1 + 4 + 8;

void text(protocol::ByteWriter& w, const std::string& s) {
  const std::size_t n = std::min<std::size_t>(s.size(), 255);
  w.u8(static_cast<std::uint8_t>(n));
  w.bytes({reinterpret_cast<const std::uint8_t*>(s.data()), n});
}

std::string text(protocol::ByteReader& r) {
  const std::span<const std::uint8_t> b = r.bytes(r.u8());
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}

}  // namespace

void encode(const RemoteChat& c, std::vector<std::uint8_t>& out) {
  out.resize(kHeaderBytes + 3 + std::min<std::size_t>(c.speaker_name.size(), 255) +
             std::min<std::size_t>(c.to.size(), 255) + std::min<std::size_t>(c.text.size(), 255));
  protocol::ByteWriter w(out);
  w.u8(kChatMagic);
  w.u8(kChatVersion);
  w.u8(c.channel);
  w.u32(c.speaker);
  w.u64(c.guild_key);
  text(w, c.speaker_name);
  text(w, c.to);
  text(w, c.text);
}

ChatDecodeError decode(std::span<const std::uint8_t> bytes, RemoteChat& out) {
  if (bytes.empty() || bytes[0] != kChatMagic) return ChatDecodeError::kNotChat;
  if (bytes.size() < 2) return ChatDecodeError::kTruncated;
  if (bytes[1] != kChatVersion) return ChatDecodeError::kVersion;
  protocol::ByteReader r(bytes.subspan(2));
  out.channel = r.u8();
  out.speaker = r.u32();
  out.guild_key = r.u64();
  out.speaker_name = text(r);
  out.to = text(r);
  out.text = text(r);
  if (r.failed()) return ChatDecodeError::kTruncated;
  if (!r.at_end()) return ChatDecodeError::kTrailing;
  const auto channel = static_cast<protocol::ChatChannel>(out.channel);
  const bool guild = channel == protocol::ChatChannel::kGuild && out.guild_key != 0;
  const bool whisper = channel == protocol::ChatChannel::kWhisper && !out.to.empty();
  if ((!guild && !whisper) || out.speaker == 0 || out.text.empty() ||
      out.text.size() > protocol::kMaxEventText) {
    return ChatDecodeError::kBadValue;
  }
  return ChatDecodeError::kNone;
}

}  // namespace zone::cluster
