// Crash and restart (docs/persistence.md, "What is guaranteed"): the real zone-server is
// SIGKILLed while bots walk, and started again on the same file. Every character comes
// back once, at its last checkpoint: no farther from where its bot last saw it than it
// could walk in one checkpoint interval (plus the time the last checkpoint took to
// commit), with its persistent properties. The loss is measured and printed. Every wait
// is for progress, with a generous deadline.
#include <doctest/doctest.h>

#include <signal.h>

#include <cmath>
#include <filesystem>
#include <numbers>
#include <set>
#include <string>

#include "harness.hpp"
#include "persist/sqlite_store.hpp"
#include "process.hpp"  // tests/support
#include "raw_http.hpp"
#include "test_util.hpp"

using namespace std::chrono_literals;
using namespace zone;

namespace {

constexpr auto kPatience = 60s;
constexpr int kBots = 20;
constexpr double kSpeed = 7.0;  // players.max_speed in configs/zone.yaml
constexpr double kCheckpointSeconds = 1.0;

struct Zone {
  std::unique_ptr<test::Process> process;
  std::uint16_t port = 0;
  std::uint16_t admin = 0;
};

Zone start_zone(const std::string& dir, const std::string& db, const std::string& log) {
  Zone z;
  z.process = std::make_unique<test::Process>(
      std::vector<std::string>{ZONE_SERVER_BIN, "--config", ZONE_SOURCE_DIR "/configs/zone.yaml",
                               "--port", "0", "--bind", "127.0.0.1", "--admin-port", "0", "--npcs",
                               "10", "--set",
                               "game.data_file=" ZONE_SOURCE_DIR "/configs/game/game.yaml", "--set",
                               "persist.path=" + db, "--set", "persist.checkpoint_seconds=1"},
      dir + "/" + log);
  const auto port =
      z.process->wait_for_log(std::regex(R"(listening on udp 127\.0\.0\.1:(\d+))"), kPatience);
  REQUIRE_MESSAGE(port, z.process->log());
  z.port = static_cast<std::uint16_t>(std::stoi(*port));
  const auto admin = z.process->wait_for_log(
      std::regex(R"(admin endpoint on http://127\.0\.0\.1:(\d+)/)"), kPatience);
  REQUIRE_MESSAGE(admin, z.process->log());
  z.admin = static_cast<std::uint16_t>(std::stoi(*admin));
  return z;
}

double metric(std::uint16_t admin_port, const std::string& name) {
  const std::string text = test::body_of(test::http_exchange(
      admin_port, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", 5s));
  const auto at = text.find("\n" + name + " ");
  return at == std::string::npos ? -1.0 : std::stod(text.substr(at + name.size() + 2));
}

std::string bot_name(int i) {
  return "crash-" + std::to_string(i);
}

bool all_playing(const std::vector<client::Bot*>& bots) {
  for (const client::Bot* b : bots) {
    if (b->phase() != client::Bot::Phase::kPlaying || b->replica().current().tick == 0) {
      return false;
    }
  }
  return true;
}

}  // namespace

TEST_CASE(
    "persist: SIGKILL a zone with bots walking, restart it: every character is back at its last "
    "checkpoint") {
  net::EnetLibrary enet;
  std::string dir = (std::filesystem::temp_directory_path() / "zone-crash-XXXXXX").string();
  REQUIRE(::mkdtemp(dir.data()) != nullptr);
  const std::string db = dir + "/data/zone.sqlite3";
  {
    // Each character starts with properties of its own, so "equal after the restart"
    // means something.
    std::string error;
    auto store = persist::SqliteStore::open(db, 1000, error);
    REQUIRE_MESSAGE(store, error);
    std::vector<persist::CharacterRecord> rows;
    for (int i = 0; i < kBots; ++i) {
      persist::CharacterRecord r;
      r.key = "name:" + bot_name(i);
      r.type = "player";
      r.x = 900.0 + 10.0 * (i % 5);
      r.y = 900.0 + 10.0 * (i / 5);
      r.properties = {{"health", 10 + i}, {"level", 1 + i}, {"xp", 1000 * i}};
      rows.push_back(r);
    }
    REQUIRE(store->save(rows).ok);
  }

  // First run: the bots walk, each in its own direction, through a few checkpoints.
  std::vector<replica::EntityState> last_seen(kBots);
  {
    Zone zone = start_zone(dir, db, "first.log");
    test::Clients clients(kBots + 4);
    std::vector<client::Bot*> bots;
    for (int i = 0; i < kBots; ++i) bots.push_back(&clients.add(bot_name(i), zone.port));
    const auto walk = [&](client::Bot& b) {
      const int i = static_cast<int>(std::find(bots.begin(), bots.end(), &b) - bots.begin());
      const double a = 2.0 * std::numbers::pi * i / kBots;
      return std::pair<float, float>{static_cast<float>(std::cos(a)),
                                     static_cast<float>(std::sin(a))};
    };
    REQUIRE(clients.pump_until([&] { return all_playing(bots); }, kPatience, walk));
    // Walk on until every character has been checkpointed at least twice.
    REQUIRE(clients.pump_until(
        [&] { return metric(zone.admin, "zone_persist_saves_total") >= 2 * kBots; }, kPatience,
        walk));
    clients.pump(1500ms, walk);
    for (int i = 0; i < kBots; ++i) last_seen[i] = test::self_of(*bots[i]);
    zone.process->signal(SIGKILL);
    REQUIRE_FALSE(zone.process->wait(kPatience).has_value());  // died by the signal
  }

  // Second run on the same file: the same names log in again.
  Zone zone = start_zone(dir, db, "second.log");
  test::Clients clients(kBots + 4);
  std::vector<client::Bot*> bots;
  for (int i = 0; i < kBots; ++i) bots.push_back(&clients.add(bot_name(i), zone.port));
  REQUIRE(clients.pump_until([&] { return all_playing(bots); }, kPatience));
  double worst_m = 0.0;
  double total_m = 0.0;
  std::set<std::uint32_t> ids;
  for (int i = 0; i < kBots; ++i) {
    const client::Bot& b = *bots[i];
    CAPTURE(b.name());
    ids.insert(b.welcome().entity_id);
    const double lost_m = test::distance_m(last_seen[i], test::self_of(b));
    worst_m = std::max(worst_m, lost_m);
    total_m += lost_m;
    // One checkpoint interval of walking, plus half a second for the commit and the
    // snapshot the bot last saw.
    CHECK(lost_m <= kSpeed * (kCheckpointSeconds + 0.5));
    CHECK(test::property_of(b, b.replica().self(), "health") == 10 + i);
    CHECK(test::property_of(b, b.replica().self(), "level") == 1 + i);
    CHECK(test::property_of(b, b.replica().self(), "xp") == 1000 * i);
  }
  CHECK(ids.size() == static_cast<std::size_t>(kBots));  // none duplicated
  // None lost: every login found its row; nobody else is in the zone.
  REQUIRE(clients.pump_until(
      [&] { return metric(zone.admin, "zone_persist_logins_restored_total") == kBots; },
      kPatience));
  CHECK(metric(zone.admin, "zone_players") == kBots);
  MESSAGE("crash loss over ", kBots, " characters (checkpoint every ", kCheckpointSeconds,
          " s, walking at ", kSpeed, " m/s): worst ", worst_m, " m (", worst_m / kSpeed,
          " s of play), mean ", total_m / kBots, " m (", total_m / kBots / kSpeed, " s)");
  zone.process->signal(SIGTERM);
  CHECK(zone.process->wait(kPatience) == 0);
  std::filesystem::remove_all(dir);
}

TEST_CASE(
    "persist: SIGTERM saves every player as it leaves, and the restart finds each exactly there") {
  net::EnetLibrary enet;
  std::string dir = (std::filesystem::temp_directory_path() / "zone-term-XXXXXX").string();
  REQUIRE(::mkdtemp(dir.data()) != nullptr);
  const std::string db = dir + "/data/zone.sqlite3";
  constexpr int kFew = 5;
  std::vector<replica::EntityState> last_seen(kFew);
  {
    Zone zone = start_zone(dir, db, "first.log");
    test::Clients clients(kFew + 2);
    std::vector<client::Bot*> bots;
    for (int i = 0; i < kFew; ++i)
      bots.push_back(&clients.add("term-" + std::to_string(i), zone.port));
    const auto walk = [](client::Bot&) { return std::pair<float, float>{0.6f, -0.8f}; };
    REQUIRE(clients.pump_until([&] { return all_playing(bots); }, kPatience, walk));
    clients.pump(1s, walk);
    clients.pump(500ms);  // standing still: what the bots see is where they are
    for (int i = 0; i < kFew; ++i) last_seen[i] = test::self_of(*bots[i]);
    zone.process->signal(SIGTERM);
    std::optional<int> code;
    code = zone.process->wait(kPatience, [&] { clients.pump(10ms); });
    CHECK(code == 0);
    CHECK_MESSAGE(zone.process->log().find("character store flushed") != std::string::npos,
                  zone.process->log());
  }
  Zone zone = start_zone(dir, db, "second.log");
  test::Clients clients(kFew + 2);
  std::vector<client::Bot*> bots;
  for (int i = 0; i < kFew; ++i)
    bots.push_back(&clients.add("term-" + std::to_string(i), zone.port));
  REQUIRE(clients.pump_until([&] { return all_playing(bots); }, kPatience));
  for (int i = 0; i < kFew; ++i) {
    CAPTURE(i);
    CHECK(test::distance_m(last_seen[i], test::self_of(*bots[i])) <= 0.02);  // the wire's cm
  }
  zone.process->signal(SIGTERM);
  CHECK(zone.process->wait(kPatience) == 0);
  std::filesystem::remove_all(dir);
}
