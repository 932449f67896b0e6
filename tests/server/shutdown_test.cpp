// Ends of connections and of the process: silent clients time out, the real zone-server
// binary shuts down cleanly on SIGTERM, and its command line validates configuration.
#include <doctest/doctest.h>

#include <signal.h>
#include <stdlib.h>

#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness.hpp"
#include "process.hpp"  // tests/support
#include "raw_http.hpp"
#include "test_util.hpp"
#include "udp_relay.hpp"  // tests/support
#include "zone/run_zone.hpp"

using namespace std::chrono_literals;
using namespace zone;
using protocol::DisconnectReason;

namespace {

const std::string kConfig = std::string(ZONE_SOURCE_DIR) + "/configs/zone.yaml";

// The real zone-server as a child process; its output goes to a file in a fresh
// temporary folder.
test::Process start_server(std::vector<std::string> args) {
  std::string dir = (std::filesystem::temp_directory_path() / "zone-shutdown-XXXXXX").string();
  REQUIRE(::mkdtemp(dir.data()) != nullptr);
  args.insert(args.begin(), ZONE_SERVER_BIN);
  return test::Process(std::move(args), dir + "/server.log");
}

const std::string kToken = "shutdown-test-token-0123";

std::uint16_t admin_port_of(const test::Process& proc) {
  const auto port =
      proc.wait_for_log(std::regex(R"(admin endpoint on http://127\.0\.0\.1:(\d+)/)"), 10s);
  REQUIRE_MESSAGE(port.has_value(), "no admin line; output:\n", proc.log());
  return static_cast<std::uint16_t>(std::stoi(*port));
}

int health(std::uint16_t admin_port) {
  return test::status_of(test::http_exchange(
      admin_port, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", 2s));
}

// A metric's value in /metrics, or -1.
double metric(std::uint16_t admin_port, const std::string& name) {
  const std::string text = test::body_of(test::http_exchange(
      admin_port, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", 2s));
  const auto at = text.find("\n" + name + " ");
  return at == std::string::npos ? -1.0 : std::stod(text.substr(at + name.size() + 2));
}

bool wait_healthy(std::uint16_t admin_port) {
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (health(admin_port) != 200) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(20ms);
  }
  return true;
}

config::LoadResult loaded(const config::ZoneConfig& c) {
  config::LoadResult r;
  r.config = c;
  r.source = "<test>";
  r.errors = config::validate(c);
  return r;
}

std::string read_all(std::FILE* f) {
  std::rewind(f);
  std::string text;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof(buf), f)) > 0;) text.append(buf, n);
  return text;
}

}  // namespace

TEST_CASE("shutdown: a client that stops answering times out and is despawned") {
  net::EnetLibrary enet;
  config::ZoneConfig cfg = test::tiny_zone();
  cfg.network.timeout_ms = 500;
  cfg.players.resume_grace_ms = 0;  // it leaves at once (the hold: reconnect_test.cpp)
  test::ServerThread server(cfg);
  test::Clients alive;
  test::Clients frozen;
  client::Bot& alice = alive.add("alice", server.port());
  client::Bot& bob = frozen.add("bob", server.port());
  // Both hosts must be serviced while connecting.
  const auto both_joined = [&] {
    return bob.welcome().entity_id != 0 && alice.replica().find(bob.welcome().entity_id) != nullptr;
  };
  for (int i = 0; i < 250 && !both_joined(); ++i) {
    alive.pump(10ms);
    frozen.pump(10ms);
  }
  REQUIRE(both_joined());
  const std::uint32_t bob_id = bob.welcome().entity_id;

  // From now on bob's host is never serviced again: no acknowledgments, no inputs.
  const auto t0 = std::chrono::steady_clock::now();
  CHECK(alive.pump_until([&] { return alice.replica().find(bob_id) == nullptr; }, 5s));
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  MESSAGE("silent client removed after ", took, " s (timeout 0.5 s)");
  CHECK(alice.phase() == client::Bot::Phase::kPlaying);
  CHECK(alice.replica().violations().empty());
  const std::uint64_t frames = alice.replica().frames_completed();
  alive.pump(300ms);
  CHECK(alice.replica().frames_completed() > frames);

  ZoneServer& zone = server.stop();
  CHECK(test::disconnects(zone, DisconnectReason::Timeout) == 1);
  CHECK(zone.players() == 1);
  CHECK(zone.world().find(bob_id) == nullptr);
}

