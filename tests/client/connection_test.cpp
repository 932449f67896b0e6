// The kit's Connection against two stand-in zones on loopback (plain ENet hosts in this
// process, speaking the protocol from the test's side): the Hello, the Welcome, a frame,
// acknowledged inputs, and a Transfer to the second zone with its token, with no NATS
// and no world of zones needed.
#include <doctest/doctest.h>

#include <array>
#include <chrono>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include <flatbuffers/flatbuffers.h>

#include "client/connection.hpp"
#include "net/enet_host.hpp"
#include "protocol/codec.hpp"
#include "protocol/compact.hpp"
#include "protocol/schema.hpp"

using namespace zone;
using client::ClientEvent;
using client::Connection;
using client::EventType;

namespace {

// A zone as far as the test needs one: it answers a Hello with a Welcome and sends frames.
struct StandIn {
  std::string name;
  net::EnetHost host;
  net::PeerId peer;
  std::vector<std::uint8_t> hello_token;  // the Hello's transfer token, once one came
  std::string hello_name;
  bool hello = false;
  std::vector<protocol::InputMessage> inputs;
  bool goodbye = false;
  std::uint32_t goodbye_reason = 0;
  flatbuffers::FlatBufferBuilder fbb{512};

  explicit StandIn(std::string zone_name) : name(std::move(zone_name)), host(options()) {}
  static net::HostOptions options() {
    net::HostOptions o;
    o.bind_address = "127.0.0.1";
    o.port = 0;
    o.max_peers = 4;
    return o;
  }

  void pump() {
    host.service(0);
    net::NetEvent ev;
    while (host.next_event(ev)) {
      if (ev.type == net::NetEvent::Type::kConnect) peer = ev.peer;
      if (ev.type == net::NetEvent::Type::kDisconnect) {
        goodbye = true;
        goodbye_reason = ev.data;
      }
      if (ev.type != net::NetEvent::Type::kReceive) continue;
      if (ev.channel == protocol::kUnreliableChannel) {
        protocol::InputMessage in;
        if (protocol::decode_input(ev.bytes, in)) inputs.push_back(in);
        continue;
      }
      const protocol::ClientPacket* p = protocol::parse_client_packet(ev.bytes);
      if (p == nullptr) continue;
      if (const protocol::Hello* h = p->message_as_Hello()) {
        hello = true;
        hello_name = h->player_name() != nullptr ? h->player_name()->str() : "";
        if (h->transfer_token() != nullptr)
          hello_token.assign(h->transfer_token()->begin(), h->transfer_token()->end());
      }
    }
    host.flush();
  }

  void send_welcome(std::uint32_t entity, std::uint32_t tick) {
    fbb.Clear();
    const protocol::Schema schema;
    const auto s = protocol::build_schema(fbb, schema);
    const auto zone_name = fbb.CreateString(name);
    const auto w = protocol::CreateWelcome(fbb, entity, tick, 20, 30.0f, 2.0f, 0.0f, 0.0f, 1000.0f,
                                           1000.0f, true, 7.0f, zone_name, s, 0);
    fbb.Finish(protocol::CreateServerPacket(fbb, protocol::ServerMessage::Welcome, w.Union()));
    host.send(peer, protocol::bytes_of(fbb), net::Delivery::kReliable, protocol::kReliableChannel);
    host.flush();
  }

  // A frame with no baseline: the player's own x and y (centimetres), nothing else.
  void send_frame(std::uint32_t tick, std::uint32_t last_input, std::int32_t x, std::int32_t y) {
    const protocol::Schema schema;
    std::vector<std::int32_t> zeros(schema.size(), 0), now(schema.size(), 0);
    now[protocol::kX] = x;
    now[protocol::kY] = y;
    std::array<std::uint8_t, 256> buffer{};
    protocol::SnapshotPartWriter w(buffer, schema);
    w.header({tick, last_input, 0, 0, 1, protocol::kSnapshotHasSelf});
    w.self((1ull << protocol::kX) | (1ull << protocol::kY), zeros, now);
    w.begin_changes(0);
    w.begin_spawns(0);
    REQUIRE_FALSE(w.overflow());
    host.send(peer, w.bytes(), net::Delivery::kUnreliable, protocol::kUnreliableChannel);
    host.flush();
  }

