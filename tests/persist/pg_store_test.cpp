// The shared character store on a real PostgreSQL (label postgres): a throwaway server per
// test (pg_server.hpp). The round trip, migration from an older schema, one owner per row
// (stale saves, a handoff's transfer, a handoff cut by a crash), and the database going
// down under the writer. No wall-clock bounds: each test waits on progress (a flush, the
// loads it asked for) with a generous deadline.
#include <doctest/doctest.h>
#include <libpq-fe.h>

#include <algorithm>
#include <thread>

#include "persist/pg_store.hpp"
#include "persist/writer.hpp"
#include "pg_server.hpp"

using namespace zone::persist;
using zone::persist::test::PgServer;
using Clock = std::chrono::steady_clock;

namespace {

constexpr auto kPatience = std::chrono::seconds(30);

CharacterRecord record(const std::string& key, double x) {
  CharacterRecord r;
  r.key = key;
  r.type = "player";
  r.x = x;
  r.y = 0.1 + x / 3.0;  // not a round number: positions round-trip exactly
  r.properties = {{"health", static_cast<std::int64_t>(x)}, {"gold", -7}};
  r.party_key = 0xfedcba9876543210ULL;  // above 2^63: kept as the same 64 bits
  r.guild_key = 42;
  return r;
}

WriterParams params(const PgServer& pg, const std::string& owner) {
  WriterParams p;
  p.backend = Backend::kPostgres;
  p.conninfo = pg.conninfo();
  p.owner = owner;
  p.retry = std::chrono::milliseconds(20);
  return p;
}

std::unique_ptr<Writer> writer(const PgServer& pg, const std::string& owner) {
  std::string error;
  auto w = Writer::start(params(pg, owner), error);
  INFO(error);
  REQUIRE(w);
  return w;
}

LoadResult load(Writer& w, std::uint64_t request, const std::string& key) {
  w.load(request, key);
  std::vector<LoadResult> out;
  const auto deadline = Clock::now() + kPatience;
  while (out.empty() && Clock::now() < deadline) {
    w.take_loads(out);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  REQUIRE(out.size() == 1);
  CHECK(out[0].request == request);
  return out[0];
}

// Waits until the writer has dealt with save `sequence` (committed or found stale).
void settle(Writer& w, std::uint64_t sequence) {
  REQUIRE(sequence != 0);
  REQUIRE(w.flush(Clock::now() + kPatience));
  CHECK(w.committed_through() >= sequence);
}

// The row's owner and generation, read beside the zones (as an operator would).
std::pair<std::string, long> owner_of(const PgServer& pg, const std::string& key) {
  PGconn* c = PQconnectdb(pg.conninfo().c_str());
  REQUIRE(PQstatus(c) == CONNECTION_OK);
  const char* params[] = {key.c_str()};
  PGresult* r = PQexecParams(c, "SELECT owner, generation FROM characters WHERE key = $1", 1,
                             nullptr, params, nullptr, nullptr, 0);
  std::pair<std::string, long> out{"", -1};
  if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1) {
    out = {PQgetvalue(r, 0, 0), std::stol(PQgetvalue(r, 0, 1))};
  }
  PQclear(r);
  PQfinish(c);
  return out;
}

// The row's x without claiming it (-1: no row).
double x_of(const PgServer& pg, const std::string& key) {
  PGconn* c = PQconnectdb(pg.conninfo().c_str());
  REQUIRE(PQstatus(c) == CONNECTION_OK);
  const char* params[] = {key.c_str()};
  PGresult* r = PQexecParams(c, "SELECT x FROM characters WHERE key = $1", 1, nullptr, params,
                             nullptr, nullptr, 0);
  double x = -1;
  if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1) x = std::stod(PQgetvalue(r, 0, 0));
  PQclear(r);
  PQfinish(c);
  return x;
}

}  // namespace

