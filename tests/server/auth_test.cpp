// Login tickets end to end (auth.mode: ticket): a real zone refuses hellos without a good
// ticket with the documented reason, counts why, lets a good one in under the ticket's
// name, and lets a second login of a character take the first one's entity over.
#include <doctest/doctest.h>

#include <csignal>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "auth/issue.hpp"
#include "auth/keys.hpp"
#include "harness.hpp"
#include "process.hpp"  // tests/support
#include "test_util.hpp"

using namespace std::chrono_literals;
using namespace zone;
using protocol::DisconnectReason;

namespace {

std::uint64_t unix_now() {
  return static_cast<std::uint64_t>(std::time(nullptr));
}

// The login service of these tests: one key pair, tickets for world "emerald".
struct LoginService {
  auth::KeyPair keys = auth::generate_key_pair();

  auth::TicketClaims claims(std::uint64_t character, const std::string& name) const {
    auth::TicketClaims c;
    c.account_id = 1000 + character;
    c.character_id = character;
    c.issued_at = unix_now();
    c.expires_at = c.issued_at + 600;
    c.name = name;
    c.world = "emerald";
    return c;
  }
  std::vector<std::uint8_t> ticket(const auth::TicketClaims& c,
                                   const auth::SecretKey* key = nullptr) const {
    std::vector<std::uint8_t> t;
    REQUIRE(auth::issue_ticket(c, key ? *key : keys.secret, t) == auth::LayoutError::kNone);
    return t;
  }
  std::vector<std::uint8_t> ticket(std::uint64_t character, const std::string& name) const {
    return ticket(claims(character, name));
  }
};

config::ZoneConfig ticket_zone(const LoginService& login) {
  config::ZoneConfig c = test::tiny_zone();
  c.auth.mode = config::AuthMode::kTicket;
  c.auth.public_key = auth::to_hex(login.keys.public_key);
  c.auth.world = "emerald";
  return c;
}

std::uint64_t refused(const ZoneServer& zone, TicketRefusal why) {
  return zone.counters().tickets_refused[static_cast<std::size_t>(why)];
}

bool closed(const client::Bot& b) {
  return b.phase() == client::Bot::Phase::kClosed;
}
bool playing(const client::Bot& b) {
  return b.phase() == client::Bot::Phase::kPlaying && b.replica().frames_completed() > 2;
}

auto with_ticket(std::vector<std::uint8_t> t) {
  return [t = std::move(t)](client::Bot& b) { b.set_ticket(t); };
}

}  // namespace

