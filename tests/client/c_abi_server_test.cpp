// The C ABI against a real zone-server: two clients written in C (c_abi_play.c, through
// zoneclient.h alone) join, see each other, walk, chat, form a party and ask for an action.
#include <doctest/doctest.h>

#include <stdlib.h>

#include <filesystem>
#include <string>

#include <ctime>

#include "auth/issue.hpp"
#include "auth/keys.hpp"
#include "c_abi_play.h"
#include "truth_zone.hpp"
#include "udp_relay.hpp"

namespace {

// A fresh folder for the zone's log.
std::string temp_dir() {
  std::string pattern =
      (std::filesystem::temp_directory_path() / "zone-client-kit-XXXXXX").string();
  REQUIRE(::mkdtemp(pattern.data()) != nullptr);
  return pattern;
}

// The whole world in view and no NPCs: the two players see each other wherever they spawn.
zone::test::TruthZone start_zone(const std::string& dir) {
  return zone::test::start_truth_zone(ZONE_SERVER_BIN, ZONE_SOURCE_DIR "/configs/zone.yaml",
                                      {"--set", "aoi.enabled=false", "--set", "npcs.count=0"},
                                      dir + "/server.log");
}

}  // namespace

TEST_CASE(
    "client kit: two C clients join a real zone through 5% loss both ways and still walk, chat and "
    "group") {
  const std::string dir = temp_dir();
  zone::test::TruthZone zone = start_zone(dir);
  REQUIRE_MESSAGE(zone.port != 0, zone.process->log());
  {
    zone::test::UdpRelay relay(zone.port, 0.05, 7);
    char why[256] = "";
    char report[512] = "";
    const int failed =
        zc_test_play("127.0.0.1", relay.port(), why, sizeof why, report, sizeof report);
    MESSAGE(report, "; the relay dropped ", relay.dropped(), " of ",
            relay.dropped() + relay.forwarded(), " datagrams");
    CHECK_MESSAGE(failed == 0, why);
    CHECK(relay.dropped() > 0);
  }
  zone.process.reset();
  std::filesystem::remove_all(dir);
}

TEST_CASE("client kit: two C clients join a real zone, see each other, walk, chat and group") {
  std::string pattern =
      (std::filesystem::temp_directory_path() / "zone-client-kit-XXXXXX").string();
  REQUIRE(::mkdtemp(pattern.data()) != nullptr);
  const std::string dir = pattern;
  // The whole world in view and no NPCs: the two players see each other wherever they spawn.
  zone::test::TruthZone zone = zone::test::start_truth_zone(
      ZONE_SERVER_BIN, ZONE_SOURCE_DIR "/configs/zone.yaml",
      {"--set", "aoi.enabled=false", "--set", "npcs.count=0"}, dir + "/server.log");
  REQUIRE_MESSAGE(zone.port != 0, zone.process->log());
  char why[256] = "";
  char report[512] = "";
  const int failed = zc_test_play("127.0.0.1", zone.port, why, sizeof why, report, sizeof report);
  MESSAGE(report);
  CHECK_MESSAGE(failed == 0, why);
  zone.process.reset();  // stops the zone before its folder goes
  std::filesystem::remove_all(dir);
}

TEST_CASE(
    "client kit: a C client joins a zone in ticket mode with its login ticket - without one it is "
    "refused") {
  const std::string dir = temp_dir();
  zone::auth::ensure_sodium();
  const zone::auth::KeyPair keys = zone::auth::generate_key_pair();
  zone::test::TruthZone zone = zone::test::start_truth_zone(
      ZONE_SERVER_BIN, ZONE_SOURCE_DIR "/configs/zone.yaml",
      {"--set", "npcs.count=0", "--set", "auth.mode=ticket", "--set",
       "auth.public_key=" + zone::auth::to_hex(keys.public_key), "--set", "auth.world=emerald"},
      dir + "/server.log");
  REQUIRE_MESSAGE(zone.port != 0, zone.process->log());

  zone::auth::TicketClaims claims;
  claims.account_id = 7;
  claims.character_id = 8;
  claims.issued_at = static_cast<std::uint64_t>(std::time(nullptr));
  claims.expires_at = claims.issued_at + 600;
  claims.name = "c-ticket";
  claims.world = "emerald";
  std::vector<std::uint8_t> ticket;
  REQUIRE(zone::auth::issue_ticket(claims, keys.secret, ticket) == zone::auth::LayoutError::kNone);

  std::uint32_t reason = 0;
  CHECK(zc_test_join("127.0.0.1", zone.port, "c-ticket", ticket.data(), ticket.size(), &reason) ==
        1);
  CHECK(zc_test_join("127.0.0.1", zone.port, "c-ticket", nullptr, 0, &reason) == 0);
  CHECK(reason == 10);  // ticket required
  zone.process.reset();
  std::filesystem::remove_all(dir);
}
