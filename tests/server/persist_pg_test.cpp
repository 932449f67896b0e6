// The shared character store in a real zone (docs/persistence.md, "One owner per row"):
// zones on a throwaway PostgreSQL (tests/persist/pg_server.hpp; label postgres). A player
// who leaves and comes back is where it left; two zones holding one character: the one
// that claimed it last writes it, the other's save is stale and it disconnects its copy; the
// database stopped under a running zone refuses logins with StoreUnavailable and /readyz says
// degraded, then everything queued is written once it is back. Deadlines are generous: each wait is
// for progress, never a measure of speed.
#include <doctest/doctest.h>
#include <libpq-fe.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "admin_http.hpp"
#include "harness.hpp"
#include "persist/pg_store.hpp"
#include "pg_server.hpp"
#include "test_util.hpp"

using namespace std::chrono_literals;
using namespace zone;
using persist::test::PgServer;
using protocol::DisconnectReason;

namespace {

constexpr auto kPatience = 30s;

// The connection string in a file only its owner may read, as the zone requires.
class ConninfoFile {
 public:
  explicit ConninfoFile(const std::string& conninfo) {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "zone-conninfo-XXXXXX").string();
    const int fd = ::mkstemp(pattern.data());
    REQUIRE(fd >= 0);
    ::close(fd);
    path_ = pattern;
    std::ofstream(path_) << conninfo << "\n";
    ::chmod(path_.c_str(), 0600);
  }
  ~ConninfoFile() { std::filesystem::remove(path_); }
  ConninfoFile(const ConninfoFile&) = delete;
  ConninfoFile& operator=(const ConninfoFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

config::ZoneConfig pg_zone(const ConninfoFile& file, const std::string& name) {
  config::ZoneConfig c = test::small_zone();
  c.name = name;
  c.game.data_file = ZONE_SOURCE_DIR "/configs/game/game.yaml";  // health, level, xp persist
  c.persist.enabled = true;
  c.persist.backend = config::PersistBackend::kPostgres;
  c.persist.conninfo_file = file.path();
  return c;
}

bool playing(const client::Bot& b) {
  return b.phase() == client::Bot::Phase::kPlaying && b.replica().current().tick != 0;
}

// The row as the database holds it, read without claiming it.
struct Row {
  double x = 0.0;
  std::string owner;
  long generation = -1;
};
Row row_of(const PgServer& pg, const std::string& key) {
  PGconn* c = PQconnectdb(pg.conninfo().c_str());
  REQUIRE(PQstatus(c) == CONNECTION_OK);
  const char* params[] = {key.c_str()};
  PGresult* r = PQexecParams(c, "SELECT x, owner, generation FROM characters WHERE key = $1", 1,
                             nullptr, params, nullptr, nullptr, 0);
  Row row;
  if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1) {
    row = {std::stod(PQgetvalue(r, 0, 0)), PQgetvalue(r, 0, 1), std::stol(PQgetvalue(r, 0, 2))};
  }
  PQclear(r);
  PQfinish(c);
  return row;
}

template <typename Pred>
bool wait_for(Pred pred) {
  const auto deadline = std::chrono::steady_clock::now() + kPatience;
  while (!pred()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

}  // namespace

TEST_CASE(
    "postgres zone: a player who leaves and comes back is where it left, its row the zone's") {
  PgServer pg;
  ConninfoFile file(pg.conninfo());
  net::EnetLibrary enet;
  test::ServerThread server(pg_zone(file, "west"));
  CHECK(server.zone().store()->path().find("postgres 127.0.0.1:") == 0);  // no secret
  double left_x = 0.0;
  {
    test::Clients clients;
    client::Bot& dave = clients.add("dave", server.port());
    REQUIRE(clients.pump_until([&] { return playing(dave); }, kPatience));
    const replica::EntityState start = test::self_of(dave);
    const auto east = [](client::Bot&) { return std::pair<float, float>{1.0f, 0.3f}; };
    REQUIRE(clients.pump_until([&] { return test::distance_m(start, test::self_of(dave)) > 3.0; },
                               kPatience, east));
    clients.pump(300ms);
    left_x = test::metres(test::self_of(dave).x());
    dave.quit(clients.host());
    clients.pump(200ms);
  }
  REQUIRE(wait_for([&] { return server.zone().store()->stats().saves_committed > 0; }));
  const Row row = row_of(pg, "name:dave");
  CHECK(row.x == doctest::Approx(left_x).epsilon(0.001));
  CHECK(row.owner == "west");
  {
    test::Clients clients;
    client::Bot& dave = clients.add("dave", server.port());
    REQUIRE(clients.pump_until([&] { return playing(dave); }, kPatience));
    CHECK(test::metres(test::self_of(dave).x()) == doctest::Approx(left_x).epsilon(0.001));
  }
  ZoneServer& zone = server.stop();
  CHECK(zone.counters().logins_loaded == 1);
  CHECK(zone.store()->stats().saves_stale == 0);
}

TEST_CASE(
    "postgres zone: a character claimed by another zone is written by that zone only, "
    "and leaves the first") {
  PgServer pg;
  ConninfoFile file(pg.conninfo());
  net::EnetLibrary enet;
  config::ZoneConfig west_cfg = pg_zone(file, "west");
  west_cfg.persist.checkpoint_seconds = 1;
  test::ServerThread west(west_cfg);
  test::ServerThread east(pg_zone(file, "east"));
  test::Clients clients;
  client::Bot& ann = clients.add("ann", west.port());
  REQUIRE(clients.pump_until([&] { return playing(ann); }, kPatience));
  REQUIRE(clients.pump_until([&] { return row_of(pg, "name:ann").owner == "west"; }, kPatience));
  // The same character logs in to east (open mode: by name): east claims the row.
  client::Bot& ann_east = clients.add("ann", east.port());
  REQUIRE(clients.pump_until([&] { return playing(ann_east); }, kPatience));
  CHECK(row_of(pg, "name:ann").owner == "east");
  const long generation = row_of(pg, "name:ann").generation;
  // West's next checkpoint is refused, counted, and changes nothing; west disconnects its
  // copy of the player, as a newer login of the same character (and does not save it).
  const CharacterStore& store = *west.zone().store();
  REQUIRE(clients.pump_until([&] { return store.stats().saves_stale >= 1; }, kPatience));
  REQUIRE(
      clients.pump_until([&] { return ann.phase() == client::Bot::Phase::kClosed; }, kPatience));
  CHECK(test::reason_of(ann) == test::reason_of(DisconnectReason::LoggedInElsewhere));
  CHECK(playing(ann_east));
  CHECK(store.stats().healthy);
  CHECK(row_of(pg, "name:ann").owner == "east");
  CHECK(row_of(pg, "name:ann").generation == generation);
  const std::uint16_t admin = west.zone().admin_port();
  CHECK(clients.pump_until(
      [&] {
        return test::admin_get(admin, "/metrics").body.find("\nzone_persist_saves_stale_total ") !=
               std::string::npos;
      },
      kPatience));
  CHECK(test::admin_get(admin, "/readyz").status == 200);  // not a failure of the store
}

TEST_CASE(
    "postgres zone: the database down refuses logins, /readyz says degraded, then recovers "
    "with nothing lost") {
  PgServer pg;
  ConninfoFile file(pg.conninfo());
  net::EnetLibrary enet;
  config::ZoneConfig cfg = pg_zone(file, "west");
  cfg.persist.max_queue = 1;
  cfg.persist.checkpoint_seconds = 1;
  test::ServerThread server(cfg);
  test::Clients clients;
  client::Bot& erin = clients.add("erin", server.port());
  REQUIRE(clients.pump_until([&] { return playing(erin); }, kPatience));
  pg.stop();
  const CharacterStore& store = *server.zone().store();
  REQUIRE(clients.pump_until([&] { return store.full(); }, kPatience));
  REQUIRE(clients.pump_until([&] { return store.stats().save_failures > 0; }, kPatience));
  const std::uint16_t admin = server.zone().admin_port();
  const test::HttpAnswer ready = test::admin_get(admin, "/readyz");
  CHECK(ready.status == 503);
  CHECK(ready.body.find("degraded") != std::string::npos);
  client::Bot& frank = clients.add("frank", server.port());
  REQUIRE(
      clients.pump_until([&] { return frank.phase() == client::Bot::Phase::kClosed; }, kPatience));
  CHECK(test::reason_of(frank) == test::reason_of(DisconnectReason::StoreUnavailable));
  CHECK(playing(erin));  // play goes on meanwhile
  // Erin leaves while the database is down: her last state is queued, past the bound.
  const std::uint64_t stale_before = store.stats().saves_stale;
  erin.quit(clients.host());
  clients.pump(200ms);
  pg.start();
  REQUIRE(clients.pump_until([&] { return !store.full() && store.stats().healthy; }, kPatience));
  REQUIRE(clients.pump_until([&] { return store.stats().queue_depth == 0; }, kPatience));
  CHECK(test::admin_get(admin, "/readyz").status == 200);
  CHECK(store.stats().saves_stale == stale_before);
  CHECK(row_of(pg, "name:erin").owner == "west");
  client::Bot& gina = clients.add("gina", server.port());
  REQUIRE(clients.pump_until([&] { return playing(gina); }, kPatience));
  server.stop();
}
