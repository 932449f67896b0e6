// Wire protocol: builders and verified parsing (shared/protocol/codec.hpp) and the
// quantisation both ends share (shared/protocol/quantize.hpp).
//
// The mutation tests feed thousands of damaged packets through parse_*_packet and read
// every field of whatever it accepts; under ASan this shows that the verifier guards
// every read the rest of the code makes.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numbers>
#include <random>
#include <set>
#include <span>
#include <string>
#include <vector>

#include <flatbuffers/flatbuffers.h>

#include "../replication/wire.hpp"
#include "protocol/codec.hpp"
#include "protocol/quantize.hpp"
#include "protocol/zone_generated.h"
#include "replica/frame_replica.hpp"

using namespace zone;
using namespace zone::protocol;

namespace {

using Bytes = std::vector<std::uint8_t>;

Bytes copy(const flatbuffers::FlatBufferBuilder& fbb) {
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

Bytes hello_packet(std::uint16_t version, std::string_view name) {
  flatbuffers::FlatBufferBuilder fbb;
  build_hello(fbb, version, name);
  return copy(fbb);
}

Bytes input_packet(std::uint32_t seq, float mx, float my, std::uint32_t ack) {
  flatbuffers::FlatBufferBuilder fbb;
  build_input(fbb, seq, mx, my, ack);
  return copy(fbb);
}

Bytes welcome_packet() {
  flatbuffers::FlatBufferBuilder fbb;
  const auto w = CreateWelcome(fbb, 4242, 987654, 30, 45.5f, 2.25f, -100.0f, -200.0f, 300.0f,
                               400.0f, true, 7.5f);
  fbb.Finish(CreateServerPacket(fbb, ServerMessage::Welcome, w.Union()));
  return copy(fbb);
}

test::SnapshotSpec full_snapshot_spec() {
  test::SnapshotSpec s;
  s.tick = 1000;
  s.baseline = 997;
  s.part = 1;
  s.part_count = 3;
  s.self = test::make_state(9, -12345, 67890, 65535, 77, EntityKind::Player, MoveState::Walking);
  s.last_input = 31337;
  s.spawns.push_back({test::make_state(10, 1, 2, 3, 4), 100, "npc-10"});
  s.spawns.push_back({test::make_state(11, -1000000, 2000000, 40000, 65535, EntityKind::Player,
                                       MoveState::Walking),
                      65535, std::string(64, 'x')});
  s.spawns.push_back({test::make_state(12, 0, 0), 1, ""});
  s.moves.emplace_back(20, std::int16_t{-32767}, std::int16_t{32767}, std::uint16_t{0},
                       protocol::MoveState::Walking);
  s.moves.emplace_back(21, std::int16_t{5}, std::int16_t{-6}, std::uint16_t{0},
                       protocol::MoveState::Walking);
  s.teleports.emplace_back(30, std::numeric_limits<std::int32_t>::min(),
                           std::numeric_limits<std::int32_t>::max(), std::uint16_t{0},
                           protocol::MoveState::Walking);
  s.headings.emplace_back(40, std::uint16_t{12345}, MoveState::Walking);
  s.headings.emplace_back(41, std::uint16_t{0}, MoveState::Idle);
  s.healths.emplace_back(50, std::uint16_t{0});
  s.despawns = {60, 61, 62, 0xFFFFFFFFu};
  return s;
}

// Reads every field of an accepted packet (so ASan sees every access) and folds them
// into a value the optimiser cannot drop.
std::uint64_t touch(const ClientPacket& p) {
  std::uint64_t h = static_cast<std::uint64_t>(p.message_type());
  if (const Hello* hello = p.message_as_Hello()) {
    h += hello->protocol_version();
    if (hello->player_name() != nullptr) {
      for (const char c : hello->player_name()->string_view())
        h = h * 31 + static_cast<std::uint8_t>(c);
    }
  }
  if (const Input* in = p.message_as_Input()) {
    h += in->sequence() + in->ack_tick();
    h += static_cast<std::uint64_t>(std::isfinite(in->move_x()) ? in->move_x() : 0.0f);
    h += static_cast<std::uint64_t>(std::isfinite(in->move_y()) ? in->move_y() : 0.0f);
  }
  return h;
}

std::uint64_t touch(const ServerPacket& p) {
  std::uint64_t h = static_cast<std::uint64_t>(p.message_type());
  if (const Welcome* w = p.message_as_Welcome()) {
    h += w->entity_id() + w->server_tick() + w->tick_rate() + (w->aoi_enabled() ? 1 : 0);
    h += static_cast<std::uint64_t>(w->view_radius() == w->view_radius());
    h += static_cast<std::uint64_t>(w->max_speed() == w->max_speed());
  }
  if (const Snapshot* s = p.message_as_Snapshot()) {
    const test::SnapshotSpec d = test::decode(*s);
    h += d.tick + d.baseline + d.part + d.part_count + d.self.id() + d.last_input;
    for (const auto& sp : d.spawns) h += sp.state.id() + sp.name.size();
    for (const auto& m : d.moves) h += m.id() + static_cast<std::uint64_t>(m.dx());
    for (const auto& m : d.teleports) h += m.id() + static_cast<std::uint64_t>(m.x());
    for (const auto& x : d.headings) h += x.id() + x.heading();
    for (const auto& x : d.healths) h += x.id() + x.health();
    for (const auto id : d.despawns) h += id;
  }
  return h;
}

// One random damage to a valid packet: flipped bits, overwritten bytes, a truncation,
// appended garbage, or a 4-byte field replaced by an extreme value.
Bytes mutate(const Bytes& in, std::mt19937_64& rng) {
  Bytes b = in;
  auto pick = [&](std::size_t n) {
    return static_cast<std::size_t>(std::uniform_int_distribution<std::size_t>(0, n - 1)(rng));
  };
  // Every kind but "append" needs a byte to work on.
  const int kind = b.empty() ? 3 : static_cast<int>(pick(6));
  switch (kind) {
    case 0: {  // flip a few bits
      const std::size_t n = 1 + pick(4);
      for (std::size_t i = 0; i < n; ++i)
        b[pick(b.size())] ^= static_cast<std::uint8_t>(1u << pick(8));
      break;
    }
    case 1: {  // overwrite a few bytes
      const std::size_t n = 1 + pick(8);
      for (std::size_t i = 0; i < n; ++i) b[pick(b.size())] = static_cast<std::uint8_t>(rng());
      break;
    }
    case 2:  // truncate
      b.resize(pick(b.size()));
      break;
    case 3: {  // append garbage
      const std::size_t n = 1 + pick(64);
      for (std::size_t i = 0; i < n; ++i) b.push_back(static_cast<std::uint8_t>(rng()));
      break;
    }
    case 4: {  // an extreme 32-bit value somewhere (offsets, lengths)
      static constexpr std::uint32_t kValues[] = {
          0u, 1u, 0x7FFFFFFFu, 0x80000000u, 0xFFFFFFFFu, 0xFFFFFFFCu, 4u, 0x10000u};
      if (b.size() >= 4) {
        const std::size_t at = pick(b.size() - 3);
        const std::uint32_t v = kValues[pick(std::size(kValues))];
        std::memcpy(&b[at], &v, 4);
      }
      break;
    }
    default: {  // a 16-bit value (vtable entries, part numbers)
      if (b.size() >= 2) {
        const std::size_t at = pick(b.size() - 1);
        const auto v = static_cast<std::uint16_t>(rng());
        std::memcpy(&b[at], &v, 2);
      }
      break;
    }
  }
  return b;
}

}  // namespace

TEST_CASE("protocol: Hello round-trips through build_hello and parse_client_packet") {
  const std::string long_name(255, 'n');
  const std::string utf8 = "J\xC3\xBCrgen \xE2\x98\x83";
  for (const std::string& name : {std::string("alice"), std::string(""), long_name, utf8}) {
    for (const std::uint16_t version : {kProtocolVersion, std::uint16_t{0}, std::uint16_t{65535}}) {
      const Bytes b = hello_packet(version, name);
      const ClientPacket* p = parse_client_packet(b);
      REQUIRE(p != nullptr);
      CHECK(p->message_type() == ClientMessage::Hello);
      CHECK(p->message_as_Input() == nullptr);
      const Hello* h = p->message_as_Hello();
      REQUIRE(h != nullptr);
      CHECK(h->protocol_version() == version);
      REQUIRE(h->player_name() != nullptr);
      CHECK(h->player_name()->str() == name);
    }
  }
  CHECK(kProtocolVersion == 2);
}

TEST_CASE("protocol: Input round-trips exactly") {
  struct Case {
    std::uint32_t seq;
    float mx, my;
    std::uint32_t ack;
  };
  const Case cases[] = {{1, 0.0f, 0.0f, 0},
                        {2, 1.0f, -1.0f, 1},
                        {0xFFFFFFFFu, -0.70710677f, 0.70710677f, 0xFFFFFFFFu},
                        {12345, 1e-30f, -3.5f, 99999},
                        {7, -0.0f, std::numeric_limits<float>::denorm_min(), 5}};
  for (const Case& c : cases) {
    const Bytes b = input_packet(c.seq, c.mx, c.my, c.ack);
    const ClientPacket* p = parse_client_packet(b);
    REQUIRE(p != nullptr);
    const Input* in = p->message_as_Input();
    REQUIRE(in != nullptr);
    CHECK(in->sequence() == c.seq);
    CHECK(in->ack_tick() == c.ack);
    // Equal values (FlatBuffers leaves out fields equal to their default 0, so -0.0f
    // reads back as +0.0f; as a movement intent they mean the same).
    CHECK(in->move_x() == c.mx);
    CHECK(in->move_y() == c.my);
  }
}

TEST_CASE("protocol: builders clear the builder before writing") {
  flatbuffers::FlatBufferBuilder fbb;
  build_hello(fbb, kProtocolVersion, std::string(200, 'a'));
  const std::size_t hello_size = fbb.GetSize();
  build_input(fbb, 3, 0.5f, 0.25f, 2);
  CHECK(fbb.GetSize() < hello_size);
  const ClientPacket* p = parse_client_packet(bytes_of(fbb));
  REQUIRE(p != nullptr);
  REQUIRE(p->message_as_Input() != nullptr);
  CHECK(p->message_as_Input()->sequence() == 3);
  CHECK(bytes_of(fbb).data() == fbb.GetBufferPointer());
  CHECK(bytes_of(fbb).size() == fbb.GetSize());
}

TEST_CASE("protocol: Welcome round-trips every field") {
  const Bytes b = welcome_packet();
  const ServerPacket* p = parse_server_packet(b);
  REQUIRE(p != nullptr);
  CHECK(p->message_type() == ServerMessage::Welcome);
  CHECK(p->message_as_Snapshot() == nullptr);
  const Welcome* w = p->message_as_Welcome();
  REQUIRE(w != nullptr);
  CHECK(w->entity_id() == 4242);
  CHECK(w->server_tick() == 987654);
  CHECK(w->tick_rate() == 30);
  CHECK(w->view_radius() == 45.5f);
  CHECK(w->hysteresis() == 2.25f);
  CHECK(w->world_min_x() == -100.0f);
  CHECK(w->world_min_y() == -200.0f);
  CHECK(w->world_max_x() == 300.0f);
  CHECK(w->world_max_y() == 400.0f);
  CHECK(w->aoi_enabled());
  CHECK(w->max_speed() == 7.5f);
}

TEST_CASE("protocol: Snapshot with every vector round-trips") {
  const test::SnapshotSpec in = full_snapshot_spec();
  for (const bool all_vectors : {false, true}) {
    const Bytes b = test::encode(in, all_vectors);
    const ServerPacket* p = parse_server_packet(b);
    REQUIRE(p != nullptr);
    REQUIRE(p->message_type() == ServerMessage::Snapshot);
    const Snapshot* s = p->message_as_Snapshot();
    REQUIRE(s != nullptr);
    const test::SnapshotSpec out = test::decode(*s);
    CHECK(out.tick == in.tick);
    CHECK(out.baseline == in.baseline);
    CHECK(out.part == in.part);
    CHECK(out.part_count == in.part_count);
    REQUIRE(out.has_self);
    CHECK(test::same_state(out.self, in.self));
    CHECK(out.last_input == in.last_input);
    for (const bool present : out.has_vectors) CHECK(present);
    REQUIRE(out.spawns.size() == in.spawns.size());
    for (std::size_t i = 0; i < in.spawns.size(); ++i) {
      CHECK(test::same_state(out.spawns[i].state, in.spawns[i].state));
      CHECK(out.spawns[i].max_health == in.spawns[i].max_health);
      CHECK(out.spawns[i].name == in.spawns[i].name);
    }
    REQUIRE(out.moves.size() == in.moves.size());
    for (std::size_t i = 0; i < in.moves.size(); ++i) {
      CHECK(out.moves[i].id() == in.moves[i].id());
      CHECK(out.moves[i].dx() == in.moves[i].dx());
      CHECK(out.moves[i].dy() == in.moves[i].dy());
    }
    REQUIRE(out.teleports.size() == 1);
    CHECK(out.teleports[0].id() == 30);
    CHECK(out.teleports[0].x() == std::numeric_limits<std::int32_t>::min());
    CHECK(out.teleports[0].y() == std::numeric_limits<std::int32_t>::max());
    REQUIRE(out.headings.size() == 2);
    CHECK(out.headings[0].id() == 40);
    CHECK(out.headings[0].heading() == 12345);
    CHECK(out.headings[0].move_state() == MoveState::Walking);
    CHECK(out.headings[1].move_state() == MoveState::Idle);
    REQUIRE(out.healths.size() == 1);
    CHECK(out.healths[0].id() == 50);
    CHECK(out.healths[0].health() == 0);
    CHECK(out.despawns == in.despawns);
  }
  // Absent vectors stay absent.
  test::SnapshotSpec empty;
  empty.tick = 5;
  const Bytes b = test::encode(empty);
  const Snapshot* s = test::snapshot_of(b);
  REQUIRE(s != nullptr);
  CHECK(s->spawns() == nullptr);
  CHECK(s->moves() == nullptr);
  CHECK(s->despawns() == nullptr);
  CHECK(s->header()->server_tick() == 5);
}

TEST_CASE("protocol: parse rejects empty and tiny and garbage buffers") {
  CHECK(parse_client_packet({}) == nullptr);
  CHECK(parse_server_packet({}) == nullptr);
  const std::uint8_t tiny[3] = {4, 0, 0};
  for (std::size_t n = 0; n <= 3; ++n) {
    CHECK(parse_client_packet(std::span(tiny, n)) == nullptr);
    CHECK(parse_server_packet(std::span(tiny, n)) == nullptr);
  }
  for (std::size_t n = 4; n <= 64; n += 4) {
    const Bytes zeros(n, 0);
    CHECK(parse_client_packet(zeros) == nullptr);
    CHECK(parse_server_packet(zeros) == nullptr);
    const Bytes ones(n, 0xFF);
    CHECK(parse_client_packet(ones) == nullptr);
    CHECK(parse_server_packet(ones) == nullptr);
  }
  std::mt19937_64 rng(12345);
  int accepted = 0;
  for (int i = 0; i < 2000; ++i) {
    Bytes b(static_cast<std::size_t>(rng() % 300));
    for (auto& x : b) x = static_cast<std::uint8_t>(rng());
    if (parse_client_packet(b) != nullptr) ++accepted;
    if (parse_server_packet(b) != nullptr) ++accepted;
  }
  CHECK(accepted == 0);
}

TEST_CASE("protocol: truncated packets are rejected unless only padding was cut") {
  const Bytes snapshot = test::encode(full_snapshot_spec(), true);
  const Bytes packets[] = {hello_packet(kProtocolVersion, "bob"), input_packet(9, 0.5f, -0.5f, 8),
                           welcome_packet(), snapshot};
  for (std::size_t k = 0; k < std::size(packets); ++k) {
    const Bytes& full = packets[k];
    const bool client = k < 2;
    std::uint64_t want = 0;
    if (client) {
      const ClientPacket* p = parse_client_packet(full);
      REQUIRE(p != nullptr);
      want = touch(*p);
    } else {
      const ServerPacket* p = parse_server_packet(full);
      REQUIRE(p != nullptr);
      want = touch(*p);
    }
    for (std::size_t n = 0; n < full.size(); ++n) {
      const Bytes prefix(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
      std::uint64_t got = 0;
      bool ok = false;
      if (client) {
        const ClientPacket* p = parse_client_packet(prefix);
        ok = p != nullptr;
        if (ok) got = touch(*p);
      } else {
        const ServerPacket* p = parse_server_packet(prefix);
        ok = p != nullptr;
        if (ok) got = touch(*p);
      }
      if (!ok) continue;
      // Only trailing alignment padding (at most 7 bytes) may go without losing content,
      // and then the packet must read exactly as before.
      CHECK_MESSAGE(n + 8 > full.size(), "packet " << k << " truncated to " << n << " of "
                                                   << full.size() << " bytes was accepted");
      CHECK(got == want);
    }
    // Cutting into the content is always caught.
    const auto half = std::span(full).first(full.size() / 2);
    if (client) {
      CHECK(parse_client_packet(half) == nullptr);
    } else {
      CHECK(parse_server_packet(half) == nullptr);
    }
  }
}

TEST_CASE("protocol: a packet without a message or with an unknown message type is rejected") {
  {
    flatbuffers::FlatBufferBuilder fbb;
    fbb.Finish(CreateClientPacket(fbb));
    CHECK(parse_client_packet(bytes_of(fbb)) == nullptr);
  }
  {
    flatbuffers::FlatBufferBuilder fbb;
    fbb.Finish(CreateServerPacket(fbb));
    CHECK(parse_server_packet(bytes_of(fbb)) == nullptr);
  }
  {
    // A type tag set but no table.
    flatbuffers::FlatBufferBuilder fbb;
    ClientPacketBuilder b(fbb);
    b.add_message_type(ClientMessage::Input);
    fbb.Finish(b.Finish());
    CHECK(parse_client_packet(bytes_of(fbb)) == nullptr);
  }
  // A well-formed table under a union tag this protocol version does not define: the
  // contract is "a known message, nullptr otherwise".
  {
    flatbuffers::FlatBufferBuilder fbb;
    const auto input = CreateInput(fbb, 1, 0.0f, 0.0f, 0);
    fbb.Finish(CreateClientPacket(fbb, static_cast<ClientMessage>(7), input.Union()));
    const ClientPacket* p = parse_client_packet(bytes_of(fbb));
    CHECK_MESSAGE(p == nullptr, "unknown ClientMessage type 7 accepted by parse_client_packet");
  }
  {
    flatbuffers::FlatBufferBuilder fbb;
    const auto w = CreateWelcome(fbb, 1);
    fbb.Finish(CreateServerPacket(fbb, static_cast<ServerMessage>(3), w.Union()));
    const ServerPacket* p = parse_server_packet(bytes_of(fbb));
    CHECK_MESSAGE(p == nullptr, "unknown ServerMessage type 3 accepted by parse_server_packet");
  }
}

// Where the mutation test stores what it read, so the reads are not optimised away.
volatile std::uint64_t g_protocol_test_sink = 0;

TEST_CASE("protocol: random mutations of valid packets never crash the parser or the replica") {
  const Bytes client_packets[] = {hello_packet(kProtocolVersion, "mutant-player-name"),
                                  input_packet(77, 0.25f, -1.0f, 76)};
  test::SnapshotSpec second = full_snapshot_spec();
  second.part = 0;
  second.part_count = 1;
  second.baseline = 0;
  second.moves.clear();
  second.teleports.clear();
  second.headings.clear();
  second.healths.clear();
  second.despawns.clear();
  const Bytes server_packets[] = {welcome_packet(), test::encode(full_snapshot_spec(), true),
                                  test::encode(full_snapshot_spec(), false),
                                  test::encode(second, false)};
  std::mt19937_64 rng(2024);
  std::uint64_t sink = 0;
  int accepted = 0;
  constexpr int kRounds = 10000;
  for (int i = 0; i < kRounds; ++i) {
    for (const Bytes& base : client_packets) {
      Bytes b = mutate(base, rng);
      if (rng() % 4 == 0) b = mutate(b, rng);
      if (const ClientPacket* p = parse_client_packet(b)) {
        ++accepted;
        sink += touch(*p);
      }
    }
  }
  // The replica sees every accepted snapshot too, as a client would; it may record
  // violations but must not crash or read outside the packet.
  replica::FrameReplica replica;
  replica.reset({10.0, 20, 9});
  for (int i = 0; i < kRounds; ++i) {
    for (const Bytes& base : server_packets) {
      Bytes b = mutate(base, rng);
      if (rng() % 4 == 0) b = mutate(b, rng);
      if (const ServerPacket* p = parse_server_packet(b)) {
        ++accepted;
        sink += touch(*p);
        if (const Snapshot* s = p->message_as_Snapshot()) {
          replica.apply(b, *s);
          if (rng() % 64 == 0) replica.reset({10.0, 20, 9});
        }
      }
    }
  }
  // Some mutations land in payload bytes and stay valid; most do not.
  CHECK(accepted > 0);
  CHECK(accepted < kRounds * 6);
  // Not a check: keeps the reads of accepted packets from being optimised away.
  g_protocol_test_sink = sink;
}

TEST_CASE("quantize: positions to centimetres and back within half a centimetre") {
  std::mt19937_64 rng(99);
  std::uniform_real_distribution<double> any(-1.0e6, 1.0e6);
  std::uniform_real_distribution<double> small(-3.0, 3.0);
  for (int i = 0; i < 20000; ++i) {
    const double m = (i % 2 == 0) ? any(rng) : small(rng);
    const std::int32_t cm = quantize_position(m);
    CHECK(std::abs(dequantize_position(cm) - m) <= 0.005 + 1e-9);
  }
  CHECK(quantize_position(0.0) == 0);
  CHECK(quantize_position(1.0) == 100);
  CHECK(quantize_position(-1.0) == -100);
  CHECK(quantize_position(-0.004) == 0);
  CHECK(quantize_position(-0.006) == -1);
  CHECK(quantize_position(123.456) == 12346);
  CHECK(quantize_position(-123.456) == -12346);
  CHECK(quantize_position(1.0e7) == 1'000'000'000);
  CHECK(quantize_position(-1.0e7) == -1'000'000'000);
  CHECK(dequantize_position(-250) == doctest::Approx(-2.5));
  // Exact round trip of the quantised value.
  for (const std::int32_t cm : {0, 1, -1, 12345, -98765, 1'000'000'000, -1'000'000'000}) {
    CHECK(quantize_position(dequantize_position(cm)) == cm);
  }
}

TEST_CASE("quantize: headings wrap into one turn") {
  constexpr double kTurn = 2.0 * std::numbers::pi;
  CHECK(quantize_heading(0.0) == 0);
  CHECK(quantize_heading(std::numbers::pi) == 32768);
  CHECK(quantize_heading(std::numbers::pi / 2) == 16384);
  CHECK(quantize_heading(-std::numbers::pi / 2) == 49152);
  CHECK(quantize_heading(kTurn) == 0);
  CHECK(quantize_heading(-kTurn) == 0);
  CHECK(quantize_heading(3 * kTurn + std::numbers::pi) == 32768);
  CHECK(quantize_heading(-5 * kTurn - std::numbers::pi / 2) == 49152);
  // Just below a full turn rounds to 0, not 65536 truncated to something else.
  CHECK(quantize_heading(std::nextafter(kTurn, 0.0)) == 0);
  CHECK(quantize_heading(-1e-12) == 0);
  const double step = kTurn / 65536.0;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> any(-50.0, 50.0);
  for (int i = 0; i < 20000; ++i) {
    const double a = any(rng);
    const std::uint16_t q = quantize_heading(a);
    // Angular distance between a and the dequantised heading, modulo a full turn.
    double diff = std::fmod(dequantize_heading(q) - a, kTurn);
    if (diff > kTurn / 2) diff -= kTurn;
    if (diff < -kTurn / 2) diff += kTurn;
    CHECK(std::abs(diff) <= step / 2 + 1e-9);
    // Adding whole turns does not change the wire value (up to rounding at a boundary).
    const std::uint16_t q2 = quantize_heading(a + 2 * kTurn);
    CHECK(static_cast<std::uint16_t>(q2 - q + 1) <= 2);
  }
  CHECK(dequantize_heading(0) == 0.0);
  CHECK(dequantize_heading(32768) == doctest::Approx(std::numbers::pi));
  CHECK(dequantize_heading(65535) < kTurn);
}

TEST_CASE("protocol: every DisconnectReason has its own description") {
  std::set<std::string> seen;
  for (std::uint32_t r = 0; r <= 8; ++r) {
    const std::string s = to_string(static_cast<DisconnectReason>(r));
    CHECK(s != "unknown");
    CHECK(seen.insert(s).second);
  }
  CHECK(std::string(to_string(static_cast<DisconnectReason>(99))) == "unknown");
}
