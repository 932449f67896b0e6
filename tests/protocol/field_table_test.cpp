// The replicated-field table (shared/protocol/entity_fields.hpp) and its generic codec:
// delta and absolute rules, wrap-around at each field's width, exact sizes, and that a
// new field is one more row of a table, with no other code to change.
#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "protocol/byte_io.hpp"
#include "protocol/entity_fields.hpp"

using namespace zone::protocol;

namespace {

using Bytes = std::vector<std::uint8_t>;
constexpr std::int32_t kMin32 = std::numeric_limits<std::int32_t>::min();
constexpr std::int32_t kMax32 = std::numeric_limits<std::int32_t>::max();

const FieldSpec& heading = kEntityFields[kHeading];
const FieldSpec& x_field = kEntityFields[kX];

// A table with two more rows than the production one; nothing else knows about them.
constexpr std::size_t kExtendedCount = kFieldCount + 2;
constexpr FieldTable<kExtendedCount> kExtended = [] {
  FieldTable<kExtendedCount> t{};
  for (std::size_t i = 0; i < kFieldCount; ++i) t[i] = kEntityFields[i];
  t[kFieldCount] = {"mana", DeltaRule::kAbsolute, 16, "points"};
  t[kFieldCount + 1] = {"stamina", DeltaRule::kDelta, 16, "points"};
  return t;
}();

// The widest table a 32-bit mask allows, mixing every rule and width.
constexpr FieldTable<32> kWide = [] {
  FieldTable<32> t{};
  constexpr std::uint8_t kBits[] = {32, 16, 8, 1, 31, 12};
  for (std::size_t i = 0; i < 32; ++i) {
    t[i] = {"f", i % 2 ? DeltaRule::kDelta : DeltaRule::kAbsolute, kBits[i % 6], ""};
  }
  return t;
}();

std::int32_t random_value(const FieldSpec& f, std::mt19937_64& rng) {
  std::uint32_t v = 0;
  switch (rng() % 5) {
    case 0:
      v = 0;
      break;
    case 1:
      v = static_cast<std::uint32_t>(rng() % 5);  // tiny
      break;
    case 2:
      v = 0xFFFFFFFFu - static_cast<std::uint32_t>(rng() % 5);  // near the top of the width
      break;
    default:
      v = static_cast<std::uint32_t>(rng());
      break;
  }
  return static_cast<std::int32_t>(v & fields::width_mask(f.bits));
}

template <std::size_t N>
Values<N> random_values(const FieldTable<N>& table, std::mt19937_64& rng) {
  Values<N> v{};
  for (std::size_t i = 0; i < N; ++i) v[i] = random_value(table[i], rng);
  return v;
}

// `now` differing from `base` in a random subset of fields, sometimes by a small step
// (the common case on the wire), sometimes by anything.
template <std::size_t N>
Values<N> random_change(const FieldTable<N>& table, const Values<N>& base, std::mt19937_64& rng) {
  Values<N> now = base;
  for (std::size_t i = 0; i < N; ++i) {
    if (rng() % 2) continue;
    if (rng() % 2) {
      const auto step = static_cast<std::uint32_t>(static_cast<std::int32_t>(rng() % 200) - 100);
      now[i] = static_cast<std::int32_t>((static_cast<std::uint32_t>(base[i]) + step) &
                                         fields::width_mask(table[i].bits));
    } else {
      now[i] = random_value(table[i], rng);
    }
  }
  return now;
}

template <std::size_t N>
Bytes encode_record(const FieldTable<N>& table, std::uint32_t mask, const Values<N>& base,
                    const Values<N>& now) {
  Bytes buf(8 + 5 * N);
  ByteWriter w(buf);
  fields::encode(w, table, mask, base, now);
  REQUIRE_FALSE(w.overflow());
  return {w.written().begin(), w.written().end()};
}

// Encodes, checks the size against encoded_size, reads back and applies onto `base`.
template <std::size_t N>
Values<N> round_trip(const FieldTable<N>& table, std::uint32_t mask, const Values<N>& base,
                     const Values<N>& now) {
  const Bytes b = encode_record(table, mask, base, now);
  CHECK(b.size() == fields::encoded_size(table, mask, base, now));
  ByteReader r(b);
  std::uint32_t read_mask = 0;
  std::array<std::uint32_t, N> wire{};
  REQUIRE(fields::read(r, table, read_mask, wire));
  CHECK(r.at_end());
  CHECK(read_mask == mask);
  Values<N> out = base;
  fields::apply(table, read_mask, wire, out);
  return out;
}

// What applying `mask` of `now` onto `base` must give.
template <std::size_t N>
Values<N> expected(std::uint32_t mask, const Values<N>& base, const Values<N>& now) {
  Values<N> v = base;
  for (std::size_t i = 0; i < N; ++i) {
    if (mask & (1u << i)) v[i] = now[i];
  }
  return v;
}

}  // namespace

