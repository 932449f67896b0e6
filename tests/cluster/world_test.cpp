// A world of two zones on one machine: a real nats-server on a free port, two real
// zone-server processes side by side, and client-sim bots in one of them. Checks that
// the bots see the other zone's entities across the border (exactly: client-sim's
// truth check against the zone's ground truth, ghosts included), and that when the other
// zone is killed with SIGKILL its ghosts leave within the bound while the bots carry on
// without a violation.
//
// Needs nats-server (Debian package nats-server; `make test` installs it). Without it
// every test here exits with code 77, which CTest reports as skipped.
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>

#include <httplib.h>
#include <nats/nats.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <iterator>
#include <map>
#include <random>

#include <libpq-fe.h>

#include "bus/nats_link.hpp"
#include "cluster/subjects.hpp"
#include "pg_server.hpp"
#include "process.hpp"
#include "truth_zone.hpp"

using namespace std::chrono_literals;
using zone::test::Process;

namespace {

// nats-server lives in /usr/sbin on Debian, which is not on every user's PATH.
std::string nats_server_or_skip() {
  std::vector<std::string> dirs = {"/usr/sbin", "/usr/bin", "/usr/local/bin", "/usr/local/sbin"};
  if (const char* path = std::getenv("PATH")) {
    std::stringstream in(path);
    for (std::string d; std::getline(in, d, ':');) dirs.push_back(d);
  }
  for (const std::string& d : dirs) {
    const std::string candidate = d + "/nats-server";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  std::fprintf(stderr,
               "SKIPPED: nats-server is not installed (Debian package nats-server; "
               "scripts/install-deps.sh --tests installs it)\n");
  std::exit(77);
}

std::string temp_dir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "zone-world-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  return pattern;
}

// A TCP port nobody listens on now (the kernel's pick; free again once closed).
std::uint16_t free_tcp_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  socklen_t len = sizeof a;
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0);
  ::close(fd);
  return ntohs(a.sin_port);
}

std::unique_ptr<Process> start_nats(const std::string& binary, const std::string& dir,
                                    std::uint16_t port) {
  auto p = std::make_unique<Process>(
      std::vector<std::string>{binary, "-a", "127.0.0.1", "-p", std::to_string(port)},
      dir + "/nats-" + std::to_string(port) + ".log");
  REQUIRE_MESSAGE(p->wait_for_log(std::regex("(Server is ready)"), 10s), p->log());
  return p;
}

struct ZoneRect {
  const char* name;
  int min_x, min_y, max_x, max_y;
};

// A world of the given zones, all on ephemeral loopback ports.
void write_world_of(const std::string& path, std::uint16_t nats_port,
                    std::initializer_list<ZoneRect> zones, int ghost_timeout_ms = 1000) {
  std::ofstream out(path);
  out << "nats:\n  url: \"nats://127.0.0.1:" << nats_port
      << "\"\n  subject_prefix: \"test\"\n"
         "ghosts:\n  distance: 40.0\n  timeout_ms: "
      << ghost_timeout_ms
      << "\n"
         "handoff:\n  timeout_ms: 2000\n  arrival_timeout_ms: 5000\n"
         "zones:\n";
  for (const ZoneRect& z : zones) {
    out << "  - name: " << z.name << "\n    rect: {min_x: " << z.min_x << ", min_y: " << z.min_y
        << ", max_x: " << z.max_x << ", max_y: " << z.max_y
        << "}\n    game: \"127.0.0.1:0\"\n    admin: \"127.0.0.1:0\"\n";
  }
}

// West: a 40 m square with no NPCs of its own, so everything its bots see of kind NPC
// is a ghost. East: a 100 x 40 m strip beside it, crowded with NPCs, about a third of
// them within the ghost distance of west.
void write_world(const std::string& path, std::uint16_t nats_port, int ghost_timeout_ms = 1000) {
  write_world_of(path, nats_port, {{"west", 0, 0, 40, 40}, {"east", 40, 0, 140, 40}},
                 ghost_timeout_ms);
}

using Zone = zone::test::TruthZone;

// `npc_behaviour`: the ghost tests' NPCs patrol, so that they move but stay in their zone
// (wanderers are handed over to the neighbour when they walk into it).
Zone start_zone(const std::string& dir, const std::string& world, const std::string& name, int npcs,
                const std::string& npc_behaviour = "patrol") {
  Zone z = zone::test::start_truth_zone(
      ZONE_SERVER_BIN, ZONE_SOURCE_DIR "/configs/zone.yaml",
      {"--world", world, "--zone", name, "--npcs", std::to_string(npcs), "--set",
       "threads.workers=1", "--set", "threads.network=1", "--set",
       "npcs.behaviour=" + npc_behaviour},
      dir + "/" + name + ".log");
  REQUIRE_MESSAGE(z.admin_port != 0, z.process->log());
  return z;
}

// A plain (unlabelled) sample of the zone's /metrics, or nullopt.
std::optional<double> metric(const Zone& z, const std::string& name) {
  httplib::Client http("127.0.0.1", z.admin_port);
  http.set_connection_timeout(1s);
  const auto res = http.Get("/metrics");
  if (!res || res->status != 200) return std::nullopt;
  std::smatch m;
  if (!std::regex_search(res->body, m, std::regex("\\n" + name + " ([0-9.e+-]+)\\n"))) {
    return std::nullopt;
  }
  return std::stod(m[1]);
}

// Polls until pred(value of the metric) holds; returns how long it took, or nullopt.
template <typename Pred>
std::optional<std::chrono::milliseconds> wait_metric(const Zone& z, const std::string& name,
                                                     Pred pred, std::chrono::milliseconds limit) {
  const auto start = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - start < limit) {
    const auto v = metric(z, name);
    if (v && pred(*v)) {
      return std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::steady_clock::now() - start);
    }
    std::this_thread::sleep_for(20ms);
  }
  return std::nullopt;
}

// The zone's live map data (/api/map for the whole world, `select` selected), or null.
nlohmann::json live_map(const Zone& z, std::uint32_t select = 0) {
  httplib::Client http("127.0.0.1", z.admin_port);
  http.set_connection_timeout(1s);
  http.set_bearer_token_auth(zone::test::kTruthAdminToken);
  const auto res = http.Get("/api/map" + (select ? "?select=" + std::to_string(select) : ""));
  if (!res || res->status != 200) return nullptr;
  return nlohmann::json::parse(res->body);
}

std::unique_ptr<Process> start_sim(const std::string& dir, const Zone& z, int bots, int seconds) {
  const std::string token_file = dir + "/admin-token";
  std::ofstream(token_file) << zone::test::kTruthAdminToken << "\n";
  return std::make_unique<Process>(
      std::vector<std::string>{
          ZONE_CLIENT_SIM_BIN, "--server", "127.0.0.1:" + std::to_string(z.port), "--bots",
          std::to_string(bots), "--duration", std::to_string(seconds), "--scenario", "wander",
          "--seed", "3", "--truth", "127.0.0.1:" + std::to_string(z.admin_port),
          "--truth-token-file=" + token_file, "--summary-json", dir + "/summary.json", "-q"},
      dir + "/client-sim.log");
}