TEST_CASE("shutdown: the goodbye reaches a client even if its first datagram is lost") {
  // ZoneServer::shutdown(grace) promises to let ENet deliver the goodbyes and see them
  // acknowledged within the grace time; a lost datagram must therefore be resent.
  net::EnetLibrary enet;
  test::ServerThread server(test::tiny_zone());
  test::UdpRelay relay(server.port());
  test::Clients clients;
  client::Bot& bot = clients.add("alice", relay.port());
  REQUIRE(clients.pump_until([&] { return bot.replica().frames_completed() > 10; }, 5s));

  ZoneServer& zone = server.stop();  // the loop is stopped; this thread owns the zone now
  relay.drop_next_from_server(1);
  const auto t0 = std::chrono::steady_clock::now();
  std::atomic<bool> done{false};
  double took = 0.0;
  std::thread stopper([&] {
    zone.shutdown(2000ms);
    took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    done = true;
  });
  const bool told =
      clients.pump_until([&] { return bot.phase() == client::Bot::Phase::kClosed; }, 3s);
  stopper.join();
  MESSAGE("shutdown(2000 ms) returned after ", took, " s; relay dropped ", relay.dropped(),
          " datagram(s) from the server");
  CHECK(relay.dropped() == 1);
  CHECK(told);
  CHECK(test::reason_of(bot) == test::reason_of(DisconnectReason::ServerShutdown));
  CHECK(test::disconnects(zone, DisconnectReason::ServerShutdown) == 1);
}

TEST_CASE("shutdown: SIGTERM tells clients the server is shutting down and exits 0 promptly") {
  test::Process proc = start_server({"--config", kConfig, "--port", "0", "--bind", "127.0.0.1",
                                     "--npcs", "10", "--admin-port", "0"});
  const auto port = proc.wait_for_log(std::regex(R"(listening on udp 127\.0\.0\.1:(\d+))"), 10s);
  REQUIRE_MESSAGE(port.has_value(), "no listening line; output:\n", proc.log());

  net::EnetLibrary enet;
  test::Clients clients;
  client::Bot& bot = clients.add("alice", static_cast<std::uint16_t>(std::stoi(*port)));
  REQUIRE_MESSAGE(clients.pump_until([&] { return bot.replica().frames_completed() > 5; }, 5s),
                  "output:\n", proc.log());
  CHECK(bot.welcome().tick_rate == 20);  // the shipped config's rate

  proc.signal(SIGTERM);
  const auto signalled = std::chrono::steady_clock::now();
  const auto code = proc.wait(30s, [&] { clients.pump(2ms); });
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - signalled).count();
  REQUIRE_MESSAGE(code.has_value(), "did not exit; output:\n", proc.log());
  CHECK(*code == 0);
  MESSAGE("zone-server exited ", took, " s after SIGTERM");
  // Promptly: it left as soon as the client confirmed the goodbye, not at the end of its
  // 500 ms grace (its own measure, in its log: the exit's wall-clock time depends on what
  // else the machine runs).
  const auto confirmed =
      proc.wait_for_log(std::regex(R"(every goodbye confirmed after (\d+) ms)"), 1s);
  REQUIRE_MESSAGE(confirmed.has_value(), "output:\n", proc.log());
  CHECK(std::stoi(*confirmed) < 500);
  // The goodbye was sent before the exit; give the client a moment to read it.
  CHECK(clients.pump_until([&] { return bot.phase() == client::Bot::Phase::kClosed; }, 2s));
  CHECK(test::reason_of(bot) == test::reason_of(DisconnectReason::ServerShutdown));
  CHECK(proc.log().find("SIGTERM") != std::string::npos);
}

