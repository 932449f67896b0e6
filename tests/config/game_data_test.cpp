// The game's data file (config/game_data.hpp): the shipped sample game, the built-in one,
// and every refusal with its line and key.
#include <doctest/doctest.h>

#include <string>

#include "config/game_data.hpp"

using namespace zone;
using namespace zone::config;

namespace {

GameDataResult load(const std::string& yaml) {
  return load_game_data_string(yaml, "game.yaml");
}

// The one error of a file that has exactly one.
ConfigError only_error(const GameDataResult& r) {
  REQUIRE(r.errors.size() == 1);
  return r.errors[0];
}

}  // namespace

TEST_CASE("game data: the sample game's file loads, in wire order, with its types") {
  const GameDataResult r =
      load_game_data_file(std::string(ZONE_SOURCE_DIR) + "/configs/game/game.yaml");
  INFO(r.error_report());
  REQUIRE(r.ok());
  const protocol::Schema& s = r.data.schema;
  REQUIRE(s.size() == protocol::kEngineFieldCount + 8);
  const char* names[] = {"health", "max_health", "level", "appearance",
                         "state",  "target",     "mana",  "xp"};
  for (std::size_t i = 0; i < 8; ++i) {
    CHECK(s.field(protocol::kEngineFieldCount + i).name == names[i]);
  }
  const protocol::FieldSpec& health = s.field(*s.find_field("health"));
  CHECK(health.bits == 16);
  CHECK_FALSE(health.is_signed);
  CHECK(health.update == protocol::UpdateTier::kImmediate);
  CHECK(health.persistent);
  CHECK(health.audience == protocol::Audience::kEveryone);
  CHECK(s.field(*s.find_field("mana")).audience == protocol::Audience::kParty);
  CHECK(s.field(*s.find_field("xp")).audience == protocol::Audience::kOwner);
  CHECK(s.field(*s.find_field("xp")).bits == 32);
  CHECK(s.field(*s.find_field("target")).update == protocol::UpdateTier::kTiered);
  // Party rows are not everyone's; owner rows are nobody else's.
  const std::uint64_t mana = 1ull << *s.find_field("mana");
  const std::uint64_t xp = 1ull << *s.find_field("xp");
  CHECK((s.public_mask() & mana) == 0);
  CHECK((s.party_mask() & mana) != 0);
  CHECK((s.party_mask() & xp) == 0);

  REQUIRE(s.types().size() == 3);
  CHECK(s.types()[0].name == "player");
  CHECK(s.types()[0].kind == protocol::EntityKind::kPlayer);
  CHECK(s.types()[1].name == "wolf");
  CHECK(r.data.player_type() == 0);
  CHECK(r.data.npc_type() == 1);
  const GameTypeData* wolf = r.data.find_type("wolf");
  REQUIRE(wolf != nullptr);
  REQUIRE(wolf->defaults.size() == 8);
  CHECK(wolf->defaults[0] == 60);  // health
  CHECK(wolf->defaults[3] == 1);   // appearance
  CHECK(wolf->defaults[7] == 0);   // xp: left out
}

TEST_CASE("game data: the built-in game is health and max_health at 100") {
  const GameData g = builtin_game_data();
  REQUIRE(g.schema.size() == protocol::kEngineFieldCount + 2);
  CHECK(g.schema.field(8).name == "health");
  CHECK(g.schema.field(9).name == "max_health");
  REQUIRE(g.types.size() == 2);
  CHECK(g.types[g.player_type()].defaults == std::vector<std::int32_t>{100, 100});
  CHECK(g.types[g.npc_type()].kind == protocol::EntityKind::kNpc);
}

TEST_CASE("game data: order, signed widths and bool defaults") {
  const GameDataResult r = load(
      "types:\n"
      "  hero: {kind: player, defaults: {b: 5, a: true, s: -128}}\n"
      "properties:\n"
      "  b: {type: i16}\n"
      "  a: {type: bool}\n"
      "  s: {type: i8, encoding: delta}\n");
  INFO(r.error_report());
  REQUIRE(r.ok());
  const protocol::Schema& s = r.data.schema;
  // File order, whatever the names' order and wherever the types section stands.
  CHECK(s.field(8).name == "b");
  CHECK(s.field(9).name == "a");
  CHECK(s.field(10).name == "s");
  CHECK(s.field(8).is_signed);
  CHECK(s.field(9).bits == 1);
  CHECK(s.field(10).rule == protocol::DeltaRule::kDelta);
  CHECK(r.data.types[0].defaults == std::vector<std::int32_t>{5, 1, -128});
  // The NPCs of a game without an NPC type spawn as its player type.
  CHECK(r.data.npc_type() == r.data.player_type());
}

