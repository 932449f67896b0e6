// The schema's field rows (shared/protocol/schema.hpp) and the generic record codec
// (shared/protocol/record.hpp): delta and absolute rules, wrap-around at each field's
// width, exact sizes, and that a new field is one more row of the schema, with no other
// code to change.
#include <doctest/doctest.h>

#include <bit>
#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "../replication/wire.hpp"
#include "protocol/byte_io.hpp"
#include "protocol/record.hpp"
#include "protocol/schema.hpp"

using namespace zone::protocol;

namespace {

using Bytes = std::vector<std::uint8_t>;
using Row = std::vector<std::int32_t>;
constexpr std::int32_t kMin32 = std::numeric_limits<std::int32_t>::min();
constexpr std::int32_t kMax32 = std::numeric_limits<std::int32_t>::max();

// The engine's rows alone (every schema starts with them).
const Schema kEngine;
const FieldSpec& heading = kEngine.field(kHeading);
const FieldSpec& x_field = kEngine.field(kX);
// The zone's built-in game: the engine's rows, health (row 8) and max_health (row 9).
const Schema& kGame = zone::test::test_schema();
constexpr std::size_t kHealth = zone::test::kHealth;

FieldSpec spec(std::string name, DeltaRule rule, std::uint8_t bits, bool is_signed = false) {
  FieldSpec f;
  f.name = std::move(name);
  f.rule = rule;
  f.bits = bits;
  f.is_signed = is_signed;
  return f;
}

// A schema with two more rows than the engine's; nothing else knows about them.
Schema extended_schema() {
  Schema s;
  REQUIRE_FALSE(s.add_field(spec("mana", DeltaRule::kAbsolute, 16)).has_value());
  REQUIRE_FALSE(s.add_field(spec("stamina", DeltaRule::kDelta, 16)).has_value());
  return s;
}

// The widest schema a 64-bit mask allows: the engine's rows, then rows mixing every rule,
// width and signedness.
Schema wide_schema() {
  Schema s;
  constexpr std::uint8_t kBits[] = {32, 16, 8, 1, 31, 12, 5};
  for (std::size_t i = kEngineFieldCount; i < kMaxFields; ++i) {
    const bool is_signed = i % 3 == 0 && kBits[i % 7] > 1;
    REQUIRE_FALSE(
        s.add_field(spec("f" + std::to_string(i), i % 2 ? DeltaRule::kDelta : DeltaRule::kAbsolute,
                         kBits[i % 7], is_signed))
            .has_value());
  }
  REQUIRE(s.size() == 64);
  return s;
}

// A value as the field holds it (wrapped to its width, sign-extended when signed).
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
  return fields::normalize(f, v);
}

Row random_values(const Schema& s, std::mt19937_64& rng) {
  Row v(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) v[i] = random_value(s.field(i), rng);
  return v;
}

// `now` differing from `base` in a random subset of fields, sometimes by a small step
// (the common case on the wire), sometimes by anything.
Row random_change(const Schema& s, const Row& base, std::mt19937_64& rng) {
  Row now = base;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (rng() % 2) continue;
    if (rng() % 2) {
      const auto step = static_cast<std::uint32_t>(static_cast<std::int32_t>(rng() % 200) - 100);
      now[i] = fields::normalize(s.field(i), static_cast<std::uint32_t>(base[i]) + step);
    } else {
      now[i] = random_value(s.field(i), rng);
    }
  }
  return now;
}

Bytes encode_record(const Schema& s, std::uint64_t mask, const Row& base, const Row& now) {
  Bytes buf(16 + 5 * s.size());
  ByteWriter w(buf);
  fields::encode(w, s, mask, base, now);
  REQUIRE_FALSE(w.overflow());
  return {w.written().begin(), w.written().end()};
}

// Encodes, checks the size against encoded_size, reads back and applies onto `base`.
Row round_trip(const Schema& s, std::uint64_t mask, const Row& base, const Row& now) {
  const Bytes b = encode_record(s, mask, base, now);
  CHECK(b.size() == fields::encoded_size(s, mask, base, now));
  ByteReader r(b);
  std::uint64_t read_mask = 0;
  std::vector<std::uint32_t> wire;
  REQUIRE(fields::read(r, s, read_mask, wire));
  CHECK(r.at_end());
  CHECK(read_mask == mask);
  CHECK(wire.size() == static_cast<std::size_t>(std::popcount(mask)));
  Row out = base;
  fields::apply(s, read_mask, wire.data(), out);
  return out;
}

