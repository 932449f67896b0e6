// A login that other zones of the world must hear of (docs/world.md, "One character, online
// once"): a player logged in here with a ticket, so a copy of the same character playing
// (or held for a reconnect) in another zone is taken off there. Published on
// "<prefix>.logins.<from>", which every zone of the world subscribes to.
//
// Layout: u8 magic 0x4C ('L'), u8 version 1, u64 account id, u64 character id, i64 the
// login's time (milliseconds since the Unix epoch, the zone's clock). decode() checks
// every field and never reads past the buffer.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace zone::cluster {

inline constexpr std::uint8_t kLoginMagic = 0x4C;  // 'L'
inline constexpr std::uint8_t kLoginVersion = 1;

struct LoginNotice {
  std::uint64_t account = 0;    // not 0
  std::uint64_t character = 0;  // not 0
  // When the zone let the login in. Of two copies of a character, the one that came to
  // its zone later stays (ties: the zone whose name sorts last): both zones decide alike
  // from the same two numbers, whatever order the notices cross the bus in.
  std::int64_t login_ms = 0;
};

enum class LoginDecodeError : std::uint8_t {
  kNone,
  kNotLogin,
  kVersion,
  kTruncated,
  kBadValue,
  kTrailing
};

void encode(const LoginNotice& login, std::vector<std::uint8_t>& out);
LoginDecodeError decode(std::span<const std::uint8_t> bytes, LoginNotice& out);

}  // namespace zone::cluster