  void send_transfer(const std::string& to, std::uint16_t port,
                     const std::vector<std::uint8_t>& token, std::uint32_t entity) {
    fbb.Clear();
    const auto t =
        protocol::CreateTransferDirect(fbb, to.c_str(), "127.0.0.1", port, &token, entity);
    fbb.Finish(protocol::CreateServerPacket(fbb, protocol::ServerMessage::Transfer, t.Union()));
    host.send(peer, protocol::bytes_of(fbb), net::Delivery::kReliable, protocol::kReliableChannel);
    // Then the goodbye, reason 9 (transferred), after what is queued.
    host.disconnect(peer, 9);
    host.flush();
  }
};

double seconds_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Runs the client and the stand-ins until `done` or a generous deadline.
template <typename Done>
bool run_until(Connection& c, StandIn& a, StandIn& b, std::vector<ClientEvent>& events, Done done) {
  const double deadline = seconds_now() + 20.0;
  while (seconds_now() < deadline) {
    c.update(seconds_now());
    a.pump();
    b.pump();
    while (const ClientEvent* e = c.events().pop()) events.push_back(*e);
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return false;
}

bool has(const std::vector<ClientEvent>& events, EventType type, std::size_t count = 1) {
  std::size_t n = 0;
  for (const ClientEvent& e : events) n += e.type == type ? 1 : 0;
  return n >= count;
}

}  // namespace

TEST_CASE(
    "client kit: a Connection says hello, plays, and follows a Transfer to the next zone with its "
    "token") {
  net::EnetLibrary enet;
  StandIn a("meadow"), b("forest");
  client::ConnectionOptions options;
  options.player_name = "walker";
  Connection c(options);
  std::vector<ClientEvent> events;
  REQUIRE(c.connect("127.0.0.1", a.host.port()));
  REQUIRE(run_until(c, a, b, events, [&] { return a.hello; }));
  CHECK(a.hello_name == "walker");
  CHECK(a.hello_token.empty());  // a new player

  a.send_welcome(77, 1000);
  REQUIRE(run_until(c, a, b, events, [&] { return c.welcomed(); }));
  CHECK(c.welcome().zone == "meadow");
  CHECK(c.welcome().entity_id == 77);
  // No input before the first frame; then one per tick, acknowledging the frame.
  a.send_frame(1000, 0, 12345, 23456);
  REQUIRE(run_until(c, a, b, events, [&] { return a.inputs.size() >= 3; }));
  CHECK(a.inputs.front().sequence == 1);
  CHECK(a.inputs.back().ack_tick == 1000);
  CHECK(c.predictor().predicted_x() == doctest::Approx(123.45));

  // The Transfer, then the goodbye: the client goes to the forest with the token.
  const std::vector<std::uint8_t> token = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  a.send_transfer("forest", b.host.port(), token, 77);
  REQUIRE(run_until(c, a, b, events, [&] { return b.hello; }));
  CHECK(b.hello_token == token);
  CHECK(c.state() == Connection::State::kTransferring);
  CHECK(has(events, EventType::kTransfer));
  CHECK_FALSE(has(events, EventType::kDisconnected));

  // Nothing goes to the new zone's channel 1 before its Welcome; then it is a session anew.
  CHECK(b.inputs.empty());
  b.send_welcome(77, 5);
  REQUIRE(run_until(c, a, b, events, [&] { return c.welcomed(); }));
  CHECK(c.welcome().zone == "forest");
  CHECK(c.state() == Connection::State::kPlaying);
  CHECK(has(events, EventType::kWelcome, 2));
  b.send_frame(5, 0, 100, 200);
  REQUIRE(run_until(c, a, b, events, [&] { return b.inputs.size() >= 2; }));
  // Acknowledging the new zone's ticks only.
  CHECK(b.inputs.back().ack_tick == 5);
  CHECK(c.predictor().predicted_x() == doctest::Approx(1.0));

  c.disconnect();
  REQUIRE(run_until(c, a, b, events, [&] { return b.goodbye; }));
  CHECK(b.goodbye_reason == 8);  // client quit
}