// What applying `mask` of `now` onto `base` must give.
Row expected(std::uint64_t mask, const Row& base, const Row& now) {
  Row v = base;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (mask & (1ull << i)) v[i] = now[i];
  }
  return v;
}

}  // namespace

TEST_CASE("field table: the engine's rows") {
  CHECK(kEngine.size() == kEngineFieldCount);
  CHECK(kEngineFieldCount == 8);
  const char* names[] = {"x",     "y",    "heading", "move_state", "position_unit", "heading_unit",
                         "party", "guild"};
  std::set<std::string_view> seen;
  for (std::size_t i = 0; i < kEngine.size(); ++i) {
    CHECK(kEngine.field(i).name == names[i]);
    CHECK(seen.insert(kEngine.field(i).name).second);
    CHECK(kEngine.field(i).bits >= 1);
    CHECK(kEngine.field(i).bits <= 32);
    CHECK_FALSE(kEngine.field(i).is_signed);
    CHECK(kEngine.field(i).audience == Audience::kEveryone);
    CHECK_FALSE(kEngine.field(i).unit.empty());
    CHECK(kEngine.find_field(names[i]) == i);
  }
  CHECK(kEngine.field(kX).rule == DeltaRule::kDelta);
  CHECK(kEngine.field(kX).bits == 32);
  CHECK(kEngine.field(kY).rule == DeltaRule::kDelta);
  CHECK(kEngine.field(kY).bits == 32);
  CHECK(kEngine.field(kHeading).rule == DeltaRule::kDelta);
  CHECK(kEngine.field(kHeading).bits == 16);
  CHECK(kEngine.field(kMoveState).rule == DeltaRule::kAbsolute);
  CHECK(kEngine.field(kMoveState).bits == 8);
  CHECK(kEngine.field(kParty).rule == DeltaRule::kAbsolute);
  CHECK(kEngine.field(kParty).bits == 32);
  CHECK(kEngine.field(kGuild).rule == DeltaRule::kAbsolute);
  CHECK(kEngine.field(kGuild).bits == 32);
  CHECK(kEngine.field(kPositionUnit).rule == DeltaRule::kAbsolute);
  CHECK(kEngine.field(kPositionUnit).bits == 8);
  CHECK(kEngine.field(kHeadingUnit).rule == DeltaRule::kAbsolute);
  CHECK(kEngine.field(kHeadingUnit).bits == 8);
  CHECK_FALSE(kEngine.find_field("health").has_value());
  // Every row is everyone's, none immediate.
  CHECK(kEngine.public_mask() == kEngine.all_mask());
  CHECK(kEngine.party_mask() == kEngine.all_mask());
  CHECK(kEngine.immediate_mask() == 0);
  // The two types every zone has.
  REQUIRE(kEngine.types().size() == 2);
  CHECK(kEngine.types()[0].name == "player");
  CHECK(kEngine.types()[0].kind == EntityKind::kPlayer);
  CHECK(kEngine.types()[1].name == "npc");
  CHECK(kEngine.types()[1].kind == EntityKind::kNpc);
  // The built-in game's health: absolute, 16 bits, immediate.
  REQUIRE(kGame.find_field("health") == kHealth);
  CHECK(kGame.field(kHealth).rule == DeltaRule::kAbsolute);
  CHECK(kGame.field(kHealth).bits == 16);
  CHECK(kGame.field(kHealth).update == UpdateTier::kImmediate);
  CHECK(kGame.immediate_mask() == 1ull << kHealth);
}

TEST_CASE("field table: a 16-bit delta wraps the short way round") {
  // The codec is constexpr: the wrap rules hold at compile time too.
  static_assert([] {
    FieldSpec f;
    f.rule = DeltaRule::kDelta;
    f.bits = 16;
    return fields::delta(f, 65535, 1) == 2 && fields::apply_delta(f, 65535, 2) == 1;
  }());
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
  Row base(kEngine.size()), now(kEngine.size());
  base[kHeading] = 65535;
  now[kHeading] = 1;
  const std::uint64_t mask = fields::change_mask(base, now);
  CHECK(mask == 1u << kHeading);
  CHECK(encode_record(kEngine, mask, base, now) == Bytes{1u << kHeading, 4});
  CHECK(round_trip(kEngine, mask, base, now) == now);
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
      REQUIRE(round_trip(kEngine, fields::change_mask(base, now), base, now) == now);
    }
  }
}

