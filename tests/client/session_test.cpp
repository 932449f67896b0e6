// The kit's Session (shared/client/session.hpp) driven by bytes alone: no host, no
// network. The zone's packets are built here with FlatBuffers and the snapshot writer; the
// session's are read back with the protocol's own parsers.
#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <flatbuffers/flatbuffers.h>

#include "client/session.hpp"
#include "protocol/codec.hpp"
#include "protocol/compact.hpp"
#include "protocol/schema.hpp"

using namespace zone;
using client::Session;

namespace {

// What the session reported, message by message.
struct Heard final : client::SessionObserver {
  int welcomes = 0, unreadable = 0, parts = 0, frames = 0, transfers = 0, parties = 0, events = 0;
  int action_results = 0, chunks = 0, unreplicated = 0;
  client::WelcomeNote note;
  std::uint32_t previous_ack = 0;
  void on_welcome(const protocol::Welcome&, const client::WelcomeNote& n) override {
    ++welcomes;
    note = n;
  }
  void on_unreadable_welcome() override { ++unreadable; }
  void on_snapshot_part(bool completed, std::uint32_t previous) override {
    ++parts;
    if (completed) ++frames;
    previous_ack = previous;
  }
  void on_unreplicated_part(std::span<const std::uint8_t>) override { ++unreplicated; }
  void on_transfer(const client::TransferInfo&) override { ++transfers; }
  void on_party(const protocol::PartyStatus&) override { ++parties; }
  void on_chunks(const protocol::ChunkUpdate&) override { ++chunks; }
  void on_events(const protocol::Events&) override { ++events; }
  void on_action_result(const protocol::ActionResult&) override { ++action_results; }
};

using Bytes = std::vector<std::uint8_t>;

Bytes finish(flatbuffers::FlatBufferBuilder& fbb) {
  const auto b = protocol::bytes_of(fbb);
  return {b.begin(), b.end()};
}

Bytes welcome(std::uint32_t entity, std::uint32_t tick, const std::string& zone,
              const Bytes& resume_token = {}) {
  flatbuffers::FlatBufferBuilder fbb;
  const protocol::Schema schema;
  const auto s = protocol::build_schema(fbb, schema);
  const auto z = fbb.CreateString(zone);
  const auto token = fbb.CreateVector(resume_token);
  const auto w = protocol::CreateWelcome(fbb, entity, tick, 20, 30.0f, 2.0f, 0.0f, 0.0f, 1000.0f,
                                         1000.0f, true, 7.0f, z, s, 0, token);
  fbb.Finish(protocol::CreateServerPacket(fbb, protocol::ServerMessage::Welcome, w.Union()));
  return finish(fbb);
}

// One part, no baseline, the own x and y only, `parts` parts in the tick.
Bytes part(std::uint32_t tick, std::uint32_t last_input, std::uint8_t index = 0,
           std::uint8_t parts = 1) {
  const protocol::Schema schema;
  std::vector<std::int32_t> zeros(schema.size(), 0), now(schema.size(), 0);
  now[protocol::kX] = 1200;
  now[protocol::kY] = 3400;
  std::array<std::uint8_t, 256> buffer{};
  protocol::SnapshotPartWriter w(buffer, schema);
  w.header({tick, last_input, 0, index, parts,
            static_cast<std::uint8_t>(index == 0 ? protocol::kSnapshotHasSelf : 0)});
  if (index == 0) w.self((1ull << protocol::kX) | (1ull << protocol::kY), zeros, now);
  w.begin_changes(0);
  w.begin_spawns(0);
  REQUIRE_FALSE(w.overflow());
  return {w.bytes().begin(), w.bytes().end()};
}

Bytes transfer(const std::string& zone, std::uint16_t port, const Bytes& token,
               std::uint32_t entity) {
  flatbuffers::FlatBufferBuilder fbb;
  const auto t =
      protocol::CreateTransferDirect(fbb, zone.c_str(), "10.0.0.2", port, &token, entity);
  fbb.Finish(protocol::CreateServerPacket(fbb, protocol::ServerMessage::Transfer, t.Union()));
  return finish(fbb);
}

const protocol::Hello* read_hello(std::span<const std::uint8_t> bytes) {
  const protocol::ClientPacket* p = protocol::parse_client_packet(bytes);
  REQUIRE(p != nullptr);
  const protocol::Hello* h = p->message_as_Hello();
  REQUIRE(h != nullptr);
  return h;
}

Bytes vec(const flatbuffers::Vector<std::uint8_t>* v) {
  return v == nullptr ? Bytes{} : Bytes(v->begin(), v->end());
}

constexpr std::uint8_t kReliable = protocol::kReliableChannel;
constexpr std::uint8_t kUnreliable = protocol::kUnreliableChannel;

}  // namespace