TEST_CASE("auth: a zone in ticket mode refuses hellos without a good ticket, with the reason") {
  net::EnetLibrary enet;
  const LoginService login;
  test::ServerThread server(ticket_zone(login));
  test::Clients clients;

  struct Case {
    const char* what;
    std::vector<std::uint8_t> ticket;
    DisconnectReason reason;
    TicketRefusal counted;
  };
  auth::TicketClaims expired = login.claims(2, "late");
  expired.issued_at -= 7200;
  expired.expires_at = unix_now() - 1;  // "replayed after expiry" is this case too
  auth::TicketClaims elsewhere = login.claims(3, "tourist");
  elsewhere.world = "ruby";
  const auth::KeyPair forger = auth::generate_key_pair();
  std::vector<std::uint8_t> altered = login.ticket(4, "alterer");
  altered[9] ^= 1;  // another character id, the signature left as it was
  std::vector<std::uint8_t> truncated = login.ticket(5, "short");
  truncated.resize(truncated.size() - 1);
  std::vector<std::uint8_t> newer_format = login.ticket(6, "future");
  newer_format[0] = 2;

  const std::vector<Case> cases = {
      {"no ticket", {}, DisconnectReason::TicketRequired, TicketRefusal::kMissing},
      {"expired", login.ticket(expired), DisconnectReason::TicketExpired, TicketRefusal::kExpired},
      {"another world", login.ticket(elsewhere), DisconnectReason::TicketWrongWorld,
       TicketRefusal::kWrongWorld},
      {"forged", login.ticket(login.claims(7, "forger"), &forger.secret),
       DisconnectReason::TicketInvalid, TicketRefusal::kBadSignature},
      {"altered", altered, DisconnectReason::TicketInvalid, TicketRefusal::kBadSignature},
      {"truncated", truncated, DisconnectReason::TicketInvalid, TicketRefusal::kMalformed},
      {"garbage", std::vector<std::uint8_t>(40, 0x01), DisconnectReason::TicketInvalid,
       TicketRefusal::kMalformed},
      {"unknown format", newer_format, DisconnectReason::TicketInvalid,
       TicketRefusal::kUnknownVersion},
      {"a name the zone refuses", login.ticket(8, "new\nline"), DisconnectReason::TicketInvalid,
       TicketRefusal::kBadName},
      {"a name longer than players.max_name_length", login.ticket(9, std::string(33, 'n')),
       DisconnectReason::TicketInvalid, TicketRefusal::kBadName},
  };
  std::vector<client::Bot*> bots;
  for (const Case& c : cases)
    bots.push_back(&clients.add(c.what, server.port(), with_ticket(c.ticket)));
  // A good ticket gets in meanwhile, under the ticket's name, not the hello's.
  client::Bot& good =
      clients.add("hello-name", server.port(), with_ticket(login.ticket(1, "Alice")));
  client::Bot& watcher = clients.add("w", server.port(), with_ticket(login.ticket(10, "Watcher")));

  REQUIRE(clients.pump_until(
      [&] {
        for (const client::Bot* b : bots)
          if (!closed(*b)) return false;
        return playing(good) && watcher.replica().find(good.welcome().entity_id) != nullptr;
      },
      5s));
  for (std::size_t i = 0; i < cases.size(); ++i) {
    CAPTURE(cases[i].what);
    CHECK(test::reason_of(*bots[i]) == test::reason_of(cases[i].reason));
    CHECK(bots[i]->welcome().entity_id == 0);
  }
  CHECK(test::name_of(watcher, good.welcome().entity_id) == "Alice");

  ZoneServer& zone = server.stop();
  CHECK(zone.players() == 2);
  CHECK(zone.counters().tickets_accepted == 2);
  CHECK(refused(zone, TicketRefusal::kMissing) == 1);
  CHECK(refused(zone, TicketRefusal::kExpired) == 1);
  CHECK(refused(zone, TicketRefusal::kWrongWorld) == 1);
  CHECK(refused(zone, TicketRefusal::kBadSignature) == 2);
  CHECK(refused(zone, TicketRefusal::kMalformed) == 2);
  CHECK(refused(zone, TicketRefusal::kUnknownVersion) == 1);
  CHECK(refused(zone, TicketRefusal::kBadName) == 2);
  CHECK(test::disconnects(zone, DisconnectReason::TicketInvalid) == 7);
  const world::Entity* e = zone.world().find(good.welcome().entity_id);
  REQUIRE(e != nullptr);
  CHECK(e->name == "Alice");
}

TEST_CASE("auth: a ticket may be used again within its expiry, by a new connection") {
  net::EnetLibrary enet;
  const LoginService login;
  test::ServerThread server(ticket_zone(login));
  test::Clients clients;
  const std::vector<std::uint8_t> ticket = login.ticket(1, "Alice");
  client::Bot& first = clients.add("a", server.port(), with_ticket(ticket));
  REQUIRE(clients.pump_until([&] { return playing(first); }, 5s));
  const std::uint32_t first_id = first.welcome().entity_id;
  first.quit(clients.host_of(first));
  clients.pump(200ms);
  client::Bot& again = clients.add("a", server.port(), with_ticket(ticket));
  REQUIRE(clients.pump_until([&] { return playing(again); }, 5s));
  // After a quit the character starts again (a new entity): only a login while it is
  // online takes its entity over.
  CHECK(again.welcome().entity_id != first_id);
  ZoneServer& zone = server.stop();
  CHECK(zone.counters().tickets_accepted == 2);
  CHECK(zone.counters().takeovers == 0);
}

