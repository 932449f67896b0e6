// The run-time schema (shared/protocol/schema.hpp): what add_field and set_types refuse,
// the Welcome's copy of it (build_schema / read_schema) and what a client refuses there,
// signed fields, 64-bit masks, and spawns naming a type the schema lacks.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <flatbuffers/flatbuffers.h>

#include "../replication/wire.hpp"
#include "protocol/byte_io.hpp"
#include "protocol/codec.hpp"
#include "protocol/compact.hpp"
#include "protocol/record.hpp"
#include "protocol/schema.hpp"

using namespace zone;
using namespace zone::protocol;

namespace {

using Bytes = std::vector<std::uint8_t>;

FieldSpec field(std::string name, std::uint8_t bits = 16, bool is_signed = false,
                DeltaRule rule = DeltaRule::kAbsolute) {
  FieldSpec f;
  f.name = std::move(name);
  f.bits = bits;
  f.is_signed = is_signed;
  f.rule = rule;
  return f;
}

// A schema through a Welcome's SchemaDef and back.
std::optional<Schema> through_welcome(const Schema& s, std::string* why = nullptr) {
  flatbuffers::FlatBufferBuilder fbb;
  fbb.Finish(build_schema(fbb, s));
  return read_schema(flatbuffers::GetRoot<SchemaDef>(fbb.GetBufferPointer()), why);
}

// A SchemaDef built by hand: the engine's rows as given, then `extra`.
struct RawField {
  std::string name;
  std::uint8_t rule;
  std::uint8_t bits;
  bool is_signed = false;
  std::uint8_t audience = 0;
  std::uint8_t update = 0;
};
std::vector<RawField> engine_rows() {
  std::vector<RawField> rows;
  const Schema engine;
  for (const FieldSpec& f : engine.fields()) {
    rows.push_back({f.name, static_cast<std::uint8_t>(f.rule), f.bits, f.is_signed});
  }
  return rows;
}
// The engine's chat event as the Welcome carries it; `args` and `name` to alter it.
struct RawEvent {
  std::string name = "chat";
  std::vector<std::string> args = {"channel"};
  bool text = true;
};
std::optional<Schema> read_raw(const std::vector<RawField>& rows,
                               const std::vector<std::pair<std::string, std::uint8_t>>& types,
                               std::string* why,
                               const std::vector<RawEvent>& events = {RawEvent{}}) {
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<flatbuffers::Offset<FieldDef>> fields;
  for (const RawField& r : rows) {
    fields.push_back(CreateFieldDef(fbb, fbb.CreateString(r.name), static_cast<FieldRule>(r.rule),
                                    r.bits, r.is_signed, static_cast<FieldAudience>(r.audience),
                                    static_cast<FieldUpdate>(r.update), fbb.CreateString("")));
  }
  std::vector<flatbuffers::Offset<EntityTypeDef>> defs;
  for (const auto& [name, kind] : types) {
    defs.push_back(
        CreateEntityTypeDef(fbb, fbb.CreateString(name), static_cast<EntityKindDef>(kind)));
  }
  std::vector<flatbuffers::Offset<EventDef>> event_defs;
  for (const RawEvent& e : events) {
    event_defs.push_back(CreateEventDef(fbb, fbb.CreateString(e.name), FieldAudience::Everyone,
                                        fbb.CreateVectorOfStrings(e.args), e.text));
  }
  fbb.Finish(CreateSchemaDef(fbb, fbb.CreateVector(fields), fbb.CreateVector(defs), 0,
                             fbb.CreateVector(event_defs)));
  return read_schema(flatbuffers::GetRoot<SchemaDef>(fbb.GetBufferPointer()), why);
}
const std::vector<std::pair<std::string, std::uint8_t>> kTypes = {{"player", 0}, {"npc", 1}};

}  // namespace