TEST_CASE("field table: the production rows") {
  CHECK(kFieldCount == 9);
  const char* names[] = {"x",     "y",     "heading",       "move_state",  "health",
                         "party", "guild", "position_unit", "heading_unit"};
  std::set<std::string_view> seen;
  for (std::size_t i = 0; i < kFieldCount; ++i) {
    CHECK(kEntityFields[i].name == names[i]);
    CHECK(seen.insert(kEntityFields[i].name).second);
    CHECK(kEntityFields[i].bits >= 1);
    CHECK(kEntityFields[i].bits <= 32);
    CHECK_FALSE(kEntityFields[i].unit.empty());
  }
  CHECK(kEntityFields[kX].rule == DeltaRule::kDelta);
  CHECK(kEntityFields[kX].bits == 32);
  CHECK(kEntityFields[kY].rule == DeltaRule::kDelta);
  CHECK(kEntityFields[kY].bits == 32);
  CHECK(kEntityFields[kHeading].rule == DeltaRule::kDelta);
  CHECK(kEntityFields[kHeading].bits == 16);
  CHECK(kEntityFields[kMoveState].rule == DeltaRule::kAbsolute);
  CHECK(kEntityFields[kMoveState].bits == 8);
  CHECK(kEntityFields[kHealth].rule == DeltaRule::kAbsolute);
  CHECK(kEntityFields[kHealth].bits == 16);
  CHECK(kEntityFields[kParty].rule == DeltaRule::kAbsolute);
  CHECK(kEntityFields[kParty].bits == 32);
  CHECK(kEntityFields[kGuild].rule == DeltaRule::kAbsolute);
  CHECK(kEntityFields[kGuild].bits == 32);
  CHECK(kEntityFields[kPositionUnit].rule == DeltaRule::kAbsolute);
  CHECK(kEntityFields[kPositionUnit].bits == 8);
  CHECK(kEntityFields[kHeadingUnit].rule == DeltaRule::kAbsolute);
  CHECK(kEntityFields[kHeadingUnit].bits == 8);
}

