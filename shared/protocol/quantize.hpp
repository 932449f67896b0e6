// Quantisation shared by encoder and decoder, so both sides agree bit for bit on what a
// client knows: positions in whole centimetres, headings in 1/65536 of a turn.
#pragma once

#include <cmath>
#include <cstdint>
#include <numbers>

namespace zone::protocol {

inline constexpr double kPositionStep = 0.01;  // metres per unit on the wire

inline std::int32_t quantize_position(double metres) {
  return static_cast<std::int32_t>(std::lround(metres / kPositionStep));
}
inline double dequantize_position(std::int32_t cm) {
  return cm * kPositionStep;
}

inline std::uint16_t quantize_heading(double radians) {
  constexpr double kTurn = 2.0 * std::numbers::pi;
  double turns = std::fmod(radians, kTurn) / kTurn;
  if (turns < 0.0) turns += 1.0;
  return static_cast<std::uint16_t>(std::lround(turns * 65536.0) & 0xFFFF);
}
inline double dequantize_heading(std::uint16_t q) {
  return q * (2.0 * std::numbers::pi / 65536.0);
}

}  // namespace zone::protocol