TEST_CASE("schema: add_field refuses bad names, duplicates, widths and a full table") {
  Schema s;
  const Schema before = s;
  for (const std::string& bad : std::vector<std::string>{
           "", "Health", "1up", "_x", "has space", "h-p", "caf\xC3\xA9", std::string(33, 'a')}) {
    CAPTURE(bad);
    CHECK(s.add_field(field(bad)).has_value());
  }
  CHECK_FALSE(s.add_field(field(std::string(32, 'a'))).has_value());  // 32 bytes: fine
  CHECK(s.add_field(field("x")).has_value());                         // an engine row's name
  CHECK(s.add_field(field("party")).has_value());
  CHECK_FALSE(s.add_field(field("mana")).has_value());
  CHECK(s.add_field(field("mana")).has_value());  // twice
  CHECK(s.add_field(field("wide", 33)).has_value());
  CHECK(s.add_field(field("none", 0)).has_value());
  CHECK_FALSE(s.add_field(field("one", 1)).has_value());
  CHECK_FALSE(s.add_field(field("full", 32)).has_value());
  FieldSpec long_unit = field("described");
  long_unit.unit = std::string(kMaxUnitBytes + 1, 'u');
  CHECK(s.add_field(long_unit).has_value());
  CHECK(s.size() == kEngineFieldCount + 4);
  // A refused field changes nothing.
  CHECK_FALSE(s.find_field("wide").has_value());
  CHECK_FALSE(s.find_field("none").has_value());
  // Up to 64 rows, not one more.
  Schema full;
  for (std::size_t i = kEngineFieldCount; i < kMaxFields; ++i) {
    REQUIRE_FALSE(full.add_field(field("p" + std::to_string(i))).has_value());
  }
  CHECK(full.size() == 64);
  const auto error = full.add_field(field("one_too_many"));
  REQUIRE(error.has_value());
  CHECK(error->find("too many") != std::string::npos);
  CHECK(full.size() == 64);
  CHECK(before == Schema());
}

TEST_CASE("schema: types need a player kind, well-formed and distinct names") {
  Schema s;
  CHECK(s.set_types({{"wolf", EntityKind::kNpc}}).has_value());  // no player type
  CHECK(s.types().size() == 2);                                  // unchanged
  CHECK(s.set_types({{"hero", EntityKind::kPlayer}, {"hero", EntityKind::kNpc}}).has_value());
  CHECK(s.set_types({{"Hero", EntityKind::kPlayer}}).has_value());
  CHECK(s.types()[0].name == "player");
  CHECK_FALSE(s.set_types({{"wolf", EntityKind::kNpc}, {"hero", EntityKind::kPlayer}}).has_value());
  REQUIRE(s.types().size() == 2);
  CHECK(s.find_type("hero") == 1u);
  CHECK(s.add_type({"wolf", EntityKind::kNpc}).has_value());  // twice
  CHECK_FALSE(s.add_type({"bear", EntityKind::kNpc}).has_value());
  CHECK(s.types().size() == 3);
}

TEST_CASE("schema: masks of audiences and update tiers") {
  Schema s;
  FieldSpec gold = field("gold", 32);
  gold.audience = Audience::kOwner;
  FieldSpec buff = field("buff", 8);
  buff.audience = Audience::kParty;
  FieldSpec hp = field("hp");
  hp.update = UpdateTier::kImmediate;
  REQUIRE_FALSE(s.add_field(gold).has_value());
  REQUIRE_FALSE(s.add_field(buff).has_value());
  REQUIRE_FALSE(s.add_field(hp).has_value());
  const std::uint64_t engine = (1ull << kEngineFieldCount) - 1;
  CHECK(s.all_mask() == (1ull << 11) - 1);
  CHECK(s.public_mask() == (engine | 1ull << 10));
  CHECK(s.party_mask() == (engine | 1ull << 9 | 1ull << 10));
  CHECK(s.immediate_mask() == 1ull << 10);
}

