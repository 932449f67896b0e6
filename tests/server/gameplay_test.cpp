// Protocol 8 through the real zone loop and ENet, with the sample game's data and no rules:
// chat lines reach exactly the clients their channel names (say: those that hold the
// speaker; whisper: the named player; party: its members), each once; a bad line is
// refused and reaches nobody; an action is checked by the engine (unknown, a target the
// client does not hold, the rate limit) before the rules, which are absent here.
//
// Absence is proved by order, not by waiting: events reach a client in order on the
// reliable channel, so once a client has a zone-wide line said after the line under test,
// it would have had that one too.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "harness.hpp"
#include "test_util.hpp"

using namespace std::chrono_literals;
using namespace zone;
using protocol::ActionStatus;
using protocol::ChatChannel;
using protocol::ChatStatus;

namespace {

// 200 x 200 m, a 30 m view, fast players (so they walk to their places in seconds), the
// sample game's schema (its actions and events), chat limits out of the way but for the
// test of the action limit.
config::ZoneConfig gameplay_zone() {
  config::ZoneConfig cfg = test::small_zone();
  cfg.npcs.count = 0;
  cfg.players.max_speed = 50.0;
  cfg.game.data_file = ZONE_SOURCE_DIR "/configs/game/game.yaml";
  cfg.game.actions_per_second = 3;
  cfg.chat.lines_per_second = 100;
  cfg.chat.burst = 100;
  return cfg;
}

// How many times the bot received a chat line with this text (its recent events).
int heard(const client::Bot& bot, const std::string& text) {
  return static_cast<int>(std::count_if(
      bot.last_events().begin(), bot.last_events().end(), [&](const client::EventDetail& e) {
        return e.event.kind == protocol::kChatEvent && e.text == text;
      }));
}

const client::EventDetail* line(const client::Bot& bot, const std::string& text) {
  for (const client::EventDetail& e : bot.last_events()) {
    if (e.event.kind == protocol::kChatEvent && e.text == text) return &e;
  }
  return nullptr;
}

int answered(const client::Bot& bot, ActionStatus status) {
  return static_cast<int>(
      std::count_if(bot.last_answers().begin(), bot.last_answers().end(),
                    [&](const client::ActionAnswer& a) { return a.status == status; }));
}

struct Place {
  double x, y;
};

// Walks each bot to its place (and stops there).
test::Clients::Intent walk_to(const std::vector<std::pair<const client::Bot*, Place>>& places) {
  return [places](client::Bot& bot) -> std::pair<float, float> {
    for (const auto& [who, at] : places) {
      if (who != &bot) continue;
      const protocol::Values self = bot.self();
      const double dx = at.x - protocol::position_metres(self, protocol::kX);
      const double dy = at.y - protocol::position_metres(self, protocol::kY);
      const double d = std::hypot(dx, dy);
      if (d < 1.5) return {0.0f, 0.0f};
      return {static_cast<float>(dx / d), static_cast<float>(dy / d)};
    }
    return {0.0f, 0.0f};
  };
}

}  // namespace