TEST_CASE("field table: a 16-bit delta wraps the short way round") {
  // The codec is constexpr: the wrap rules hold at compile time too.
  static_assert(fields::delta(kEntityFields[kHeading], 65535, 1) == 2);
  static_assert(fields::apply_delta(kEntityFields[kHeading], 65535, 2) == 1);
  CHECK(fields::delta(heading, 65535, 1) == 2);
  CHECK(fields::delta(heading, 1, 65535) == -2);
  CHECK(fields::delta(heading, 65535, 0) == 1);
  CHECK(fields::delta(heading, 0, 65535) == -1);
  CHECK(fields::delta(heading, 100, 100) == 0);
  CHECK(fields::delta(heading, 0, 32767) == 32767);
  CHECK(fields::delta(heading, 0, 32768) == -32768);  // half a turn: either way, one value
  CHECK(fields::delta(heading, 32768, 0) == -32768);
  CHECK(fields::apply_delta(heading, 65535, 2) == 1);
  CHECK(fields::apply_delta(heading, 1, -2) == 65535);
  CHECK(fields::apply_delta(heading, 0, -32768) == 32768);
  // On the wire: 65535 -> 1 is zigzag(+2) = 4, one byte; as an absolute value it would
  // have taken three.
  CHECK(fields::wire_value(heading, 65535, 1) == 4);
  CHECK(fields::wire_value(heading, 1, 65535) == 3);
  FieldValues base{}, now{};
  base[kHeading] = 65535;
  now[kHeading] = 1;
  const std::uint32_t mask = fields::change_mask(base, now);
  CHECK(mask == 1u << kHeading);
  CHECK(encode_record(kEntityFields, mask, base, now) == Bytes{1u << kHeading, 4});
  CHECK(round_trip(kEntityFields, mask, base, now) == now);
  // Every pair of 16-bit values at and around the wrap, and a random sample.
  std::vector<std::int32_t> edge;
  for (std::int32_t v = 0; v < 4; ++v) edge.push_back(v);
  for (std::int32_t v = 32764; v < 32772; ++v) edge.push_back(v);
  for (std::int32_t v = 65532; v < 65536; ++v) edge.push_back(v);
  std::mt19937_64 rng(16);
  for (int i = 0; i < 200; ++i) edge.push_back(static_cast<std::int32_t>(rng() % 65536));
  for (const std::int32_t a : edge) {
    for (const std::int32_t b : edge) {
      const std::int32_t d = fields::delta(heading, a, b);
      REQUIRE(d >= -32768);
      REQUIRE(d <= 32767);
      REQUIRE(fields::apply_delta(heading, a, d) == b);
      REQUIRE(fields::wire_value(heading, a, b) <= 0xFFFFu);  // fits the field's 16 bits
      base[kHeading] = a;
      now[kHeading] = b;
      REQUIRE(round_trip(kEntityFields, fields::change_mask(base, now), base, now) == now);
    }
  }
}

TEST_CASE("field table: 32-bit deltas at the extremes") {
  static_assert(fields::delta(kEntityFields[kX], kMax32, kMin32) == 1);
  CHECK(fields::delta(x_field, kMax32, kMin32) == 1);
  CHECK(fields::delta(x_field, kMin32, kMax32) == -1);
  CHECK(fields::delta(x_field, 0, kMin32) == kMin32);
  CHECK(fields::delta(x_field, kMin32, 0) == kMin32);
  CHECK(fields::delta(x_field, -1, kMax32) == kMin32);
  CHECK(fields::delta(x_field, 100, -100) == -200);
  CHECK(fields::apply_delta(x_field, kMax32, 1) == kMin32);
  CHECK(fields::apply_delta(x_field, kMin32, -1) == kMax32);
  CHECK(fields::wire_value(x_field, kMax32, kMin32) == 2);  // one byte across the wrap
  CHECK(fields::wire_value(x_field, 0, kMin32) == 0xFFFFFFFFu);
  const std::int32_t extremes[] = {kMin32, kMin32 + 1, -1, 0, 1, kMax32 - 1, kMax32};
  for (const std::int32_t a : extremes) {
    for (const std::int32_t b : extremes) {
      FieldValues base{}, now{};
      base[kX] = a;
      now[kX] = b;
      base[kY] = b;
      now[kY] = a;
      CHECK(fields::apply_delta(x_field, a, fields::delta(x_field, a, b)) == b);
      CHECK(round_trip(kEntityFields, fields::change_mask(base, now), base, now) == now);
      // Whatever the jump, at most a 5-byte varint per coordinate.
      CHECK(fields::encoded_size(kEntityFields, fields::change_mask(base, now), base, now) <=
            1 + 5 + 5);
    }
  }
  // Small moves either way take one byte each.
  FieldValues base{}, now{};
  base[kX] = 1'000'000;
  base[kY] = -1'000'000;
  now[kX] = base[kX] + 35;
  now[kY] = base[kY] - 40;
  CHECK(fields::encoded_size(kEntityFields, fields::change_mask(base, now), base, now) == 3);
}

