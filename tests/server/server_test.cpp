#include <doctest/doctest.h>

#include <cmath>

#include "harness.hpp"
#include "protocol/quantize.hpp"
#include "test_util.hpp"

using namespace std::chrono_literals;
using namespace zone;

TEST_CASE("a client joins - gets a welcome and sees exactly the NPCs within its view") {
  net::EnetLibrary enet;
  test::ServerThread server(test::small_zone());
  test::Clients clients;
  client::Bot& bot = clients.add("alice", server.port());
  REQUIRE(clients.pump_until([&] { return bot.replica().frames_completed() > 20; }, 5s));
  CHECK(bot.welcome().entity_id != 0);
  CHECK(bot.welcome().tick_rate == 50);
  CHECK(bot.welcome().view_radius == doctest::Approx(30.0));
  CHECK(bot.replica().violations().empty());

  ZoneServer& zone = server.stop();
  // Idle NPCs and an idle player: the replica must equal the server's truth.
  const world::Entity* self = zone.world().find(bot.welcome().entity_id);
  REQUIRE(self != nullptr);
  std::size_t expected = 0;
  zone.world().for_each_entity([&](std::uint32_t, const world::Entity& e) {
    if (e.id == self->id) return;
    const double d = std::hypot(e.x - self->x, e.y - self->y);
    const auto seen = bot.replica().find(e.id);
    if (d <= 30.0) {
      ++expected;
      REQUIRE_MESSAGE(seen != nullptr, "entity ", e.id, " at distance ", d, " missing");
      CHECK(seen->x() == protocol::quantize_position(e.x));
      CHECK(seen->y() == protocol::quantize_position(e.y));
      CHECK(test::name_of(bot, e.id) == e.name);
    } else if (d > 32.0) {
      CHECK_MESSAGE(seen == nullptr, "entity ", e.id, " at distance ", d, " replicated");
    }
  });
  CHECK(expected > 0);
}