TEST_CASE("shutdown: --check-config prints the effective config and exits 0") {
  test::Process proc =
      start_server({"--config", kConfig, "--check-config", "--set", "aoi.view_radius=42"});
  const auto code = proc.wait(10s);
  REQUIRE(code.has_value());
  CHECK(*code == 0);
  const std::string out = proc.log();
  CHECK(out.find("OK") != std::string::npos);
  CHECK(out.find("view_radius: 42") != std::string::npos);
  CHECK(out.find("listening") == std::string::npos);  // it did not start a zone
}

TEST_CASE("shutdown: a bad override exits 2 naming the key") {
  test::Process proc =
      start_server({"--config", kConfig, "--port", "0", "--set", "aoi.cel_size=3"});
  const auto code = proc.wait(10s);
  REQUIRE(code.has_value());
  CHECK(*code == 2);
  CHECK_MESSAGE(proc.log().find("aoi.cel_size") != std::string::npos, "output:\n", proc.log());
  CHECK(proc.log().find("listening") == std::string::npos);
}

TEST_CASE("shutdown: a game port another program holds (even shared) exits 1 naming it") {
  // Held with SO_REUSEPORT, as the zone's own hosts share theirs: the kernel would let the
  // zone join it and split the clients between the two programs.
  const test::ForeignUdpSocket other;
  const std::string port = std::to_string(other.port());
  test::Process proc = start_server(
      {"--config", kConfig, "--port", port, "--bind", "127.0.0.1", "--admin-port", "0"});
  const auto code = proc.wait(10s);
  REQUIRE_MESSAGE(code.has_value(), "still running; output:\n", proc.log());
  CHECK(*code == static_cast<int>(kExitStartFailure));
  CHECK_MESSAGE(proc.log().find("cannot bind UDP 127.0.0.1:" + port) != std::string::npos,
                "output:\n", proc.log());
  CHECK(proc.log().find("listening") == std::string::npos);
}

TEST_CASE(
    "shutdown: SIGTERM ends the process within the grace period while admin clients "
    "trickle, idle or stall") {
  test::Process proc = start_server({"--config", kConfig, "--port", "0", "--bind", "127.0.0.1",
                                     "--npcs", "10", "--admin-port", "0"});
  const std::uint16_t admin = admin_port_of(proc);
  REQUIRE(wait_healthy(admin));

  // One uploads a body a byte at a time, one sends half a request line, one says nothing.
  test::RawHttp trickler(admin);
  REQUIRE(trickler.send(
      "POST /admin/reload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\n\r\n"));
  test::RawHttp half(admin);
  REQUIRE(half.send("GET /metr"));
  test::RawHttp silent(admin);
  std::atomic<bool> stop{false};
  std::thread trickle([&] {
    while (!stop.load() && trickler.send("x")) std::this_thread::sleep_for(100ms);
  });
  std::this_thread::sleep_for(300ms);

  proc.signal(SIGTERM);
  const auto signalled = std::chrono::steady_clock::now();
  // The slow clients never finish: a server that waited for them would never exit. The
  // deadline only bounds that failure.
  const auto code = proc.wait(30s);
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - signalled).count();
  stop = true;
  trickle.join();
  REQUIRE_MESSAGE(code.has_value(), "still running 30 s after SIGTERM; output:\n", proc.log());
  CHECK(*code == 0);
  MESSAGE("zone-server exited ", took, " s after SIGTERM with three slow admin clients");
  CHECK(silent.closed_by_peer(1s));
}