TEST_CASE("session: the Hello carries the name and ticket, and the Welcome starts play") {
  Session s("ann");
  s.set_ticket({1, 2, 3});
  s.start("127.0.0.1", 7777);
  CHECK(s.phase() == Session::Phase::kConnecting);
  const protocol::Hello* h = read_hello(s.hello());
  CHECK(h->player_name()->str() == "ann");
  CHECK(vec(h->ticket()) == Bytes{1, 2, 3});
  CHECK(vec(h->transfer_token()).empty());
  CHECK(vec(h->resume_token()).empty());
  CHECK(s.phase() == Session::Phase::kAwaitingWelcome);

  Heard heard;
  // A snapshot before the Welcome cannot be read: ignored.
  s.receive(kUnreliable, part(5, 0), heard);
  CHECK(heard.parts == 0);
  s.receive(kReliable, welcome(42, 100, "north", {9, 9}), heard);
  CHECK(heard.welcomes == 1);
  CHECK(s.playing());
  CHECK(s.welcome().entity_id == 42);
  CHECK(s.welcome().zone == "north");
  CHECK(s.resume_token() == Bytes{9, 9});
  CHECK_FALSE(heard.note.arrived);
  CHECK_FALSE(heard.note.resumed);
  CHECK(s.counters().packets_in == 2);
  CHECK(s.counters().malformed == 0);
}

TEST_CASE("session: a frame's parts complete it, and the next input acknowledges its tick") {
  Session s("bob");
  s.start("127.0.0.1", 7777);
  (void)s.hello();
  Heard heard;
  s.receive(kReliable, welcome(7, 100, "north"), heard);

  // Before any frame the input acknowledges nothing.
  protocol::InputMessage in;
  REQUIRE(protocol::decode_input(s.input(1.0f, 0.0f), in));
  CHECK(in.sequence == 1);
  CHECK(in.ack_tick == 0);

  // A frame in two parts: the first alone completes nothing.
  s.receive(kUnreliable, part(101, 1, 0, 2), heard);
  CHECK(heard.parts == 1);
  CHECK(heard.frames == 0);
  CHECK(s.replica().ack_tick() == 0);
  s.receive(kUnreliable, part(101, 1, 1, 2), heard);
  CHECK(heard.frames == 1);
  CHECK(heard.previous_ack == 0);
  CHECK(s.replica().ack_tick() == 101);
  CHECK(s.frame_input_sequence() == 1);
  CHECK(s.replica().self()[protocol::kX] == 1200);
  CHECK(s.counters().snapshot_parts == 2);
  CHECK(s.counters().frames == 1);

  REQUIRE(protocol::decode_input(s.input(0.0f, -1.0f), in));
  CHECK(in.sequence == 2);
  CHECK(in.ack_tick == 101);
  CHECK(in.move_y == doctest::Approx(-1.0f));
  CHECK(s.input_sequence() == 2);
  // An explicit ack (a client that reads snapshots its own way).
  REQUIRE(protocol::decode_input(s.input(0.0f, 0.0f, 55), in));
  CHECK(in.ack_tick == 55);
}

TEST_CASE("session: a Transfer then the goodbye is a transfer, not a lost connection") {
  Session s("cat");
  s.start("127.0.0.1", 7777);
  (void)s.hello();
  Heard heard;
  s.receive(kReliable, welcome(7, 100, "north", {5}), heard);
  s.receive(kReliable, transfer("south", 7001, {4, 4, 4}, 7), heard);
  CHECK(heard.transfers == 1);
  CHECK(s.transfer_pending());
  CHECK(s.transfer().zone == "south");
  // The goodbye says 9 (transferred); lost on the way, it would be ENet's time-out (0).
  SUBCASE("goodbye") {
    CHECK(s.on_disconnect(9) == Session::Ending::kTransfer);
  }
  SUBCASE("time-out") {
    CHECK(s.on_disconnect(0) == Session::Ending::kTransfer);
  }
  CHECK(s.phase() == Session::Phase::kTransferring);

  s.begin_transfer();
  CHECK(s.server_host() == "10.0.0.2");
  CHECK(s.server_port() == 7001);
  const protocol::Hello* h = read_hello(s.hello());
  CHECK(vec(h->transfer_token()) == Bytes{4, 4, 4});
  CHECK(vec(h->resume_token()).empty());
  s.receive(kReliable, welcome(7, 3, "south"), heard);
  CHECK(heard.welcomes == 2);
  CHECK(heard.note.arrived);
  CHECK(heard.note.previous_entity == 7);
  CHECK(s.welcome().zone == "south");
  // The next Hello carries no transfer token.
  CHECK(vec(read_hello(s.hello())->transfer_token()).empty());
}

