// Quantisation shared by encoder and decoder, so both sides agree bit for bit on what a
// client knows: positions in whole centimetres, headings in 1/65536 of a turn, or in the
// coarser units an entity's precision tier names (its position_unit and heading_unit
// fields: docs/protocol.md, "Precision").
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>

#include "protocol/schema.hpp"

namespace zone::protocol {

inline constexpr double kPositionStep = 0.01;  // metres per unit on the wire

inline double dequantize_position(std::int32_t cm) {
  return cm * kPositionStep;
}

inline double dequantize_heading(std::uint16_t q) {
  return q * (2.0 * std::numbers::pi / 65536.0);
}

// Precision tiers. An entity's x and y count units of position_unit_cm centimetres and
// its heading units of 2^heading_shift / 65536 turn, both named by the entity's own
// fields, so a record that changes the tier carries the new units with the new values.
inline constexpr std::uint32_t kMaxPositionUnitCm = 256;  // 1 + the field's 8-bit value
inline constexpr std::uint32_t kMaxHeadingShift = 8;      // 1/256 turn at the coarsest

inline std::uint32_t position_unit_cm(Values v) {
  return 1u + (static_cast<std::uint32_t>(v[kPositionUnit]) & 0xFFu);
}
// Larger values than the server ever sends are read as the coarsest unit.
inline std::uint32_t heading_shift(Values v) {
  return std::min(static_cast<std::uint32_t>(v[kHeadingUnit]) & 0xFFu, kMaxHeadingShift);
}
inline std::int32_t quantize_position(double metres, std::uint32_t unit_cm = 1) {
  return static_cast<std::int32_t>(std::lround(metres / (kPositionStep * unit_cm)));
}
inline std::uint16_t quantize_heading(double radians, std::uint32_t shift = 0) {
  constexpr double kTurn = 2.0 * std::numbers::pi;
  double turns = std::fmod(radians, kTurn) / kTurn;
  if (turns < 0.0) turns += 1.0;
  const std::uint32_t units = 65536u >> shift;
  return static_cast<std::uint16_t>(static_cast<std::uint32_t>(std::lround(turns * units)) &
                                    (units - 1));
}
// An entity's x or y (axis kX or kY) in centimetres, whatever its unit.
inline double position_cm(Values v, Field axis) {
  return static_cast<double>(v[axis]) * position_unit_cm(v);
}
inline double position_metres(Values v, Field axis) {
  return position_cm(v, axis) * kPositionStep;
}
inline double heading_radians(Values v) {
  const std::uint32_t turn_units = (static_cast<std::uint32_t>(v[kHeading]) & 0xFFFFu)
                                   << heading_shift(v);
  return (turn_units & 0xFFFFu) * (2.0 * std::numbers::pi / 65536.0);
}

}  // namespace zone::protocol
