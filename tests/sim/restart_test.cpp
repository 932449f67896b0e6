// A zone restarted under its players (docs/persistence.md, "What is guaranteed"), seen as
// a load test sees it: client-sim --rejoin keeps its bots playing through a SIGKILL and a
// restart on the same ports and character file. Each bot notices the zone went away,
// logs in again, and compares what came back with what it last saw of itself: the
// truth check holds before and after, and every character is back at its last checkpoint
// with the game properties it had. Every wait is for progress, with a generous deadline.
#include <doctest/doctest.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <string>
#include <thread>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "persist/sqlite_store.hpp"
#include "process.hpp"
#include "truth_zone.hpp"

using namespace std::chrono_literals;
using zone::test::Process;
using zone::test::TruthZone;

namespace {

constexpr int kBots = 20;
constexpr double kSpeed = 7.0;  // players.max_speed in configs/zone.yaml; bots walk at it
constexpr double kCheckpointSeconds = 1.0;

double metric(std::uint16_t admin_port, const std::string& name) {
  httplib::Client http("127.0.0.1", admin_port);
  http.set_connection_timeout(2s);
  http.set_bearer_token_auth(zone::test::kTruthAdminToken);
  const auto res = http.Get("/metrics");
  if (!res || res->status != 200) return -1.0;
  const auto at = res->body.find("\n" + name + " ");
  return at == std::string::npos ? -1.0 : std::stod(res->body.substr(at + name.size() + 2));
}

template <typename Pred>
bool wait_until(Pred pred, std::chrono::seconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (pred()) return true;
    std::this_thread::sleep_for(100ms);
  }
  return false;
}

TruthZone start(const std::string& dir, const std::string& db, const std::string& log,
                std::uint16_t port = 0, std::uint16_t admin_port = 0) {
  std::vector<std::string> args = {
      "--npcs",
      "50",
      "--set",
      "world.max_x=600",
      "--set",
      "world.max_y=600",
      "--set",
      "network.client_bandwidth=64000",
      "--set",
      "game.data_file=" ZONE_SOURCE_DIR "/configs/game/game.yaml",
      "--set",
      "persist.path=" + db,
      "--set",
      "persist.checkpoint_seconds=" + std::to_string(static_cast<int>(kCheckpointSeconds))};
  if (port != 0) {
    args.insert(args.end(), {"--set", "network.port=" + std::to_string(port), "--set",
                             "admin.port=" + std::to_string(admin_port)});
  }
  TruthZone z = zone::test::start_truth_zone(ZONE_SERVER_BIN, ZONE_SOURCE_DIR "/configs/zone.yaml",
                                             args, dir + "/" + log, 30s);
  REQUIRE_MESSAGE(z.admin_port != 0, z.process->log());
  return z;
}

}  // namespace

