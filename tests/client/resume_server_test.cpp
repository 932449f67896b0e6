// The kit's Connection comes back after a lost connection (docs/protocol.md,
// "Reconnecting"): a relay between it and a real zone-server goes silent, the client's
// ENet gives up, the library connects again with the Welcome's resume token by itself and
// is welcomed as the same entity; a second client watching it never sees it leave.
#include <doctest/doctest.h>

#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>

#include "client/connection.hpp"
#include "truth_zone.hpp"
#include "udp_relay.hpp"

using namespace std::chrono_literals;
using zone::client::ClientEvent;
using zone::client::Connection;
using zone::client::EventType;

namespace {

double seconds_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Updates both connections until done() or 30 s; every event of `watched` goes to on_event.
bool run_until(Connection& watched, Connection& other, const std::function<bool()>& done,
               const std::function<void(const ClientEvent&)>& on_event = {}) {
  const auto end = std::chrono::steady_clock::now() + 30s;
  while (!done() && std::chrono::steady_clock::now() < end) {
    const double now = seconds_now();
    watched.update(now);
    other.update(now);
    while (const ClientEvent* e = watched.events().pop()) {
      if (on_event) on_event(*e);
    }
    while (other.events().pop() != nullptr) {
    }
    std::this_thread::sleep_for(5ms);
  }
  return done();
}

}  // namespace

TEST_CASE("client kit: a lost connection comes back to the same entity by itself") {
  std::string dir = (std::filesystem::temp_directory_path() / "zone-kit-resume-XXXXXX").string();
  REQUIRE(::mkdtemp(dir.data()) != nullptr);
  // The whole world in view; the zone notices a silent client after a second and holds it.
  zone::test::TruthZone zone = zone::test::start_truth_zone(
      ZONE_SERVER_BIN, ZONE_SOURCE_DIR "/configs/zone.yaml",
      {"--set", "aoi.enabled=false", "--set", "npcs.count=0", "--set", "network.timeout_ms=1000",
       "--set", "players.resume_grace_ms=30000"},
      dir + "/server.log");
  REQUIRE_MESSAGE(zone.port != 0, zone.process->log());
  {
    zone::test::UdpRelay relay(zone.port);
    zone::client::ConnectionOptions options;
    options.player_name = "wanderer";
    options.timeout_ms = 1500;  // the client's own ENet gives up after 1.5 s of silence
    Connection a(options);
    options.player_name = "watcher";
    Connection b(options);
    REQUIRE(a.connect("127.0.0.1", relay.port()));
    REQUIRE(b.connect("127.0.0.1", zone.port));
    REQUIRE(run_until(a, b, [&] {
      return a.has_frame() && b.has_frame() && b.replica().find(a.welcome().entity_id) != nullptr;
    }));
    const std::uint32_t id = a.welcome().entity_id;
    REQUIRE(a.welcome().resume_token.size() == 16);
    const std::uint64_t leaves = b.replica().leaves();

    // The network goes; the library notices, says so, and tries again.
    relay.set_blackout(true);
    bool resuming = false;
    REQUIRE(run_until(
        a, b, [&] { return resuming; },
        [&](const ClientEvent& e) {
          if (e.type == EventType::kResuming) {
            CHECK(e.entity == id);
            resuming = true;
          }
        }));
    CHECK(a.state() == Connection::State::kResuming);
    relay.set_blackout(false);
    bool welcomed = false;
    REQUIRE(run_until(
        a, b, [&] { return welcomed && a.has_frame(); },
        [&](const ClientEvent& e) {
          if (e.type == EventType::kWelcome) {
            CHECK(e.entity == id);
            welcomed = true;
          }
          CHECK(e.type != EventType::kDisconnected);
        }));
    CHECK(a.state() == Connection::State::kPlaying);
    CHECK(a.welcome().entity_id == id);
    // Its view is whole again, and the watcher never saw it go.
    CHECK(run_until(a, b, [&] { return a.replica().find(b.welcome().entity_id) != nullptr; }));
    CHECK(b.replica().find(id) != nullptr);
    CHECK(b.replica().leaves() == leaves);
    a.disconnect();
    b.disconnect();
  }
  zone.process.reset();
  std::filesystem::remove_all(dir);
}
