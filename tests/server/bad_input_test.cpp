// Hostile and broken clients: every kind of bad packet is dropped and counted under its
// reason, persistent offenders are disconnected, and well-behaved clients do not notice.
#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "harness.hpp"
#include "test_util.hpp"

using namespace std::chrono_literals;
using namespace zone;
using protocol::DisconnectReason;

namespace {

using Bytes = std::vector<std::uint8_t>;

bool rejected(const Bytes& b) {
  return protocol::parse_client_packet(b) == nullptr;
}

// Random byte strings the server's verifier must refuse (checked here with the same
// parser, so the expected count is exact).
std::vector<Bytes> random_garbage(std::size_t count, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> len(1, 200);
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<Bytes> out;
  while (out.size() < count) {
    Bytes b(static_cast<std::size_t>(len(rng)));
    for (auto& x : b) x = static_cast<std::uint8_t>(byte(rng));
    if (rejected(b)) out.push_back(std::move(b));
  }
  return out;
}

// A valid hello cut short at every length the verifier refuses (channel 0).
std::vector<Bytes> truncated_hellos() {
  std::vector<Bytes> out;
  const Bytes whole = test::hello_packet("truncated-name");
  REQUIRE_FALSE(rejected(whole));
  for (std::size_t n = 1; n < whole.size(); ++n) {
    Bytes cut(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(n));
    if (rejected(cut)) out.push_back(std::move(cut));
  }
  return out;
}

bool playing(const client::Bot& b) {
  return b.phase() == client::Bot::Phase::kPlaying && b.replica().frames_completed() > 2;
}

}  // namespace

