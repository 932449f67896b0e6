// Protocol limits both sides rely on. Header-only and dependency-free, so the config
// validation can use them too. (What ENet sends in one datagram is the transport's:
// server/net/enet_limits.hpp.)
#pragma once

#include <cstdint>

namespace zone::protocol {

// Clients keep at least this many recent complete frames as possible delta baselines,
// so a server must never encode against an older one: its frame history is capped here.
inline constexpr std::uint32_t kClientFrameHistory = 64;

}  // namespace zone::protocol