// client-sim with `bots` bots entering at `entry`, truth-checked in every zone of `zones`.
std::unique_ptr<Process> start_world_sim(const std::string& dir, const Zone& entry,
                                         const std::vector<const Zone*>& zones, int bots,
                                         int seconds, const std::string& scenario) {
  const std::string token_file = dir + "/admin-token";
  std::ofstream(token_file) << zone::test::kTruthAdminToken << "\n";
  std::vector<std::string> args = {ZONE_CLIENT_SIM_BIN,
                                   "--server",
                                   "127.0.0.1:" + std::to_string(entry.port),
                                   "--bots",
                                   std::to_string(bots),
                                   "--duration",
                                   std::to_string(seconds),
                                   "--scenario",
                                   ZONE_SOURCE_DIR "/configs/scenarios/" + scenario + ".yaml",
                                   "--seed",
                                   "5",
                                   "--truth-token-file=" + token_file,
                                   "--summary-json",
                                   dir + "/summary.json",
                                   "-q"};
  for (const Zone* z : zones) {
    args.push_back("--truth");
    args.push_back("127.0.0.1:" + std::to_string(z->admin_port));
  }
  return std::make_unique<Process>(args, dir + "/client-sim.log");
}

nlohmann::json finish_sim(const std::string& dir, Process& sim, int seconds) {
  const auto code = sim.wait(std::chrono::seconds(seconds + 30));
  INFO("client-sim output:\n", sim.log());
  REQUIRE(code.has_value());
  CHECK(*code == 0);
  std::ifstream in(dir + "/summary.json");
  REQUIRE(in.good());
  return nlohmann::json::parse(in);
}

// A zone of the two-zone world west | east in ticket mode (zone-ticket's key, made once per
// test folder; auth.world emerald), with `npcs` NPCs.
Zone start_ticket_zone(const std::string& dir, std::uint16_t nats_port, const std::string& name,
                       int npcs) {
  if (!std::filesystem::exists(dir + "/ticket.pub")) {
    Process keygen({ZONE_TICKET_BIN, "keygen", "--out", dir}, dir + "/keygen.log");
    REQUIRE_MESSAGE(keygen.wait(10s) == 0, keygen.log());
    write_world_of(dir + "/world.yaml", nats_port,
                   {{"west", 0, 0, 40, 40}, {"east", 40, 0, 80, 40}});
  }
  std::string key;
  std::ifstream(dir + "/ticket.pub") >> key;
  REQUIRE(key.size() == 64);
  Zone z = zone::test::start_truth_zone(
      ZONE_SERVER_BIN, ZONE_SOURCE_DIR "/configs/zone.yaml",
      {"--world", dir + "/world.yaml", "--zone", name, "--npcs", std::to_string(npcs), "--set",
       "threads.workers=1", "--set", "threads.network=1", "--set", "auth.mode=ticket", "--set",
       "auth.public_key=" + key, "--set", "auth.world=emerald"},
      dir + "/" + name + ".log");
  REQUIRE_MESSAGE(z.admin_port != 0, z.process->log());
  return z;
}

// The lines of a zone's log that contain `needle` (for a failure's message).
std::string lines_with(const Zone& z, const std::string& needle) {
  std::istringstream in(z.process->log());
  std::string out, line;
  while (std::getline(in, line)) {
    if (line.find(needle) != std::string::npos) out += line + "\n";
  }
  return out;
}

// Lets client-sim run until done() holds (polled four times a second, after at least
// min_seconds), then stops it with SIGINT: it ends its run early and writes its summary.
// A run whose progress never comes ends by itself after the --duration it was started with,
// and the test's checks then say what did not happen. How fast bots cross borders
// depends on the machine's load; a test waits for the crossings, not for a clock.
nlohmann::json run_sim_until(const std::string& dir, Process& sim, int min_seconds, int max_seconds,
                             const std::function<bool()>& done) {
  const auto start = std::chrono::steady_clock::now();
  while (!sim.wait(250ms).has_value()) {
    const auto elapsed = std::chrono::steady_clock::now() - start;
    if (elapsed > std::chrono::seconds(max_seconds)) break;
    if (elapsed >= std::chrono::seconds(min_seconds) && done()) {
      sim.signal(SIGINT);
      break;
    }
  }
  return finish_sim(dir, sim, max_seconds);
}
}  // namespace

TEST_CASE("world: bots in one zone see the next zone's entities across the border, exactly") {
  const std::string nats = nats_server_or_skip();
  const std::string dir = temp_dir();
  const std::uint16_t nats_port = free_tcp_port();
  const auto bus = start_nats(nats, dir, nats_port);
  write_world(dir + "/world.yaml", nats_port);
  Zone west = start_zone(dir, dir + "/world.yaml", "west", 0);
  Zone east = start_zone(dir, dir + "/world.yaml", "east", 150);

  // East's NPCs near the border arrive in west as ghosts.
  CHECK(wait_metric(
      west, "zone_ghosts", [](double v) { return v > 10; }, 10s));
  CHECK(wait_metric(
      east, "zone_ghosts_out_total", [](double v) { return v > 0; }, 5s));
  CHECK(metric(west, "zone_bus_connected") == 1.0);

  // West's live map: the band its AOI covers, east's rectangle and name, and east's
  // entities as ghosts (kind 4: west has no entities of its own yet).
  const nlohmann::json map = live_map(west);
  REQUIRE(map.is_object());
  INFO("west's map: ", map.dump());
  REQUIRE(map.contains("zone"));
  const nlohmann::json& in_west = map.at("zone");
  CHECK(in_west.at("name") == "west");
  CHECK(in_west.at("covered") == nlohmann::json::array({-40.0, -40.0, 80.0, 80.0}));
  REQUIRE(in_west.at("neighbours").size() == 1);
  const nlohmann::json& east_here = in_west.at("neighbours")[0];
  CHECK(east_here.at("name") == "east");
  CHECK(east_here.at("index") == 1);
  CHECK(east_here.at("rect") == nlohmann::json::array({40.0, 0.0, 140.0, 40.0}));
  CHECK(east_here.at("ghosts").get<int>() > 0);
  CHECK(east_here.at("ghosts") == in_west.at("ghosts"));
  const nlohmann::json& e = map.at("entities");
  CHECK(e.size() == 4 * in_west.at("ghosts").get<std::size_t>());
  std::uint32_t ghost = 0;
  for (std::size_t i = 0; i + 3 < e.size(); i += 4) {
    CHECK(e[i + 1] == 4);
    CHECK((e[i].get<std::uint32_t>() >> 26) == 1u);  // east's index in the top bits
    ghost = e[i].get<std::uint32_t>();
  }
  // A selected ghost names its owner (published within a frame or two, ~200 ms each,
  // unless it walked away from the border meanwhile: then another one).
  nlohmann::json selected;
  for (int attempt = 0; attempt < 20 && ghost != 0 && !selected.is_object(); ++attempt) {
    live_map(west, ghost);
    std::this_thread::sleep_for(300ms);
    const nlohmann::json again = live_map(west, ghost);
    REQUIRE(again.is_object());
    selected = again.at("selected");
    if (!selected.is_object() && again.at("entities").size() >= 4) {
      ghost = again.at("entities")[0].get<std::uint32_t>();
    }
  }
  REQUIRE(selected.is_object());
  CHECK(selected.at("owner") == nlohmann::json{{"index", 1}, {"name", "east"}});
  // East has west as a neighbour, with no ghosts from it (west has no entities).
  const nlohmann::json east_map = live_map(east);
  REQUIRE(east_map.is_object());
  REQUIRE(east_map.at("zone").at("neighbours").size() == 1);
  CHECK(east_map.at("zone").at("neighbours")[0].at("name") == "west");
  CHECK(east_map.at("zone").at("neighbours")[0].at("ghosts") == 0);
  CHECK(east_map.at("zone").at("ghosts") == 0);

  // Bots in west: west has no NPCs, so the NPCs they see are east's, through ghosts.
  const int seconds = 8;
  auto sim = start_sim(dir, west, 4, seconds);
  const nlohmann::json s = finish_sim(dir, *sim, seconds);
  INFO("summary: ", s.dump(2));
  CHECK(s["bots_connected"].get<int>() == 4);
  CHECK(s["protocol_violations"].get<int>() == 0);
  CHECK(s["truth_mismatches"].get<int>() == 0);
  CHECK(s["truth_checks"].get<int>() > 0);
  // More enters than the 3 other bots could give each bot: ghosts were seen.
  CHECK(s["enters_total"].get<int>() > 4 * 3 + 10);
  CHECK(s["entities_in_view_avg"].get<double>() > 3.0);

  for (Zone* z : {&west, &east}) {
    z->process->signal(SIGTERM);
    CHECK(z->process->wait(5s) == 0);
  }
}