TEST_CASE("schema: the Welcome's copy reads back as the same schema") {
  Schema s;
  FieldSpec gold = field("gold", 32);
  gold.audience = Audience::kOwner;
  gold.unit = "coins";
  FieldSpec mood = field("mood", 8, true, DeltaRule::kDelta);
  mood.audience = Audience::kParty;
  mood.update = UpdateTier::kImmediate;
  REQUIRE_FALSE(s.add_field(gold).has_value());
  REQUIRE_FALSE(s.add_field(mood).has_value());
  REQUIRE_FALSE(
      s.set_types(
           {{"hero", EntityKind::kPlayer}, {"wolf", EntityKind::kNpc}, {"bear", EntityKind::kNpc}})
          .has_value());
  std::string why;
  const auto back = through_welcome(s, &why);
  REQUIRE_MESSAGE(back.has_value(), why);
  CHECK(*back == s);
  // The engine's rows alone, too.
  const auto engine = through_welcome(Schema());
  REQUIRE(engine.has_value());
  CHECK(*engine == Schema());
}

TEST_CASE("schema: actions and events go through the Welcome and are checked") {
  Schema s;
  CHECK(s.events().size() == kEngineEventCount);
  CHECK(s.events()[kChatEvent].name == "chat");
  REQUIRE_FALSE(s.add_action({"attack", ActionTarget::kEntity, 0, "melee"}).has_value());
  REQUIRE_FALSE(s.add_action({"emote", ActionTarget::kOptional, 1, ""}).has_value());
  REQUIRE_FALSE(s.add_event({"hit", Audience::kEveryone, {"amount"}, false, "damage"}).has_value());
  REQUIRE_FALSE(s.add_event({"xp", Audience::kOwner, {"amount"}, false, ""}).has_value());
  CHECK(s.find_action("emote") == 1u);
  CHECK(s.find_event("xp") == 2u);
  // Refused: a duplicate, the engine's name, a bad name, too many arguments.
  const Schema before = s;
  CHECK(s.add_action({"attack", ActionTarget::kNone, 0, ""}).has_value());
  CHECK(s.add_action({"Attack", ActionTarget::kNone, 0, ""}).has_value());
  CHECK(s.add_action({"cast", ActionTarget::kNone, 5, ""}).has_value());
  CHECK(s.add_event({"chat", Audience::kEveryone, {}, false, ""}).has_value());
  CHECK(s.add_event({"hit", Audience::kEveryone, {}, false, ""}).has_value());
  CHECK(
      s.add_event({"heal", Audience::kEveryone, {"a", "b", "c", "d", "e"}, false, ""}).has_value());
  CHECK(s.add_event({"heal", Audience::kEveryone, {"Amount"}, false, ""}).has_value());
  CHECK(s == before);
  std::string why;
  const auto back = through_welcome(s, &why);
  REQUIRE_MESSAGE(back.has_value(), why);
  CHECK(*back == s);
}

TEST_CASE("schema: the engine's schema reads back") {
  const auto engine = through_welcome(Schema());
  REQUIRE(engine.has_value());
  CHECK(*engine == Schema());
}