TEST_CASE(
    "session: without a Transfer a time-out is a lost connection, and the resume says its token") {
  Session s("dan");
  s.start("zone.example", 7777);
  (void)s.hello();
  Heard heard;
  s.receive(kReliable, welcome(8, 100, "north", {1, 2}), heard);
  SUBCASE("the zone's own time-out") {
    CHECK(s.on_disconnect(static_cast<std::uint32_t>(protocol::DisconnectReason::Timeout)) ==
          Session::Ending::kLost);
  }
  SUBCASE("ENet's") {
    CHECK(s.on_disconnect(0) == Session::Ending::kLost);
  }
  CHECK(s.phase() == Session::Phase::kClosed);
  s.begin_resume();
  CHECK(s.server_host() == "zone.example");
  const protocol::Hello* h = read_hello(s.hello());
  CHECK(vec(h->resume_token()) == Bytes{1, 2});
  s.receive(kReliable, welcome(8, 130, "north", {3}), heard);
  CHECK(heard.note.resumed);
  CHECK(s.resume_token() == Bytes{3});
}

TEST_CASE("session: a goodbye with a reason ends the session") {
  Session s("eve");
  s.start("127.0.0.1", 7777);
  (void)s.hello();
  Heard heard;
  s.receive(kReliable, welcome(9, 100, "north"), heard);
  CHECK(s.on_disconnect(static_cast<std::uint32_t>(protocol::DisconnectReason::ServerShutdown)) ==
        Session::Ending::kClosed);
  CHECK(s.disconnect_reason() ==
        static_cast<std::uint32_t>(protocol::DisconnectReason::ServerShutdown));
}

TEST_CASE("session: requests are built with their sequences, and answers reach the observer") {
  Session s("fay");
  s.start("127.0.0.1", 7777);
  (void)s.hello();
  Heard heard;
  s.receive(kReliable, welcome(9, 100, "north"), heard);

  const std::array<std::int32_t, 2> args{3, 4};
  const protocol::ClientPacket* p = protocol::parse_client_packet(s.action(2, 77, args));
  REQUIRE(p != nullptr);
  const protocol::Action* a = p->message_as_Action();
  REQUIRE(a != nullptr);
  CHECK(a->sequence() == 1);
  CHECK(a->target() == 77);
  CHECK(s.action_sequence() == 1);
  p = protocol::parse_client_packet(s.join_party(1234));
  REQUIRE(p != nullptr);
  REQUIRE(p->message_as_JoinParty() != nullptr);
  CHECK(p->message_as_JoinParty()->key() == 1234);
  p = protocol::parse_client_packet(s.chat(protocol::ChatChannel::kSay, "hi"));
  REQUIRE(p != nullptr);
  CHECK(p->message_as_Chat() != nullptr);

  flatbuffers::FlatBufferBuilder fbb;
  protocol::build_action_result(fbb, 1, protocol::ActionStatus::Ok, 101);
  s.receive(kReliable, finish(fbb), heard);
  CHECK(heard.action_results == 1);
  const std::vector<std::uint32_t> members{9, 10};
  fbb.Clear();
  const auto ps =
      protocol::CreatePartyStatusDirect(fbb, 3, protocol::GroupResult::Joined, &members);
  fbb.Finish(protocol::CreateServerPacket(fbb, protocol::ServerMessage::PartyStatus, ps.Union()));
  s.receive(kReliable, finish(fbb), heard);
  CHECK(heard.parties == 1);
  // Garbage on the reliable channel is counted, not reported.
  s.receive(kReliable, Bytes{1, 2, 3}, heard);
  CHECK(s.counters().malformed == 1);
}

TEST_CASE("session: an unreadable schema closes the session") {
  Session s("gus");
  s.start("127.0.0.1", 7777);
  (void)s.hello();
  flatbuffers::FlatBufferBuilder fbb;
  const auto w = protocol::CreateWelcome(fbb, 1, 1, 20);  // no schema
  fbb.Finish(protocol::CreateServerPacket(fbb, protocol::ServerMessage::Welcome, w.Union()));
  Heard heard;
  s.receive(kReliable, finish(fbb), heard);
  CHECK(heard.unreadable == 1);
  CHECK(heard.welcomes == 0);
  CHECK(s.phase() == Session::Phase::kClosed);
  CHECK(s.counters().malformed == 1);
}

TEST_CASE("session: without replication the parts go to the observer and the ack is the caller's") {
  Session s("hal");
  s.set_replicate(false);
  s.start("127.0.0.1", 7777);
  (void)s.hello();
  Heard heard;
  s.receive(kReliable, welcome(9, 100, "north"), heard);
  s.receive(kUnreliable, part(101, 0), heard);
  CHECK(heard.unreplicated == 1);
  CHECK(heard.parts == 0);
  CHECK(s.replica().ack_tick() == 0);
  CHECK(s.counters().snapshot_parts == 1);
}