TEST_CASE(
    "client-sim --rejoin: a zone SIGKILLed under its bots and restarted - each comes back at its "
    "checkpoint, truth-checked") {
  std::string dir = (std::filesystem::temp_directory_path() / "zone-restart-XXXXXX").string();
  REQUIRE(::mkdtemp(dir.data()) != nullptr);
  const std::string db = dir + "/zone.sqlite3";
  {
    // Each character starts with properties of its own, so "the same after the restart"
    // means something (client-sim's bots are bot-0, bot-1, ...; open mode keys by name).
    std::string error;
    auto store = zone::persist::SqliteStore::open(db, 1000, error);
    REQUIRE_MESSAGE(store, error);
    std::vector<zone::persist::CharacterRecord> rows;
    for (int i = 0; i < kBots; ++i) {
      zone::persist::CharacterRecord r;
      r.key = "name:bot-" + std::to_string(i);
      r.type = "player";
      r.x = 200.0 + 10.0 * (i % 5);
      r.y = 200.0 + 10.0 * (i / 5);
      r.properties = {{"health", 20 + i}, {"level", 1 + i}, {"xp", 1000 * i}};
      rows.push_back(r);
    }
    REQUIRE(store->save(rows).ok);
  }

  TruthZone first = start(dir, db, "first.log");
  const std::uint16_t port = first.port;
  const std::uint16_t admin_port = first.admin_port;
  const std::string token_file = dir + "/admin-token";
  std::ofstream(token_file) << zone::test::kTruthAdminToken << "\n";
  Process sim({ZONE_CLIENT_SIM_BIN,
               "--server",
               "127.0.0.1:" + std::to_string(port),
               "--bots",
               std::to_string(kBots),
               "--ramp",
               "200",
               "--duration",
               "300",
               "--scenario",
               "wander",
               "--seed",
               "11",
               "--rejoin",
               "--truth",
               "127.0.0.1:" + std::to_string(admin_port),
               "--truth-token-file=" + token_file,
               "--summary-json",
               dir + "/summary.json",
               "-q"},
              dir + "/client-sim.log");

  // Every bot is in, its row restored, and the zone has checkpointed each a few times;
  // at least 10 s of play, so that the zone's ticks are well past where the restarted
  // zone's will be when the bots come back (client-sim tells the two apart by that).
  const auto since = std::chrono::steady_clock::now();
  REQUIRE_MESSAGE(wait_until(
                      [&] {
                        return metric(admin_port, "zone_persist_logins_restored_total") == kBots &&
                               metric(admin_port, "zone_persist_saves_total") >= 3 * kBots &&
                               std::chrono::steady_clock::now() - since >= 10s;
                      },
                      120s),
                  sim.log());
  first.process->signal(SIGKILL);
  REQUIRE_FALSE(first.process->wait(30s).has_value());  // died by the signal

  // Again, on the same ports and file: the bots find it by themselves.
  TruthZone second = start(dir, db, "second.log", port, admin_port);
  REQUIRE_MESSAGE(
      wait_until([&] { return metric(admin_port, "zone_persist_logins_restored_total") == kBots; },
                 120s),
      sim.log());
  // A few checkpoints more of play, truth-checked, then client-sim ends its run.
  REQUIRE(wait_until([&] { return metric(admin_port, "zone_persist_saves_total") >= 5 * kBots; },
                     120s));
  // Nobody twice, nobody missing: the restarted zone holds the bots' characters alone.
  CHECK(metric(admin_port, "zone_players") == kBots);
  sim.signal(SIGINT);
  const auto code = sim.wait(60s);
  INFO("client-sim output:\n", sim.log());
  REQUIRE(code.has_value());
  CHECK(*code == 0);
  std::ifstream in(dir + "/summary.json");
  REQUIRE(in.good());
  const nlohmann::json s = nlohmann::json::parse(in);
  INFO("summary: ", s.dump(2));
  CHECK(s["bots_connected"].get<int>() == kBots);
  CHECK(s["protocol_violations"].get<int>() == 0);
  CHECK(s["truth_mismatches"].get<int>() == 0);
  CHECK(s["truth_checks"].get<int>() > 0);
  // Each bot came back once, at a position it had held (a checkpoint of it: within a
  // tick's walk of one of its own frames), with every game property as it last saw it.
  // How much play that lost depends on how busy the machine kept the writer: printed.
  CHECK(s["rejoins"].get<int>() == kBots);
  CHECK(s["rejoin_unheld"].get<int>() == 0);
  CHECK(s["rejoin_property_changes"].get<int>() == 0);
  MESSAGE("restart loss over ", kBots, " bots (checkpoint every ", kCheckpointSeconds,
          " s, walking at ", kSpeed, " m/s): play lost worst ",
          s["rejoin_lost_play_max_s"].get<double>(), " s, mean ",
          s["rejoin_lost_play_mean_s"].get<double>(), " s; distance worst ",
          s["rejoin_loss_max_m"].get<double>(), " m, mean ", s["rejoin_loss_mean_m"].get<double>(),
          " m; longest wait to come back ", s["rejoin_wait_max_s"].get<double>(), " s");
  CHECK(wait_until([&] { return metric(admin_port, "zone_players") == 0.0; }, 30s));
  second.process->signal(SIGTERM);
  CHECK(second.process->wait(30s) == 0);
  std::filesystem::remove_all(dir);
}