TEST_CASE(
    "shutdown: a SIGHUP reload is parsed off the tick thread - health stays green while "
    "it loads") {
  net::EnetLibrary enet;
  const config::ZoneConfig cfg = test::small_zone();
  Logger log(cfg.log.level);
  ZoneServer zone(cfg, log, {.token = kToken, .config_source = nullptr});
  const std::uint16_t admin = zone.admin_port();

  // A load that takes as long as the test says (a huge file), in state the reloader's
  // thread may keep even if the test fails half-way.
  struct Latch {
    std::mutex mutex;
    std::condition_variable cv;
    bool loading = false, released = false;
  };
  auto latch = std::make_shared<Latch>();
  const auto load = [latch, cfg] {
    std::unique_lock lock(latch->mutex);
    latch->loading = true;
    latch->cv.notify_all();
    latch->cv.wait(lock, [&] { return latch->released; });
    config::ZoneConfig next = cfg;
    next.aoi.view_radius = 45.0;
    return loaded(next);
  };
  std::atomic<int> signal{0};
  int code = -1;
  std::thread runner([&] {
    code = run_zone(zone, log,
                    {.poll_signal = [&signal] { return signal.exchange(0); },
                     .load = load,
                     .config_path = "<test>",
                     .grace = 100ms});
  });
  const auto release = [&latch] {
    std::lock_guard lock(latch->mutex);
    latch->released = true;
    latch->cv.notify_all();
  };
  REQUIRE(wait_healthy(admin));

  signal = SIGHUP;
  {
    std::unique_lock lock(latch->mutex);
    CHECK(latch->cv.wait_for(lock, 3s, [&] { return latch->loading; }));
  }
  // /healthz fails after 1 s without a tick: sample it for 1.5 s of loading.
  const double ticks_before = metric(admin, "zone_ticks_total");
  int green = 0;
  for (int i = 0; i < 15; ++i) {
    std::this_thread::sleep_for(100ms);
    if (health(admin) == 200) ++green;
  }
  const double ticks_after = metric(admin, "zone_ticks_total");
  release();
  CHECK(green == 15);
  MESSAGE("ticks while the config loaded for 1.5 s: ", ticks_after - ticks_before);
  CHECK(ticks_after - ticks_before >= 25);  // 50 Hz: about 75

  // Then the result is applied at a tick boundary.
  const auto deadline = std::chrono::steady_clock::now() + 3s;
  while (metric(admin, "zone_config_reloads_total{result=\"success\"}") < 1 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(20ms);
  }
  signal = SIGTERM;
  runner.join();
  CHECK(code == kExitOk);
  CHECK(zone.config().aoi.view_radius == 45.0);
}

TEST_CASE(
    "shutdown: an exception escaping the tick loop is logged and exits with code 3 - "
    "clients are still told") {
  net::EnetLibrary enet;
  struct Case {
    const char* name;
    std::function<void()> raise;
    const char* logged;
  };
  const std::vector<Case> cases = {
      {"logic_error",
       [] { throw std::out_of_range("vector::_M_range_check: __n (which is 7) >= this->size()"); },
       "internal error in the tick loop, stopping with exit code 3: vector::_M_range_check"},
      {"not a std::exception", [] { throw 42; }, "an exception of unknown type"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    std::FILE* out = std::tmpfile();
    REQUIRE(out != nullptr);
    int code = -1;
    test::Clients clients;
    {
      Logger log(config::LogLevel::kInfo, out);
      ZoneServer zone(test::tiny_zone(), log, {.token = kToken, .config_source = nullptr});
      client::Bot& bot = clients.add("alice", zone.port());
      std::atomic<bool> fail{false};
      std::thread runner([&] {
        code = run_zone(zone, log,
                        {.poll_signal =
                             [&] {
                               if (fail.load()) c.raise();
                               return 0;
                             },
                         .load = [] { return config::LoadResult{}; },
                         .config_path = "<test>",
                         .grace = 500ms});
      });
      const bool joined =
          clients.pump_until([&] { return bot.phase() == client::Bot::Phase::kPlaying; }, 5s);
      fail = true;
      CHECK(clients.pump_until([&] { return bot.phase() == client::Bot::Phase::kClosed; }, 3s));
      runner.join();
      CHECK(joined);
      CHECK(test::reason_of(bot) == test::reason_of(DisconnectReason::ServerShutdown));
    }
    CHECK(code == kExitInternalError);
    const std::string logged = read_all(out);
    std::fclose(out);
    CHECK_MESSAGE(logged.find(c.logged) != std::string::npos, logged);
    CHECK(logged.find("ERROR") != std::string::npos);
  }
}