TEST_CASE("auth: a second login of a character takes its entity over - the first is told") {
  net::EnetLibrary enet;
  const LoginService login;
  config::ZoneConfig cfg = ticket_zone(login);
  cfg.players.max_players = 2;  // a take-over needs no free place
  test::ServerThread server(cfg);
  test::Clients clients;
  client::Bot& old = clients.add("a", server.port(), with_ticket(login.ticket(1, "Alice")));
  client::Bot& bob = clients.add("b", server.port(), with_ticket(login.ticket(2, "Bob")));
  REQUIRE(clients.pump_until(
      [&] { return playing(old) && bob.replica().find(old.welcome().entity_id) != nullptr; }, 5s));
  old.join_party(clients.host_of(old), 0xC0FFEE);
  REQUIRE(clients.pump_until([&] { return old.party().id != 0; }, 3s));
  const std::uint32_t id = old.welcome().entity_id;
  const std::uint32_t party = old.party().id;
  const std::uint64_t bob_leaves = bob.replica().leaves();
  const std::uint64_t bob_enters = bob.replica().enters();

  // The same character again, with a fresh ticket (a new device, a restarted client).
  client::Bot& again = clients.add("a2", server.port(), with_ticket(login.ticket(1, "Alice")));
  REQUIRE(clients.pump_until([&] { return closed(old) && playing(again); }, 5s));
  CHECK(test::reason_of(old) == test::reason_of(DisconnectReason::LoggedInElsewhere));
  // The same entity, its party kept and told; nobody around saw it leave or come.
  CHECK(again.welcome().entity_id == id);
  CHECK(clients.pump_until([&] { return again.party().id == party; }, 3s));
  // Its view is whole from the first snapshot: what it saw before, it sees now.
  CHECK(clients.pump_until([&] { return again.replica().find(bob.welcome().entity_id) != nullptr; },
                           5s));
  clients.pump(300ms);
  CHECK(bob.replica().find(id) != nullptr);
  CHECK(bob.replica().leaves() == bob_leaves);
  CHECK(bob.replica().enters() == bob_enters);
  CHECK(bob.replica().violations().empty());
  CHECK(again.replica().violations().empty());

  // And again: the newest login always wins.
  client::Bot& third = clients.add("a3", server.port(), with_ticket(login.ticket(1, "Alice")));
  REQUIRE(clients.pump_until([&] { return closed(again) && playing(third); }, 5s));
  CHECK(test::reason_of(again) == test::reason_of(DisconnectReason::LoggedInElsewhere));
  CHECK(third.welcome().entity_id == id);
  CHECK(bob.phase() == client::Bot::Phase::kPlaying);

  ZoneServer& zone = server.stop();
  CHECK(zone.players() == 2);
  CHECK(zone.counters().takeovers == 2);
  CHECK(zone.counters().joins == 2);
  CHECK(zone.counters().leaves == 0);
  CHECK(test::disconnects(zone, DisconnectReason::LoggedInElsewhere) == 2);
}

TEST_CASE("auth: in open mode a ticket is ignored and the hello's name counts") {
  net::EnetLibrary enet;
  const LoginService login;
  test::ServerThread server(test::tiny_zone());
  test::Clients clients;
  client::Bot& a =
      clients.add("alice", server.port(), with_ticket(std::vector<std::uint8_t>(40, 0x01)));
  client::Bot& b = clients.add("bob", server.port(), with_ticket(login.ticket(1, "Alice")));
  client::Bot& c = clients.add("carol", server.port(), with_ticket(login.ticket(1, "Alice")));
  REQUIRE(clients.pump_until(
      [&] {
        return playing(a) && playing(b) && playing(c) &&
               a.replica().find(b.welcome().entity_id) != nullptr;
      },
      5s));
  CHECK(test::name_of(a, b.welcome().entity_id) == "bob");
  ZoneServer& zone = server.stop();
  CHECK(zone.players() == 3);  // no characters in open mode: nothing to take over
  CHECK(zone.counters().tickets_accepted == 0);
  CHECK(zone.counters().takeovers == 0);
}

// The zone-server binary says at start-up who may join: a warning in open mode (the
// shipped configs/zone.yaml), the world and key in ticket mode; and it refuses ticket mode
// without a key, naming the key.
TEST_CASE("auth: zone-server warns at start-up in open mode and needs a key for ticket mode") {
  std::string dir = (std::filesystem::temp_directory_path() / "zone-auth-XXXXXX").string();
  REQUIRE(::mkdtemp(dir.data()) != nullptr);
  const std::string config = std::string(ZONE_SOURCE_DIR) + "/configs/zone.yaml";
  const auto start = [&](const std::string& name, std::vector<std::string> args) {
    args.insert(args.begin(), {ZONE_SERVER_BIN, "--config", config, "--port", "0", "--bind",
                               "127.0.0.1", "--admin-port", "0"});
    return test::Process(std::move(args), dir + "/" + name + ".log");
  };
  {
    test::Process open = start("open", {});
    CHECK_MESSAGE(
        open.wait_for_log(std::regex("WARN .*(auth\\.mode is open: ANYONE)"), 10s).has_value(),
        open.log());
    open.signal(SIGTERM);
    CHECK(open.wait(5s) == 0);
  }
  {
    test::Process keyless = start("keyless", {"--set", "auth.mode=ticket"});
    CHECK(keyless.wait(10s) == 2);
    CHECK_MESSAGE(keyless.log().find("auth.public_key: auth.mode is ticket") != std::string::npos,
                  keyless.log());
  }
  {
    const LoginService login;
    const std::string key = auth::to_hex(login.keys.public_key);
    test::Process ticket =
        start("ticket", {"--set", "auth.mode=ticket", "--set", "auth.public_key=" + key});
    // auth.world "" is the zone's name: "zone" in the shipped config.
    CHECK_MESSAGE(ticket.wait_for_log(std::regex("(login tickets required, for world 'zone')"), 10s)
                      .has_value(),
                  ticket.log());
    CHECK(ticket.log().find("auth.mode is open") == std::string::npos);
    ticket.signal(SIGTERM);
    CHECK(ticket.wait(5s) == 0);
  }
}
