// The replicated fields of an entity, as one table that every part of replication reads:
// the server's diff (which fields changed), its cost model (how many bytes a record
// takes), its writer, and the client's reader. Adding a replicated field is a row here
// plus the line in the server that fills it (server/replication/entity_fields.cpp).
//
// On the wire a record is a varint mask of the fields present (bit i = row i) followed
// by each present field's value in row order, as a varint:
//   kDelta:    the change from the baseline value, wrapped to the field's width and
//              zigzag-encoded (small moves in either direction take one or two bytes);
//   kAbsolute: the value itself (unsigned, below 2^bits).
// Values are already quantised (centimetres, 1/65536 turn, ...), so both sides agree bit
// for bit on what the client holds. The units of x, y and heading are themselves fields
// (position_unit, heading_unit: precision tiers, shared/protocol/quantize.hpp), 0 by
// default, so a precise entity pays nothing for them.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "protocol/byte_io.hpp"

namespace zone::protocol {

enum class DeltaRule : std::uint8_t { kDelta, kAbsolute };

struct FieldSpec {
  std::string_view name;
  DeltaRule rule;
  std::uint8_t bits;  // width of the value; deltas wrap at this width
  std::string_view unit;
};

inline constexpr std::array<FieldSpec, 9> kEntityFields{{
    {"x", DeltaRule::kDelta, 32, "position_unit (centimetre by default), world coordinates"},
    {"y", DeltaRule::kDelta, 32, "position_unit (centimetre by default), world coordinates"},
    {"heading", DeltaRule::kDelta, 16, "heading_unit (1/65536 turn by default), from +x"},
    {"move_state", DeltaRule::kAbsolute, 8, "0 idle, 1 walking"},
    {"health", DeltaRule::kAbsolute, 16, "hit points"},
    {"party", DeltaRule::kAbsolute, 32, "party id, 0 none (PartyStatus.party)"},
    {"guild", DeltaRule::kAbsolute, 32, "guild id, 0 none (GuildStatus.guild)"},
    {"position_unit", DeltaRule::kAbsolute, 8, "x and y are in units of (1 + value) centimetres"},
    {"heading_unit", DeltaRule::kAbsolute, 8,
     "heading is in units of 2^value / 65536 turn (value <= 8)"},
}};
inline constexpr std::size_t kFieldCount = kEntityFields.size();
// Row indices of kEntityFields, for code that needs one field by name.
enum Field : std::size_t {
  kX = 0,
  kY = 1,
  kHeading = 2,
  kMoveState = 3,
  kHealth = 4,
  kParty = 5,
  kGuild = 6,
  kPositionUnit = 7,
  kHeadingUnit = 8
};

template <std::size_t N>
using Values = std::array<std::int32_t, N>;
using FieldValues = Values<kFieldCount>;

template <std::size_t N>
using FieldTable = std::array<FieldSpec, N>;

namespace fields {

constexpr std::uint32_t width_mask(std::uint8_t bits) {
  return bits >= 32 ? 0xFFFFFFFFu : (1u << bits) - 1u;
}

// The change from base to now, wrapped to the field's width and sign-extended.
constexpr std::int32_t delta(const FieldSpec& f, std::int32_t base, std::int32_t now) {
  const std::uint32_t d =
      (static_cast<std::uint32_t>(now) - static_cast<std::uint32_t>(base)) & width_mask(f.bits);
  if (f.bits >= 32) return static_cast<std::int32_t>(d);
  const std::uint32_t sign = 1u << (f.bits - 1);
  return static_cast<std::int32_t>(d ^ sign) - static_cast<std::int32_t>(sign);
}

constexpr std::int32_t apply_delta(const FieldSpec& f, std::int32_t base, std::int32_t d) {
  const std::uint32_t v = static_cast<std::uint32_t>(base) + static_cast<std::uint32_t>(d);
  if (f.bits >= 32) return static_cast<std::int32_t>(v);
  return static_cast<std::int32_t>(v & width_mask(f.bits));
}

constexpr std::uint32_t wire_value(const FieldSpec& f, std::int32_t base, std::int32_t now) {
  return f.rule == DeltaRule::kDelta ? zigzag(delta(f, base, now))
                                     : static_cast<std::uint32_t>(now) & width_mask(f.bits);
}

// Bit i set when field i differs.
template <std::size_t N>
constexpr std::uint32_t change_mask(const Values<N>& base, const Values<N>& now) {
  std::uint32_t mask = 0;
  for (std::size_t i = 0; i < N; ++i) {
    if (base[i] != now[i]) mask |= 1u << i;
  }
  return mask;
}

// Exact bytes of a record's mask and values.
template <std::size_t N>
constexpr std::uint32_t encoded_size(const FieldTable<N>& table, std::uint32_t mask,
                                     const Values<N>& base, const Values<N>& now) {
  std::uint32_t size = varint_size(mask);
  for (std::size_t i = 0; i < N; ++i) {
    if (mask & (1u << i)) size += varint_size(wire_value(table[i], base[i], now[i]));
  }
  return size;
}

template <std::size_t N>
void encode(ByteWriter& w, const FieldTable<N>& table, std::uint32_t mask, const Values<N>& base,
            const Values<N>& now) {
  w.varint(mask);
  for (std::size_t i = 0; i < N; ++i) {
    if (mask & (1u << i)) w.varint(wire_value(table[i], base[i], now[i]));
  }
}

// Reads a record's mask and raw wire values, checking its structure only: no bits beyond
// the table, no value wider than its field, nothing truncated. A mask of 0 is returned as
// such (the caller gives it meaning). The baseline is not needed yet: apply() adds it.
template <std::size_t N>
bool read(ByteReader& r, const FieldTable<N>& table, std::uint32_t& mask,
          std::array<std::uint32_t, N>& wire) {
  static_assert(N <= 32, "a record's mask has 32 bits");
  mask = r.varint();
  if (r.failed()) return false;
  if constexpr (N < 32) {
    if ((mask >> N) != 0) return false;
  }
  for (std::size_t i = 0; i < N; ++i) {
    if (!(mask & (1u << i))) continue;
    wire[i] = r.varint();
    if (r.failed()) return false;
    // Deltas are zigzag-encoded, so a field of b bits never needs more than b bits.
    if (table[i].bits < 32 && (wire[i] >> table[i].bits) != 0) return false;
  }
  return true;
}

// Turns baseline values into the record's values.
template <std::size_t N>
void apply(const FieldTable<N>& table, std::uint32_t mask, const std::array<std::uint32_t, N>& wire,
           Values<N>& values) {
  for (std::size_t i = 0; i < N; ++i) {
    if (!(mask & (1u << i))) continue;
    values[i] = table[i].rule == DeltaRule::kDelta
                    ? apply_delta(table[i], values[i], unzigzag(wire[i]))
                    : static_cast<std::int32_t>(wire[i]);
  }
}

}  // namespace fields
}  // namespace zone::protocol
