// The real zone-server binary and its config file: what --check-config accepts must start
// (item 9); /dev/zero, FIFOs, directories and huge files are refused at once, at start-up
// and on reload (item 12); a reload from a file cut short changes nothing and names every
// key it lost (item 14). Issue 9.
#include <doctest/doctest.h>

#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "admin_http.hpp"
#include "process.hpp"  // tests/support

using namespace std::chrono_literals;
using namespace zone;

namespace {

const std::string kShippedConfig = std::string(ZONE_SOURCE_DIR) + "/configs/zone.yaml";

std::string temp_dir() {
  std::string dir = (std::filesystem::temp_directory_path() / "zone-cfgfile-XXXXXX").string();
  REQUIRE(::mkdtemp(dir.data()) != nullptr);
  return dir;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_file(const std::string& path, const std::string& text) {
  // Written next to it and renamed, as an editor would: the server never sees half a file
  // unless the test means it to.
  std::ofstream(path + ".tmp", std::ios::binary) << text;
  std::filesystem::rename(path + ".tmp", path);
}

// zone-server with `args`, output to DIR/server.log; returns its exit code (nullopt if it
// did not exit within `timeout`) and its output.
struct Run {
  std::optional<int> code;
  std::string output;
  double seconds = 0;
};
Run run_server(const std::string& dir, std::vector<std::string> args,
               std::chrono::milliseconds timeout = 5s) {
  args.insert(args.begin(), ZONE_SERVER_BIN);
  test::Process proc(std::move(args), dir + "/server.log");
  const auto start = std::chrono::steady_clock::now();
  Run r;
  r.code = proc.wait(timeout);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.output = proc.log();
  return r;  // ~Process kills it if it is still running
}

// A zone-server running on a copy of the shipped config in a fresh folder.
struct RunningZone {
  std::string dir = temp_dir();
  std::string config = dir + "/zone.yaml";
  std::unique_ptr<test::Process> proc;
  std::uint16_t admin = 0;

  explicit RunningZone(const std::string& text) {
    write_file(config, text);
    // The admin token for test::admin_get/admin_post, through the environment it inherits.
    REQUIRE(::setenv(test::kTestAdminTokenEnv, test::kTestAdminToken.c_str(), 1) == 0);
    proc = std::make_unique<test::Process>(
        std::vector<std::string>{ZONE_SERVER_BIN, "--config", config, "--bind", "127.0.0.1",
                                 "--port", "0", "--admin-port", "0", "--npcs", "10", "--set",
                                 std::string("admin.token_env=") + test::kTestAdminTokenEnv},
        dir + "/server.log");
    const auto port =
        proc->wait_for_log(std::regex("admin endpoint on http://127\\.0\\.0\\.1:(\\d+)/"), 10s);
    REQUIRE_MESSAGE(port.has_value(), proc->log());
    admin = static_cast<std::uint16_t>(std::stoi(*port));
  }
  ~RunningZone() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  // Sends SIGHUP and waits until the output written after it holds `expect` (part of the
  // reload's outcome); returns that output. A count of "config reload" lines would not do:
  // the log is written by its own thread, so the line of a reload asked for just before
  // (POST /admin/reload) can land after the signal and pass for this one.
  std::string sighup(const std::string& expect) {
    const std::size_t from = proc->log().size();
    proc->signal(SIGHUP);
    const auto end = std::chrono::steady_clock::now() + 10s;
    std::string after;
    for (;;) {
      after = proc->log().substr(from);
      if (after.find(expect) != std::string::npos) break;
      if (std::chrono::steady_clock::now() >= end) break;
      std::this_thread::sleep_for(20ms);
    }
    REQUIRE_MESSAGE(after.find(expect) != std::string::npos, proc->log());
    return after;
  }
  double view_radius() const {
    // The live map reports the players' view radius. Its data is published on demand:
    // the first answers may come before the first frame (radius 0).
    const std::regex r("\"view_radius\":([0-9.]+)");
    const auto end = std::chrono::steady_clock::now() + 5s;
    double radius = 0;
    while (radius == 0 && std::chrono::steady_clock::now() < end) {
      const test::HttpAnswer m = test::admin_get(admin, "/api/map?x0=0&y0=0&x1=1&y1=1");
      REQUIRE(m.status == 200);
      std::smatch match;
      REQUIRE_MESSAGE(std::regex_search(m.body, match, r), m.body);
      radius = std::stod(match[1].str());
      if (radius == 0) std::this_thread::sleep_for(50ms);
    }
    return radius;
  }
};

}  // namespace

TEST_CASE("config file: --check-config refuses a max_players that could not bind") {
  const std::string dir = temp_dir();
  // One network host: 4,080 used to pass --check-config and then fail to bind.
  for (const char* players : {"3277", "4080"}) {
    CAPTURE(players);
    const Run bad =
        run_server(dir, {"--config", kShippedConfig, "--check-config", "--set", "threads.network=1",
                         "--set", std::string("players.max_players=") + players});
    REQUIRE(bad.code.has_value());
    CHECK(*bad.code == 2);
    CHECK_MESSAGE(bad.output.find("players.max_players: must be at most 3276 with "
                                  "threads.network resolved to 1 host(s)") != std::string::npos,
                  bad.output);
  }
  // The largest value accepted with two hosts really starts.
  test::Process zone({ZONE_SERVER_BIN, "--config", kShippedConfig, "--bind", "127.0.0.1", "--port",
                      "0", "--admin-port", "0", "--npcs", "0", "--set", "threads.network=2",
                      "--set", "players.max_players=6552"},
                     dir + "/start.log");
  CHECK_MESSAGE(zone.wait_for_log(std::regex("listening on udp"), 10s).has_value(), zone.log());
  zone.signal(SIGTERM);
  CHECK(zone.wait(5s) == 0);
}

TEST_CASE("config file: /dev/zero, a FIFO, a directory and a huge file are refused at start") {
  const std::string dir = temp_dir();
  const std::string fifo = dir + "/fifo.yaml";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const std::string huge = dir + "/huge.yaml";
  std::ofstream(huge).close();
  std::filesystem::resize_file(huge, 3ull << 30);  // sparse: no disk used
  const std::pair<std::string, std::string> cases[] = {
      {"/dev/zero",
       "/dev/zero: cannot read config file: it is a character device; expected a "
       "regular file"},
      {fifo,
       fifo + ": cannot read config file: it is a FIFO (named pipe); expected a regular file"},
      {dir, dir + ": cannot read config file: it is a directory"},
      {huge, huge + ": cannot read config file: it is 3221225472 bytes; expected at most 1048576 "
                    "bytes (1 MiB)"},
  };
  for (const auto& [path, message] : cases) {
    CAPTURE(path);
    for (const bool check_only : {true, false}) {
      std::vector<std::string> args = {"--config", path, "--port", "0", "--admin-port", "0"};
      if (check_only) args.push_back("--check-config");
      const Run r = run_server(dir, args);
      REQUIRE_MESSAGE(r.code.has_value(), "still running after 5 s:\n", r.output);
      CHECK(*r.code == 2);  // within run_server's deadline: a FIFO would block for ever
      CHECK_MESSAGE(r.output.find(message) != std::string::npos, r.output);
    }
  }
}

TEST_CASE("config file: a reload from a FIFO or a huge file is refused - the zone carries on") {
  RunningZone zone(read_file(kShippedConfig));
  // The file is replaced by a FIFO: SIGHUP must not block the tick loop on it.
  std::filesystem::remove(zone.config);
  REQUIRE(::mkfifo(zone.config.c_str(), 0600) == 0);
  const std::string log = zone.sighup("it is a FIFO (named pipe); expected a regular file");
  CHECK(log.find("failed; nothing changed") != std::string::npos);
  CHECK(test::admin_get(zone.admin, "/healthz").status == 200);
  const test::HttpAnswer post = test::admin_post(zone.admin, "/admin/reload");
  CHECK(post.status == 400);
  CHECK(post.body.find("FIFO") != std::string::npos);

  std::filesystem::remove(zone.config);
  std::ofstream(zone.config).close();
  std::filesystem::resize_file(zone.config, 2ull << 30);
  const std::string huge = zone.sighup("expected at most 1048576 bytes (1 MiB)");
  CHECK(huge.find("failed; nothing changed") != std::string::npos);
  CHECK(zone.proc->running());
  CHECK(test::admin_get(zone.admin, "/healthz").status == 200);
  zone.proc->signal(SIGTERM);
  CHECK(zone.proc->wait(5s) == 0);
}

TEST_CASE("config file: a reload from a file cut short is refused and names every lost key") {
  // The running file differs from the defaults early (aoi) and late (log, debug).
  std::string text = read_file(kShippedConfig);
  const auto set = [&text](const std::string& from, const std::string& to) {
    const auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    text.replace(at, from.size(), to);
  };
  set("  view_radius: 30.0", "  view_radius: 42.5");
  set("  status_interval_s: 10", "  status_interval_s: 30");
  set("  truth_history_ticks: 64", "  truth_history_ticks: 99");
  RunningZone zone(text);
  CHECK(zone.view_radius() == 42.5);

  // Cut right after the npcs section: valid YAML, but log, admin and debug are gone and,
  // in the same reload, the view radius is changed.
  std::string cut = text.substr(0, text.find("\nnetwork:") + 1);
  cut.replace(cut.find("  view_radius: 42.5"), 19, "  view_radius: 50.0");
  write_file(zone.config, cut);
  const std::string log = zone.sighup("debug.truth_history_ticks: missing from the file");
  CHECK(log.find("failed; nothing changed") != std::string::npos);
  CHECK(log.find("log.status_interval_s: missing from the file (it ends at line") !=
        std::string::npos);
  CHECK(log.find("the running zone has 30, and this reload would reset it to the default 10") !=
        std::string::npos);
  CHECK(log.find("debug.truth_history_ticks: missing from the file") != std::string::npos);
  // Keys still at their defaults are not reported.
  CHECK(log.find("network.port: missing") == std::string::npos);
  CHECK(zone.view_radius() == 42.5);  // nothing was applied

  const test::HttpAnswer post = test::admin_post(zone.admin, "/admin/reload");
  INFO("POST /admin/reload answered: ", post.body);
  CHECK(post.status == 400);
  CHECK(post.body.find("reload failed, nothing changed") != std::string::npos);
  CHECK(post.body.find("log.status_interval_s") != std::string::npos);
  CHECK(zone.view_radius() == 42.5);

  // The whole file again, with the new radius: applied.
  set("  view_radius: 42.5", "  view_radius: 50.0");
  write_file(zone.config, text);
  const test::HttpAnswer ok = test::admin_post(zone.admin, "/admin/reload");
  CHECK(ok.status == 200);
  CHECK(ok.body.find("aoi.view_radius 42.5 -> 50.0") != std::string::npos);
  // The map is republished a few times a second.
  const auto end = std::chrono::steady_clock::now() + 3s;
  while (zone.view_radius() != 50.0 && std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(50ms);
  }
  CHECK(zone.view_radius() == 50.0);
  zone.proc->signal(SIGTERM);
  CHECK(zone.proc->wait(5s) == 0);
}