TEST_CASE("world: a zone killed with SIGKILL loses its ghosts in its neighbour within the bound") {
  const std::string nats = nats_server_or_skip();
  const std::string dir = temp_dir();
  const std::uint16_t nats_port = free_tcp_port();
  const auto bus = start_nats(nats, dir, nats_port);
  write_world(dir + "/world.yaml", nats_port);
  Zone west = start_zone(dir, dir + "/world.yaml", "west", 0);
  Zone east = start_zone(dir, dir + "/world.yaml", "east", 150);
  REQUIRE(wait_metric(
      west, "zone_ghosts", [](double v) { return v > 10; }, 10s));

  const int seconds = 10;
  auto sim = start_sim(dir, west, 4, seconds);
  std::this_thread::sleep_for(4s);
  east.process->signal(SIGKILL);
  // ghosts.timeout_ms is 1000: allow that, a tick, and this poll's own latency.
  const auto gone = wait_metric(
      west, "zone_ghosts", [](double v) { return v == 0; }, 3s);
  REQUIRE(gone.has_value());
  MESSAGE("ghosts gone " << gone->count() << " ms after SIGKILL");
  CHECK(*gone <= 1600ms);
  CHECK(west.process->running());

  // The bots saw the ghosts leave by the usual rules: no violation, no mismatch.
  const nlohmann::json s = finish_sim(dir, *sim, seconds);
  INFO("summary: ", s.dump(2));
  CHECK(s["bots_connected"].get<int>() == 4);
  CHECK(s["disconnects"].get<int>() == 0);
  CHECK(s["protocol_violations"].get<int>() == 0);
  CHECK(s["truth_mismatches"].get<int>() == 0);
  CHECK(s["leaves_total"].get<int>() > 0);
  west.process->signal(SIGTERM);
  CHECK(west.process->wait(5s) == 0);
}

TEST_CASE("world: a zone restarted within the ghost timeout: its old ghosts go at once") {
  const std::string nats = nats_server_or_skip();
  const std::string dir = temp_dir();
  const std::uint16_t nats_port = free_tcp_port();
  const auto bus = start_nats(nats, dir, nats_port);
  // A timeout far longer than the restart: only the new epoch can clear the old ghosts.
  write_world(dir + "/world.yaml", nats_port, 20000);
  Zone west = start_zone(dir, dir + "/world.yaml", "west", 0);
  Zone east = start_zone(dir, dir + "/world.yaml", "east", 150);
  REQUIRE(wait_metric(
      west, "zone_ghosts", [](double v) { return v > 10; }, 10s));

  const int seconds = 10;
  auto sim = start_sim(dir, west, 4, seconds);
  std::this_thread::sleep_for(3s);
  east.process->signal(SIGKILL);
  east.process->wait(5s);  // reaped (death by signal: no exit code)
  CHECK_FALSE(east.process->running());
  Zone again = start_zone(dir, dir + "/world.yaml", "east", 150);
  const std::string restarted = "zone_ghost_changes_total\\{change=\"restarted\"\\}";
  CHECK(wait_metric(
      west, restarted, [](double v) { return v > 10; }, 10s));
  CHECK(wait_metric(
      west, "zone_ghosts", [](double v) { return v > 10; }, 10s));
  CHECK(metric(west, "zone_ghost_changes_total\\{change=\"expired\"\\}") == 0.0);

  // The bots saw the old ghosts leave and the new ones enter: no violation, no mismatch.
  const nlohmann::json s = finish_sim(dir, *sim, seconds);
  INFO("summary: ", s.dump(2));
  CHECK(s["bots_connected"].get<int>() == 4);
  CHECK(s["disconnects"].get<int>() == 0);
  CHECK(s["protocol_violations"].get<int>() == 0);
  CHECK(s["truth_mismatches"].get<int>() == 0);
  for (Zone* z : {&west, &again}) {
    z->process->signal(SIGTERM);
    CHECK(z->process->wait(5s) == 0);
  }
}

TEST_CASE("world: a zone starts without NATS, and ghosts flow once the bus is up") {
  const std::string nats = nats_server_or_skip();
  const std::string dir = temp_dir();
  const std::uint16_t nats_port = free_tcp_port();
  write_world(dir + "/world.yaml", nats_port);
  Zone west = start_zone(dir, dir + "/world.yaml", "west", 0);
  Zone east = start_zone(dir, dir + "/world.yaml", "east", 150);
  // /metrics is first published after the first ticks.
  CHECK(wait_metric(
      west, "zone_bus_connected", [](double v) { return v == 0.0; }, 3s));
  CHECK(metric(west, "zone_ghosts") == 0.0);
  const auto bus = start_nats(nats, dir, nats_port);
  CHECK(wait_metric(
      west, "zone_ghosts", [](double v) { return v > 10; }, 10s));
  CHECK(metric(west, "zone_bus_connected") == 1.0);
  for (Zone* z : {&west, &east}) {
    z->process->signal(SIGTERM);
    CHECK(z->process->wait(5s) == 0);
  }
}

TEST_CASE("world: NATS restarted mid-run: zones reconnect and ghosts resume") {
  const std::string nats = nats_server_or_skip();
  const std::string dir = temp_dir();
  const std::uint16_t nats_port = free_tcp_port();
  auto bus = start_nats(nats, dir, nats_port);
  write_world(dir + "/world.yaml", nats_port);
  Zone west = start_zone(dir, dir + "/world.yaml", "west", 0);
  Zone east = start_zone(dir, dir + "/world.yaml", "east", 150);
  REQUIRE(wait_metric(
      west, "zone_ghosts", [](double v) { return v > 10; }, 10s));
  bus->signal(SIGKILL);
  bus->wait(5s);
  // West hears nothing from east: its ghosts leave after the timeout.
  CHECK(wait_metric(
      west, "zone_ghosts", [](double v) { return v == 0; }, 3s));
  CHECK(metric(west, "zone_bus_connected") == 0.0);
  bus = start_nats(nats, dir, nats_port);
  CHECK(wait_metric(
      west, "zone_ghosts", [](double v) { return v > 10; }, 10s));
  CHECK(metric(west, "zone_bus_connected") == 1.0);
  for (Zone* z : {&west, &east}) {
    CHECK(z->process->running());
    z->process->signal(SIGTERM);
    CHECK(z->process->wait(5s) == 0);
  }
}