TEST_CASE("game data: every refusal names its line and key") {
  SUBCASE("a width that does not exist") {
    const ConfigError e =
        only_error(load("properties:\n  hp: {type: u17}\ntypes:\n  p: {kind: player}\n"));
    CHECK(e.line == 2);
    CHECK(e.key == "properties.hp.type");
    CHECK(e.message == "expected bool, u8, u16, u32, i8, i16 or i32, got 'u17'");
  }
  SUBCASE("a default out of its property's range") {
    struct Case {
      std::string type, value, bound;
    };
    for (const Case& c : {Case{"i8", "-129", "expected an integer >= -128 and <= 127, got -129"},
                          Case{"u16", "65536", "expected an integer >= 0 and <= 65535, got 65536"},
                          Case{"bool", "2", "expected an integer >= 0 and <= 1, got 2"}}) {
      const std::string& type = c.type;
      const std::string& value = c.value;
      const std::string& bound = c.bound;
      const ConfigError e = only_error(load(std::string("properties:\n  v: {type: ") + type +
                                            "}\ntypes:\n  p:\n    kind: player\n    defaults: "
                                            "{v: " +
                                            value + "}\n"));
      CHECK(e.line == 6);
      CHECK(e.key == "types.p.defaults.v");
      CHECK(e.message == bound);
    }
  }
  SUBCASE("a default for a property the game does not have") {
    const ConfigError e = only_error(load(
        "properties:\n  health: {type: u16}\ntypes:\n  p: {kind: player, defaults: {healt: 1}}\n"));
    CHECK(e.line == 4);
    CHECK(e.key == "types.p.defaults.healt");
    CHECK(e.message == "'healt' is not a property of this game (its properties: health)");
  }
  SUBCASE("an unknown key, with a suggestion") {
    const ConfigError e = only_error(
        load("properties:\n  hp: {type: u8, audiance: owner}\ntypes:\n  p: {kind: player}\n"));
    CHECK(e.line == 2);
    CHECK(e.key == "properties.hp.audiance");
    CHECK(e.message == "unknown key 'audiance' (did you mean 'audience'?)");
  }
  SUBCASE("a duplicate property") {
    const ConfigError e = only_error(
        load("properties:\n  hp: {type: u8}\n  hp: {type: u16}\ntypes:\n  p: {kind: player}\n"));
    CHECK(e.line == 3);
    CHECK(e.key == "properties.hp");
    CHECK(e.message == "duplicate key (first given on line 2); remove one");
  }
  SUBCASE("a property named like an engine row") {
    const ConfigError e =
        only_error(load("properties:\n  party: {type: u8}\ntypes:\n  p: {kind: player}\n"));
    CHECK(e.line == 2);
    CHECK(e.key == "properties.party");
    CHECK(e.message ==
          "'party' is one of the engine's rows (x, y, heading, move_state, position_unit, "
          "heading_unit, party, guild): a property needs another name");
  }
  SUBCASE("a name that is not an identifier") {
    const ConfigError e =
        only_error(load("properties:\n  Hit-Points: {type: u8}\ntypes:\n  p: {kind: player}\n"));
    CHECK(e.key == "properties.Hit-Points");
    CHECK(e.message.find("is not an identifier") != std::string::npos);
  }
  SUBCASE("a property without a type, a type without a kind") {
    const GameDataResult r =
        load("properties:\n  hp: {audience: owner}\ntypes:\n  p: {defaults: {}}\n");
    REQUIRE(r.errors.size() == 2);
    CHECK(r.errors[0].key == "properties.hp.type");
    CHECK(r.errors[0].line == 2);
    CHECK(r.errors[1].key == "types.p.kind");
    CHECK(r.errors[1].line == 4);
  }
  SUBCASE("no player type") {
    const ConfigError e = only_error(load("types:\n  wolf: {kind: npc}\n"));
    CHECK(e.key == "types");
    CHECK(e.message == "no entity type of kind player: players need one");
  }
  SUBCASE("no types at all") {
    const ConfigError e = only_error(load("properties:\n  hp: {type: u8}\n"));
    CHECK(e.key == "types");
  }
  SUBCASE("too many properties") {
    std::string yaml = "properties:\n";
    for (int i = 0; i < 57; ++i) yaml += "  p" + std::to_string(i) + ": {type: u8}\n";
    yaml += "types:\n  p: {kind: player}\n";
    const ConfigError e = only_error(load(yaml));
    CHECK(e.key == "properties.p56");
    CHECK(e.line == 58);
    CHECK(e.message.find("too many properties") == 0);
  }
  SUBCASE("several problems are all reported") {
    // (b's default is not reported: b itself was refused.)
    const GameDataResult r = load(
        "properties:\n  a: {type: u9}\n  b: {type: u8, update: soon}\n  c: {type: u8}\n"
        "types:\n  p: {kind: player, defaults: {b: 1, c: 300}}\n  q: {kind: monster}\n");
    REQUIRE(r.errors.size() == 4);
    CHECK(r.errors[0].key == "properties.a.type");
    CHECK(r.errors[1].key == "properties.b.update");
    CHECK(r.errors[2].key == "types.p.defaults.c");
    CHECK(r.errors[2].line == 6);
    CHECK(r.errors[3].key == "types.q.kind");
    CHECK(r.errors[3].line == 7);
  }
  SUBCASE("a file that is not a file") {
    const GameDataResult r = load_game_data_file("/nonexistent/game.yaml");
    REQUIRE(r.errors.size() == 1);
    CHECK(r.error_report().find("/nonexistent/game.yaml") == 0);
  }
}