TEST_CASE("schema: a client refuses a Welcome schema it cannot follow") {
  std::string why;
  // As it should be.
  REQUIRE(read_raw(engine_rows(), kTypes, &why).has_value());
  // No schema at all.
  CHECK_FALSE(read_schema(nullptr, &why).has_value());
  CHECK_FALSE(why.empty());
  // No events, or the engine's chat event altered (renamed, another argument count, no
  // text): a client could not read chat lines.
  for (int k = 0; k < 4; ++k) {
    CAPTURE(k);
    std::vector<RawEvent> events(1);
    if (k == 0) events.clear();
    if (k == 1) events[0].name = "talk";
    if (k == 2) events[0].args.push_back("volume");
    if (k == 3) events[0].text = false;
    why.clear();
    CHECK_FALSE(read_raw(engine_rows(), kTypes, &why, events).has_value());
    CHECK_FALSE(why.empty());
  }
  // A game event after it with more than four arguments.
  {
    std::vector<RawEvent> events(2);
    events[1] = {"hit", {"a", "b", "c", "d", "e"}, false};
    why.clear();
    CHECK_FALSE(read_raw(engine_rows(), kTypes, &why, events).has_value());
    CHECK(why.find("at most 4 arguments") != std::string::npos);
  }
  // Fewer than the engine's rows.
  {
    auto rows = engine_rows();
    rows.pop_back();
    why.clear();
    CHECK_FALSE(read_raw(rows, kTypes, &why).has_value());
    CHECK_FALSE(why.empty());
  }
  // An engine row altered: renamed, another width, another rule, signed.
  for (int k = 0; k < 4; ++k) {
    CAPTURE(k);
    auto rows = engine_rows();
    if (k == 0) rows[kHeading].name = "bearing";
    if (k == 1) rows[kHeading].bits = 32;
    if (k == 2) rows[kX].rule = static_cast<std::uint8_t>(DeltaRule::kAbsolute);
    if (k == 3) rows[kParty].is_signed = true;
    CHECK_FALSE(read_raw(rows, kTypes, &why).has_value());
  }
  // Two engine rows swapped.
  {
    auto rows = engine_rows();
    std::swap(rows[kX], rows[kY]);
    CHECK_FALSE(read_raw(rows, kTypes, &why).has_value());
  }
  // No player type; no types; an unknown kind.
  CHECK_FALSE(read_raw(engine_rows(), {{"npc", 1}}, &why).has_value());
  CHECK_FALSE(read_raw(engine_rows(), {}, &why).has_value());
  CHECK_FALSE(read_raw(engine_rows(), {{"player", 0}, {"thing", 2}}, &why).has_value());
  // Unknown enum values of a property: rule, audience, update tier.
  for (int k = 0; k < 3; ++k) {
    CAPTURE(k);
    auto rows = engine_rows();
    RawField extra{"mana", 1, 16};
    if (k == 0) extra.rule = 2;
    if (k == 1) extra.audience = 3;
    if (k == 2) extra.update = 2;
    rows.push_back(extra);
    CHECK_FALSE(read_raw(rows, kTypes, &why).has_value());
  }
  // A property add_field would refuse: bad name, duplicate, width 0 or 33, too many rows.
  for (const RawField& bad :
       {RawField{"Mana", 1, 16}, RawField{"x", 1, 16}, RawField{"w", 1, 0}, RawField{"w", 1, 33}}) {
    CAPTURE(bad.name);
    auto rows = engine_rows();
    rows.push_back(bad);
    CHECK_FALSE(read_raw(rows, kTypes, &why).has_value());
  }
  {
    auto rows = engine_rows();
    for (std::size_t i = rows.size(); i <= kMaxFields; ++i) {
      rows.push_back({"p" + std::to_string(i), 1, 8});
    }
    CHECK(rows.size() == kMaxFields + 1);
    CHECK_FALSE(read_raw(rows, kTypes, &why).has_value());
    rows.pop_back();
    CHECK(read_raw(rows, kTypes, &why).has_value());
  }
}

TEST_CASE("schema: a signed 8-bit field round-trips negative values") {
  Schema s;
  REQUIRE_FALSE(s.add_field(field("mood", 8, true)).has_value());
  REQUIRE_FALSE(s.add_field(field("tilt", 8, true, DeltaRule::kDelta)).has_value());
  const std::size_t mood = kEngineFieldCount, tilt = kEngineFieldCount + 1;
  CHECK(fields::normalize(s.field(mood), static_cast<std::uint32_t>(-5)) == -5);
  CHECK(fields::normalize(s.field(mood), 0xFB) == -5);
  CHECK(fields::normalize(s.field(mood), 128) == -128);
  CHECK(fields::normalize(s.field(mood), 127) == 127);
  CHECK(fields::wire_value(s.field(mood), 0, -5) == 0xFB);  // the low 8 bits
  for (const std::int32_t base : {0, -5, 127, -128, 3}) {
    for (const std::int32_t now : {-5, 0, -128, 127, 1}) {
      CAPTURE(base);
      CAPTURE(now);
      std::vector<std::int32_t> b(s.size(), 0), n(s.size(), 0);
      b[mood] = b[tilt] = base;
      n[mood] = n[tilt] = now;
      const std::uint64_t mask = fields::change_mask(b, n);
      Bytes buf(64);
      ByteWriter w(buf);
      fields::encode(w, s, mask, b, n);
      REQUIRE_FALSE(w.overflow());
      CHECK(w.size() == fields::encoded_size(s, mask, b, n));
      ByteReader r(w.written());
      std::uint64_t read_mask = 0;
      std::vector<std::uint32_t> wire;
      REQUIRE(fields::read(r, s, read_mask, wire));
      CHECK(read_mask == mask);
      for (const std::uint32_t v : wire) CHECK(v <= 0xFF);  // never wider than 8 bits
      std::vector<std::int32_t> out = b;
      fields::apply(s, read_mask, wire.data(), out);
      CHECK(out == n);
    }
  }
}

