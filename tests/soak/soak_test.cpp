// Soak: connection churn against the real zone-server for minutes, with honest bots
// whose replicas are checked against the server's ground truth the whole time (issue 9).
//
//   - 200 churning peers (client-sim's churn scenario: connect, say hello, play 2-5 s,
//     leave, come back 0.2-1 s later: about 50 joins and 50 leaves a second);
//   - 20 honest bots wandering, every replica compared with /debug/truth;
//   - the server's resident memory (VmRSS) sampled every second.
//
// Passes when the honest bots saw no protocol violation and no truth mismatch and were
// never disconnected, the churn really happened, the server exits 0 on SIGTERM with no
// sanitizer report (built with ZONE_SANITIZE, LeakSanitizer checks for leaks at exit),
// and RSS is flat after warm-up: see rss_is_flat() for the definition.
//
// Registered only with -DZONE_SOAK=ON (label "soak"); `make test-soak` runs it under
// ASan/LSan. Environment: ZONE_SOAK_SECONDS (default 180), ZONE_SOAK_PEERS (default 200).
#include <doctest/doctest.h>

#include <signal.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "process.hpp"
#include "truth_zone.hpp"

using namespace std::chrono_literals;
using zone::test::Process;

namespace {

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::atoi(v) : fallback;
}

std::string temp_dir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "zone-soak-XXXXXX").string();
  REQUIRE(mkdtemp(pattern.data()) != nullptr);
  return pattern;
}

// VmRSS of a process in KiB (0 if it cannot be read).
long rss_kib(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
  }
  return 0;
}

double median(std::vector<long> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : (v[(v.size() - 1) / 2] + v[v.size() / 2]) / 2.0;
}

// "Flat": samples from the first third of the run are warm-up (allocator pools, ENet
// peers, sanitizer quarantine filling up) and ignored. The rest is split in two halves;
// the median of the later half may exceed the median of the earlier half by at most
// 5 % + 4 MiB. A leak of a few hundred bytes per connection (~50 connections a second)
// grows RSS by well over that in a 180 s run; allocator noise stays within it.
constexpr double kRssGrowthFraction = 0.05;
constexpr double kRssGrowthSlackKib = 4096;

struct RssVerdict {
  bool flat = false;
  double early_kib = 0;
  double late_kib = 0;
};
RssVerdict rss_is_flat(const std::vector<long>& samples) {
  RssVerdict v;
  const std::size_t warm = samples.size() / 3;
  const std::size_t mid = warm + (samples.size() - warm) / 2;
  v.early_kib = median({samples.begin() + static_cast<std::ptrdiff_t>(warm),
                        samples.begin() + static_cast<std::ptrdiff_t>(mid)});
  v.late_kib = median({samples.begin() + static_cast<std::ptrdiff_t>(mid), samples.end()});
  v.flat = v.late_kib <= v.early_kib * (1.0 + kRssGrowthFraction) + kRssGrowthSlackKib;
  return v;
}

std::unique_ptr<Process> client_sim(const std::string& dir, const std::string& tag,
                                    std::uint16_t port, std::uint16_t admin, int bots,
                                    const std::string& scenario, int seconds, bool truth,
                                    int seed) {
  std::vector<std::string> args = {ZONE_CLIENT_SIM_BIN,
                                   "--server",
                                   "127.0.0.1:" + std::to_string(port),
                                   "--bots",
                                   std::to_string(bots),
                                   "--ramp",
                                   "100",
                                   "--duration",
                                   std::to_string(seconds),
                                   "--scenario",
                                   scenario,
                                   "--seed",
                                   std::to_string(seed),
                                   "--summary-json",
                                   dir + "/" + tag + ".json",
                                   "-q"};
  if (truth) {
    args.push_back("--truth");
    args.push_back("127.0.0.1:" + std::to_string(admin));
  }
  return std::make_unique<Process>(std::move(args), dir + "/" + tag + ".log");
}

nlohmann::json summary(const std::string& dir, const std::string& tag) {
  std::ifstream in(dir + "/" + tag + ".json");
  REQUIRE_MESSAGE(in.good(), "no summary ", tag);
  return nlohmann::json::parse(in);
}

double metric(const std::string& text, const std::string& name) {
  const std::regex r("(^|\\n)" + name + " ([0-9.e+]+)");
  std::smatch m;
  return std::regex_search(text, m, r) ? std::stod(m[2].str()) : -1.0;
}

}  // namespace

