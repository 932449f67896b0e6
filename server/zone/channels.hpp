// ENet channels of the zone protocol.
#pragma once

#include <cstdint>

namespace zone {

inline constexpr std::uint8_t kReliableChannel = 0;  // hello, welcome
inline constexpr std::uint8_t kSnapshotChannel = 1;  // snapshots and inputs, unreliable

}  // namespace zone
