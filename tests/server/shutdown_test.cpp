// Ends of connections and of the process: silent clients time out, the real zone-server
// binary shuts down cleanly on SIGTERM, and its command line validates configuration.
#include <doctest/doctest.h>

#include <signal.h>
#include <stdlib.h>

#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "harness.hpp"
#include "process.hpp"  // tests/support
#include "test_util.hpp"
#include "udp_relay.hpp"  // tests/support

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

}  // namespace

TEST_CASE("shutdown: a client that stops answering times out and is despawned") {
  net::EnetLibrary enet;
  config::ZoneConfig cfg = test::tiny_zone();
  cfg.network.timeout_ms = 500;
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
  const auto code = proc.wait(3s, [&] { clients.pump(2ms); });
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - signalled).count();
  REQUIRE_MESSAGE(code.has_value(), "did not exit; output:\n", proc.log());
  CHECK(*code == 0);
  CHECK_MESSAGE(took < 1.0, "exited ", took, " s after SIGTERM");
  MESSAGE("zone-server exited ", took, " s after SIGTERM");
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