TEST_CASE("soak: 200 churning peers for minutes - honest bots exact - no leak - RSS flat") {
  const int seconds = env_int("ZONE_SOAK_SECONDS", 180);
  const int peers = env_int("ZONE_SOAK_PEERS", 200);
  REQUIRE(seconds >= 30);
  const std::string dir = temp_dir();
  // ASan keeps freed memory in a quarantine (256 MiB by default) to catch use after free;
  // under churn it fills for minutes, which reads as growth. A 16 MiB quarantine still
  // catches use of recently freed memory and lets RSS reach its plateau in the warm-up.
  std::string asan = std::getenv("ASAN_OPTIONS") != nullptr ? std::getenv("ASAN_OPTIONS") : "";
  ::setenv("ASAN_OPTIONS", (asan + (asan.empty() ? "" : ":") + "quarantine_size_mb=16").c_str(), 1);
  MESSAGE("soak: ", peers, " churning peers, 20 honest bots, ", seconds, " s; files in ", dir);

  zone::test::TruthZone zone =
      zone::test::start_truth_zone(ZONE_SERVER_BIN, ZONE_SOURCE_DIR "/configs/zone.yaml",
                                   {"--npcs", "100", "--set", "world.max_x=600", "--set",
                                    "world.max_y=600", "--set", "network.client_bandwidth=64000"},
                                   dir + "/server.log", 20s);
  REQUIRE_MESSAGE(zone.admin_port != 0, zone.process->log());
  Process& server = *zone.process;
  const std::uint16_t game_port = zone.port;
  const std::uint16_t admin_port = zone.admin_port;

  auto honest = client_sim(dir, "honest", game_port, admin_port, 20, "wander", seconds, true, 7);
  auto churn = client_sim(dir, "churn", game_port, admin_port, peers, "churn", seconds, false, 8);

  std::vector<long> rss;
  const auto start = std::chrono::steady_clock::now();
  auto next = start;
  while (std::chrono::steady_clock::now() < start + std::chrono::seconds(seconds)) {
    REQUIRE_MESSAGE(server.running(), server.log());
    rss.push_back(rss_kib(server.pid()));
    next += 1s;
    std::this_thread::sleep_until(next);
  }
  const auto honest_code = honest->wait(60s);
  const auto churn_code = churn->wait(60s);
  INFO("honest client-sim:\n", honest->log());
  INFO("churn client-sim:\n", churn->log());
  CHECK(honest_code == 0);
  CHECK(churn_code == 0);

  httplib::Client http("127.0.0.1", admin_port);
  http.set_read_timeout(10, 0);
  const auto res = http.Get("/metrics");
  REQUIRE(res);
  const double joins = metric(res->body, "zone_player_joins_total");
  const double leaves = metric(res->body, "zone_player_leaves_total");

  server.signal(SIGTERM);
  const auto code = server.wait(30s);  // LeakSanitizer's scan at exit takes a moment
  const std::string log = server.log();
  INFO("server log (tail):\n", log.substr(log.size() > 6000 ? log.size() - 6000 : 0));
  CHECK(code == 0);
  CHECK(log.find("LeakSanitizer") == std::string::npos);
  CHECK(log.find("ERROR: AddressSanitizer") == std::string::npos);
  CHECK(log.find("runtime error:") == std::string::npos);  // UBSan

  const nlohmann::json h = summary(dir, "honest");
  const nlohmann::json c = summary(dir, "churn");
  INFO("honest summary: ", h.dump());
  INFO("churn summary: ", c.dump());
  CHECK(h["bots_connected"].get<int>() == 20);
  CHECK(h["connect_failures"].get<int>() == 0);
  CHECK(h["disconnects"].get<int>() == 0);
  CHECK(h["protocol_violations"].get<int>() == 0);
  CHECK(h["truth_mismatches"].get<int>() == 0);
  CHECK(h["truth_checks"].get<int>() >= seconds / 2);
  CHECK(c["protocol_violations"].get<int>() == 0);
  // The churn happened: every churning peer joined, and on average at least once every
  // 10 s (the scenario's sessions last 2-5 s).
  CHECK(c["bots_connected"].get<int>() == peers);
  MESSAGE("server: ", joins, " joins, ", leaves, " leaves in ", seconds, " s");
  CHECK(joins >= static_cast<double>(peers) * seconds / 10.0);
  CHECK(leaves >= joins - peers - 20);

  REQUIRE(rss.size() >= 30);
  const RssVerdict v = rss_is_flat(rss);
  std::ostringstream trace;
  for (std::size_t i = 0; i < rss.size(); i += std::max<std::size_t>(1, rss.size() / 30)) {
    trace << i << "s:" << rss[i] / 1024 << "MiB ";
  }
  MESSAGE("server VmRSS after warm-up: median ", v.early_kib / 1024, " MiB, then ",
          v.late_kib / 1024, " MiB (", trace.str(), ")");
  CHECK_MESSAGE(v.flat, "RSS grew from ", v.early_kib, " KiB to ", v.late_kib,
                " KiB (allowed: +5 % + 4 MiB)");
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}
