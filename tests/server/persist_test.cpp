// The character store in a real zone (docs/persistence.md): a player who leaves and comes
// back is where it left with its persistent properties; a saved row is put back on login;
// a store that cannot write refuses new logins with StoreUnavailable and /readyz says
// degraded, then recovers without losing what was queued. Deadlines are generous: each
// wait is for progress, never a measure of speed.
#include <doctest/doctest.h>

#include <ctime>
#include <filesystem>
#include <random>
#include <string>

#include "admin_http.hpp"
#include "auth/issue.hpp"
#include "auth/keys.hpp"
#include "harness.hpp"
#include "persist/sqlite_store.hpp"
#include "test_util.hpp"

using namespace std::chrono_literals;
using namespace zone;
using protocol::DisconnectReason;

namespace {

constexpr auto kPatience = 30s;

std::string fresh_db() {
  std::random_device rd;
  const auto dir = std::filesystem::temp_directory_path() /
                   ("zone-persist-" + std::to_string(rd()) + std::to_string(rd()));
  return (dir / "zone.sqlite3").string();
}

config::ZoneConfig store_zone(const std::string& db) {
  config::ZoneConfig c = test::small_zone();
  c.game.data_file = ZONE_SOURCE_DIR "/configs/game/game.yaml";  // health, level, xp persist
  c.persist.enabled = true;
  c.persist.path = db;
  return c;
}

bool playing(const client::Bot& b) {
  return b.phase() == client::Bot::Phase::kPlaying && b.replica().current().tick != 0;
}

persist::CharacterRecord row_of(const std::string& db, const std::string& key) {
  std::string error;
  auto store = persist::SqliteStore::open(db, 1000, error);
  REQUIRE_MESSAGE(store, error);
  persist::StoreStatus status;
  auto row = store->load(key, status);
  REQUIRE_MESSAGE(status.ok, status.error);
  REQUIRE_MESSAGE(row, "no row for ", key);
  return *row;
}

}  // namespace

TEST_CASE("persist: a saved character comes back where it was, with its properties and groups") {
  net::EnetLibrary enet;
  const std::string db = fresh_db();
  {
    // A row as an earlier run left it.
    std::string error;
    auto store = persist::SqliteStore::open(db, 1000, error);
    REQUIRE_MESSAGE(store, error);
    persist::CharacterRecord r;
    r.key = "name:carol";
    r.type = "player";
    r.x = 123.25;
    r.y = 45.5;
    r.properties = {
        {"health", 37}, {"level", 9}, {"xp", 1234}, {"mana", 5}};  // mana: not persistent
    r.party_key = 777;
    REQUIRE(store->save(std::span(&r, 1)).ok);
  }
  test::ServerThread server(store_zone(db));
  test::Clients clients;
  client::Bot& carol = clients.add("carol", server.port());
  REQUIRE(clients.pump_until([&] { return playing(carol) && carol.party().id != 0; }, kPatience));
  const replica::EntityState self = test::self_of(carol);
  CHECK(test::metres(self.x()) == doctest::Approx(123.25).epsilon(0.001));
  CHECK(test::metres(self.y()) == doctest::Approx(45.5).epsilon(0.001));
  CHECK(test::property_of(carol, carol.replica().self(), "health") == 37);
  CHECK(test::property_of(carol, carol.replica().self(), "level") == 9);
  CHECK(test::property_of(carol, carol.replica().self(), "xp") == 1234);
  CHECK(test::property_of(carol, carol.replica().self(), "mana") != 5);  // its type's start
  ZoneServer& zone = server.stop();
  CHECK(zone.counters().logins_loaded == 1);
  const world::Entity* e = zone.world().find(carol.welcome().entity_id);
  REQUIRE(e != nullptr);
  CHECK(zone.world().parties().key_of(e->party) == 777);
  std::filesystem::remove_all(std::filesystem::path(db).parent_path());
}

TEST_CASE("persist: a player who leaves and comes back is where it left, nobody duplicated") {
  net::EnetLibrary enet;
  const std::string db = fresh_db();
  test::ServerThread server(store_zone(db));
  double left_x = 0.0;
  double left_y = 0.0;
  {
    test::Clients clients;
    client::Bot& dave = clients.add("dave", server.port());
    REQUIRE(clients.pump_until([&] { return playing(dave); }, kPatience));
    const replica::EntityState start = test::self_of(dave);
    // Walk until it has visibly moved, then stand and let the position settle.
    const auto east = [](client::Bot&) { return std::pair<float, float>{1.0f, 0.3f}; };
    REQUIRE(clients.pump_until([&] { return test::distance_m(start, test::self_of(dave)) > 3.0; },
                               kPatience, east));
    clients.pump(300ms);
    left_x = test::metres(test::self_of(dave).x());
    left_y = test::metres(test::self_of(dave).y());
    dave.quit(clients.host());
    clients.pump(200ms);
  }
  // Its save was queued as it left; wait for the row.
  const auto deadline = std::chrono::steady_clock::now() + kPatience;
  while (server.zone().store()->stats().saves_committed == 0 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(5ms);
  }
  const persist::CharacterRecord row = row_of(db, "name:dave");
  CHECK(row.x == doctest::Approx(left_x).epsilon(0.001));
  CHECK(row.y == doctest::Approx(left_y).epsilon(0.001));
  {
    test::Clients clients;
    client::Bot& dave = clients.add("dave", server.port());
    REQUIRE(clients.pump_until([&] { return playing(dave); }, kPatience));
    CHECK(test::metres(test::self_of(dave).x()) == doctest::Approx(left_x).epsilon(0.001));
    CHECK(test::metres(test::self_of(dave).y()) == doctest::Approx(left_y).epsilon(0.001));
    CHECK(test::property_of(dave, dave.replica().self(), "health") == row.properties.front().value);
  }
  ZoneServer& zone = server.stop();
  CHECK(zone.counters().joins == 2);
  CHECK(zone.counters().logins_loaded == 1);
  std::filesystem::remove_all(std::filesystem::path(db).parent_path());
}