// Combat across the border (docs/world.md, "Actions across borders"): both zones run the
// sample game's rules; west has no NPCs, so its bots' attacks on NPCs are attacks on
// east's NPCs through their ghosts, forwarded to east and resolved there. Bots that walk
// into east are handed over and fight on there (and may strike bots still in west).
// Every event (hits, deaths) reached exactly the bots that held its entity, in whichever
// zone they were, and attacks across the border did happen and hit.
TEST_CASE("world: bots fight across the border - actions on ghosts resolve in the owner zone") {
  const std::string nats = nats_server_or_skip();
  const std::string dir = temp_dir();
  const std::uint16_t nats_port = free_tcp_port();
  const auto bus = start_nats(nats, dir, nats_port);
  write_world(dir + "/world.yaml", nats_port);
  const auto start_game_zone = [&](const std::string& name, int npcs) {
    Zone z = zone::test::start_truth_zone(
        ZONE_SERVER_BIN, ZONE_SOURCE_DIR "/configs/zone.yaml",
        {"--world", dir + "/world.yaml", "--zone", name, "--npcs", std::to_string(npcs), "--set",
         "threads.workers=1", "--set", "threads.network=1", "--set", "npcs.behaviour=patrol",
         "--set", "game.data_file=" ZONE_SOURCE_DIR "/configs/game/game.yaml", "--set",
         "game.scripts_dir=" ZONE_SOURCE_DIR "/configs/game"},
        dir + "/" + name + ".log");
    REQUIRE_MESSAGE(z.admin_port != 0, z.process->log());
    return z;
  };
  Zone west = start_game_zone("west", 0);
  Zone east = start_game_zone("east", 150);
  REQUIRE(wait_metric(
      west, "zone_ghosts", [](double v) { return v > 10; }, 10s));

  const int seconds = 25;
  const int bots = 8;
  auto sim = start_world_sim(dir, west, {&west, &east}, bots, seconds, "combat");
  const nlohmann::json s = finish_sim(dir, *sim, seconds);
  INFO("summary: ", s.dump(2));
  INFO("west's log:\n", west.process->log());
  CHECK(s["bots_connected"].get<int>() == bots);
  CHECK(s["protocol_violations"].get<int>() == 0);
  CHECK(s["truth_mismatches"].get<int>() == 0);
  CHECK(s["truth_checks"].get<int>() > 0);
  CHECK(s["actions_ok"].get<std::uint64_t>() > 0);
  CHECK(s["events_by_kind"].value("hit", 0) > 0);
  CHECK(s["events_by_kind"].value("chat", 0) > 0);  // the bots' say lines, exact too
  CHECK(s["truth_event_checks"].get<std::uint64_t>() > 0);
  CHECK(s["truth_event_missing"].get<std::uint64_t>() == 0);
  CHECK(s["truth_event_extra"].get<std::uint64_t>() == 0);
  CHECK(s["truth_event_duplicate"].get<std::uint64_t>() == 0);
  CHECK(s["truth_event_before_spawn"].get<std::uint64_t>() == 0);

  // West forwarded attacks on east's NPCs, and east's rules carried some out (in range,
  // off cooldown): cross-border hits happened. Nothing was forged, so nothing dropped
  // but what the race of a ghost list with an action may cost.
  const std::string sent = "zone_actions_forwarded_total\\{result=\"sent\"\\}";
  const std::string ok = "zone_remote_actions_total\\{result=\"ok\"\\}";
  const auto west_sent = metric(west, sent);
  const auto east_ok = metric(east, ok);
  REQUIRE(west_sent.has_value());
  REQUIRE(east_ok.has_value());
  CHECK(*west_sent > 0);
  CHECK(*east_ok > 0);
  // A target west's players could strike stands within the ghost distance of west: the
  // events of those hits came back to west with east's ghost lists.
  CHECK(metric(west, "zone_border_events_total\\{direction=\"in\"\\}").value_or(0) > 0);
  // For the record: what became of the rest (refused by the rules: out of range, cooldown,
  // dead; dropped: an actor's ghost still walking to where its player respawned, at the
  // ghosts' speed bound), and the events that crossed.
  const auto count = [](const Zone& z, const std::string& name) {
    return metric(z, name).value_or(-1.0);
  };
  MESSAGE("forwarded by west: ", *west_sent, "; in east: ok ", *east_ok, ", refused ",
          count(east, "zone_remote_actions_total\\{result=\"refused\"\\}"), ", dropped ",
          count(east, "zone_remote_actions_total\\{result=\"dropped\"\\}"), ", rate limited ",
          count(east, "zone_remote_actions_total\\{result=\"rate_limited\"\\}"),
          "; forwarded by east: ", count(east, sent), "; border events into west: ",
          count(west, "zone_border_events_total\\{direction=\"in\"\\}"),
          "; truth event checks: ", s["truth_event_checks"].get<std::uint64_t>(),
          ", hits seen: ", s["events_by_kind"].value("hit", 0));
  for (Zone* z : {&west, &east}) {
    z->process->signal(SIGTERM);
    CHECK(z->process->wait(5s) == 0);
  }
}

TEST_CASE("world: bots walk back and forth across the border, exact in both zones") {
  const std::string nats = nats_server_or_skip();
  const std::string dir = temp_dir();
  const std::uint16_t nats_port = free_tcp_port();
  const auto bus = start_nats(nats, dir, nats_port);
  write_world_of(dir + "/world.yaml", nats_port, {{"west", 0, 0, 40, 40}, {"east", 40, 0, 80, 40}});
  Zone west = start_zone(dir, dir + "/world.yaml", "west", 4, "wander");
  Zone east = start_zone(dir, dir + "/world.yaml", "east", 4, "wander");
  REQUIRE(wait_metric(
      west, "zone_ghosts", [](double v) { return v > 0; }, 10s));

  // The bots ignore the zones' edges: every few seconds one walks into the other zone,
  // is handed over, follows the Transfer and walks on, and back again. The run lasts
  // until more than half as many players as there are bots arrived in each zone (at
  // least 30 s; a minute on an idle machine, longer on a loaded one).
  const int min_seconds = 30;
  const int bots = 12;
  const std::string accepted = "zone_handoffs_out_total\\{result=\"accepted\"\\}";
  const std::string arrived = "zone_arrivals_total\\{result=\"arrived\"\\}";
  const std::string expired = "zone_arrivals_total\\{result=\"expired\"\\}";
  double expired_while_playing = 0;
  auto sim = start_world_sim(dir, west, {&west, &east}, bots, 180, "border");
  const nlohmann::json s = run_sim_until(dir, *sim, min_seconds, 180, [&] {
    for (const Zone* z : {&west, &east}) {
      if (metric(*z, arrived).value_or(0) <= bots / 2) return false;
    }
    // Until the bots quit, every player handed over arrived: none expired on the way.
    for (const Zone* z : {&west, &east}) expired_while_playing += metric(*z, expired).value_or(0);
    return true;
  });
  CHECK(expired_while_playing == 0.0);
  INFO("summary: ", s.dump(2));
  CHECK(s["bots_connected"].get<int>() == bots);
  CHECK(s["disconnects"].get<int>() == 0);  // no lost player: nobody was dropped
  CHECK(s["protocol_violations"].get<int>() == 0);
  CHECK(s["transfer_id_changes"].get<int>() == 0);  // ids unchanged
  CHECK(s["transfers"].get<int>() > bots);
  CHECK(s["truth_mismatches"].get<int>() == 0);  // no duplicate, nothing missing
  CHECK(s["truth_checks"].get<int>() > bots * min_seconds / 2);

  for (const Zone* z : {&west, &east}) {
    CHECK(metric(*z, accepted).value_or(0) > bots / 2);
    CHECK(metric(*z, arrived).value_or(0) > bots / 2);
    CHECK(metric(*z, "zone_handoffs_out_total\\{result=\"timed_out\"\\}") == 0.0);
    CHECK(metric(*z, "zone_arrival_tokens_refused_total") == 0.0);
  }
  // Every player one zone handed over, the other took, and its client arrived there;
  // only a bot that quit on the way, as the run ended, never came (its arrival expires
  // after handoff.arrival_timeout_ms, 5 s here).
  // (Handoffs count the NPCs that wander across too; transfers only players.)
  const auto accounted = [&](const Zone& from, const Zone& to) {
    const auto settled = wait_metric(
        to, expired,
        [&](double e) {
          return metric(from, "zone_transfers_out_total").value_or(-1) ==
                 metric(to, arrived).value_or(0) + e;
        },
        8s);
    return settled.has_value() && metric(to, expired).value_or(9) <= 2;
  };
  CHECK(accounted(west, east));
  CHECK(accounted(east, west));
  // The zones' wandering NPCs walked across too (handoffs without a client).
  double npc_handoffs = 0;
  for (const Zone* z : {&west, &east}) {
    npc_handoffs +=
        metric(*z, accepted).value_or(0) - metric(*z, "zone_transfers_out_total").value_or(0);
  }
  CHECK(npc_handoffs > 0);
  // Once the bots quit, nobody is left behind in either zone.
  CHECK(wait_metric(
      west, "zone_players", [](double v) { return v == 0; }, 5s));
  CHECK(wait_metric(
      east, "zone_players", [](double v) { return v == 0; }, 5s));
  for (Zone* z : {&west, &east}) {
    z->process->signal(SIGTERM);
    CHECK(z->process->wait(5s) == 0);
  }
}