TEST_CASE("bad input: each kind of bad packet is dropped and counted under its reason") {
  net::EnetLibrary enet;
  config::ZoneConfig cfg = test::tiny_zone();
  cfg.limits.max_bad_packets = 1000;  // count them all; nobody is disconnected here
  cfg.limits.max_client_packet_bytes = 512;
  cfg.log.level = config::LogLevel::kError;
  test::ServerThread server(cfg);
  test::Clients clients;

  // A connection that has not said hello: its inputs are refused.
  const net::PeerId raw = clients.connect_raw(server.port());
  REQUIRE(clients.pump_until([&] { return clients.raw(raw).connected; }, 3s));
  constexpr std::uint64_t kEarlyInputs = 3;
  for (std::uint32_t i = 1; i <= kEarlyInputs; ++i) {
    REQUIRE(test::send_bytes(clients, raw, test::input_packet(i, 1.0f, 0.0f, 0),
                             net::Delivery::kUnreliable, test::kInputChannel));
  }

  client::Bot& good = clients.add("good", server.port());
  client::Bot& bad = clients.add("bad", server.port());
  REQUIRE(clients.pump_until([&] { return playing(good) && playing(bad); }, 5s));

  std::uint64_t malformed = 0, oversize = 0, duplicate = 0, unknown = 0;
  const auto send = [&](net::PeerId peer, const Bytes& b, std::uint64_t& counter) {
    REQUIRE(test::send_bytes(clients, peer, b));
    ++counter;
  };
  for (const Bytes& b : random_garbage(20, 12345)) send(bad.peer(), b, malformed);
  const std::vector<Bytes> cut = truncated_hellos();
  CHECK(cut.size() >= 10);
  for (const Bytes& b : cut) send(bad.peer(), b, malformed);
  // Inputs are exactly 16 bytes on channel 1: shorter or longer is malformed, and so is
  // an input sent on the hello channel.
  const Bytes input = test::input_packet(bad.input_sequence() + 500, 0.0f, 0.0f, 0);
  for (std::size_t n = 0; n < input.size(); n += 5) {
    REQUIRE(test::send_bytes(clients, bad.peer(), Bytes(input.begin(), input.begin() + n),
                             net::Delivery::kReliable, test::kInputChannel));
    ++malformed;
  }
  Bytes longer = input;
  longer.push_back(0);
  REQUIRE(
      test::send_bytes(clients, bad.peer(), longer, net::Delivery::kReliable, test::kInputChannel));
  ++malformed;
  REQUIRE(rejected(input));
  send(bad.peer(), input, malformed);
  REQUIRE(rejected(test::empty_message_packet()));
  send(bad.peer(), test::empty_message_packet(), malformed);
  // Larger than limits.max_client_packet_bytes, whatever they hold: even a valid hello
  // with a long name, and sizes that ENet must fragment.
  send(bad.peer(), Bytes(cfg.limits.max_client_packet_bytes + 1, 0), oversize);
  send(bad.peer(), test::hello_packet(std::string(600, 'n')), oversize);
  send(bad.peer(), Bytes(5000, 0xAB), oversize);
  // A second hello from a player already in the zone.
  send(bad.peer(), test::hello_packet("bad"), duplicate);
  send(bad.peer(), test::hello_packet("someone-else"), duplicate);
  // Well-formed packets (they pass the FlatBuffers verifier) with a message type this
  // server does not know, as a newer client might send: unknown, not malformed.
  for (const std::uint8_t type : {std::uint8_t{6}, std::uint8_t{77}, std::uint8_t{255}}) {
    const Bytes b = test::unknown_message_packet(type);
    flatbuffers::Verifier verifier(b.data(), b.size());
    REQUIRE(verifier.VerifyBuffer<protocol::ClientPacket>(nullptr));
    send(bad.peer(), b, unknown);
  }
  // Inputs that acknowledge a tick the server never sent, and inputs older than the
  // newest applied one (harmless, but not applied).
  constexpr std::uint64_t kBadAcks = 2, kStale = 2;
  const std::uint32_t future = bad.replica().ack_tick() + 1'000'000;
  for (std::uint64_t i = 0; i < kBadAcks; ++i) {
    REQUIRE(test::send_bytes(clients, bad.peer(),
                             test::input_packet(bad.input_sequence() + 1000, 0.0f, 0.0f, future),
                             net::Delivery::kReliable, test::kInputChannel));
  }
  for (std::uint32_t seq = 1; seq <= kStale; ++seq) {
    REQUIRE(test::send_bytes(clients, bad.peer(), test::input_packet(seq, 1.0f, 0.0f, 0),
                             net::Delivery::kReliable, test::kInputChannel));
  }
  // Unreliable garbage on the input channel counts the same.
  REQUIRE(test::send_bytes(clients, bad.peer(), Bytes{1, 2, 3}, net::Delivery::kUnreliable,
                           test::kInputChannel));
  ++malformed;

  // The raw connection finally says hello, is welcomed, then says it again.
  REQUIRE(test::send_bytes(clients, raw, test::hello_packet("late")));
  REQUIRE(clients.pump_until([&] { return clients.raw(raw).packets_in > 0; }, 3s));
  send(raw, test::hello_packet("late"), duplicate);

  clients.pump(500ms);
  CHECK(good.phase() == client::Bot::Phase::kPlaying);
  CHECK(bad.phase() == client::Bot::Phase::kPlaying);  // under max_bad_packets
  CHECK_FALSE(clients.raw(raw).closed);
  CHECK(good.replica().violations().empty());
  CHECK(bad.replica().violations().empty());

  ZoneServer& zone = server.stop();
  CHECK(test::drops(zone, DropReason::kBeforeHello) == kEarlyInputs);
  CHECK(test::drops(zone, DropReason::kMalformed) == malformed);
  CHECK(test::drops(zone, DropReason::kOversize) == oversize);
  CHECK(test::drops(zone, DropReason::kDuplicateHello) == duplicate);
  CHECK(test::drops(zone, DropReason::kUnknownMessage) == unknown);
  CHECK(test::drops(zone, DropReason::kBadValue) == 0);
  CHECK(test::drops(zone, DropReason::kFlood) == 0);
  CHECK(test::drops(zone, DropReason::kBadAck) == kBadAcks);
  // The bots' own unreliable inputs could in principle arrive out of order and add to it.
  CHECK(test::drops(zone, DropReason::kStaleInput) >= kStale);
  CHECK(zone.players() == 3);
  CHECK(zone.counters().joins == 3);
  for (std::size_t r = 0; r < kDisconnectReasons; ++r) {
    CHECK_MESSAGE(zone.counters().disconnects[r] == 0, "disconnect reason ",
                  test::reason_of(static_cast<std::uint32_t>(r)));
  }
}

