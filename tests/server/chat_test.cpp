// Chat lines as the zone checks and routes them (server/zone/chat.cpp), without a network:
// the world's event log shows where each went; in a world, what goes to other zones.
#include <doctest/doctest.h>

#include "zone/chat.hpp"

using namespace zone;

namespace {

world::WorldParams chat_world() {
  world::WorldParams p;
  p.grid.bounds = {{0.0, 0.0}, {200.0, 200.0}};
  p.grid.cell_size = 16.0;
  p.guilds.enabled = true;
  p.guilds.max_size = 10;
  return p;
}

struct ChatZone {
  world::World world{chat_world()};
  PlayerNames names;
  config::ChatConfig config;
  std::vector<cluster::RemoteChat> forwarded;
  ChatForward forward = [this](const cluster::RemoteChat& l) { forwarded.push_back(l); };
  std::uint32_t join(const std::string& name) {
    const std::uint32_t slot = world.spawn_player(name);
    names.add(name, slot);
    return slot;
  }
  protocol::ChatStatus say(std::uint32_t slot, protocol::ChatChannel channel, std::string_view text,
                           std::string_view to = {}, bool world_zone = true) {
    return send_chat(config, 32, world, names, {slot, static_cast<std::uint8_t>(channel), text, to},
                     world_zone ? forward : ChatForward{});
  }
};

}  // namespace

TEST_CASE("chat: a whisper to a name elsewhere goes to the world - alone it is NoSuchPlayer") {
  ChatZone z;
  const std::uint32_t alice = z.join("alice");
  z.join("bob");
  using protocol::ChatChannel;
  using protocol::ChatStatus;
  CHECK(z.say(alice, ChatChannel::kWhisper, "hi bob", "bob") == ChatStatus::Sent);
  CHECK(z.forwarded.empty());  // bob is here
  REQUIRE(z.world.events().events().size() == 1);
  CHECK(z.world.events().events()[0].route == world::EventRoute::kPlayer);
  CHECK(z.say(alice, ChatChannel::kWhisper, "hi carol", "carol") == ChatStatus::Sent);
  REQUIRE(z.forwarded.size() == 1);
  CHECK(z.forwarded[0].to == "carol");
  CHECK(z.forwarded[0].speaker_name == "alice");
  CHECK(z.say(alice, ChatChannel::kWhisper, "hi carol", "carol", false) ==
        ChatStatus::NoSuchPlayer);
  CHECK(z.say(alice, ChatChannel::kWhisper, "bad\x07", "carol") == ChatStatus::BadText);
  CHECK(z.forwarded.size() == 1);
}

TEST_CASE(
    "chat: a guild line goes to the world with its key, and arrives at the guild of that key") {
  ChatZone west;
  const std::uint32_t alice = west.join("alice");
  west.world.join_group(world::GroupKind::kGuild, alice, 0xC0FFEE);
  CHECK(west.say(alice, protocol::ChatChannel::kGuild, "rally") == protocol::ChatStatus::Sent);
  REQUIRE(west.forwarded.size() == 1);
  CHECK(west.forwarded[0].guild_key == 0xC0FFEE);
  // A line this zone refuses (its events for the tick are spent) goes nowhere else either.
  west.world.events().set_max_per_tick(1);
  CHECK(west.say(alice, protocol::ChatChannel::kGuild, "again") ==
        protocol::ChatStatus::RateLimited);
  CHECK(west.forwarded.size() == 1);

  // East has a guild of that key (its own id) and a player named carol.
  ChatZone east;
  const std::uint32_t dave = east.join("dave");
  const std::uint32_t carol = east.join("carol");
  east.world.join_group(world::GroupKind::kGuild, dave, 0xC0FFEE);
  deliver_remote_chat(east.world, east.names, west.forwarded[0]);
  REQUIRE(east.world.events().events().size() == 1);
  const world::WorldEvent& g = east.world.events().events()[0];
  CHECK(g.route == world::EventRoute::kGuild);
  CHECK(g.group == east.world.entity(dave).guild);
  CHECK(east.world.events().name(g) == "alice");
  CHECK(east.world.events().text(g) == "rally");
  // A whisper for carol reaches her; one for a name east does not have, nobody.
  deliver_remote_chat(east.world, east.names, {3, 5, 0, "alice", "carol", "psst"});
  deliver_remote_chat(east.world, east.names, {3, 5, 0, "alice", "zed", "psst"});
  REQUIRE(east.world.events().events().size() == 2);
  CHECK(east.world.events().events()[1].target == east.world.entity(carol).id);
  // A guild line for a key east has no guild of: nobody.
  deliver_remote_chat(east.world, east.names, {2, 5, 0xABC, "alice", "", "hello?"});
  CHECK(east.world.events().events().size() == 2);
}