TEST_CASE(
    "gameplay: chat reaches exactly its channel's players once, and the engine checks actions") {
  net::EnetLibrary enet;
  test::ServerThread server(gameplay_zone());
  test::Clients clients;
  client::Bot& alice = clients.add("alice", server.port());
  client::Bot& bob = clients.add("bob", server.port());
  client::Bot& carol = clients.add("carol", server.port());
  const std::vector<client::Bot*> all = {&alice, &bob, &carol};
  REQUIRE(clients.pump_until(
      [&] {
        return std::all_of(all.begin(), all.end(), [](const client::Bot* b) {
          return b->phase() == client::Bot::Phase::kPlaying && b->ack_tick() != 0;
        });
      },
      10s));
  // The Welcome carries the game's actions and events.
  REQUIRE(alice.schema().find_action("attack"));
  REQUIRE(alice.schema().find_event("hit"));
  CHECK(alice.schema().events()[protocol::kChatEvent].name == "chat");

  // Alice and Bob meet in one corner, Carol goes to the far one: 226 m apart.
  const auto walk =
      walk_to({{&alice, {20.0, 20.0}}, {&bob, {22.0, 20.0}}, {&carol, {180.0, 180.0}}});
  const std::uint32_t a = alice.welcome().entity_id;
  const std::uint32_t b = bob.welcome().entity_id;
  const std::uint32_t c = carol.welcome().entity_id;
  REQUIRE(clients.pump_until(
      [&] {
        return alice.replica().find(b) != nullptr && bob.replica().find(a) != nullptr &&
               carol.replica().find(a) == nullptr && carol.replica().find(b) == nullptr &&
               alice.replica().find(c) == nullptr && bob.replica().find(c) == nullptr;
      },
      30s, walk));
  // The server's own word on who holds whom: an attack (no rules here) at a player the
  // client holds passes the engine's checks and is NotAllowed, at one it does not hold
  // NoTarget. Its frames reach the server's side a little after the client's (the
  // acknowledgement comes with the next input), so ask until Alice and Bob hold each other.
  const auto attack = static_cast<std::uint16_t>(*alice.schema().find_action("attack"));
  auto ask = [&](client::Bot& from, std::uint16_t action, std::uint32_t target) {
    const std::uint32_t sequence = from.send_action(clients.host_of(from), action, target);
    const client::ActionAnswer* answer = nullptr;
    clients.pump_until(
        [&] {
          for (const client::ActionAnswer& x : from.last_answers()) {
            if (x.sequence == sequence) answer = &x;
          }
          return answer != nullptr;
        },
        10s, walk);
    REQUIRE(answer != nullptr);
    return answer->status;
  };
  auto held_by_server = [&](client::Bot& from, std::uint32_t target) {
    for (int attempt = 0; attempt < 100; ++attempt) {
      if (ask(from, attack, target) == ActionStatus::NotAllowed) return true;
      clients.pump(400ms, walk);  // within game.actions_per_second
    }
    return false;
  };
  REQUIRE(held_by_server(bob, a));
  REQUIRE(held_by_server(alice, b));
  CHECK(ask(carol, attack, a) == ActionStatus::NoTarget);
  // Waits until every player has the zone-wide line `text`, and then one more said at a
  // later tick: whatever was sent to anyone before (a line under test, or a copy of one)
  // has arrived by then.
  int follow_ups = 0;
  auto everyone_heard = [&](const std::string& text) {
    auto all_heard = [&](const std::string& t) {
      return clients.pump_until(
          [&] {
            return std::all_of(all.begin(), all.end(),
                               [&](const client::Bot* x) { return heard(*x, t) > 0; });
          },
          10s, walk);
    };
    if (!all_heard(text)) return false;
    const std::string next = "follow-up " + std::to_string(++follow_ups);
    carol.send_chat(clients.host_of(carol), ChatChannel::kZone, next);
    return all_heard(next);
  };
  // No event came twice: each sequence number once among the recent ones.
  auto no_copies = [&] {
    for (const client::Bot* x : all) {
      std::vector<std::uint32_t> seen;
      for (const client::EventDetail& e : x->last_events()) seen.push_back(e.event.sequence);
      std::sort(seen.begin(), seen.end());
      CHECK_MESSAGE(std::adjacent_find(seen.begin(), seen.end()) == seen.end(), x->name());
    }
  };

  SUBCASE("say reaches the speaker and whoever holds it, never a player far away") {
    alice.send_chat(clients.host_of(alice), ChatChannel::kSay, "hello over there");
    alice.send_chat(clients.host_of(alice), ChatChannel::kZone, "zone line one");
    REQUIRE(everyone_heard("zone line one"));
    CHECK(heard(alice, "hello over there") == 1);
    CHECK(heard(bob, "hello over there") == 1);
    CHECK(heard(carol, "hello over there") == 0);
    const client::EventDetail* said = line(bob, "hello over there");
    REQUIRE(said != nullptr);
    CHECK(said->event.entity == a);
    CHECK(said->name == "alice");
    CHECK(said->args == std::vector<std::int32_t>{static_cast<std::int32_t>(ChatChannel::kSay)});
    CHECK(heard(bob, "zone line one") == 1);
    CHECK(heard(carol, "zone line one") == 1);
    // Nothing was held against the rule, and no line came twice.
    for (const client::Bot* x : all) CHECK(x->game().events_before_spawn == 0);
    no_copies();
  }

  SUBCASE("a whisper by name reaches the named player only") {
    alice.send_chat(clients.host_of(alice), ChatChannel::kWhisper, "psst, bob", "bob");
    alice.send_chat(clients.host_of(alice), ChatChannel::kZone, "zone line two");
    REQUIRE(everyone_heard("zone line two"));
    CHECK(heard(bob, "psst, bob") == 1);
    CHECK(heard(alice, "psst, bob") == 0);
    CHECK(heard(carol, "psst, bob") == 0);
    const client::EventDetail* w = line(bob, "psst, bob");
    REQUIRE(w != nullptr);
    CHECK(w->event.target == b);
    // To nobody of that name: refused, and the speaker is told.
    alice.send_chat(clients.host_of(alice), ChatChannel::kWhisper, "anyone?", "dave");
    REQUIRE(clients.pump_until([&] { return !alice.chat_refusals().empty(); }, 10s, walk));
    CHECK(alice.chat_refusals().back().first == ChatStatus::NoSuchPlayer);
    no_copies();
  }

  SUBCASE("a party line reaches the party's members only, wherever they are") {
    // Party chat without a party is refused.
    carol.send_chat(clients.host_of(carol), ChatChannel::kParty, "alone");
    REQUIRE(clients.pump_until([&] { return !carol.chat_refusals().empty(); }, 10s, walk));
    CHECK(carol.chat_refusals().back().first == ChatStatus::NoGroup);
    constexpr std::uint64_t kKey = 0xC4A7ull;
    alice.join_party(clients.host_of(alice), kKey);
    carol.join_party(clients.host_of(carol), kKey);
    REQUIRE(clients.pump_until(
        [&] { return alice.party().id != 0 && alice.party().id == carol.party().id; }, 10s, walk));
    carol.send_chat(clients.host_of(carol), ChatChannel::kParty, "party time");
    carol.send_chat(clients.host_of(carol), ChatChannel::kZone, "zone line three");
    REQUIRE(everyone_heard("zone line three"));
    CHECK(heard(alice, "party time") == 1);
    CHECK(heard(carol, "party time") == 1);
    CHECK(heard(bob, "party time") == 0);
    no_copies();
  }

  SUBCASE("a bad line is refused with BadText and reaches nobody") {
    bob.send_chat(clients.host_of(bob), ChatChannel::kSay, "bad\x01line");
    bob.send_chat(clients.host_of(bob), ChatChannel::kZone, std::string(201, 'x'));  // max 200
    bob.send_chat(clients.host_of(bob), ChatChannel::kSay, "");
    bob.send_chat(clients.host_of(bob), ChatChannel::kZone, "zone line four");
    REQUIRE(everyone_heard("zone line four"));
    REQUIRE(bob.chat_refusals().size() == 3);
    for (const auto& [status, channel] : bob.chat_refusals()) CHECK(status == ChatStatus::BadText);
    CHECK(bob.chat_refusals()[1].second == static_cast<std::uint8_t>(ChatChannel::kZone));
    for (const client::Bot* x : all) {
      CHECK(heard(*x, "bad\x01line") == 0);
      CHECK(heard(*x, std::string(201, 'x')) == 0);
      CHECK(heard(*x, "") == 0);
    }
    no_copies();
  }

  SUBCASE("actions: unknown, a target not held, no rules, over the rate") {
    // (A held target passed the engine's checks above: NotAllowed, there being no rules.)
    const auto unknown = static_cast<std::uint16_t>(alice.schema().actions().size() + 3);
    // One every 400 ms: within game.actions_per_second.
    clients.pump(400ms, walk);
    CHECK(ask(alice, unknown, b) == ActionStatus::UnknownAction);
    clients.pump(400ms, walk);
    CHECK(ask(alice, attack, c) == ActionStatus::NoTarget);  // far away: not held
    clients.pump(400ms, walk);
    CHECK(ask(alice, attack, 999999) == ActionStatus::NoTarget);  // no such entity
    // Six at once against game.actions_per_second 3: the bucket holds three at most.
    const std::size_t before = bob.last_answers().size();
    const std::uint64_t sent = bob.game().actions_sent;
    for (int i = 0; i < 6; ++i) bob.send_action(clients.host_of(bob), attack, a);
    REQUIRE(clients.pump_until([&] { return bob.last_answers().size() == before + 6; }, 10s, walk));
    CHECK(bob.game().actions_sent == sent + 6);
    CHECK(answered(bob, ActionStatus::RateLimited) >= 3);
    // Each answer echoes its action's sequence, in order.
    for (std::size_t i = before + 1; i < bob.last_answers().size(); ++i) {
      CHECK(bob.last_answers()[i].sequence == bob.last_answers()[i - 1].sequence + 1);
    }
  }
}