TEST_CASE("postgres: a saved character loads back as it was, claimed by the zone that loads it") {
  PgServer pg;
  std::string error;
  {
    auto store = PgStore::open(pg.conninfo(), "west", error);
    INFO(error);
    REQUIRE(store);
    CHECK(store->schema_version() == kPostgresSchemaVersion);
    const CharacterRecord batch[] = {record("character:1", 3.25), record("name:bob", -8)};
    REQUIRE(store->save(batch).ok);
    const CharacterRecord again[] = {record("character:1", 4.5)};  // an update
    REQUIRE(store->save(again).ok);
  }
  auto store = PgStore::open(pg.conninfo(), "east", error);  // reconnecting: still there
  REQUIRE(store);
  StoreStatus status;
  const LoadedRow one = store->load_row("character:1", status);
  REQUIRE(status.ok);
  REQUIRE(one.record);
  CHECK(*one.record == record("character:1", 4.5));
  CHECK(one.generation == 3);  // claimed by two saves and this load
  CHECK(owner_of(pg, "character:1") == std::pair<std::string, long>{"east", 3});
  CHECK(*store->load("name:bob", status) == record("name:bob", -8));
  const LoadedRow none = store->load_row("character:2", status);  // a new character
  CHECK(status.ok);
  CHECK_FALSE(none.record);
  CHECK(none.generation == 0);
}