TEST_CASE("field table: absolute fields carry the value itself, whatever the baseline") {
  const FieldSpec& health = kEntityFields[kHealth];
  const FieldSpec& move_state = kEntityFields[kMoveState];
  CHECK(fields::wire_value(health, 12345, 7) == 7);
  CHECK(fields::wire_value(health, 0, 65535) == 65535);
  CHECK(fields::wire_value(move_state, 1, 0) == 0);
  CHECK(fields::wire_value(move_state, 0, 1) == 1);
  FieldValues base{}, now{};
  for (const std::int32_t b : {0, 1, 100, 65535}) {
    for (const std::int32_t n : {0, 1, 100, 65535}) {
      base[kHealth] = b;
      now[kHealth] = n;
      base[kMoveState] = b & 1;
      now[kMoveState] = n & 1;
      const std::uint32_t mask = fields::change_mask(base, now);
      CHECK(round_trip(kEntityFields, mask, base, now) == now);
      // The bytes do not depend on the baseline's value of an absolute field.
      FieldValues other = base;
      other[kHealth] = b ^ 0x5555;
      other[kMoveState] = (b & 1) ^ 1;
      const std::uint32_t both = (1u << kHealth) | (1u << kMoveState);
      CHECK(encode_record(kEntityFields, both, base, now) ==
            encode_record(kEntityFields, both, other, now));
    }
  }
}

TEST_CASE("field table: change_mask has one bit per differing field") {
  FieldValues a{}, b{};
  CHECK(fields::change_mask(a, b) == 0);
  for (std::size_t i = 0; i < kFieldCount; ++i) {
    b = a;
    b[i] = 1;
    CHECK(fields::change_mask(a, b) == 1u << i);
  }
  b = {1, 1, 1, 1, 1};
  CHECK(fields::change_mask(a, b) == 0x1F);
  // An empty record: just the zero mask.
  CHECK(fields::encoded_size(kEntityFields, 0, a, b) == 1);
  CHECK(encode_record(kEntityFields, 0, a, b) == Bytes{0});
}

TEST_CASE("field table: encoded_size is exactly what encode writes, and read/apply invert it") {
  std::mt19937_64 rng(42);
  for (int i = 0; i < 20000; ++i) {
    const FieldValues base = random_values(kEntityFields, rng);
    const FieldValues now = random_change(kEntityFields, base, rng);
    // The mask of what changed, and sometimes any subset of fields (unchanged fields may
    // be sent; they encode as a zero delta or the same absolute value).
    const std::uint32_t mask =
        rng() % 4 ? fields::change_mask(base, now) : static_cast<std::uint32_t>(rng() % 32);
    const FieldValues out = round_trip(kEntityFields, mask, base, now);
    REQUIRE(out == expected(mask, base, now));
  }
}

TEST_CASE("field table: read refuses what no table row allows") {
  auto read = [](const Bytes& b) {
    ByteReader r(b);
    std::uint32_t mask = 0;
    std::array<std::uint32_t, kFieldCount> wire{};
    return fields::read(r, kEntityFields, mask, wire);
  };
  CHECK(read({0}));                                       // mask 0: nothing
  CHECK(read({1u << kHeading, 0xFF, 0xFF, 0x03}));        // 65535
  CHECK_FALSE(read({1u << kHeading, 0x80, 0x80, 0x04}));  // 65536: wider than 16 bits
  CHECK(read({1u << kMoveState, 0xFF, 0x01}));            // 255
  CHECK_FALSE(read({1u << kMoveState, 0x80, 0x02}));      // 256
  CHECK(read({0x80, 0x01, 0}));                           // row 7, position_unit 0
  CHECK(read({0x80, 0x02, 0xFF, 0x01}));                  // row 8, heading_unit 255
  CHECK_FALSE(read({0x80, 0x04, 0}));                     // no row 9
  CHECK_FALSE(read({0x80, 0x80, 0x80, 0x80, 0x08}));      // bit 31
  CHECK_FALSE(read({1u << kX}));                          // value missing
  CHECK_FALSE(read({}));                                  // mask missing
  CHECK(read({1u << kX, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F}));  // any 32 bits
  CHECK_FALSE(read({1u << kX, 0xFF, 0xFF, 0xFF, 0xFF, 0x1F}));
}

