// A record: an entity's fields on the wire, as the schema (protocol/schema.hpp) lays them
// out. Every part of replication goes through these functions: the server's diff (which
// fields changed), its cost model (how many bytes a record takes), its writer, and the
// client's reader.
//
// On the wire a record is a varint mask of the fields present (bit i = row i of the
// schema) followed by each present field's value in row order, as a varint:
//   kDelta:    the change from the baseline value, wrapped to the field's width and
//              zigzag-encoded (small moves in either direction take one or two bytes);
//   kAbsolute: the value itself, its low `bits` bits (a signed field's two's complement).
// Values are already quantised (centimetres, 1/65536 turn, hit points ...), so both sides
// agree bit for bit on what the client holds.
#pragma once

#include <bit>
#include <cstdint>
#include <span>

#include "protocol/byte_io.hpp"
#include "protocol/schema.hpp"

namespace zone::protocol::fields {

constexpr std::uint32_t width_mask(std::uint8_t bits) {
  return bits >= 32 ? 0xFFFFFFFFu : (1u << bits) - 1u;
}

// v's low `bits` bits read as a two's complement number.
constexpr std::int32_t sign_extend(std::uint8_t bits, std::uint32_t v) {
  if (bits >= 32) return static_cast<std::int32_t>(v);
  const std::uint32_t sign = 1u << (bits - 1);
  return static_cast<std::int32_t>((v & width_mask(bits)) ^ sign) - static_cast<std::int32_t>(sign);
}

// A value as the field holds it: wrapped to its width, sign-extended when signed.
constexpr std::int32_t normalize(const FieldSpec& f, std::uint32_t v) {
  return f.is_signed ? sign_extend(f.bits, v) : static_cast<std::int32_t>(v & width_mask(f.bits));
}

// The change from base to now, wrapped to a width of `bits` and sign-extended.
constexpr std::int32_t delta(std::uint8_t bits, std::int32_t base, std::int32_t now) {
  return sign_extend(bits, static_cast<std::uint32_t>(now) - static_cast<std::uint32_t>(base));
}
constexpr std::int32_t delta(const FieldSpec& f, std::int32_t base, std::int32_t now) {
  return delta(f.bits, base, now);
}

constexpr std::int32_t apply_delta(const FieldSpec& f, std::int32_t base, std::int32_t d) {
  return normalize(f, static_cast<std::uint32_t>(base) + static_cast<std::uint32_t>(d));
}

// What goes on the wire for a field of this rule and width.
constexpr std::uint32_t wire_value(bool is_delta, std::uint8_t bits, std::int32_t base,
                                   std::int32_t now) {
  return is_delta ? zigzag(delta(bits, base, now))
                  : static_cast<std::uint32_t>(now) & width_mask(bits);
}
constexpr std::uint32_t wire_value(const FieldSpec& f, std::int32_t base, std::int32_t now) {
  return wire_value(f.rule == DeltaRule::kDelta, f.bits, base, now);
}
// The same by row, from the schema's compact rule and width arrays (the codec's loops).
inline std::uint32_t wire_value(const Schema& schema, std::size_t row, std::int32_t base,
                                std::int32_t now) {
  return wire_value(((schema.delta_mask() >> row) & 1) != 0, schema.bits(row), base, now);
}

// Bit i set when field i differs.
inline std::uint64_t change_mask(Values base, Values now) {
  // Branch-free: a frame compares every row of every entity in view each snapshot.
  std::uint64_t mask = 0;
  const std::int32_t* b = base.data();
  const std::int32_t* n = now.data();
  for (std::size_t i = 0; i < now.size(); ++i) {
    mask |= static_cast<std::uint64_t>(b[i] != n[i]) << i;
  }
  return mask;
}
// Bit i set when field i is not zero (a spawn's record, against all zeros).
inline std::uint64_t nonzero_mask(Values now) {
  std::uint64_t mask = 0;
  for (std::size_t i = 0; i < now.size(); ++i) {
    if (now[i] != 0) mask |= 1ull << i;
  }
  return mask;
}

// Calls fn(row) for every set bit of mask, in row order.
template <typename Fn>
inline void for_each_row(std::uint64_t mask, Fn&& fn) {
  while (mask != 0) {
    fn(static_cast<std::size_t>(std::countr_zero(mask)));
    mask &= mask - 1;
  }
}

// Exact bytes of a record's mask and values (base may be empty for all zeros).
inline std::uint32_t encoded_size(const Schema& schema, std::uint64_t mask, Values base,
                                  Values now) {
  std::uint32_t size = varint_size(mask);
  if (base.empty()) {
    for_each_row(mask,
                 [&](std::size_t i) { size += varint_size(wire_value(schema, i, 0, now[i])); });
  } else {
    for_each_row(
        mask, [&](std::size_t i) { size += varint_size(wire_value(schema, i, base[i], now[i])); });
  }
  return size;
}

inline void encode(ByteWriter& w, const Schema& schema, std::uint64_t mask, Values base,
                   Values now) {
  w.varint(mask);
  if (base.empty()) {
    for_each_row(mask, [&](std::size_t i) { w.varint(wire_value(schema, i, 0, now[i])); });
  } else {
    for_each_row(mask, [&](std::size_t i) { w.varint(wire_value(schema, i, base[i], now[i])); });
  }
}

// Reads a record's mask and its raw wire values (appended to `wire` in row order),
// checking its structure only: no bits beyond the schema, no value wider than its field,
// nothing truncated. A mask of 0 is returned as such (the caller gives it meaning). The
// baseline is not needed yet: apply() adds it.
template <typename WireVector>
bool read(ByteReader& r, const Schema& schema, std::uint64_t& mask, WireVector& wire) {
  mask = r.varint64();
  if (r.failed()) return false;
  if (schema.size() < 64 && (mask >> schema.size()) != 0) return false;
  bool ok = true;
  for_each_row(mask, [&](std::size_t i) {
    if (!ok) return;
    const std::uint32_t v = r.varint();
    // Deltas are zigzag-encoded, so a field of b bits never needs more than b bits.
    const std::uint8_t bits = schema.field(i).bits;
    if (r.failed() || (bits < 32 && (v >> bits) != 0)) {
      ok = false;
      return;
    }
    wire.push_back(v);
  });
  return ok;
}

// Turns baseline values into the record's values; `wire` holds the record's values in
// row order (as read() appended them).
inline void apply(const Schema& schema, std::uint64_t mask, const std::uint32_t* wire,
                  MutableValues values) {
  for_each_row(mask, [&](std::size_t i) {
    const FieldSpec& f = schema.field(i);
    const std::uint32_t v = *wire++;
    values[i] =
        f.rule == DeltaRule::kDelta ? apply_delta(f, values[i], unzigzag(v)) : normalize(f, v);
  });
}

}  // namespace zone::protocol::fields