TEST_CASE(
    "world: with a shared PostgreSQL store, players walking across are written by the "
    "zone that holds them") {
  const std::string nats = nats_server_or_skip();
  zone::persist::test::PgServer pg;  // exits 77 (skipped) without PostgreSQL
  const std::string dir = temp_dir();
  const std::string conninfo_file = dir + "/pg.conninfo";
  std::ofstream(conninfo_file) << pg.conninfo() << "\n";
  std::filesystem::permissions(
      conninfo_file, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  const std::uint16_t nats_port = free_tcp_port();
  const auto bus = start_nats(nats, dir, nats_port);
  write_world_of(dir + "/world.yaml", nats_port, {{"west", 0, 0, 40, 40}, {"east", 40, 0, 80, 40}});
  const auto start = [&](const std::string& name) {
    Zone z = zone::test::start_truth_zone(
        ZONE_SERVER_BIN, ZONE_SOURCE_DIR "/configs/zone.yaml",
        {"--world", dir + "/world.yaml", "--zone", name, "--npcs", "0", "--set",
         "threads.workers=1", "--set", "threads.network=1", "--set", "persist.backend=postgres",
         "--set", "persist.conninfo_file=" + conninfo_file, "--set",
         "persist.checkpoint_seconds=1"},
        dir + "/" + name + ".log");
    REQUIRE_MESSAGE(z.admin_port != 0, z.process->log());
    return z;
  };
  Zone west = start("west");
  Zone east = start("east");

  // Until players arrived both ways (each zone wrote rows it took over).
  const int bots = 4;
  const std::string arrived = "zone_arrivals_total\\{result=\"arrived\"\\}";
  auto sim = start_world_sim(dir, west, {&west, &east}, bots, 120, "border");
  const nlohmann::json s = run_sim_until(dir, *sim, 10, 120, [&] {
    return metric(west, arrived).value_or(0) > 0 && metric(east, arrived).value_or(0) > 0;
  });
  INFO("summary: ", s.dump(2));
  INFO("west's disconnects:\n", lines_with(west, "disconnected"));
  INFO("east's disconnects:\n", lines_with(east, "disconnected"));
  CHECK(s["bots_connected"].get<int>() == bots);
  // Nobody was disconnected: in particular no zone found a checkpoint of a player it held
  // stale (that would disconnect it as logged in elsewhere).
  CHECK(s["disconnects"].get<int>() == 0);
  CHECK(s["transfers"].get<int>() > 0);  // both ways: the arrivals below
  CHECK(s["truth_mismatches"].get<int>() == 0);
  for (const Zone* z : {&west, &east}) {
    CHECK(metric(*z, "zone_persist_saves_total").value_or(0) > 0);
    CHECK(metric(*z, "zone_persist_healthy") == 1.0);
    CHECK(metric(*z, arrived).value_or(0) > 0);
  }
  // The bots quit: each one's last save was taken by the zone it was in, so every
  // character has one row, owned by a zone of the world, none waiting.
  CHECK(wait_metric(
      west, "zone_persist_queue_depth", [](double v) { return v == 0; }, 10s));
  CHECK(wait_metric(
      east, "zone_persist_queue_depth", [](double v) { return v == 0; }, 10s));
  PGconn* c = PQconnectdb(pg.conninfo().c_str());
  REQUIRE(PQstatus(c) == CONNECTION_OK);
  PGresult* r = PQexec(c, "SELECT key, owner, generation FROM characters ORDER BY key");
  REQUIRE(PQresultStatus(r) == PGRES_TUPLES_OK);
  CHECK(PQntuples(r) == bots);
  for (int i = 0; i < PQntuples(r); ++i) {
    const std::string owner = PQgetvalue(r, i, 1);
    INFO(PQgetvalue(r, i, 0), " owned by '", owner, "' at generation ", PQgetvalue(r, i, 2));
    CHECK((owner == "west" || owner == "east"));
    CHECK(std::stol(PQgetvalue(r, i, 2)) >= 1);
  }
  PQclear(r);
  PQfinish(c);
  for (Zone* z : {&west, &east}) {
    z->process->signal(SIGTERM);
    CHECK(z->process->wait(5s) == 0);
  }
}

TEST_CASE("world: four zones in a 2 x 2 square: bots walk through the corner where all meet") {
  const std::string nats = nats_server_or_skip();
  const std::string dir = temp_dir();
  const std::uint16_t nats_port = free_tcp_port();
  const auto bus = start_nats(nats, dir, nats_port);
  write_world_of(
      dir + "/world.yaml", nats_port,
      {{"sw", 0, 0, 40, 40}, {"se", 40, 0, 80, 40}, {"nw", 0, 40, 40, 80}, {"ne", 40, 40, 80, 80}});
  Zone sw = start_zone(dir, dir + "/world.yaml", "sw", 2, "wander");
  Zone se = start_zone(dir, dir + "/world.yaml", "se", 2, "wander");
  Zone nw = start_zone(dir, dir + "/world.yaml", "nw", 2, "wander");
  Zone ne = start_zone(dir, dir + "/world.yaml", "ne", 2, "wander");
  // Every zone neighbours the three others (the corner counts): each hears from all three.
  for (const Zone* z : {&sw, &se, &nw, &ne}) {
    CHECK(wait_metric(
        *z, "zone_ghost_sources", [](double v) { return v == 3; }, 10s));
  }
  // The route (configs/scenarios/corner.yaml) crosses the corner diagonally twice a lap
  // (sw -> ne, nw -> se) and walks through all four zones. The run lasts until every
  // zone handed over and took in a player per bot (a lap each, about 30 s on an idle
  // machine).
  const int bots = 3;
  const std::string taken = "zone_handoffs_in_total\\{result=\"accepted\"\\}";
  auto sim = start_world_sim(dir, sw, {&sw, &se, &nw, &ne}, bots, 150, "corner");
  const nlohmann::json s = run_sim_until(dir, *sim, 10, 150, [&] {
    for (const Zone* z : {&sw, &se, &nw, &ne}) {
      if (metric(*z, "zone_transfers_out_total").value_or(0) < bots ||
          metric(*z, taken).value_or(0) < bots) {
        return false;
      }
    }
    return true;
  });
  INFO("summary: ", s.dump(2));
  CHECK(s["bots_connected"].get<int>() == bots);
  CHECK(s["disconnects"].get<int>() == 0);
  CHECK(s["protocol_violations"].get<int>() == 0);
  CHECK(s["transfer_id_changes"].get<int>() == 0);
  CHECK(s["truth_mismatches"].get<int>() == 0);
  CHECK(s["transfers"].get<int>() >= 4 * bots);  // a lap at least
  const std::string accepted = "zone_handoffs_out_total\\{result=\"accepted\"\\}";
  for (const Zone* z : {&sw, &se, &nw, &ne}) {
    CHECK(metric(*z, accepted).value_or(0) >= bots);  // every zone handed players on
  }
  // ... and took them over (the diagonal legs through the corner go from sw to ne and
  // from nw to se, or by a neighbour when a step lands a hair beside the corner).
  for (const Zone* z : {&sw, &se, &nw, &ne}) {
    CHECK(metric(*z, taken).value_or(0) >= bots);
    CHECK(metric(*z, "zone_handoffs_in_total\\{result=\"refused\"\\}") == 0.0);
  }
  for (Zone* z : {&sw, &se, &nw, &ne}) {
    z->process->signal(SIGTERM);
    CHECK(z->process->wait(5s) == 0);
  }
}

// Login tickets in a world: both zones in ticket mode with one key and one auth.world;
// client-sim signs each bot's ticket, and each bot presents it with every transfer token.
// The handoff carries the player's login, and every token is honoured with its own
// player's ticket: none is refused, and the bots play on across the border, truth-checked.
TEST_CASE("world: in ticket mode bots carry their tickets across the border") {
  const std::string nats = nats_server_or_skip();
  const std::string dir = temp_dir();
  const std::uint16_t nats_port = free_tcp_port();
  const auto bus = start_nats(nats, dir, nats_port);
  Zone west = start_ticket_zone(dir, nats_port, "west", 2);
  Zone east = start_ticket_zone(dir, nats_port, "east", 2);
  REQUIRE(wait_metric(
      west, "zone_ghosts", [](double v) { return v > 0; }, 10s));

  // Until players arrived both ways.
  const int seconds = 120;
  const int bots = 8;
  const std::string arrived = "zone_arrivals_total\\{result=\"arrived\"\\}";
  const std::string token_file = dir + "/admin-token";
  std::ofstream(token_file) << zone::test::kTruthAdminToken << "\n";
  Process sim({ZONE_CLIENT_SIM_BIN,
               "--server",
               "127.0.0.1:" + std::to_string(west.port),
               "--bots",
               std::to_string(bots),
               "--duration",
               std::to_string(seconds),
               "--scenario",
               ZONE_SOURCE_DIR "/configs/scenarios/border.yaml",
               "--seed",
               "5",
               "--truth-token-file=" + token_file,
               "--truth",
               "127.0.0.1:" + std::to_string(west.admin_port),
               "--truth",
               "127.0.0.1:" + std::to_string(east.admin_port),
               "--ticket-key",
               dir + "/ticket.key",
               "--ticket-world",
               "emerald",
               "--summary-json",
               dir + "/summary.json",
               "-q"},
              dir + "/client-sim.log");
  const nlohmann::json s = run_sim_until(dir, sim, 10, seconds, [&] {
    return metric(west, arrived).value_or(0) > 0 && metric(east, arrived).value_or(0) > 0;
  });
  INFO("summary: ", s.dump(2));
  CHECK(s["bots_connected"].get<int>() == bots);
  CHECK(s["disconnects"].get<int>() == 0);
  // What this test is about is that each crossing is honoured: some in each direction
  // (the arrivals below), none refused.
  CHECK(s["transfers"].get<int>() > 0);
  CHECK(s["transfer_id_changes"].get<int>() == 0);
  CHECK(s["truth_mismatches"].get<int>() == 0);
  for (const Zone* z : {&west, &east}) {
    CHECK(metric(*z, arrived).value_or(0) > 0);
    CHECK(metric(*z, "zone_arrival_tokens_refused_total") == 0.0);
    CHECK(metric(*z, "zone_auth_ticket_mode") == 1.0);
  }
  for (Zone* z : {&west, &east}) {
    z->process->signal(SIGTERM);
    CHECK(z->process->wait(5s) == 0);
  }
}

// One character, online once, across the world (docs/world.md): a character playing in
// west logs in again in east. East tells the world of the login; west's copy, older,
// leaves with reason 14 (logged in elsewhere) and east's plays on. Two client-sim runs
// of one bot each, with the same ticket key: both bots are bot-0, character 1.
TEST_CASE("world: a character that logs in in another zone leaves the zone it played in") {
  const std::string nats = nats_server_or_skip();
  const std::string dir = temp_dir();
  const std::uint16_t nats_port = free_tcp_port();
  const auto bus = start_nats(nats, dir, nats_port);
  Zone west = start_ticket_zone(dir, nats_port, "west", 0);
  Zone east = start_ticket_zone(dir, nats_port, "east", 0);
  for (const Zone* z : {&west, &east}) {
    REQUIRE(wait_metric(
        *z, "zone_bus_connected", [](double v) { return v == 1; }, 20s));
  }
  const auto sim = [&](const Zone& z, const std::string& name) {
    return std::make_unique<Process>(
        std::vector<std::string>{
            ZONE_CLIENT_SIM_BIN, "--server", "127.0.0.1:" + std::to_string(z.port), "--bots", "1",
            "--duration", "120", "--scenario", "idle", "--ticket-key", dir + "/ticket.key",
            "--ticket-world", "emerald", "--summary-json", dir + "/" + name + ".json"},
        dir + "/" + name + ".log");
  };
  auto first = sim(west, "first");
  REQUIRE(wait_metric(
      west, "zone_players", [](double v) { return v == 1; }, 30s));
  auto second = sim(east, "second");
  // West hears of east's login and lets its copy go; east's stays.
  CHECK(wait_metric(
      west, "zone_auth_logged_in_elsewhere_total", [](double v) { return v == 1; }, 30s));
  CHECK(wait_metric(
      west, "zone_players", [](double v) { return v == 0; }, 10s));
  CHECK(wait_metric(
      east, "zone_players", [](double v) { return v == 1; }, 10s));
  CHECK(metric(east, "zone_world_logins_total\\{direction=\"out\"\\}").value_or(0) >= 1);
  CHECK(metric(west, "zone_world_logins_total\\{direction=\"in\"\\}").value_or(0) >= 1);
  CHECK(metric(west, "zone_disconnects_total\\{reason=\"logged_in_elsewhere\"\\}") == 1.0);
  // West's notice of the first login reached east before east had the character: the
  // newer login is the one that plays.
  CHECK(metric(east, "zone_auth_logged_in_elsewhere_total") == 0.0);
  CHECK(
      first->wait_for_log(std::regex("disconnected by the server \\(logged in elsewhere\\)"), 10s));
  second->signal(SIGINT);
  first->signal(SIGINT);
  CHECK(second->wait(30s) == 0);
  CHECK(first->wait(30s) == 0);
  std::ifstream in(dir + "/second.json");
  REQUIRE(in.good());
  const nlohmann::json s = nlohmann::json::parse(in);
  CHECK(s["bots_connected"].get<int>() == 1);
  CHECK(s["disconnects"].get<int>() == 0);
  for (Zone* z : {&west, &east}) {
    z->process->signal(SIGTERM);
    CHECK(z->process->wait(5s) == 0);
  }
}

// ---- The bus with credentials and TLS (docs/security.md, "The bus"). ----------------

namespace {

bool run_shell(const std::string& script) {
  return std::system(("sh -c '" + script + "' >/dev/null 2>&1").c_str()) == 0;
}

// A throwaway CA, a server certificate for "localhost" and a client certificate per
// zone, made with openssl at test time (Debian package openssl; skipped without it).
void make_tls(const std::string& dir, std::initializer_list<const char*> zones) {
  if (!run_shell("command -v openssl")) {
    std::fprintf(stderr, "SKIPPED: openssl is not installed\n");
    std::exit(77);
  }
  const std::string ec = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
  std::string s = "set -e; cd " + dir + "; umask 077; openssl req -x509 " + ec +
                  " -keyout ca.key -out ca.pem -days 1 -subj /CN=zone-test-ca; "
                  "printf \"subjectAltName=DNS:localhost\\n\" > san.ext; ";
  const auto cert = [&](const std::string& name, const std::string& cn, bool san) {
    s += "openssl req " + ec + " -keyout " + name + ".key -out " + name + ".csr -subj /CN=" + cn +
         "; openssl x509 -req -in " + name + ".csr -CA ca.pem -CAkey ca.key -CAcreateserial -out " +
         name + ".pem -days 1" + (san ? " -extfile san.ext" : "") + "; ";
  };
  cert("server", "localhost", true);
  for (const char* z : zones) cert(z, z, false);
  REQUIRE_MESSAGE(run_shell(s), "openssl failed in " << dir);
}

std::string random_password() {
  std::random_device r;
  std::string out;
  for (int i = 0; i < 32; ++i) out += "0123456789abcdef"[r() % 16];
  return out;
}

// Writes `dir`/<zone>.password (mode 600) for every zone and a nats-server config that
// requires TLS (client certificates too when `verify`) and lets each zone's user publish
// and subscribe to exactly its subjects (cluster::bus_permissions).
std::string write_secure_nats(const std::string& dir, std::uint16_t port, const std::string& prefix,
                              std::initializer_list<const char*> zones, bool verify,
                              std::map<std::string, std::string>& passwords) {
  std::ostringstream users;
  for (const char* z : zones) {
    passwords[z] = random_password();
    const std::string file = dir + "/" + z + ".password";
    std::ofstream(file) << passwords[z] << "\n";
    std::filesystem::permissions(
        file, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    const zone::cluster::BusPermissions p = zone::cluster::bus_permissions(prefix, z);
    const auto list = [](const std::vector<std::string>& subjects) {
      std::string out;
      for (const std::string& s : subjects) out += (out.empty() ? "\"" : ", \"") + s + "\"";
      return "[" + out + "]";
    };
    users << "    {user: \"" << z << "\", password: \"" << passwords[z]
          << "\", permissions: {publish: {allow: " << list(p.publish)
          << "}, subscribe: {allow: " << list(p.subscribe) << "}}},\n";
  }
  const std::string conf = dir + "/nats.conf";
  std::ofstream(conf) << "host: 127.0.0.1\nport: " << port << "\ntls: {cert_file: \"" << dir
                      << "/server.pem\", key_file: \"" << dir << "/server.key\", ca_file: \"" << dir
                      << "/ca.pem\", verify: " << (verify ? "true" : "false")
                      << "}\nauthorization: {\n  users: [\n"
                      << users.str() << "  ]\n}\n";
  return conf;
}

std::unique_ptr<Process> start_nats_conf(const std::string& binary, const std::string& dir,
                                         const std::string& conf) {
  auto p = std::make_unique<Process>(std::vector<std::string>{binary, "-c", conf},
                                     dir + "/nats-secure.log");
  REQUIRE_MESSAGE(p->wait_for_log(std::regex("(Server is ready)"), 10s), p->log());
  return p;
}

zone::bus::LinkOptions login(const std::string& dir, std::uint16_t port, const std::string& user,
                             const std::string& password) {
  zone::bus::LinkOptions o;
  o.url = "tls://localhost:" + std::to_string(port);
  o.name = "test-" + user;
  o.user = user;
  o.password = password;
  o.tls = true;
  o.ca_file = dir + "/ca.pem";
  return o;
}

// Polls `done` every 10 ms until it holds or `limit` passes (a bound on failure only).
template <typename Done>
bool eventually(Done done, std::chrono::milliseconds limit = 20s) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return done();
}

// The subjects of the messages `link` has received so far, added to `seen`.
void take_subjects(zone::bus::Bus& link, std::vector<std::string>& seen) {
  std::vector<zone::bus::BusMessage> got;
  link.take(got);
  for (const auto& m : got) seen.push_back(m.subject);
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// A client that connects once, without retrying (cnats directly): the status it got.
natsStatus connect_once(const std::string& url, const std::string& ca_file, const char* user,
                        const char* password) {
  natsOptions* o = nullptr;
  REQUIRE(natsOptions_Create(&o) == NATS_OK);
  natsOptions_SetURL(o, url.c_str());
  natsOptions_SetTimeout(o, 5000);
  if (!ca_file.empty()) {
    natsOptions_SetSecure(o, true);
    REQUIRE(natsOptions_LoadCATrustedCertificates(o, ca_file.c_str()) == NATS_OK);
  }
  if (user != nullptr) natsOptions_SetUserInfo(o, user, password);
  natsConnection* c = nullptr;
  const natsStatus s = natsConnection_Connect(&c, o);
  if (c != nullptr) natsConnection_Destroy(c);
  natsOptions_Destroy(o);
  return s;
}

}  // namespace

TEST_CASE("world bus: without credentials no bus, and one zone cannot speak for another") {
  const std::string nats = nats_server_or_skip();
  const std::string dir = temp_dir();
  make_tls(dir, {});
  const std::uint16_t port = free_tcp_port();
  std::map<std::string, std::string> pw;
  const std::string conf =
      write_secure_nats(dir, port, "test", {"west", "east", "north"}, false, pw);
  const auto bus = start_nats_conf(nats, dir, conf);
  const std::string url = "tls://localhost:" + std::to_string(port);

  // Without credentials, with a wrong password, or another zone's: no connection, so
  // nothing can be published or subscribed to. In clear, not even that far.
  CHECK(connect_once(url, dir + "/ca.pem", nullptr, nullptr) == NATS_CONNECTION_AUTH_FAILED);
  CHECK(connect_once(url, dir + "/ca.pem", "west", "guess") == NATS_CONNECTION_AUTH_FAILED);
  CHECK(connect_once(url, dir + "/ca.pem", "west", pw["east"].c_str()) ==
        NATS_CONNECTION_AUTH_FAILED);
  CHECK(connect_once("nats://localhost:" + std::to_string(port), "", "west", pw["west"].c_str()) !=
        NATS_OK);
  CHECK(connect_once(url, dir + "/ca.pem", "west", pw["west"].c_str()) == NATS_OK);

  zone::bus::NatsLink west(login(dir, port, "west", pw["west"]));
  zone::bus::NatsLink east(login(dir, port, "east", pw["east"]));
  zone::bus::NatsLink north(login(dir, port, "north", pw["north"]));
  REQUIRE(eventually([&] { return west.connected() && east.connected() && north.connected(); }));

  // West publishes as north (on north's subject to east): refused by the server. East
  // subscribes to what north and west send it; west's next, honest message is the mark
  // that everything before it was delivered or refused (one connection keeps its order).
  for (const char* from : {"north", "west"}) {
    east.subscribe(zone::cluster::ghost_subject("test", "east", from));
    east.subscribe(zone::cluster::handoff_subject("test", "east", from));
  }
  const std::vector<std::uint8_t> forged = {0x47, 3, 2};
  std::vector<std::string> at_east;
  REQUIRE(eventually([&] {
    west.publish(zone::cluster::ghost_subject("test", "east", "north"), forged);
    west.publish(zone::cluster::handoff_subject("test", "east", "north"), forged);
    west.publish(zone::cluster::ghost_subject("test", "east", "west"), forged);
    std::this_thread::sleep_for(20ms);
    take_subjects(east, at_east);
    return contains(at_east, "test.ghosts.east.west");
  }));
  CHECK_FALSE(contains(at_east, "test.ghosts.east.north"));
  CHECK_FALSE(contains(at_east, "test.handoff.east.north"));
  CHECK(eventually([&] { return west.stats().errors > 0; }));  // the server said so

  // West listens to what north sends east (answers carry transfer tokens): refused. North
  // sends east a handoff message and then west its ghosts; once west has the latter, it
  // would have had the former.
  north.subscribe("test.ghosts.north.west");  // unused; north's own subject is allowed
  west.subscribe(zone::cluster::handoff_subject("test", "east", "north"));
  west.subscribe(zone::cluster::ghost_subject("test", "west", "north"));
  west.subscribe("test.>");  // everything: refused as well
  std::vector<std::string> at_west;
  REQUIRE(eventually([&] {
    north.publish(zone::cluster::handoff_subject("test", "east", "north"), forged);
    north.publish(zone::cluster::ghost_subject("test", "west", "north"), forged);
    std::this_thread::sleep_for(20ms);
    take_subjects(west, at_west);
    return contains(at_west, "test.ghosts.west.north");
  }));
  CHECK_FALSE(contains(at_west, "test.handoff.east.north"));
  for (const std::string& s : at_west) CHECK(s == "test.ghosts.west.north");
  // East, the honest receiver, got north's message.
  CHECK(eventually([&] {
    take_subjects(east, at_east);
    return contains(at_east, "test.handoff.east.north");
  }));
  CHECK(north.stats().errors == 0);
  CHECK(east.stats().errors == 0);
}

TEST_CASE("world bus: zones with credentials and TLS form a world and hand players over") {
  const std::string nats = nats_server_or_skip();
  const std::string dir = temp_dir();
  make_tls(dir, {"west", "east"});
  const std::uint16_t port = free_tcp_port();
  std::map<std::string, std::string> pw;
  // verify: the server wants each zone's client certificate too.
  const std::string conf = write_secure_nats(dir, port, "test", {"west", "east"}, true, pw);
  const auto bus = start_nats_conf(nats, dir, conf);
  const std::string world = dir + "/world.yaml";
  write_world_of(world, port, {{"west", 0, 0, 40, 40}, {"east", 40, 0, 80, 40}});
  {
    std::ifstream in(world);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string plain = "url: \"nats://127.0.0.1:" + std::to_string(port) + "\"";
    REQUIRE(text.find(plain) != std::string::npos);
    text.replace(text.find(plain), plain.size(),
                 "url: \"tls://localhost:" + std::to_string(port) + "\"\n  password_file: \"" +
                     dir + "/{zone}.password\"\n  tls:\n    ca_file: \"" + dir +
                     "/ca.pem\"\n    cert_file: \"" + dir + "/{zone}.pem\"\n    key_file: \"" +
                     dir + "/{zone}.key\"");
    std::ofstream(world) << text;
  }
  Zone west = start_zone(dir, world, "west", 4, "wander");
  Zone east = start_zone(dir, world, "east", 4, "wander");
  CHECK(wait_metric(
      west, "zone_bus_connected", [](double v) { return v == 1; }, 20s));
  CHECK(wait_metric(
      east, "zone_bus_connected", [](double v) { return v == 1; }, 20s));
  REQUIRE(wait_metric(
      west, "zone_ghosts", [](double v) { return v > 0; }, 20s));
  REQUIRE(wait_metric(
      east, "zone_ghosts", [](double v) { return v > 0; }, 20s));

  // Until a player of west arrived in east over the secured bus (and a few truth rounds).
  const int bots = 4;
  const std::string arrived = "zone_arrivals_total\\{result=\"arrived\"\\}";
  auto sim = start_world_sim(dir, west, {&west, &east}, bots, 120, "border");
  const nlohmann::json s =
      run_sim_until(dir, *sim, 10, 120, [&] { return metric(east, arrived).value_or(0) > 0; });
  INFO("summary: ", s.dump(2));
  CHECK(s["bots_connected"].get<int>() == bots);
  CHECK(s["protocol_violations"].get<int>() == 0);
  CHECK(s["truth_mismatches"].get<int>() == 0);
  CHECK(s["transfer_id_changes"].get<int>() == 0);
  CHECK(s["transfers"].get<int>() > 0);
  const std::string accepted = "zone_handoffs_in_total\\{result=\"accepted\"\\}";
  CHECK(metric(east, accepted).value_or(0) > 0);
  CHECK(metric(east, arrived).value_or(0) > 0);
  for (const Zone* z : {&west, &east}) {
    CHECK(metric(*z, "zone_bus_connection_events_total\\{event=\"error\"\\}") == 0.0);
    CHECK(metric(*z, "zone_bus_dropped_messages_total\\{reason=\"wrong_sender\"\\}") == 0.0);
  }
  for (Zone* z : {&west, &east}) {
    z->process->signal(SIGTERM);
    CHECK(z->process->wait(5s) == 0);
  }
}

TEST_CASE("world bus: a zone refuses to start with a password file others can read") {
  const std::string dir = temp_dir();
  const std::string world = dir + "/world.yaml";
  write_world_of(world, 4222, {{"west", 0, 0, 40, 40}});
  {
    std::ifstream in(world);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    text.replace(text.find("  subject_prefix"), 0,
                 "  password_file: \"" + dir + "/{zone}.password\"\n");
    std::ofstream(world) << text;
  }
  const std::string file = dir + "/west.password";
  std::ofstream(file) << "0123456789abcdef\n";
  std::filesystem::permissions(file, std::filesystem::perms::owner_read |
                                         std::filesystem::perms::owner_write |
                                         std::filesystem::perms::others_read);
  const auto check = [&] {
    Process p({ZONE_SERVER_BIN, "--config", ZONE_SOURCE_DIR "/configs/zone.yaml", "--world", world,
               "--zone", "west", "--check-config"},
              dir + "/check.log");
    const auto code = p.wait(30s);
    return std::make_pair(code.value_or(-1), p.log());
  };
  const auto [refused, why] = check();
  CHECK(refused == 2);
  CHECK(why.find("nats.password_file") != std::string::npos);
  CHECK(why.find("readable or writable by other users") != std::string::npos);
  std::filesystem::permissions(
      file, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  const auto [accepted, log] = check();
  INFO(log);
  CHECK(accepted == 0);
}