TEST_CASE("field table: adding a field is one row") {
  // The extended table's first rows are the production ones.
  for (std::size_t i = 0; i < kFieldCount; ++i) CHECK(kExtended[i].name == kEntityFields[i].name);
  const FieldSpec& stamina = kExtended[kFieldCount + 1];
  CHECK(fields::delta(stamina, 65535, 1) == 2);

  std::mt19937_64 rng(7);
  int with_new_fields = 0;
  for (int i = 0; i < 20000; ++i) {
    const Values<kExtendedCount> base = random_values(kExtended, rng);
    const Values<kExtendedCount> now = random_change(kExtended, base, rng);
    const std::uint32_t mask = fields::change_mask(base, now);
    if (mask >> kFieldCount) ++with_new_fields;
    REQUIRE(round_trip(kExtended, mask, base, now) == now);
    // A record leaving the new fields alone is byte for byte the production one, so
    // peers that do not know them yet still read it.
    const std::uint32_t old_mask = mask & ((1u << kFieldCount) - 1);
    FieldValues old_base{}, old_now{};
    for (std::size_t k = 0; k < kFieldCount; ++k) {
      old_base[k] = base[k];
      old_now[k] = now[k];
    }
    REQUIRE(encode_record(kExtended, old_mask, base, now) ==
            encode_record(kEntityFields, old_mask, old_base, old_now));
  }
  CHECK(with_new_fields > 10000);
  // Mana: absolute 16 bits; stamina: a delta wrapping at 16 bits.
  Values<kExtendedCount> base{}, now{};
  base[kFieldCount] = 500;
  now[kFieldCount] = 20;
  base[kFieldCount + 1] = 65535;
  now[kFieldCount + 1] = 1;
  const std::uint32_t mask = fields::change_mask(base, now);
  CHECK(mask == (3u << kFieldCount));
  // Mask bits 9 and 10: a two-byte varint.
  CHECK(encode_record(kExtended, mask, base, now) == Bytes{0x80, 0x0C, 20, 4});
  CHECK(round_trip(kExtended, mask, base, now) == now);
  // A peer on the old table refuses a record that carries a field it does not know
  // (instead of misreading the rest of the packet)...
  {
    const Bytes b = encode_record(kExtended, mask, base, now);
    ByteReader r(b);
    std::uint32_t m = 0;
    std::array<std::uint32_t, kFieldCount> wire{};
    CHECK_FALSE(fields::read(r, kEntityFields, m, wire));
  }
  // ... and the new table checks the new fields' widths like any other.
  {
    const Bytes wide = {0x80, 0x01, 0x80, 0x80, 0x04};  // mask 1 << 7 (mana): 65536
    ByteReader r(wide);
    std::uint32_t m = 0;
    std::array<std::uint32_t, kExtendedCount> wire{};
    CHECK_FALSE(fields::read(r, kExtended, m, wire));
  }
}

TEST_CASE("field table: a table of 32 fields uses every mask bit") {
  std::mt19937_64 rng(32);
  for (int i = 0; i < 3000; ++i) {
    const Values<32> base = random_values(kWide, rng);
    const Values<32> now = random_change(kWide, base, rng);
    const std::uint32_t mask = fields::change_mask(base, now);
    REQUIRE(round_trip(kWide, mask, base, now) == now);
    REQUIRE(round_trip(kWide, 0xFFFFFFFFu, base, now) == now);
  }
  Values<32> base{}, now{};
  now[31] = 1;
  CHECK(fields::change_mask(base, now) == 0x80000000u);
  CHECK(round_trip(kWide, 0x80000000u, base, now) == now);
}
