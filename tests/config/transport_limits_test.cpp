// Keys bounded by what ENet and the protocol can actually do (issue 9, items 9-11): a
// value that passes --check-config must also work at start-up and on the wire.
#include <doctest/doctest.h>

#include <string>

#include "config/capacity.hpp"
#include "config/config_loader.hpp"
#include "config_test_util.hpp"
#include "net/enet_limits.hpp"

using namespace zone::config;
using zone::config::test::accepts;
using zone::config::test::load;
using zone::config::test::only_error;

namespace {

// The full "FILE:LINE: KEY: MESSAGE" line of the one error in `yaml`.
std::string report_of(const std::string& yaml) {
  const LoadResult r = load(yaml);
  INFO(yaml);
  REQUIRE(r.errors.size() == 1);
  return r.error_report();
}

}  // namespace

TEST_CASE("players.max_players: at most what the configured ENet hosts take, with the reason") {
  CHECK(max_players_for(1) == 3276);
  CHECK(max_players_for(3) == 3 * 3276);
  CHECK(kPeersPerHost - kSparePeerSlots >= kPlayersPerHost);  // a full host still answers
  // 4080-4095 used to pass --check-config and then fail at bind.
  for (const char* v : {"3277", "4080", "4095"}) {
    CAPTURE(v);
    CHECK(report_of(std::string("threads:\n  network: 1\nplayers:\n  max_players: ") + v + "\n")
              .find("test.yaml:4: players.max_players: must be at most 3276 with threads.network "
                    "resolved to 1 host(s)") == 0);
  }
  CHECK(load("threads:\n  network: 2\nplayers:\n  max_players: 6552\n").ok());
}

TEST_CASE("network.channel_limit: at least the two channels the protocol uses") {
  CHECK(report_of("network:\n  port: 7777\n  channel_limit: 1\n") ==
        "test.yaml:3: network.channel_limit: expected an integer >= 2 and <= 255 (the protocol "
        "uses channels 0 and 1), got 1\n");
  CHECK(accepts("network", "channel_limit", "2"));
  CHECK(accepts("network", "channel_limit", "255"));
  ZoneConfig c;
  c.network.channel_limit = 1;
  REQUIRE(validate(c).size() == 1);
  CHECK(validate(c)[0].key == "network.channel_limit");
}

TEST_CASE("network.max_packet_bytes: at most what ENet sends unfragmented") {
  CHECK(zone::net::kMaxUnfragmentedPayload == 1372);
  CHECK(zone::net::max_unfragmented_payload(576) == 548);
  CHECK(zone::net::max_unfragmented_payload(20) == 0);
  CHECK(accepts("network", "max_packet_bytes", "1372"));
  for (const char* v : {"1373", "1400"}) {
    CAPTURE(v);
    CHECK(report_of(std::string("\nnetwork:\n  max_packet_bytes: ") + v + "\n") ==
          std::string("test.yaml:3: network.max_packet_bytes: expected an integer >= 576 and <= "
                      "1372 (ENet's 1400-byte MTU less its 28 header bytes; anything larger is "
                      "sent as reliable fragments), got ") +
              v + "\n");
  }
  ZoneConfig c;
  c.network.max_packet_bytes = 1373;
  c.network.client_bandwidth = 16000;
  REQUIRE(validate(c).size() == 1);
  CHECK(validate(c)[0].key == "network.max_packet_bytes");
}