TEST_CASE("bad input: a client that keeps sending garbage is disconnected, others carry on") {
  net::EnetLibrary enet;
  config::ZoneConfig cfg = test::tiny_zone();
  cfg.limits.max_bad_packets = 20;
  cfg.log.level = config::LogLevel::kError;
  test::ServerThread server(cfg);
  test::Clients clients;
  client::Bot& good = clients.add("good", server.port());
  client::Bot& bad = clients.add("bad", server.port());
  REQUIRE(clients.pump_until(
      [&] {
        return playing(good) && playing(bad) &&
               good.replica().find(bad.welcome().entity_id) != nullptr;
      },
      5s));
  clients.pump(100ms);
  const std::uint32_t bad_id = bad.welcome().entity_id;
  const replica::EntityState good_before = test::self_of(good);
  const std::size_t seen_before = good.replica().current().entities.size();

  for (const Bytes& b : random_garbage(cfg.limits.max_bad_packets + 10, 777)) {
    REQUIRE(test::send_bytes(clients, bad.peer(), b));
  }
  REQUIRE(clients.pump_until([&] { return bad.phase() == client::Bot::Phase::kClosed; }, 3s));
  CHECK(test::reason_of(bad) == test::reason_of(DisconnectReason::MalformedPackets));

  // The well-behaved client sees the offender go, and keeps getting snapshots.
  CHECK(clients.pump_until([&] { return good.replica().find(bad_id) == nullptr; }, 2s));
  const std::uint64_t frames = good.replica().frames_completed();
  clients.pump(1s);
  CHECK(good.replica().frames_completed() >= frames + 20);
  CHECK(good.phase() == client::Bot::Phase::kPlaying);
  CHECK(good.replica().violations().empty());
  CHECK(test::self_of(good).id == good_before.id);
  CHECK(test::self_of(good).x() == good_before.x());
  CHECK(test::self_of(good).y() == good_before.y());
  CHECK(test::property_of(good, test::self_of(good).values, "health") ==
        test::property_of(good, good_before.values, "health"));
  CHECK(good.replica().current().entities.size() == seen_before - 1);

  ZoneServer& zone = server.stop();
  // Dropped up to the limit, then disconnected; what came after was not even looked at.
  CHECK(test::drops(zone, DropReason::kMalformed) == cfg.limits.max_bad_packets + 1);
  CHECK(test::disconnects(zone, DisconnectReason::MalformedPackets) == 1);
  CHECK(zone.players() == 1);
  CHECK(zone.world().find(bad_id) == nullptr);
}

TEST_CASE("bad input: an input flood is disconnected as such, an honest rate is not") {
  net::EnetLibrary enet;
  config::ZoneConfig cfg = test::tiny_zone();
  cfg.limits.max_inputs_per_second = 60;
  cfg.limits.max_bad_packets = 20;
  cfg.log.level = config::LogLevel::kError;
  test::ServerThread server(cfg);
  test::Clients clients;
  client::Bot& honest = clients.add("honest", server.port());  // 50 inputs/s from pump()
  client::Bot& flooder = clients.add("flooder", server.port());
  REQUIRE(clients.pump_until([&] { return playing(honest) && playing(flooder); }, 5s));
  clients.pump(1500ms);  // more than a one-second window at the honest rate
  REQUIRE(flooder.phase() == client::Bot::Phase::kPlaying);

  clients.mute(flooder);
  // Far beyond max_inputs_per_second + max_bad_packets in one go.
  for (int i = 0; i < 400; ++i) {
    flooder.send_input(clients.host(), 0.0f, 0.0f);
    if (i % 25 == 24) clients.host().flush();
  }
  REQUIRE(clients.pump_until([&] { return flooder.phase() == client::Bot::Phase::kClosed; }, 3s));
  CHECK(test::reason_of(flooder) == test::reason_of(DisconnectReason::InputFlood));

  const std::uint64_t frames = honest.replica().frames_completed();
  clients.pump(1s);
  CHECK(honest.phase() == client::Bot::Phase::kPlaying);
  CHECK(honest.replica().frames_completed() >= frames + 20);
  CHECK(honest.replica().violations().empty());
  CHECK(honest.replica().find(flooder.welcome().entity_id) == nullptr);

  ZoneServer& zone = server.stop();
  CHECK(test::drops(zone, DropReason::kFlood) == cfg.limits.max_bad_packets + 1);
  CHECK(test::disconnects(zone, DisconnectReason::InputFlood) == 1);
  CHECK(zone.players() == 1);
}

TEST_CASE("bad input: a connection that never says hello is closed after the hello timeout") {
  net::EnetLibrary enet;
  config::ZoneConfig cfg = test::tiny_zone();
  cfg.limits.hello_timeout_ms = 400;
  test::ServerThread server(cfg);
  test::Clients clients;
  const net::PeerId silent = clients.connect_raw(server.port());
  client::Bot& polite = clients.add("polite", server.port());
  REQUIRE(clients.pump_until([&] { return clients.raw(silent).connected; }, 3s));
  // Before the deadline it is still connected ...
  clients.pump(150ms);
  CHECK_FALSE(clients.raw(silent).closed);
  // ... after it, it is told why it was closed, while a client that said hello stays.
  REQUIRE(clients.pump_until([&] { return clients.raw(silent).closed; }, 5s));
  CHECK(clients.raw(silent).disconnect_reason ==
        static_cast<std::uint32_t>(DisconnectReason::BadHello));
  CHECK(playing(polite));
}
