#include <doctest/doctest.h>

#include <fstream>

#include "persist/sqlite_store.hpp"
#include "temp_dir.hpp"

using namespace zone::persist;
using zone::persist::test::TempDir;

namespace {

CharacterRecord sample(const std::string& key, double x) {
  CharacterRecord r;
  r.key = key;
  r.type = "player";
  r.x = x;
  r.y = 250.125;
  r.properties = {{"health", 73}, {"xp", -5}, {"level", 4'000'000'000}};
  r.party_key = 0xFEDCBA9876543210ull;  // above INT64_MAX: kept bit for bit
  r.guild_key = 42;
  return r;
}

}  // namespace

TEST_CASE("character keys keep ticket and open-mode rows apart") {
  CHECK(character_key(7, "alice") == "character:7");
  CHECK(character_key(0, "alice") == "name:alice");
}

TEST_CASE("properties round-trip through their text form, malformed text is refused") {
  const std::vector<Property> p = {{"health", 100}, {"xp", -3}};
  CHECK(decode_properties(encode_properties(p)) == p);
  CHECK(decode_properties("")->empty());
  CHECK_FALSE(decode_properties("health=1"));     // no line end
  CHECK_FALSE(decode_properties("=1\n"));         // no name
  CHECK_FALSE(decode_properties("health=1x\n"));  // not a number
}

TEST_CASE("a saved character loads back as it was, across reopening the file") {
  TempDir dir;
  const std::string path = dir.file("sub/dir/zone.sqlite3");  // the directory is created
  std::string error;
  {
    auto store = SqliteStore::open(path, 1000, error);
    REQUIRE_MESSAGE(store, error);
    CHECK(store->schema_version() == kSchemaVersion);
    const std::vector<CharacterRecord> batch = {sample("character:1", 10.5),
                                                sample("name:bob", 99.0)};
    REQUIRE(store->save(batch).ok);
    // A second save of the same key replaces the row.
    const std::vector<CharacterRecord> again = {sample("character:1", 11.5)};
    REQUIRE(store->save(again).ok);
  }
  auto store = SqliteStore::open(path, 1000, error);
  REQUIRE_MESSAGE(store, error);
  StoreStatus status;
  const auto one = store->load("character:1", status);
  REQUIRE(status.ok);
  REQUIRE(one);
  CHECK(*one == sample("character:1", 11.5));
  const auto bob = store->load("name:bob", status);
  REQUIRE(bob);
  CHECK(*bob == sample("name:bob", 99.0));
  CHECK_FALSE(store->load("character:2", status));  // a new character
  CHECK(status.ok);
}

TEST_CASE("a file of schema version 1 migrates to version 2 and keeps its rows") {
  TempDir dir;
  const std::string path = dir.file("old.sqlite3");
  CharacterRecord old = sample("character:5", 1.0);
  REQUIRE(write_version_1_file(path, std::span(&old, 1)).ok);
  std::string error;
  auto store = SqliteStore::open(path, 1000, error);
  REQUIRE_MESSAGE(store, error);
  CHECK(store->schema_version() == 2);
  StoreStatus status;
  const auto row = store->load("character:5", status);
  REQUIRE(row);
  // Version 1 had no groups: the migrated row has none; the rest is unchanged.
  CHECK(row->party_key == 0);
  CHECK(row->guild_key == 0);
  old.party_key = old.guild_key = 0;
  CHECK(*row == old);
  // And it takes version 2's fields from now on.
  const CharacterRecord now = sample("character:5", 2.0);
  REQUIRE(store->save(std::span(&now, 1)).ok);
  CHECK(*store->load("character:5", status) == now);
}

TEST_CASE("a file that is not a database is reported, naming the file") {
  TempDir dir;
  const std::string path = dir.file("corrupt.sqlite3");
  std::ofstream(path) << std::string(4096, 'x');
  std::string error;
  CHECK_FALSE(SqliteStore::open(path, 100, error));
  CHECK(error.find(path) != std::string::npos);
  CHECK(error.find("not a database") != std::string::npos);
}

TEST_CASE("a file of a newer schema version is refused") {
  TempDir dir;
  const std::string path = dir.file("new.sqlite3");
  REQUIRE(write_version_1_file(path, {}).ok);
  {
    std::string error;
    auto store = SqliteStore::open(path, 100, error);
    REQUIRE(store);
  }
  // Pretend a later build wrote it.
  {
    std::string error;
    auto store = SqliteStore::open(path, 100, error);
    REQUIRE(store);
    REQUIRE(force_schema_version_for_test(*store, kSchemaVersion + 1).ok);
  }
  std::string error;
  CHECK_FALSE(SqliteStore::open(path, 100, error));
  CHECK(error.find("newer than this server") != std::string::npos);
}

TEST_CASE("a file another process holds locked fails the save with 'locked', then works") {
  TempDir dir;
  const std::string path = dir.file("locked.sqlite3");
  std::string error;
  auto store = SqliteStore::open(path, 50, error);
  REQUIRE_MESSAGE(store, error);
  auto other = SqliteStore::open(path, 50, error);  // a second connection, as another process
  REQUIRE_MESSAGE(other, error);
  REQUIRE(hold_write_lock_for_test(*other, true).ok);
  const CharacterRecord r = sample("character:9", 3.0);
  const StoreStatus locked = store->save(std::span(&r, 1));
  CHECK_FALSE(locked.ok);
  CHECK(locked.error.find("locked") != std::string::npos);
  REQUIRE(hold_write_lock_for_test(*other, false).ok);
  CHECK(store->save(std::span(&r, 1)).ok);
}