TEST_CASE(
    "persist: a store that cannot write refuses logins, /readyz says degraded, then recovers") {
  net::EnetLibrary enet;
  const std::string db = fresh_db();
  config::ZoneConfig cfg = store_zone(db);
  cfg.persist.max_queue = 1;
  cfg.persist.checkpoint_seconds = 1;
  test::ServerThread server(cfg);
  std::string error;
  auto holder = persist::SqliteStore::open(db, 10, error);  // as another process would
  REQUIRE_MESSAGE(holder, error);
  test::Clients clients;
  client::Bot& erin = clients.add("erin", server.port());
  REQUIRE(clients.pump_until([&] { return playing(erin); }, kPatience));
  REQUIRE(persist::hold_write_lock_for_test(*holder, true).ok);
  // Erin's next checkpoint cannot be written: the queue holds one character, its bound.
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
  // The metrics are published a few times a second: wait for the refusal to show.
  const auto shows = [&](const std::string& line) {
    return clients.pump_until(
        [&] { return test::admin_get(admin, "/metrics").body.find(line) != std::string::npos; },
        kPatience);
  };
  CHECK(shows("\nzone_persist_queue_full 1"));
  CHECK(shows("zone_disconnects_total{reason=\"store_unavailable\"} 1"));
  // The lock goes: what was queued is written, and logins are taken again.
  REQUIRE(persist::hold_write_lock_for_test(*holder, false).ok);
  REQUIRE(clients.pump_until([&] { return !store.full() && store.stats().healthy; }, kPatience));
  CHECK(test::admin_get(admin, "/readyz").status == 200);
  client::Bot& gina = clients.add("gina", server.port());
  REQUIRE(clients.pump_until([&] { return playing(gina); }, kPatience));
  server.stop();
  CHECK(row_of(db, "name:erin").type == "player");
  std::filesystem::remove_all(std::filesystem::path(db).parent_path());
}

TEST_CASE("persist: in ticket mode the row is the ticket's character, whatever name it carries") {
  net::EnetLibrary enet;
  const std::string db = fresh_db();
  const auth::KeyPair keys = auth::generate_key_pair();
  const auto ticket = [&](std::uint64_t character, const std::string& name) {
    auth::TicketClaims c;
    c.account_id = 500 + character;
    c.character_id = character;
    c.issued_at = static_cast<std::uint64_t>(std::time(nullptr));
    c.expires_at = c.issued_at + 600;
    c.name = name;
    c.world = "emerald";
    std::vector<std::uint8_t> t;
    REQUIRE(auth::issue_ticket(c, keys.secret, t) == auth::LayoutError::kNone);
    return [t](client::Bot& b) { b.set_ticket(t); };
  };
  config::ZoneConfig cfg = store_zone(db);
  cfg.auth.mode = config::AuthMode::kTicket;
  cfg.auth.public_key = auth::to_hex(keys.public_key);
  cfg.auth.world = "emerald";
  test::ServerThread server(cfg);
  double left_x = 0.0;
  double left_y = 0.0;
  {
    test::Clients clients;
    client::Bot& hero = clients.add("ignored", server.port(), ticket(42, "Hero"));
    REQUIRE(clients.pump_until([&] { return playing(hero); }, kPatience));
    const replica::EntityState start = test::self_of(hero);
    const auto north = [](client::Bot&) { return std::pair<float, float>{0.0f, 1.0f}; };
    const auto south = [](client::Bot&) { return std::pair<float, float>{0.0f, -1.0f}; };
    const bool low = test::metres(start.y()) < 100.0;
    REQUIRE(clients.pump_until([&] { return test::distance_m(start, test::self_of(hero)) > 3.0; },
                               kPatience, low ? north : south));
    clients.pump(300ms);
    left_x = test::metres(test::self_of(hero).x());
    left_y = test::metres(test::self_of(hero).y());
    hero.quit(clients.host());
    clients.pump(200ms);
  }
  const auto deadline = std::chrono::steady_clock::now() + kPatience;
  while (server.zone().store()->stats().saves_committed == 0 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(5ms);
  }
  CHECK(row_of(db, "character:42").x == doctest::Approx(left_x).epsilon(0.001));
  CHECK(row_of(db, "character:42").y == doctest::Approx(left_y).epsilon(0.001));
  {
    // The login service renamed the character: the row follows the character id.
    test::Clients clients;
    client::Bot& hero = clients.add("ignored", server.port(), ticket(42, "Heroine"));
    client::Bot& other = clients.add("ignored", server.port(), ticket(43, "Hero"));
    REQUIRE(clients.pump_until([&] { return playing(hero) && playing(other); }, kPatience));
    CHECK(test::metres(test::self_of(hero).x()) == doctest::Approx(left_x).epsilon(0.001));
    CHECK(test::metres(test::self_of(hero).y()) == doctest::Approx(left_y).epsilon(0.001));
  }
  ZoneServer& zone = server.stop();
  CHECK(zone.counters().logins_loaded == 1);  // character 43 was new
  std::filesystem::remove_all(std::filesystem::path(db).parent_path());
}