TEST_CASE("field table: 32-bit deltas at the extremes") {
  static_assert([] {
    FieldSpec f;
    f.rule = DeltaRule::kDelta;
    f.bits = 32;
    return fields::delta(f, kMax32, kMin32) == 1;
  }());
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
      Row base(kEngine.size()), now(kEngine.size());
      base[kX] = a;
      now[kX] = b;
      base[kY] = b;
      now[kY] = a;
      CHECK(fields::apply_delta(x_field, a, fields::delta(x_field, a, b)) == b);
      CHECK(round_trip(kEngine, fields::change_mask(base, now), base, now) == now);
      // Whatever the jump, at most a 5-byte varint per coordinate.
      CHECK(fields::encoded_size(kEngine, fields::change_mask(base, now), base, now) <= 1 + 5 + 5);
    }
  }
  // Small moves either way take one byte each.
  Row base(kEngine.size()), now(kEngine.size());
  base[kX] = 1'000'000;
  base[kY] = -1'000'000;
  now[kX] = base[kX] + 35;
  now[kY] = base[kY] - 40;
  CHECK(fields::encoded_size(kEngine, fields::change_mask(base, now), base, now) == 3);
}

TEST_CASE("field table: absolute fields carry the value itself, whatever the baseline") {
  const FieldSpec& health = kGame.field(kHealth);
  const FieldSpec& move_state = kGame.field(kMoveState);
  CHECK(fields::wire_value(health, 12345, 7) == 7);
  CHECK(fields::wire_value(health, 0, 65535) == 65535);
  CHECK(fields::wire_value(move_state, 1, 0) == 0);
  CHECK(fields::wire_value(move_state, 0, 1) == 1);
  Row base(kGame.size()), now(kGame.size());
  for (const std::int32_t b : {0, 1, 100, 65535}) {
    for (const std::int32_t n : {0, 1, 100, 65535}) {
      base[kHealth] = b;
      now[kHealth] = n;
      base[kMoveState] = b & 1;
      now[kMoveState] = n & 1;
      const std::uint64_t mask = fields::change_mask(base, now);
      CHECK(round_trip(kGame, mask, base, now) == now);
      // The bytes do not depend on the baseline's value of an absolute field.
      Row other = base;
      other[kHealth] = b ^ 0x5555;
      other[kMoveState] = (b & 1) ^ 1;
      const std::uint64_t both = (1ull << kHealth) | (1ull << kMoveState);
      CHECK(encode_record(kGame, both, base, now) == encode_record(kGame, both, other, now));
    }
  }
}

TEST_CASE("field table: change_mask has one bit per differing field") {
  Row a(kGame.size()), b(kGame.size());
  CHECK(fields::change_mask(a, b) == 0);
  for (std::size_t i = 0; i < kGame.size(); ++i) {
    b = a;
    b[i] = 1;
    CHECK(fields::change_mask(a, b) == 1ull << i);
    CHECK(fields::nonzero_mask(b) == 1ull << i);
  }
  b = Row{1, 1, 1, 1, 1, 0, 0, 0, 0, 0};
  CHECK(fields::change_mask(a, b) == 0x1F);
  CHECK(fields::nonzero_mask(b) == 0x1F);
  // An empty record: just the zero mask.
  CHECK(fields::encoded_size(kGame, 0, a, b) == 1);
  CHECK(encode_record(kGame, 0, a, b) == Bytes{0});
  // An empty base is all zeros.
  CHECK(fields::encoded_size(kGame, 0x1F, {}, b) == fields::encoded_size(kGame, 0x1F, a, b));
}

TEST_CASE("field table: encoded_size is exactly what encode writes, and read/apply invert it") {
  std::mt19937_64 rng(42);
  for (int i = 0; i < 20000; ++i) {
    const Row base = random_values(kGame, rng);
    const Row now = random_change(kGame, base, rng);
    // The mask of what changed, and sometimes any subset of fields (unchanged fields may
    // be sent; they encode as a zero delta or the same absolute value).
    const std::uint64_t mask = rng() % 4 ? fields::change_mask(base, now) : rng() % 1024;
    const Row out = round_trip(kGame, mask, base, now);
    REQUIRE(out == expected(mask, base, now));
  }
}