TEST_CASE("schema: a 40-field schema's row 39 travels in a 64-bit mask") {
  Schema s;
  for (std::size_t i = kEngineFieldCount; i < 40; ++i) {
    REQUIRE_FALSE(s.add_field(field("p" + std::to_string(i), 16)).has_value());
  }
  REQUIRE(s.size() == 40);
  std::vector<std::int32_t> base(40, 0), now(40, 0);
  now[39] = 1234;
  const std::uint64_t mask = fields::change_mask(base, now);
  CHECK(mask == 1ull << 39);
  Bytes buf(64);
  ByteWriter w(buf);
  fields::encode(w, s, mask, base, now);
  // Bit 39: a six-byte varint (7 bits a byte), then 1234 in two.
  CHECK(w.size() == 6 + 2);
  CHECK(w.size() == fields::encoded_size(s, mask, base, now));
  ByteReader r(w.written());
  std::uint64_t read_mask = 0;
  std::vector<std::uint32_t> wire;
  REQUIRE(fields::read(r, s, read_mask, wire));
  CHECK(read_mask == 1ull << 39);
  std::vector<std::int32_t> out = base;
  fields::apply(s, read_mask, wire.data(), out);
  CHECK(out == now);
  // In a snapshot part too: a change and a spawn carrying row 39.
  test::PartSpec p = test::part_on(2, 1);
  test::FieldValues b(std::vector<std::int32_t>(40, 0)), n = b;
  n[39] = -1 & 0xFFFF;
  n[kX] = 5;
  p.changes = {test::change(0, b, n)};
  p.spawns = {test::SpawnSpec{9, n, "nine", 1}};
  const auto d = test::decode(test::encode(p, s), s);
  REQUIRE(d.has_value());
  CHECK(d->changes[0].mask == (1ull << 39 | 1ull << kX));
  CHECK(test::applied(d->changes[0], b, s) == n);
  CHECK(d->spawns[0].values == n);
  // The same record is malformed for a schema of 39 rows.
  Schema narrow;
  for (std::size_t i = kEngineFieldCount; i < 39; ++i) {
    REQUIRE_FALSE(narrow.add_field(field("p" + std::to_string(i), 16)).has_value());
  }
  ByteReader r2(w.written());
  wire.clear();
  CHECK_FALSE(fields::read(r2, narrow, read_mask, wire));
}

TEST_CASE("schema: a spawn naming a type beyond the schema is malformed") {
  test::PartSpec p = test::part_on(1, 0);
  p.spawns = {test::spawn(test::make_state(4, 1, 1), "shop", 2)};
  SnapshotPart part;
  // Types 0 .. 2 in a schema that has three...
  Schema with_rows = test::test_schema();
  REQUIRE_FALSE(with_rows.add_type({"merchant", EntityKind::kNpc}).has_value());
  const Bytes good = test::encode(p, with_rows);
  CHECK(parse_snapshot_part(good, with_rows, part) == ParseError::kNone);
  REQUIRE(part.spawns.size() == 1);
  CHECK(part.spawns[0].type == 2);
  // ... and malformed in one with two types.
  CHECK(parse_snapshot_part(good, test::test_schema(), part) == ParseError::kMalformed);
}