// A zone restarting under thousands of players: the writer takes every login waiting and
// the store claims their rows in one statement. Keys come back in the order asked, a
// character without a row comes back empty, and a key with quotes and backslashes (a
// name may hold them) is read as it is.
TEST_CASE("postgres: many logins are claimed in one statement, each row as it was") {
  PgServer pg;
  std::string error;
  auto store = PgStore::open(pg.conninfo(), "west", error);
  INFO(error);
  REQUIRE(store);
  const std::string odd = "name:o\"d\\d, {x}";
  const CharacterRecord saved[] = {record("character:7", 7), record(odd, 2),
                                   record("character:9", 9)};
  REQUIRE(store->save(saved).ok);
  auto east = PgStore::open(pg.conninfo(), "east", error);
  REQUIRE(east);
  const std::string keys[] = {"character:9", "character:8", odd, "character:7"};
  std::vector<LoadedRow> rows;
  REQUIRE(east->load_rows(keys, rows).ok);
  REQUIRE(rows.size() == 4);
  REQUIRE(rows[0].record);
  CHECK(*rows[0].record == record("character:9", 9));
  CHECK_FALSE(rows[1].record);  // a new character
  CHECK(rows[1].generation == 0);
  REQUIRE(rows[2].record);
  CHECK(*rows[2].record == record(odd, 2));
  REQUIRE(rows[3].record);
  CHECK(*rows[3].record == record("character:7", 7));
  for (const std::string& key : {std::string("character:7"), odd, std::string("character:9")}) {
    CAPTURE(key);
    CHECK(owner_of(pg, key) == std::pair<std::string, long>{"east", 2});  // saved, claimed
  }
  // Through the writer: logins asked together are answered together, each its own.
  auto w = writer(pg, "north");
  for (std::uint64_t i = 0; i < 4; ++i) w->load(100 + i, keys[i]);
  std::vector<LoadResult> out;
  const auto deadline = Clock::now() + kPatience;
  while (out.size() < 4 && Clock::now() < deadline) {
    w->take_loads(out);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  REQUIRE(out.size() == 4);
  std::sort(out.begin(), out.end(),
            [](const LoadResult& a, const LoadResult& b) { return a.request < b.request; });
  CHECK(out[0].status == LoadResult::Status::kFound);
  CHECK(out[0].record == record("character:9", 9));
  CHECK(out[1].status == LoadResult::Status::kNew);
  CHECK(out[2].record == record(odd, 2));
  CHECK(out[3].record == record("character:7", 7));
  CHECK(owner_of(pg, odd) == std::pair<std::string, long>{"north", 3});
}

TEST_CASE("postgres: a database of schema version 1 migrates to version 2 and keeps its rows") {
  PgServer pg;
  CharacterRecord old = record("character:5", 12);
  old.party_key = 0;  // version 1 has group keys, written as 0 by this helper
  old.guild_key = 0;
  REQUIRE(write_postgres_version_1(pg.conninfo(), std::span(&old, 1)).ok);
  std::string error;
  auto store = PgStore::open(pg.conninfo(), "west", error);
  INFO(error);
  REQUIRE(store);
  CHECK(store->schema_version() == 2);
  CHECK(owner_of(pg, "character:5") == std::pair<std::string, long>{"", 0});  // nobody's yet
  StoreStatus status;
  const LoadedRow row = store->load_row("character:5", status);
  REQUIRE(row.record);
  CHECK(*row.record == old);
  CHECK(row.generation == 1);
  // A second zone opening the migrated database leaves it as it is.
  auto again = PgStore::open(pg.conninfo(), "east", error);
  REQUIRE(again);
  CHECK(again->schema_version() == 2);
}

TEST_CASE("postgres: a database of a newer schema version is refused") {
  PgServer pg;
  std::string error;
  {
    auto store = PgStore::open(pg.conninfo(), "west", error);
    REQUIRE(store);
    REQUIRE(force_schema_version_for_test(*store, kPostgresSchemaVersion + 1).ok);
  }
  CHECK_FALSE(PgStore::open(pg.conninfo(), "west", error));
  CHECK(error.find("newer than this server's") != std::string::npos);
}

TEST_CASE("postgres: a server that cannot be reached stops the start, naming no secret") {
  std::string error;
  CHECK_FALSE(PgStore::open("host=127.0.0.1 port=1 user=zone password=hunter2 connect_timeout=5",
                            "west", error));
  CHECK(error.find("cannot connect") != std::string::npos);
  CHECK(error.find("hunter2") == std::string::npos);
}

TEST_CASE(
    "postgres: a save of a row another zone claimed since is stale: counted, dropped, "
    "never retried") {
  PgServer pg;
  auto west = writer(pg, "west");
  auto east = writer(pg, "east");
  CHECK(west->shared());
  CHECK(load(*west, 1, "character:9").status == LoadResult::Status::kNew);
  settle(*west, west->save(record("character:9", 1), false));
  CHECK(west->stats().saves_committed == 1);
  CHECK(owner_of(pg, "character:9") == std::pair<std::string, long>{"west", 1});

  // The character logs in to east: the row is east's now, one generation on.
  const LoadResult there = load(*east, 1, "character:9");
  REQUIRE(there.status == LoadResult::Status::kFound);
  CHECK(there.record == record("character:9", 1));
  CHECK(owner_of(pg, "character:9") == std::pair<std::string, long>{"east", 2});

  // West's checkpoint is refused: stale, not committed, not retried, the row untouched.
  settle(*west, west->save(record("character:9", 2), false));
  WriterStats s = west->stats();
  CHECK(s.saves_stale == 1);
  CHECK(s.saves_committed == 1);
  CHECK(s.save_failures == 0);
  CHECK(s.healthy);
  CHECK(s.queue_depth == 0);
  // The zone hears of it once, to disconnect its copy of the player.
  std::vector<std::string> lost;
  west->take_lost(lost);
  CHECK(lost == std::vector<std::string>{"character:9"});
  // Its later saves are stale too (the claim is gone), a leave's not reported, while
  // east's go through.
  settle(*west, west->save(record("character:9", 3), true));
  CHECK(west->stats().saves_stale == 2);
  lost.clear();
  west->take_lost(lost);
  CHECK(lost.empty());
  east->take_lost(lost);
  CHECK(lost.empty());
  settle(*east, east->save(record("character:9", 4), false));
  CHECK(east->stats().saves_committed == 1);
  CHECK(east->stats().saves_stale == 0);
  std::string error;
  auto reader = PgStore::open(pg.conninfo(), "reader", error);
  REQUIRE(reader);
  StoreStatus status;
  CHECK(reader->load("character:9", status)->x == 4);
}

TEST_CASE("postgres: a handoff gives the row to the receiving zone, whose arrival claims it") {
  PgServer pg;
  auto west = writer(pg, "west");
  auto east = writer(pg, "east");
  REQUIRE(load(*west, 1, "character:3").status == LoadResult::Status::kNew);
  settle(*west, west->save(record("character:3", 1), false));

  SUBCASE("the handoff's save commits before the arrival") {
    settle(*west, west->hand_over(record("character:3", 2), "east"));
    CHECK(west->stats().saves_committed == 2);
    CHECK(owner_of(pg, "character:3") == std::pair<std::string, long>{"east", 1});
    settle(*east, east->arrive(record("character:3", 2)));
    CHECK(owner_of(pg, "character:3") == std::pair<std::string, long>{"east", 2});
  }
  SUBCASE("the arrival commits before the handoff's save, which is then stale") {
    settle(*east, east->arrive(record("character:3", 2)));
    CHECK(owner_of(pg, "character:3") == std::pair<std::string, long>{"east", 2});
    settle(*west, west->hand_over(record("character:3", 2), "east"));
    CHECK(west->stats().saves_stale == 1);
    CHECK(owner_of(pg, "character:3") == std::pair<std::string, long>{"east", 2});
  }
  // From now on east writes the character and west's writes are refused.
  settle(*east, east->save(record("character:3", 5), false));
  CHECK(east->stats().saves_committed == 2);
  const std::uint64_t before = west->stats().saves_stale;
  settle(*west, west->save(record("character:3", 99), true));
  CHECK(west->stats().saves_stale == before + 1);
  std::string error;
  auto reader = PgStore::open(pg.conninfo(), "reader", error);
  REQUIRE(reader);
  StoreStatus status;
  CHECK(reader->load("character:3", status)->x == 5);
}

TEST_CASE("postgres: a handoff cut by a crash leaves the character in exactly one zone") {
  PgServer pg;
  auto east = writer(pg, "east");
  {
    // West claims and checkpoints the character, then dies with its handoff's save never
    // written (its writer is gone before the save is queued).
    auto west = writer(pg, "west");
    REQUIRE(load(*west, 1, "character:4").status == LoadResult::Status::kNew);
    settle(*west, west->save(record("character:4", 1), false));
  }
  CHECK(owner_of(pg, "character:4") == std::pair<std::string, long>{"west", 1});
  // The client arrives at east with the state of the offer: east's claim takes the row.
  settle(*east, east->arrive(record("character:4", 2)));
  CHECK(owner_of(pg, "character:4") == std::pair<std::string, long>{"east", 2});
  // West restarted holds no claim: a save of the character from it is stale.
  auto west = writer(pg, "west");
  settle(*west, west->save(record("character:4", 50), true));
  CHECK(west->stats().saves_stale == 1);
  settle(*east, east->save(record("character:4", 3), false));
  CHECK(east->stats().saves_committed == 2);
  CHECK(owner_of(pg, "character:4") == std::pair<std::string, long>{"east", 2});
}

TEST_CASE(
    "postgres: the database down: the queue's bound holds, loads fail, and nothing "
    "acknowledged or queued is lost once it is back") {
  PgServer pg;
  WriterParams p = params(pg, "west");
  p.max_queue = 3;
  std::string error;
  auto w = Writer::start(p, error);
  REQUIRE(w);
  for (int i = 1; i <= 3; ++i) {
    REQUIRE(load(*w, i, "character:" + std::to_string(i)).status == LoadResult::Status::kNew);
  }
  const std::uint64_t acknowledged = w->save(record("character:1", 1), false);
  settle(*w, acknowledged);

  pg.stop();
  CHECK(w->save(record("character:1", 11), false) != 0);
  CHECK(w->save(record("character:2", 2), false) != 0);
  // The writer fails, keeps them and retries; meanwhile the queue fills to its bound.
  const auto deadline = Clock::now() + kPatience;
  while (w->stats().save_failures < 2 && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  CHECK(w->stats().save_failures >= 2);
  CHECK_FALSE(w->stats().healthy);
  CHECK_FALSE(w->last_error().empty());
  CHECK(w->save(record("character:3", 3), false) != 0);
  CHECK(w->full());
  CHECK(w->save(record("character:4", 4), false) == 0);  // a checkpoint of a new one: refused
  CHECK(w->save(record("character:2", 22), true) != 0);  // newer than the one waiting
  const std::uint64_t last = w->save(record("character:3", 33), true);      // a leave: taken
  CHECK(load(*w, 9, "character:1").status == LoadResult::Status::kFailed);  // no claim

  pg.start();
  settle(*w, last);
  const WriterStats s = w->stats();
  CHECK(s.healthy);
  CHECK(s.queue_depth == 0);
  CHECK(s.saves_stale == 0);
  CHECK_FALSE(w->full());
  auto reader = PgStore::open(pg.conninfo(), "reader", error);
  REQUIRE(reader);
  StoreStatus status;
  CHECK(reader->load("character:1", status)->x == 11);
  CHECK(reader->load("character:2", status)->x == 22);
  CHECK(reader->load("character:3", status)->x == 33);
  CHECK_FALSE(reader->load("character:4", status));
}

TEST_CASE(
    "postgres: a row the database refuses fails its whole batch, which is written once "
    "it can be") {
  PgServer pg;
  auto w = writer(pg, "west");
  for (int i = 1; i <= 3; ++i) {
    REQUIRE(load(*w, i, "character:" + std::to_string(i)).status == LoadResult::Status::kNew);
  }
  settle(*w, w->save(record("character:1", 1), false));
  // An operator's constraint one row of the next batch breaks.
  const auto sql = [&](const char* statement) {
    PGconn* c = PQconnectdb(pg.conninfo().c_str());
    REQUIRE(PQstatus(c) == CONNECTION_OK);
    PGresult* r = PQexec(c, statement);
    CHECK(PQresultStatus(r) == PGRES_COMMAND_OK);
    PQclear(r);
    PQfinish(c);
  };
  sql("ALTER TABLE characters ADD CONSTRAINT small_x CHECK (x < 1000)");
  // The row it refuses goes first: whenever the writer wakes, the batch it takes holds
  // it, and a failed batch stays queued, so the two saves after it join its retry (a
  // good save queued first could be committed alone before the others arrive).
  w->save(record("character:2", 2000), false);
  w->save(record("character:1", 10), false);
  const std::uint64_t last = w->save(record("character:3", 30), false);
  const auto deadline = Clock::now() + kPatience;
  while (w->stats().save_failures < 2 && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  CHECK(w->stats().save_failures >= 2);
  CHECK(w->last_error().find("small_x") != std::string::npos);
  CHECK(w->stats().saves_committed == 1);  // none of the batch
  CHECK(x_of(pg, "character:1") == 1);     // the batch rolled back whole
  CHECK(x_of(pg, "character:2") == -1);
  sql("ALTER TABLE characters DROP CONSTRAINT small_x");
  settle(*w, last);
  CHECK(w->stats().healthy);
  CHECK(w->stats().saves_stale == 0);
  CHECK(w->stats().saves_committed == 4);
  CHECK(owner_of(pg, "character:2") == std::pair<std::string, long>{"west", 1});
  CHECK(x_of(pg, "character:1") == 10);
  CHECK(x_of(pg, "character:2") == 2000);
  CHECK(x_of(pg, "character:3") == 30);
}