TEST_CASE("field table: read refuses what no schema row allows") {
  auto read = [](const Bytes& b) {
    ByteReader r(b);
    std::uint64_t mask = 0;
    std::vector<std::uint32_t> wire;
    return fields::read(r, kEngine, mask, wire);
  };
  CHECK(read({0}));                                         // mask 0: nothing
  CHECK(read({1u << kHeading, 0xFF, 0xFF, 0x03}));          // 65535
  CHECK_FALSE(read({1u << kHeading, 0x80, 0x80, 0x04}));    // 65536: wider than 16 bits
  CHECK(read({1u << kMoveState, 0xFF, 0x01}));              // 255
  CHECK_FALSE(read({1u << kMoveState, 0x80, 0x02}));        // 256
  CHECK(read({1u << kPositionUnit, 0}));                    // row 4, position_unit 0
  CHECK(read({1u << kHeadingUnit, 0xFF, 0x01}));            // row 5, heading_unit 255
  CHECK(read({0x80, 0x01, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F}));  // row 7, guild: any 32 bits
  CHECK_FALSE(read({0x80, 0x02, 0}));                       // no row 8
  CHECK_FALSE(read({0x80, 0x80, 0x80, 0x80, 0x08}));        // bit 31
  CHECK_FALSE(read({0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}));  // bit 63
  CHECK_FALSE(read({1u << kX}));                                                    // value missing
  CHECK_FALSE(read({}));                                                            // mask missing
  CHECK(read({1u << kX, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F}));                            // any 32 bits
  CHECK_FALSE(read({1u << kX, 0xFF, 0xFF, 0xFF, 0xFF, 0x1F}));
}

TEST_CASE("field table: adding a field is one row") {
  const Schema extended = extended_schema();
  // The extended schema's first rows are the engine's.
  REQUIRE(extended.size() == kEngineFieldCount + 2);
  for (std::size_t i = 0; i < kEngine.size(); ++i) CHECK(extended.field(i) == kEngine.field(i));
  const std::size_t n = kEngine.size();
  const FieldSpec& stamina = extended.field(n + 1);
  CHECK(fields::delta(stamina, 65535, 1) == 2);

  std::mt19937_64 rng(7);
  int with_new_fields = 0;
  for (int i = 0; i < 20000; ++i) {
    const Row base = random_values(extended, rng);
    const Row now = random_change(extended, base, rng);
    const std::uint64_t mask = fields::change_mask(base, now);
    if (mask >> n) ++with_new_fields;
    REQUIRE(round_trip(extended, mask, base, now) == now);
    // A record leaving the new fields alone is byte for byte the engine-only one, so
    // peers that do not know them yet still read it.
    const std::uint64_t old_mask = mask & ((1ull << n) - 1);
    const Row old_base(base.begin(), base.begin() + static_cast<std::ptrdiff_t>(n));
    const Row old_now(now.begin(), now.begin() + static_cast<std::ptrdiff_t>(n));
    REQUIRE(encode_record(extended, old_mask, base, now) ==
            encode_record(kEngine, old_mask, old_base, old_now));
  }
  CHECK(with_new_fields > 10000);
  // Mana: absolute 16 bits; stamina: a delta wrapping at 16 bits.
  Row base(extended.size()), now(extended.size());
  base[n] = 500;
  now[n] = 20;
  base[n + 1] = 65535;
  now[n + 1] = 1;
  const std::uint64_t mask = fields::change_mask(base, now);
  CHECK(mask == (3ull << n));
  // Mask bits 8 and 9: a two-byte varint.
  CHECK(encode_record(extended, mask, base, now) == Bytes{0x80, 0x06, 20, 4});
  CHECK(round_trip(extended, mask, base, now) == now);
  // A peer on the engine's rows alone refuses a record that carries a field it does not
  // know (instead of misreading the rest of the packet)...
  {
    const Bytes b = encode_record(extended, mask, base, now);
    ByteReader r(b);
    std::uint64_t m = 0;
    std::vector<std::uint32_t> wire;
    CHECK_FALSE(fields::read(r, kEngine, m, wire));
  }
  // ... and the new schema checks the new fields' widths like any other.
  {
    const Bytes wide = {0x80, 0x02, 0x80, 0x80, 0x04};  // mask 1 << 8 (mana): 65536
    ByteReader r(wide);
    std::uint64_t m = 0;
    std::vector<std::uint32_t> wire;
    CHECK_FALSE(fields::read(r, extended, m, wire));
  }
}

TEST_CASE("field table: a schema of 64 fields uses every mask bit") {
  const Schema wide = wide_schema();
  std::mt19937_64 rng(32);
  for (int i = 0; i < 3000; ++i) {
    const Row base = random_values(wide, rng);
    const Row now = random_change(wide, base, rng);
    const std::uint64_t mask = fields::change_mask(base, now);
    REQUIRE(round_trip(wide, mask, base, now) == now);
    REQUIRE(round_trip(wide, ~0ull, base, now) == now);
  }
  Row base(wide.size()), now(wide.size());
  now[63] = 1;
  CHECK(fields::change_mask(base, now) == 1ull << 63);
  CHECK(round_trip(wide, 1ull << 63, base, now) == now);
  CHECK(wide.all_mask() == ~0ull);
}
