// Wire protocol: the reliable FlatBuffers messages of channel 0 (shared/protocol/codec.hpp),
// the compact channel-1 messages (shared/protocol/compact.hpp: Input, snapshot parts),
// their byte-level building blocks (byte_io.hpp) and the quantisation both ends share
// (quantize.hpp).
//
// The mutation tests feed thousands of damaged packets through the parsers and read
// every field of whatever they accept; under ASan this shows that the checks guard
// every read the rest of the code makes.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
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
#include <fmt/format.h>

#include "../replication/wire.hpp"
#include "protocol/byte_io.hpp"
#include "protocol/codec.hpp"
#include "protocol/compact.hpp"
#include "protocol/quantize.hpp"
#include "protocol/zone_generated.h"
#include "replica/frame_replica.hpp"

using namespace zone;
using namespace zone::protocol;
using test::Bytes;

namespace {

Bytes copy(const flatbuffers::FlatBufferBuilder& fbb) {
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

Bytes hello_packet(std::uint16_t version, std::string_view name) {
  flatbuffers::FlatBufferBuilder fbb;
  build_hello(fbb, version, name);
  return copy(fbb);
}

Bytes welcome_packet() {
  flatbuffers::FlatBufferBuilder fbb;
  const auto schema = build_schema(fbb, test::test_schema());
  const auto w = CreateWelcome(fbb, 4242, 987654, 30, 45.5f, 2.25f, -100.0f, -200.0f, 300.0f,
                               400.0f, true, 7.5f, 0, schema, test::kNpcType);
  fbb.Finish(CreateServerPacket(fbb, ServerMessage::Welcome, w.Union()));
  return copy(fbb);
}

Bytes zone_params_packet() {
  flatbuffers::FlatBufferBuilder fbb;
  const auto z = CreateZoneParams(fbb, 123456, 55.25f, 3.5f, true);
  fbb.Finish(CreateServerPacket(fbb, ServerMessage::ZoneParams, z.Union()));
  return copy(fbb);
}

// Reads every field of an accepted packet (so ASan sees every access) and folds them
// into a value the optimiser cannot drop.
std::uint64_t touch(const ClientPacket& p) {
  std::uint64_t h = static_cast<std::uint64_t>(p.message_type());
  if (const Hello* hello = p.message_as_Hello()) {
    h += hello->protocol_version();
    if (hello->player_name() != nullptr) {
      for (const char c : hello->player_name()->string_view()) {
        h = h * 31 + static_cast<std::uint8_t>(c);
      }
    }
  }
  return h;
}

std::uint64_t bits_of(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

std::uint64_t touch(const ServerPacket& p) {
  std::uint64_t h = static_cast<std::uint64_t>(p.message_type());
  if (const Welcome* w = p.message_as_Welcome()) {
    h += w->entity_id() + w->server_tick() + w->tick_rate() + (w->aoi_enabled() ? 1 : 0);
    h += bits_of(w->view_radius()) + bits_of(w->hysteresis()) + bits_of(w->max_speed());
    h += bits_of(w->world_min_x()) + bits_of(w->world_min_y()) + bits_of(w->world_max_x()) +
         bits_of(w->world_max_y());
    h += w->entity_type();
    // The schema, through the client's own reading of it (every field and type it reads).
    if (const auto schema = read_schema(w->schema())) {
      for (const FieldSpec& f : schema->fields()) h = h * 31 + f.bits + f.name.size();
      h += schema->types().size();
    }
  }
  if (const ZoneParams* z = p.message_as_ZoneParams()) {
    h += z->server_tick() + bits_of(z->view_radius()) + bits_of(z->hysteresis()) +
         (z->aoi_enabled() ? 1 : 0);
  }
  return h;
}

std::uint64_t touch(const SnapshotPart& p) {
  std::uint64_t h = p.header.server_tick + p.header.last_input_sequence + p.header.baseline_age +
                    p.header.part + p.header.part_count + p.header.flags + p.self_mask;
  const auto wire_of = [&](std::uint32_t begin, std::uint64_t mask) {
    const std::uint32_t* w = p.wire_at(begin);
    for (int i = 0; i < std::popcount(mask); ++i) h = h * 31 + w[i];
  };
  if (p.header.flags & kSnapshotHasSelf) wire_of(p.self_wire_begin, p.self_mask);
  for (const ChangeRecord& c : p.changes) {
    h = h * 31 + c.index + c.mask;
    wire_of(c.wire_begin, c.mask);
  }
  for (const SpawnRecord& s : p.spawns) {
    h = h * 31 + s.id + s.type + s.mask;
    for (const char c : s.name) h = h * 31 + static_cast<std::uint8_t>(c);
    wire_of(s.wire_begin, s.mask);
  }
  return h;
}

// One random damage to a valid packet: flipped bits, overwritten bytes, a truncation,
// appended garbage, a byte inserted or removed, or a 4-byte field replaced by an extreme
// value.
Bytes mutate(const Bytes& in, std::mt19937_64& rng) {
  Bytes b = in;
  auto pick = [&](std::size_t n) {
    return static_cast<std::size_t>(std::uniform_int_distribution<std::size_t>(0, n - 1)(rng));
  };
  // Every kind but "append" needs a byte to work on.
  const int kind = b.empty() ? 3 : static_cast<int>(pick(8));
  switch (kind) {
    case 0: {  // flip a few bits
      const std::size_t n = 1 + pick(4);
      for (std::size_t i = 0; i < n; ++i) {
        b[pick(b.size())] ^= static_cast<std::uint8_t>(1u << pick(8));
      }
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
    case 4: {  // an extreme 32-bit value somewhere (offsets, lengths, ticks)
      static constexpr std::uint32_t kValues[] = {
          0u, 1u, 0x7FFFFFFFu, 0x80000000u, 0xFFFFFFFFu, 0xFFFFFFFCu, 4u, 0x10000u};
      if (b.size() >= 4) {
        const std::size_t at = pick(b.size() - 3);
        const std::uint32_t v = kValues[pick(std::size(kValues))];
        std::memcpy(&b[at], &v, 4);
      }
      break;
    }
    case 5: {  // insert a byte (shifts every varint after it)
      b.insert(b.begin() + static_cast<std::ptrdiff_t>(pick(b.size() + 1)),
               static_cast<std::uint8_t>(rng()));
      break;
    }
    case 6:  // remove a byte
      b.erase(b.begin() + static_cast<std::ptrdiff_t>(pick(b.size())));
      break;
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

// Raw bytes, for parts the writer would never produce.
struct Raw {
  Bytes b;
  Raw& u8(std::uint8_t v) {
    b.push_back(v);
    return *this;
  }
  Raw& u32(std::uint32_t v) {
    for (int i = 0; i < 4; ++i) b.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
    return *this;
  }
  Raw& varint(std::uint64_t v) {
    while (v >= 0x80) {
      b.push_back(static_cast<std::uint8_t>(v | 0x80));
      v >>= 7;
    }
    b.push_back(static_cast<std::uint8_t>(v));
    return *this;
  }
  Raw& raw(std::initializer_list<std::uint8_t> bytes) {
    b.insert(b.end(), bytes);
    return *this;
  }
  Raw& text(std::string_view s) {
    b.insert(b.end(), s.begin(), s.end());
    return *this;
  }
  Raw& header(std::uint32_t tick, std::uint8_t age = 0, std::uint8_t part = 0,
              std::uint8_t count = 1, std::uint8_t flags = 0, std::uint32_t last_input = 7) {
    return u32(tick).u32(last_input).u8(age).u8(part).u8(count).u8(flags);
  }
};

ParseError parse(const Bytes& b) {
  SnapshotPart part;
  return parse_snapshot_part(b, test::test_schema(), part);
}

// A part exercising every record kind and extreme values, for round trips and mutations.
test::PartSpec rich_part() {
  test::PartSpec s = test::part_on(1000, 997);
  s.part = 1;
  s.part_count = 3;
  s.last_input = 31337;
  s.has_self = true;
  s.self_base = test::values(-12345, 67890, 65535, 1, 77);
  s.self_now = test::values(-12300, 67000, 2, 0, 76);
  s.changes = {
      test::change(0, test::values(0, 0, 0, 0, 0), test::values(1, -1, 1, 1, 1)),
      test::despawn(1),
      test::change(7, test::values(std::numeric_limits<std::int32_t>::max(), 0, 0, 0, 100),
                   test::values(std::numeric_limits<std::int32_t>::min(), 5, 65535, 0, 100)),
      test::despawn(300),
      test::change(0xFFFFFFF0u, test::values(1, 2, 3, 0, 4), test::values(1, 2, 3, 0, 65535)),
  };
  test::EntityState big = test::make_state(11, -1000000, 2000000, 40000, 1, 65535);
  big.values[test::kMaxHealth] = 65535;
  test::EntityState zero = test::make_state(12, 0, 0, 0, 0, 0);
  zero.values[test::kMaxHealth] = 0;
  s.spawns = {
      test::spawn(test::make_state(10, 1, 2, 3, 0, 4), "npc-10"),
      test::spawn(big, std::string(255, 'x'), test::kPlayerType),
      test::spawn(zero, "", test::kNpcType),
      test::spawn(test::make_state(0xFFFFFFFFu, std::numeric_limits<std::int32_t>::min(),
                                   std::numeric_limits<std::int32_t>::max(), 65535, 1, 1),
                  "J\xC3\xBCrgen \xE2\x98\x83", test::kPlayerType),
  };
  return s;
}

}  // namespace

// ---- Channel 0: FlatBuffers ---------------------------------------------------------

TEST_CASE("protocol: Hello round-trips through build_hello and parse_client_packet") {
  CHECK(kProtocolVersion == 10);
  const std::string long_name(255, 'n');
  const std::string utf8 = "J\xC3\xBCrgen \xE2\x98\x83";
  for (const std::string& name : {std::string("alice"), std::string(""), long_name, utf8}) {
    for (const std::uint16_t version : {kProtocolVersion, std::uint16_t{0}, std::uint16_t{65535}}) {
      const Bytes b = hello_packet(version, name);
      ParseError why = ParseError::kMalformed;
      const ClientPacket* p = parse_client_packet(b, &why);
      REQUIRE(p != nullptr);
      CHECK(why == ParseError::kNone);
      CHECK(p->message_type() == ClientMessage::Hello);
      const Hello* h = p->message_as_Hello();
      REQUIRE(h != nullptr);
      CHECK(h->protocol_version() == version);
      REQUIRE(h->player_name() != nullptr);
      CHECK(h->player_name()->str() == name);
    }
  }
}

TEST_CASE("protocol: builders clear the builder before writing") {
  flatbuffers::FlatBufferBuilder fbb;
  build_hello(fbb, kProtocolVersion, std::string(200, 'a'));
  const std::size_t long_size = fbb.GetSize();
  build_hello(fbb, kProtocolVersion, "b");
  CHECK(fbb.GetSize() < long_size);
  const ClientPacket* p = parse_client_packet(bytes_of(fbb));
  REQUIRE(p != nullptr);
  REQUIRE(p->message_as_Hello() != nullptr);
  CHECK(p->message_as_Hello()->player_name()->str() == "b");
  CHECK(bytes_of(fbb).data() == fbb.GetBufferPointer());
  CHECK(bytes_of(fbb).size() == fbb.GetSize());
}

TEST_CASE("protocol: Welcome round-trips every field") {
  const Bytes b = welcome_packet();
  ParseError why = ParseError::kMalformed;
  const ServerPacket* p = parse_server_packet(b, &why);
  REQUIRE(p != nullptr);
  CHECK(why == ParseError::kNone);
  CHECK(p->message_type() == ServerMessage::Welcome);
  CHECK(p->message_as_ZoneParams() == nullptr);
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
  CHECK(w->entity_type() == test::kNpcType);
  std::string why_not;
  const auto schema = read_schema(w->schema(), &why_not);
  REQUIRE_MESSAGE(schema.has_value(), why_not);
  // Everything but `persistent` (the server's own business: not sent) comes back.
  Schema sent = test::test_schema();
  Schema expected;
  for (std::size_t i = kEngineFieldCount; i < sent.size(); ++i) {
    FieldSpec f = sent.field(i);
    f.persistent = false;
    REQUIRE_FALSE(expected.add_field(f).has_value());
  }
  CHECK(*schema == expected);
}

TEST_CASE("protocol: ZoneParams round-trips every field") {
  const Bytes b = zone_params_packet();
  const ServerPacket* p = parse_server_packet(b);
  REQUIRE(p != nullptr);
  CHECK(p->message_type() == ServerMessage::ZoneParams);
  CHECK(p->message_as_Welcome() == nullptr);
  const ZoneParams* z = p->message_as_ZoneParams();
  REQUIRE(z != nullptr);
  CHECK(z->server_tick() == 123456);
  CHECK(z->view_radius() == 55.25f);
  CHECK(z->hysteresis() == 3.5f);
  CHECK(z->aoi_enabled());
  // Defaults: fields equal to their default are left out of the buffer and read back.
  flatbuffers::FlatBufferBuilder fbb;
  fbb.Finish(CreateServerPacket(fbb, ServerMessage::ZoneParams, CreateZoneParams(fbb).Union()));
  const ServerPacket* d = parse_server_packet(bytes_of(fbb));
  REQUIRE(d != nullptr);
  REQUIRE(d->message_as_ZoneParams() != nullptr);
  CHECK(d->message_as_ZoneParams()->server_tick() == 0);
  CHECK_FALSE(d->message_as_ZoneParams()->aoi_enabled());
}

TEST_CASE("protocol: parse rejects empty and tiny and garbage buffers") {
  ParseError why = ParseError::kNone;
  CHECK(parse_client_packet({}, &why) == nullptr);
  CHECK(why == ParseError::kMalformed);
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
  const Bytes packets[] = {hello_packet(kProtocolVersion, "bob"), welcome_packet(),
                           zone_params_packet()};
  for (std::size_t k = 0; k < std::size(packets); ++k) {
    CAPTURE(k);
    const Bytes& full = packets[k];
    const bool client = k == 0;
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
      const auto prefix = std::span(full).first(n);
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
  ParseError why = ParseError::kNone;
  {
    flatbuffers::FlatBufferBuilder fbb;
    fbb.Finish(CreateClientPacket(fbb));
    CHECK(parse_client_packet(bytes_of(fbb), &why) == nullptr);
    CHECK(why == ParseError::kMalformed);
  }
  {
    flatbuffers::FlatBufferBuilder fbb;
    fbb.Finish(CreateServerPacket(fbb));
    CHECK(parse_server_packet(bytes_of(fbb), &why) == nullptr);
    CHECK(why == ParseError::kMalformed);
  }
  {
    // A type tag set but no table.
    flatbuffers::FlatBufferBuilder fbb;
    ClientPacketBuilder b(fbb);
    b.add_message_type(ClientMessage::Hello);
    fbb.Finish(b.Finish());
    CHECK(parse_client_packet(bytes_of(fbb), &why) == nullptr);
    CHECK(why == ParseError::kMalformed);
  }
  {
    flatbuffers::FlatBufferBuilder fbb;
    ServerPacketBuilder b(fbb);
    b.add_message_type(ServerMessage::Welcome);
    fbb.Finish(b.Finish());
    CHECK(parse_server_packet(bytes_of(fbb), &why) == nullptr);
    CHECK(why == ParseError::kMalformed);
  }
  // A well-formed table under a union tag this protocol version does not define (a newer
  // peer's message): refused, and told apart from garbage.
  for (const int tag : {6, 7, 100, 255}) {  // 5 is Chat, the last client message
    CAPTURE(tag);
    flatbuffers::FlatBufferBuilder fbb;
    const auto hello = CreateHello(fbb, 1);
    fbb.Finish(CreateClientPacket(fbb, static_cast<ClientMessage>(tag), hello.Union()));
    why = ParseError::kNone;
    CHECK(parse_client_packet(bytes_of(fbb), &why) == nullptr);
    CHECK(why == ParseError::kUnknownMessage);
  }
  for (const int tag : {11, 12, 200}) {  // 10 is ChatResult, the last server message
    CAPTURE(tag);
    flatbuffers::FlatBufferBuilder fbb;
    const auto w = CreateWelcome(fbb, 1);
    fbb.Finish(CreateServerPacket(fbb, static_cast<ServerMessage>(tag), w.Union()));
    why = ParseError::kNone;
    CHECK(parse_server_packet(bytes_of(fbb), &why) == nullptr);
    CHECK(why == ParseError::kUnknownMessage);
  }
}

// Where the mutation test stores what it read, so the reads are not optimised away.
volatile std::uint64_t g_protocol_test_sink = 0;

TEST_CASE("protocol: random mutations of valid FlatBuffers packets never crash the parser") {
  const Bytes client_packets[] = {hello_packet(kProtocolVersion, "mutant-player-name")};
  const Bytes server_packets[] = {welcome_packet(), zone_params_packet()};
  std::mt19937_64 rng(2024);
  std::uint64_t sink = 0;
  int accepted = 0, tried = 0;
  for (int i = 0; i < 5000; ++i) {
    for (const Bytes& base : client_packets) {
      Bytes b = mutate(base, rng);
      if (rng() % 4 == 0) b = mutate(b, rng);
      ++tried;
      if (const ClientPacket* p = parse_client_packet(b)) {
        ++accepted;
        sink += touch(*p);
      }
    }
    for (const Bytes& base : server_packets) {
      Bytes b = mutate(base, rng);
      if (rng() % 4 == 0) b = mutate(b, rng);
      ++tried;
      if (const ServerPacket* p = parse_server_packet(b)) {
        ++accepted;
        sink += touch(*p);
      }
    }
  }
  // Some mutations land in payload bytes and stay valid; most do not.
  CHECK(accepted > 0);
  CHECK(accepted < tried);
  // Not a check: keeps the reads of accepted packets from being optimised away.
  g_protocol_test_sink = sink;
}

TEST_CASE("protocol: every DisconnectReason has its own description") {
  std::set<std::string> seen;
  for (std::uint32_t r = 0; r <= static_cast<std::uint32_t>(DisconnectReason::MAX); ++r) {
    const std::string s = to_string(static_cast<DisconnectReason>(r));
    CHECK(s != "unknown");
    CHECK(seen.insert(s).second);
  }
  CHECK(seen.size() == 19);
  CHECK(std::string(to_string(DisconnectReason::ProtocolMismatch)) == "protocol version mismatch");
  CHECK(std::string(to_string(DisconnectReason::Transferred)) == "transferred to another zone");
  CHECK(std::string(to_string(DisconnectReason::LoggedInElsewhere)) == "logged in elsewhere");
  CHECK(std::string(to_string(DisconnectReason::Kicked)) == "kicked by an operator");
  CHECK(std::string(to_string(DisconnectReason::Banned)) == "account banned");
  // The codes are the wire's (docs/protocol.md's table).
  CHECK(static_cast<int>(DisconnectReason::Kicked) == 15);
  CHECK(static_cast<int>(DisconnectReason::Banned) == 16);
  CHECK(std::string(to_string(DisconnectReason::StoreUnavailable)) ==
        "character store unavailable");
  CHECK(static_cast<int>(DisconnectReason::StoreUnavailable) == 17);
  CHECK(std::string(to_string(DisconnectReason::ResumeRefused)) == "resume token refused");
  CHECK(static_cast<int>(DisconnectReason::ResumeRefused) == 18);
  CHECK(std::string(to_string(static_cast<DisconnectReason>(99))) == "unknown");
}

// ---- Channel 1: Input ---------------------------------------------------------------

TEST_CASE("compact: Input is exactly 16 little-endian bytes and round-trips bit for bit") {
  const InputMessage cases[] = {
      {1, 0, 0.0f, 0.0f},
      {2, 1, 1.0f, -1.0f},
      {0xFFFFFFFFu, 0xFFFFFFFFu, -0.70710677f, 0.70710677f},
      {12345, 99999, 1e-30f, -3.5f},
      {7, 5, -0.0f, std::numeric_limits<float>::denorm_min()},
      {8, 6, std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()},
  };
  for (const InputMessage& in : cases) {
    std::array<std::uint8_t, kInputBytes> buf{};
    encode_input(in, buf);
    InputMessage out{99, 99, 9.0f, 9.0f};
    REQUIRE(decode_input(buf, out));
    CHECK(out.sequence == in.sequence);
    CHECK(out.ack_tick == in.ack_tick);
    // The float bits themselves travel (-0.0 stays -0.0, NaN stays NaN): the server is the
    // one to judge them.
    CHECK(bits_of(out.move_x) == bits_of(in.move_x));
    CHECK(bits_of(out.move_y) == bits_of(in.move_y));
  }
  // The layout: u32 sequence, u32 ack_tick, f32 move_x, f32 move_y, little-endian.
  std::array<std::uint8_t, kInputBytes> buf{};
  encode_input({0x04030201u, 0x08070605u, 1.0f, -2.0f}, buf);
  const std::array<std::uint8_t, kInputBytes> want = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06,
                                                      0x07, 0x08, 0x00, 0x00, 0x80, 0x3F,
                                                      0x00, 0x00, 0x00, 0xC0};
  CHECK(buf == want);
  CHECK(kInputBytes == 16);
}

TEST_CASE("compact: an Input of any other size is refused") {
  std::array<std::uint8_t, kInputBytes> good{};
  encode_input({5, 4, 0.5f, 0.5f}, good);
  Bytes bytes(good.begin(), good.end());
  for (std::size_t n = 0; n <= 64; ++n) {
    Bytes b(n, 0);
    std::copy_n(bytes.begin(), std::min(n, bytes.size()), b.begin());
    InputMessage out;
    CHECK(decode_input(b, out) == (n == kInputBytes));
  }
  // A snapshot part is not an input either.
  InputMessage out;
  CHECK_FALSE(decode_input(test::encode(rich_part()), out));
}

// ---- Channel 1: snapshot parts -----------------------------------------------------

TEST_CASE("compact: a snapshot part round-trips every record kind and extreme value") {
  const test::PartSpec in = rich_part();
  const Bytes b = test::encode(in);
  REQUIRE(!b.empty());
  const auto d = test::decode(b);
  REQUIRE(d.has_value());
  CHECK(d->header.server_tick == 1000);
  CHECK(d->header.baseline_tick() == 997);
  CHECK(d->header.baseline_age == 3);
  CHECK(d->header.part == 1);
  CHECK(d->header.part_count == 3);
  CHECK(d->header.last_input_sequence == 31337);
  REQUIRE(d->has_self());
  CHECK(d->self_on(in.self_base) == in.self_now);
  REQUIRE(d->changes.size() == in.changes.size());
  for (std::size_t i = 0; i < in.changes.size(); ++i) {
    CAPTURE(i);
    const test::ChangeSpec& want = in.changes[i];
    CHECK(d->changes[i].index == want.index);
    if (want.despawn) {
      CHECK(d->changes[i].mask == 0);
    } else {
      CHECK(d->changes[i].mask == fields::change_mask(want.base, want.now));
      CHECK(test::applied(d->changes[i], want.base) == want.now);
    }
  }
  CHECK(d->despawns() == 2);
  CHECK(d->updates() == 3);
  REQUIRE(d->spawns.size() == in.spawns.size());
  for (std::size_t i = 0; i < in.spawns.size(); ++i) {
    CAPTURE(i);
    CHECK(d->spawns[i].id == in.spawns[i].id);
    CHECK(d->spawns[i].type == in.spawns[i].type);
    CHECK(d->spawns[i].name == in.spawns[i].name);
    CHECK(d->spawns[i].values == in.spawns[i].values);
  }
  // An all-zero spawn carries no fields at all.
  CHECK(d->spawns[2].mask == 0);
  // Re-encoding the decoded values gives the same bytes.
  test::PartSpec again = in;
  CHECK(test::encode(again) == b);

  // The smallest part: a header and two zero counts.
  const test::PartSpec empty = test::part_on(1, 0);
  const Bytes e = test::encode(empty);
  CHECK(e.size() == kSnapshotHeaderBytes + 2);
  const auto de = test::decode(e);
  REQUIRE(de.has_value());
  CHECK_FALSE(de->has_self());
  CHECK(de->baseline() == 0);
  CHECK(de->records() == 0);
}

TEST_CASE("compact: the writer caps names at 255 bytes and never writes past its buffer") {
  test::PartSpec s = test::part_on(5, 0);
  s.spawns = {test::spawn(test::make_state(3, 1, 1), std::string(300, 'z'))};
  const auto d = test::decode(test::encode(s));
  REQUIRE(d.has_value());
  CHECK(d->spawns[0].name == std::string(255, 'z'));
  // Too small a buffer: overflow is reported, the bytes after it are untouched.
  auto write = [](std::span<std::uint8_t> out) {
    SnapshotPartWriter w(out, test::test_schema());
    SnapshotHeader h;
    h.server_tick = 9;
    w.header(h);
    w.begin_changes(0);
    w.begin_spawns(1);
    w.spawn(1, test::kNpcType, std::string(200, 'q'), test::values(1, 2));
    return std::pair{w.size(), w.overflow()};
  };
  Bytes big(1024);
  const auto [need, big_overflow] = write(big);
  CHECK_FALSE(big_overflow);
  // Header and counts, id gap, type, name length, the name, and a record of x, y, health
  // and max_health (one byte each) behind its mask (rows 0, 1, 8, 9: two bytes).
  CHECK(need == kSnapshotHeaderBytes + 2 + 3 + 200 + 6);
  for (std::size_t cap = 0; cap <= need; ++cap) {
    CAPTURE(cap);
    Bytes buf(cap + 16, 0xAB);
    const auto [size, overflow] = write(std::span(buf).first(cap));
    CHECK(overflow == (cap < need));
    CHECK(size <= cap);
    for (std::size_t i = cap; i < buf.size(); ++i) REQUIRE(buf[i] == 0xAB);
  }
}

TEST_CASE("compact: every structural rule of a snapshot part is checked") {
  // Each case is a pair: a valid part, and the same with one rule broken.
  struct Case {
    const char* what;
    Bytes good;
    Bytes bad;
  };
  std::vector<Case> cases;
  auto both = [&](const char* what, auto make) {
    cases.push_back({what, make(false), make(true)});
  };

  both("server tick 0", [](bool bad) { return Raw{}.header(bad ? 0 : 1).varint(0).varint(0).b; });
  both("part >= part_count",
       [](bool bad) { return Raw{}.header(9, 0, bad ? 3 : 2, 3).varint(0).varint(0).b; });
  both("part 255 of 255",
       [](bool bad) { return Raw{}.header(9, 0, bad ? 255 : 254, 255).varint(0).varint(0).b; });
  both("part_count 0",
       [](bool bad) { return Raw{}.header(9, 0, 0, bad ? 0 : 1).varint(0).varint(0).b; });
  both("baseline_age == tick",
       [](bool bad) { return Raw{}.header(5, bad ? 5 : 4).varint(0).varint(0).b; });
  both("baseline_age > tick",
       [](bool bad) { return Raw{}.header(5, bad ? 200 : 4).varint(0).varint(0).b; });
  for (const std::uint8_t flag : {0x02, 0x04, 0x80, 0x03, 0xFF}) {
    both("unknown flag bits", [flag](bool bad) {
      Raw r;
      r.header(9, 0, 0, 1, bad ? flag : (flag & kSnapshotHasSelf));
      if (flag & kSnapshotHasSelf) r.varint(1).varint(2);  // self: x changes by +1
      return r.varint(0).varint(0).b;
    });
  }
  both("self flag with mask 0", [](bool bad) {
    Raw r;
    r.header(9, 0, 0, 1, kSnapshotHasSelf);
    if (bad) {
      r.varint(0);
    } else {
      r.varint(1u << test::kHealth).varint(5);
    }
    return r.varint(0).varint(0).b;
  });
  both("self record cut short", [](bool bad) {
    Raw r;
    r.header(9, 0, 0, 1, kSnapshotHasSelf).varint(3).varint(2);  // x and y announced
    if (!bad) r.varint(4).varint(0).varint(0);                   // y, then the counts
    return r.b;
  });
  both("change count beyond the bytes left", [](bool bad) {
    Raw r;
    r.header(9, 1).varint(bad ? 4 : 2);
    r.varint(0).varint(0).varint(0).varint(0);  // two despawns
    return r.varint(0).b;
  });
  both("huge change count", [](bool bad) {
    Raw r;
    r.header(9, 1).varint(bad ? 0xFFFFFFFFu : 1).varint(0).varint(0);
    return r.varint(0).b;
  });
  both("spawn count beyond the bytes left", [](bool bad) {
    Raw r;
    r.header(9).varint(0).varint(bad ? 3 : 1);
    return r.varint(0).varint(test::kNpcType).u8(0).varint(0).b;  // one bare spawn
  });
  both("a change count with no spawn count after it", [](bool bad) {
    Raw r;
    r.header(9, 1).varint(1).varint(0).varint(0);
    if (!bad) r.varint(0);
    return r.b;
  });
  both("index overflow", [](bool bad) {
    Raw r;
    // The first change at index 2^32 - 1 is fine; one more is beyond 32 bits.
    r.header(9, 1).varint(bad ? 2 : 1).varint(0xFFFFFFFFu).varint(0);
    if (bad) r.varint(0).varint(0);
    return r.varint(0).b;
  });
  both("id overflow", [](bool bad) {
    Raw r;
    r.header(9).varint(0).varint(bad ? 2 : 1);
    r.varint(0xFFFFFFFEu).varint(test::kNpcType).u8(0).varint(0);  // id 2^32 - 1
    if (bad) r.varint(0).varint(test::kNpcType).u8(0).varint(0);   // id 2^32
    return r.b;
  });
  both("id gap beyond 32 bits at once", [](bool bad) {
    Raw r;
    r.header(9).varint(0).varint(2);
    r.varint(5).varint(test::kNpcType).u8(0).varint(0);  // id 6
    r.varint(bad ? 0xFFFFFFFFu : 0xFFFFFFF0u).varint(test::kNpcType).u8(0).varint(0);
    return r.b;
  });
  // The schema has two types (player 0, npc 1): a spawn's type is an index into them.
  for (const std::uint32_t type : {2u, 3u, 255u, 300u, 65536u, 0xFFFFFFFFu}) {
    both("type beyond the schema's types", [type](bool bad) {
      return Raw{}
          .header(9)
          .varint(0)
          .varint(1)
          .varint(0)
          .varint(bad ? type : test::kNpcType)
          .u8(0)
          .varint(0)
          .b;
    });
  }
  both("name longer than the bytes left", [](bool bad) {
    Raw r;
    r.header(9).varint(0).varint(1).varint(0).varint(test::kNpcType);
    r.u8(bad ? 5 : 3).text("abc").varint(0);
    return r.b;
  });
  both("name length 255 with 254 bytes", [](bool bad) {
    Raw r;
    r.header(9).varint(0).varint(1).varint(0).varint(test::kNpcType).u8(255);
    return r.text(std::string(bad ? 254 : 255, 'n')).varint(0).b;
  });
  // test_schema() has 10 rows: bits 10 .. 63 name no row.
  const std::size_t rows = test::test_schema().size();
  for (const std::uint64_t mask : {1ull << rows, 1ull << (rows + 1), 1ull << 31, 0xFFFFFFFFull,
                                   1ull << 32, 1ull << 63, ~0ull}) {
    both("change mask bits beyond the schema", [mask](bool bad) {
      Raw r;
      r.header(9, 1).varint(1).varint(0).varint(bad ? mask : 1u);
      for (int i = 0; i < 64; ++i) {
        if ((bad ? mask : 1u) & (1ull << i)) r.varint(2);
      }
      return r.varint(0).b;
    });
    both("spawn mask bits beyond the schema", [mask](bool bad) {
      Raw r;
      r.header(9).varint(0).varint(1).varint(0).varint(test::kNpcType).u8(0);
      r.varint(bad ? mask : 1u);
      for (int i = 0; i < 64; ++i) {
        if ((bad ? mask : 1u) & (1ull << i)) r.varint(2);
      }
      return r.b;
    });
    both("self mask bits beyond the schema", [mask](bool bad) {
      Raw r;
      r.header(9, 0, 0, 1, kSnapshotHasSelf).varint(bad ? mask : 1u);
      for (int i = 0; i < 64; ++i) {
        if ((bad ? mask : 1u) & (1ull << i)) r.varint(2);
      }
      return r.varint(0).varint(0).b;
    });
  }
  both("a mask varint beyond 64 bits", [](bool bad) {
    Raw r;
    r.header(9, 1).varint(1).varint(0);
    if (bad) {
      r.raw({0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00});  // 11 bytes
    } else {
      r.raw({0x81, 0x00});  // bit 0, in a longer encoding than needed
      r.varint(2);
    }
    return r.varint(0).b;
  });
  // Field widths: heading and health 16 bits, move_state 8; x and y take any 32 bits.
  struct Width {
    std::size_t field;
    std::uint32_t widest;
  };
  for (const Width w :
       {Width{kHeading, 0xFFFF}, Width{test::kHealth, 0xFFFF}, Width{kMoveState, 0xFF}}) {
    both("a field's value wider than the field", [w](bool bad) {
      Raw r;
      r.header(9, 1)
          .varint(1)
          .varint(0)
          .varint(1u << w.field)
          .varint(bad ? w.widest + 1 : w.widest);
      return r.varint(0).b;
    });
    both("a spawn field's value far wider than the field", [w](bool bad) {
      Raw r;
      r.header(9).varint(0).varint(1).varint(0).varint(test::kNpcType).u8(0);
      return r.varint(1u << w.field).varint(bad ? 0xFFFFFFFFu : 1u).b;
    });
  }
  both("a 32-bit field's value beyond 32 bits", [](bool bad) {
    Raw r;
    r.header(9, 1).varint(1).varint(0).varint(1u << kX);
    if (bad) {
      r.raw({0xFF, 0xFF, 0xFF, 0xFF, 0x1F});  // 2^35 - 1
    } else {
      r.raw({0xFF, 0xFF, 0xFF, 0xFF, 0x0F});  // 2^32 - 1
    }
    return r.varint(0).b;
  });
  both("a varint of six bytes", [](bool bad) {
    Raw r;
    r.header(9, 1).varint(1).varint(0).varint(1u << kX);
    if (bad) {
      r.raw({0x81, 0x80, 0x80, 0x80, 0x80, 0x00});
    } else {
      r.raw({0x81, 0x80, 0x80, 0x80, 0x00});
    }
    return r.varint(0).b;
  });
  both("trailing bytes", [](bool bad) {
    Raw r;
    r.header(9).varint(0).varint(0);
    if (bad) r.u8(0);
    return r.b;
  });
  both("trailing bytes after a spawn", [](bool bad) {
    Raw r;
    r.header(9).varint(0).varint(1).varint(0).varint(test::kNpcType).u8(1).text("a").varint(0);
    if (bad) r.text("junk");
    return r.b;
  });

  for (const Case& c : cases) {
    CAPTURE(c.what);
    CHECK(parse(c.good) == ParseError::kNone);
    CHECK(parse(c.bad) == ParseError::kMalformed);
  }
  CHECK(cases.size() > 40);

  // A header shorter than 12 bytes, whatever it holds.
  const Bytes header_only = Raw{}.header(9).varint(0).varint(0).b;
  REQUIRE(parse(header_only) == ParseError::kNone);
  for (std::size_t n = 0; n < header_only.size(); ++n) {
    CAPTURE(n);
    CHECK(parse(Bytes(header_only.begin(), header_only.begin() + static_cast<std::ptrdiff_t>(n))) ==
          ParseError::kMalformed);
  }
  // Every truncation of a rich part.
  const Bytes rich = test::encode(rich_part());
  REQUIRE(parse(rich) == ParseError::kNone);
  for (std::size_t n = 0; n < rich.size(); ++n) {
    CAPTURE(n);
    CHECK(parse(Bytes(rich.begin(), rich.begin() + static_cast<std::ptrdiff_t>(n))) ==
          ParseError::kMalformed);
  }
}

TEST_CASE("compact: parse_snapshot_part reuses its output and clears it on every call") {
  SnapshotPart part;
  const Bytes rich = test::encode(rich_part());
  REQUIRE(parse_snapshot_part(rich, test::test_schema(), part) == ParseError::kNone);
  CHECK(part.changes.size() == 5);
  CHECK(part.spawns.size() == 4);
  const Bytes empty = test::encode(test::part_on(3, 1));
  REQUIRE(parse_snapshot_part(empty, test::test_schema(), part) == ParseError::kNone);
  CHECK(part.changes.empty());
  CHECK(part.spawns.empty());
  CHECK(part.self_mask == 0);
  CHECK(part.header.server_tick == 3);
  CHECK(parse_snapshot_part(Bytes(3, 0), test::test_schema(), part) == ParseError::kMalformed);
  CHECK(part.changes.empty());
  CHECK(part.spawns.empty());
}

TEST_CASE("compact: random mutations of valid parts never crash the parser or the replica") {
  std::vector<Bytes> bases = {test::encode(rich_part())};
  {
    // A full frame and a small delta on it: mutations of these reach deep into the
    // replica (spawns, changes against a real baseline, jumps).
    test::PartSpec full = test::part_on(1, 0);
    full.has_self = true;
    full.self_now = test::values(100, 100, 0, 0, 100);
    for (std::uint32_t id = 2; id < 40; id += 3) {
      full.spawns.push_back(test::spawn(
          test::make_state(id, static_cast<std::int32_t>(id) * 10, -static_cast<std::int32_t>(id)),
          fmt::format("e{}", id)));
    }
    bases.push_back(test::encode(full));
    test::PartSpec delta = test::part_on(2, 1);
    delta.changes = {test::change(0, full.spawns[0].values, test::values(25, -2, 7, 1, 100)),
                     test::despawn(3),
                     test::change(5, full.spawns[5].values, test::values(180, -17, 0, 0, 1))};
    delta.spawns = {test::spawn(test::make_state(41, 0, 0), "late")};
    bases.push_back(test::encode(delta));
  }
  std::mt19937_64 rng(2025);
  replica::FrameReplica r;
  r.reset({10.0, 20, 9}, test::test_schema());
  std::uint64_t sink = 0;
  std::size_t accepted = 0, rejected = 0;
  SnapshotPart part;
  constexpr int kRounds = 20000;
  for (int i = 0; i < kRounds; ++i) {
    // Keep the replica holding real frames now and then, so deltas have a baseline.
    if (i % 50 == 0) {
      r.apply(bases[1]);
      r.apply(bases[2]);
    }
    const Bytes& base = bases[static_cast<std::size_t>(rng() % bases.size())];
    Bytes b = mutate(base, rng);
    if (rng() % 4 == 0) b = mutate(b, rng);
    const std::size_t malformed_before = static_cast<std::size_t>(
        std::count_if(r.violations().begin(), r.violations().end(),
                      [](const auto& v) { return v.kind == replica::Violation::kMalformed; }));
    const bool ok = parse_snapshot_part(b, test::test_schema(), part) == ParseError::kNone;
    if (ok) {
      ++accepted;
      sink += touch(part);
    } else {
      ++rejected;
    }
    r.apply(b);
    const std::size_t malformed_after = static_cast<std::size_t>(
        std::count_if(r.violations().begin(), r.violations().end(),
                      [](const auto& v) { return v.kind == replica::Violation::kMalformed; }));
    // The replica calls malformed exactly what the parser refuses.
    REQUIRE(malformed_after - malformed_before == (ok ? 0u : 1u));
    if (r.violations().size() > 1000) r.clear_violations();
    if (rng() % 128 == 0) r.reset({10.0, 20, 9}, test::test_schema());
    sink += r.ack_tick() + r.current().entities.size();
  }
  CHECK(accepted > kRounds / 20);
  CHECK(rejected > kRounds / 4);
  // Pure garbage too.
  for (int i = 0; i < 2000; ++i) {
    Bytes b(static_cast<std::size_t>(rng() % 200));
    for (auto& x : b) x = static_cast<std::uint8_t>(rng());
    r.apply(b);
    if (parse_snapshot_part(b, test::test_schema(), part) == ParseError::kNone) sink += touch(part);
  }
  // Not a check: keeps the reads from being optimised away.
  g_protocol_test_sink = sink;
}

TEST_CASE("compact: planning bounds are upper bounds of the bytes really written") {
  std::mt19937_64 rng(31337);
  const Schema& schema = test::test_schema();
  auto random_values = [&] {
    test::FieldValues v;
    for (std::size_t i = 0; i < schema.size(); ++i) {
      const FieldSpec& f = schema.field(i);
      switch (rng() % 4) {
        case 0:
          v[i] = 0;
          break;
        case 1:  // small
          v[i] = static_cast<std::int32_t>(rng() % 300) - 150;
          break;
        default:
          v[i] = static_cast<std::int32_t>(rng());
          break;
      }
      if (f.bits < 32)
        v[i] = static_cast<std::int32_t>(static_cast<std::uint32_t>(v[i]) &
                                         fields::width_mask(f.bits));
    }
    return v;
  };
  Bytes buf(1 << 20);
  // Part overhead: header and both counts (below 2^21 each).
  for (const std::uint32_t count : {0u, 1u, 127u, 128u, 16383u, 16384u, (1u << 21) - 1}) {
    SnapshotPartWriter w(buf, schema);
    w.header({});
    w.begin_changes(count);
    w.begin_spawns(count);
    CHECK(w.size() <= kSnapshotHeaderBytes + 2 * kMaxCountBytes);
  }
  for (int round = 0; round < 300; ++round) {
    CAPTURE(round);
    // Spawns: spawn_cost bounds each record, whatever its id gap, name and values.
    const std::size_t n = 1 + rng() % 60;
    std::vector<std::uint32_t> ids(n);
    for (auto& id : ids)
      id = 1 + static_cast<std::uint32_t>(rng() % (rng() % 2 ? 1000 : 0xFFFFFFFEu));
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    SnapshotPartWriter w(buf, schema);
    w.header({});
    w.begin_changes(0);
    w.begin_spawns(static_cast<std::uint32_t>(ids.size()));
    std::uint64_t planned = kSnapshotHeaderBytes + 2 * kMaxCountBytes;
    for (const std::uint32_t id : ids) {
      const std::string name(rng() % 300, 'n');
      const auto type = static_cast<std::uint16_t>(rng() % schema.types().size());
      const test::FieldValues v = random_values();
      const std::size_t before = w.size();
      w.spawn(id, type, name, v);
      const std::uint32_t cost = spawn_cost(schema, id, type, name, v);
      CHECK(w.size() - before <= cost);
      planned += cost;
    }
    REQUIRE_FALSE(w.overflow());
    CHECK(w.size() <= planned);

    // Changes and despawns: the index bytes of the baseline's size plus the record.
    const std::uint32_t base_size =
        1 + static_cast<std::uint32_t>(rng() % (rng() % 2 ? 200 : 3000000));
    const std::uint32_t index_bytes = varint_size(base_size);
    std::vector<std::uint32_t> idx(1 + rng() % 60);
    for (auto& i : idx) i = static_cast<std::uint32_t>(rng() % base_size);
    std::sort(idx.begin(), idx.end());
    idx.erase(std::unique(idx.begin(), idx.end()), idx.end());
    SnapshotPartWriter c(buf, schema);
    c.header({});
    c.begin_changes(static_cast<std::uint32_t>(idx.size()));
    for (const std::uint32_t i : idx) {
      const std::size_t before = c.size();
      if (rng() % 4 == 0) {
        c.despawn(i);
        CHECK(c.size() - before <= index_bytes + 1);
      } else {
        const test::FieldValues base = random_values();
        const test::FieldValues now = rng() % 2 ? random_values() : base;
        const std::uint64_t mask = fields::change_mask(base, now);
        c.change(i, mask, base, now);
        CHECK(c.size() - before <= index_bytes + fields::encoded_size(schema, mask, base, now));
      }
    }
    REQUIRE_FALSE(c.overflow());
  }
}

TEST_CASE("compact: a writer on a reused buffer writes exactly what a fresh one does") {
  std::mt19937_64 rng(10);
  Bytes reused(4096);
  for (int round = 0; round < 50; ++round) {
    test::PartSpec s = test::part_on(100 + round, static_cast<std::uint32_t>(90 + round % 5));
    s.has_self = rng() % 2;
    s.self_now = test::values(static_cast<std::int32_t>(rng() % 1000), 5);
    std::uint32_t index = 0;
    for (int k = 0; k < static_cast<int>(rng() % 30); ++k) {
      index += 1 + static_cast<std::uint32_t>(rng() % 5);
      if (rng() % 3 == 0) {
        s.changes.push_back(test::despawn(index));
      } else {
        s.changes.push_back(test::change(index, test::values(0, 0),
                                         test::values(static_cast<std::int32_t>(rng() % 90), 1)));
      }
    }
    std::uint32_t id = 0;
    for (int k = 0; k < static_cast<int>(rng() % 20); ++k) {
      id += 1 + static_cast<std::uint32_t>(rng() % 1000);
      s.spawns.push_back(test::spawn(test::make_state(id, 1, 2), std::string(rng() % 40, 'r')));
    }
    // Leave garbage from the last round in the reused buffer.
    for (auto& x : reused) x = static_cast<std::uint8_t>(rng());
    SnapshotPartWriter w(reused, test::test_schema());
    SnapshotHeader h;
    h.server_tick = s.tick;
    h.last_input_sequence = s.last_input;
    h.baseline_age = s.baseline_age;
    h.flags = s.has_self ? kSnapshotHasSelf : 0;
    w.header(h);
    if (s.has_self) w.self(fields::change_mask(s.self_base, s.self_now), s.self_base, s.self_now);
    w.begin_changes(static_cast<std::uint32_t>(s.changes.size()));
    for (const auto& c : s.changes) {
      if (c.despawn) {
        w.despawn(c.index);
      } else {
        w.change(c.index, fields::change_mask(c.base, c.now), c.base, c.now);
      }
    }
    w.begin_spawns(static_cast<std::uint32_t>(s.spawns.size()));
    for (const auto& sp : s.spawns) w.spawn(sp.id, sp.type, sp.name, sp.values);
    REQUIRE_FALSE(w.overflow());
    const Bytes fresh = test::encode(s);
    CHECK(Bytes(w.bytes().begin(), w.bytes().end()) == fresh);
  }
}

// ---- byte_io -------------------------------------------------------------------------

TEST_CASE("byte_io: varints take 1 to 5 bytes and round-trip at every boundary") {
  struct Case {
    std::uint32_t v;
    std::uint32_t size;
  };
  const Case cases[] = {{0, 1},
                        {1, 1},
                        {127, 1},
                        {128, 2},
                        {16383, 2},
                        {16384, 3},
                        {(1u << 21) - 1, 3},
                        {1u << 21, 4},
                        {(1u << 28) - 1, 4},
                        {1u << 28, 5},
                        {0x80000000u, 5},
                        {0xFFFFFFFFu, 5}};
  for (const Case& c : cases) {
    CAPTURE(c.v);
    CHECK(varint_size(c.v) == c.size);
    std::array<std::uint8_t, 8> buf{};
    ByteWriter w(buf);
    w.varint(c.v);
    CHECK(w.size() == c.size);
    CHECK_FALSE(w.overflow());
    ByteReader r(w.written());
    CHECK(r.varint() == c.v);
    CHECK_FALSE(r.failed());
    CHECK(r.at_end());
  }
  // The exact encodings.
  auto enc = [](std::uint32_t v) {
    std::array<std::uint8_t, 8> buf{};
    ByteWriter w(buf);
    w.varint(v);
    return Bytes(w.written().begin(), w.written().end());
  };
  CHECK(enc(0) == Bytes{0x00});
  CHECK(enc(127) == Bytes{0x7F});
  CHECK(enc(128) == Bytes{0x80, 0x01});
  CHECK(enc(300) == Bytes{0xAC, 0x02});
  CHECK(enc(0xFFFFFFFFu) == Bytes{0xFF, 0xFF, 0xFF, 0xFF, 0x0F});
  // Random values.
  std::mt19937_64 rng(1);
  for (int i = 0; i < 10000; ++i) {
    const auto v = static_cast<std::uint32_t>(rng() >> (rng() % 64));
    std::array<std::uint8_t, 8> buf{};
    ByteWriter w(buf);
    w.varint(v);
    REQUIRE(w.size() == varint_size(v));
    ByteReader r(w.written());
    REQUIRE(r.varint() == v);
  }
}

TEST_CASE("byte_io: zigzag maps small magnitudes of either sign to small numbers") {
  CHECK(zigzag(0) == 0);
  CHECK(zigzag(-1) == 1);
  CHECK(zigzag(1) == 2);
  CHECK(zigzag(-2) == 3);
  CHECK(zigzag(2) == 4);
  CHECK(zigzag(-64) == 127);
  CHECK(zigzag(64) == 128);
  CHECK(zigzag(std::numeric_limits<std::int32_t>::max()) == 0xFFFFFFFEu);
  CHECK(zigzag(std::numeric_limits<std::int32_t>::min()) == 0xFFFFFFFFu);
  CHECK(unzigzag(0xFFFFFFFFu) == std::numeric_limits<std::int32_t>::min());
  CHECK(unzigzag(0xFFFFFFFEu) == std::numeric_limits<std::int32_t>::max());
  CHECK(unzigzag(1) == -1);
  std::mt19937_64 rng(2);
  for (int i = 0; i < 10000; ++i) {
    const auto v = static_cast<std::int32_t>(static_cast<std::uint32_t>(rng()));
    REQUIRE(unzigzag(zigzag(v)) == v);
    const auto u = static_cast<std::uint32_t>(rng());
    REQUIRE(zigzag(unzigzag(u)) == u);
  }
  // svarint: one byte for -64..63.
  for (const std::int32_t v : {-64, -1, 0, 63}) {
    std::array<std::uint8_t, 8> buf{};
    ByteWriter w(buf);
    w.svarint(v);
    CHECK(w.size() == 1);
    ByteReader r(w.written());
    CHECK(r.svarint() == v);
  }
  for (const std::int32_t v : {-65, 64, std::numeric_limits<std::int32_t>::min()}) {
    std::array<std::uint8_t, 8> buf{};
    ByteWriter w(buf);
    w.svarint(v);
    CHECK(w.size() > 1);
    ByteReader r(w.written());
    CHECK(r.svarint() == v);
  }
}

TEST_CASE("byte_io: a reader refuses varints longer than 32 bits and stays failed") {
  auto read = [](Bytes b, bool* failed) {
    ByteReader r(b);
    const std::uint32_t v = r.varint();
    *failed = r.failed();
    return v;
  };
  bool failed = false;
  CHECK(read({0xFF, 0xFF, 0xFF, 0xFF, 0x0F}, &failed) == 0xFFFFFFFFu);
  CHECK_FALSE(failed);
  // A sixth byte, even a zero one.
  read({0x80, 0x80, 0x80, 0x80, 0x80, 0x00}, &failed);
  CHECK(failed);
  read({0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01}, &failed);
  CHECK(failed);
  // Five bytes whose last carries bits beyond the 32nd.
  for (const std::uint8_t last : {0x10, 0x1F, 0x20, 0x40, 0x7F}) {
    CAPTURE(int(last));
    read({0xFF, 0xFF, 0xFF, 0xFF, last}, &failed);
    CHECK(failed);
    read({0x80, 0x80, 0x80, 0x80, last}, &failed);
    CHECK(failed);
  }
  // Cut short.
  read({}, &failed);
  CHECK(failed);
  read({0x80}, &failed);
  CHECK(failed);
  read({0xFF, 0xFF, 0xFF, 0xFF}, &failed);
  CHECK(failed);

  // Once failed, a reader reads zeros and stays failed.
  const Bytes b = {0x80, 0x05, 0x06, 0x07, 0x08, 0x09};
  ByteReader r{std::span(b).first(1)};
  CHECK(r.varint() == 0);
  CHECK(r.failed());
  CHECK(r.u8() == 0);
  CHECK(r.failed());
  ByteReader s(b);
  CHECK(s.bytes(7).empty());
  CHECK(s.failed());
  CHECK(s.at_end());
  CHECK(s.u32() == 0);
}

TEST_CASE("byte_io: 16- and 64-bit values and doubles are little-endian and round-trip") {
  std::array<std::uint8_t, 18> buf{};
  ByteWriter w(buf);
  w.u16(0xA1B2);
  w.u64(0x0102030405060708ull);
  w.f64(-2.5);
  CHECK_FALSE(w.overflow());
  CHECK(w.size() == 18);
  CHECK(buf[0] == 0xB2);
  CHECK(buf[1] == 0xA1);
  CHECK(buf[2] == 0x08);
  CHECK(buf[9] == 0x01);
  CHECK(buf[17] == 0xC0);  // the sign and top exponent bits of -2.5
  ByteReader r(buf);
  CHECK(r.u16() == 0xA1B2);
  CHECK(r.remaining() == 16);
  CHECK(r.u64() == 0x0102030405060708ull);
  CHECK(r.f64() == -2.5);
  CHECK(r.at_end());
  CHECK_FALSE(r.failed());
  // One byte short: the reader fails instead of reading past the end.
  ByteReader short_read{std::span<const std::uint8_t>(buf).first(7)};
  short_read.u64();
  CHECK(short_read.failed());
  ByteWriter tight{std::span(buf).first(1)};
  tight.u16(1);
  CHECK(tight.overflow());
}

TEST_CASE("byte_io: fixed-width values are little-endian and never overrun either buffer") {
  std::array<std::uint8_t, 9> buf{};
  ByteWriter w(buf);
  w.u32(0x11223344u);
  w.f32(1.0f);
  w.u8(0x99);
  CHECK_FALSE(w.overflow());
  CHECK(w.size() == 9);
  CHECK(buf == std::array<std::uint8_t, 9>{0x44, 0x33, 0x22, 0x11, 0x00, 0x00, 0x80, 0x3F, 0x99});
  w.patch_u8(0, 0x55);
  CHECK(buf[0] == 0x55);
  // Full: nothing more is written, and the writer says so.
  w.u8(1);
  CHECK(w.overflow());
  CHECK(w.size() == 9);
  std::array<std::uint8_t, 8> guard{};
  guard.fill(0xEE);
  ByteWriter small{std::span(guard).first(3)};
  small.u32(0);
  CHECK(small.overflow());
  CHECK(small.size() == 3);
  CHECK(guard[3] == 0xEE);
  guard.fill(0xEE);
  ByteWriter tiny{std::span(guard).first(2)};
  const std::uint8_t three[3] = {1, 2, 3};
  tiny.bytes(three);
  CHECK(tiny.overflow());
  CHECK(tiny.size() == 0);
  CHECK(guard[0] == 0xEE);
  ByteWriter none{std::span(guard).first(0)};
  none.varint(300);
  CHECK(none.overflow());

  ByteReader r(buf);
  CHECK(r.u8() == 0x55);
  CHECK(r.u8() == 0x33);
  CHECK(r.position() == 2);
  CHECK(r.bytes(2).size() == 2);
  CHECK(r.f32() == 1.0f);
  CHECK(r.u8() == 0x99);
  CHECK(r.at_end());
  CHECK_FALSE(r.failed());
  CHECK(r.u8() == 0);
  CHECK(r.failed());
}

// ---- Quantisation --------------------------------------------------------------------

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

TEST_CASE(
    "protocol: a Hello carries a transfer token only when given one, and a Transfer reads back") {
  flatbuffers::FlatBufferBuilder fbb;
  build_hello(fbb, kProtocolVersion, "bob");
  const ClientPacket* plain = parse_client_packet(bytes_of(fbb));
  REQUIRE(plain != nullptr);
  CHECK(plain->message_as_Hello()->transfer_token() == nullptr);

  const std::vector<std::uint8_t> token = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  build_hello(fbb, kProtocolVersion, "bob", token);
  const ClientPacket* arriving = parse_client_packet(bytes_of(fbb));
  REQUIRE(arriving != nullptr);
  const auto* t = arriving->message_as_Hello()->transfer_token();
  REQUIRE(t != nullptr);
  CHECK(std::vector<std::uint8_t>(t->begin(), t->end()) == token);
  CHECK(arriving->message_as_Hello()->player_name()->str() == "bob");
  CHECK(arriving->message_as_Hello()->ticket() == nullptr);

  // A login ticket (any bytes, to the codec) rides beside the token, or alone.
  const std::vector<std::uint8_t> ticket(150, 0x5A);
  build_hello(fbb, kProtocolVersion, "bob", token, ticket);
  const ClientPacket* ticketed = parse_client_packet(bytes_of(fbb));
  REQUIRE(ticketed != nullptr);
  REQUIRE(ticketed->message_as_Hello()->ticket() != nullptr);
  const auto* tk = ticketed->message_as_Hello()->ticket();
  CHECK(std::vector<std::uint8_t>(tk->begin(), tk->end()) == ticket);
  CHECK(ticketed->message_as_Hello()->transfer_token()->size() == 16);
  build_hello(fbb, kProtocolVersion, "bob", {}, ticket);
  const ClientPacket* login = parse_client_packet(bytes_of(fbb));
  REQUIRE(login != nullptr);
  CHECK(login->message_as_Hello()->transfer_token() == nullptr);
  CHECK(login->message_as_Hello()->ticket()->size() == ticket.size());

  fbb.Clear();
  const auto transfer = CreateTransfer(fbb, fbb.CreateString("east"), fbb.CreateString("10.0.0.2"),
                                       7787, fbb.CreateVector(token), 42);
  fbb.Finish(CreateServerPacket(fbb, ServerMessage::Transfer, transfer.Union()));
  const ServerPacket* p = parse_server_packet(bytes_of(fbb));
  REQUIRE(p != nullptr);
  const Transfer* m = p->message_as_Transfer();
  REQUIRE(m != nullptr);
  CHECK(m->zone()->str() == "east");
  CHECK(m->host()->str() == "10.0.0.2");
  CHECK(m->port() == 7787);
  CHECK(m->token()->size() == 16);
  CHECK(m->entity_id() == 42);
}

TEST_CASE("protocol: Action, Chat, ActionResult, ChatResult and Events round-trip") {
  flatbuffers::FlatBufferBuilder fbb;
  const std::array<std::int32_t, 2> args = {7, -3};
  build_action(fbb, 42, 3, 1001, args);
  const ClientPacket* p = parse_client_packet(bytes_of(fbb));
  REQUIRE(p != nullptr);
  const Action* a = p->message_as_Action();
  REQUIRE(a != nullptr);
  CHECK(a->sequence() == 42);
  CHECK(a->action() == 3);
  CHECK(a->target() == 1001);
  REQUIRE(a->args() != nullptr);
  CHECK(a->args()->size() == 2);
  CHECK(a->args()->Get(1) == -3);

  build_chat(fbb, ChatChannel::kWhisper, "hello there", "bob");
  p = parse_client_packet(bytes_of(fbb));
  REQUIRE(p != nullptr);
  const Chat* c = p->message_as_Chat();
  REQUIRE(c != nullptr);
  CHECK(c->channel() == 3);
  CHECK(c->text()->str() == "hello there");
  CHECK(c->to()->str() == "bob");

  build_action_result(fbb, 42, ActionStatus::OutOfRange, 900);
  const ServerPacket* s = parse_server_packet(bytes_of(fbb));
  REQUIRE(s != nullptr);
  REQUIRE(s->message_as_ActionResult() != nullptr);
  CHECK(s->message_as_ActionResult()->sequence() == 42);
  CHECK(s->message_as_ActionResult()->status() == ActionStatus::OutOfRange);
  CHECK(s->message_as_ActionResult()->server_tick() == 900);

  build_chat_result(fbb, ChatStatus::NoSuchPlayer, 3);
  s = parse_server_packet(bytes_of(fbb));
  REQUIRE(s != nullptr);
  REQUIRE(s->message_as_ChatResult() != nullptr);
  CHECK(s->message_as_ChatResult()->status() == ChatStatus::NoSuchPlayer);

  // Events: as many as given up to kMaxEventsPerMessage, in order; the sizes
  // docs/protocol.md states ("Events", "Sizes").
  std::vector<EventView> events;
  const std::array<std::int32_t, 2> hit = {12, 0};
  for (std::uint32_t i = 0; i < 70; ++i) events.push_back({100 + i, 1, 5, 6, hit, {}, {}});
  build_events(fbb, 77, std::span(events).first(1));
  const std::size_t one = fbb.GetSize();
  build_events(fbb, 77, std::span(events).first(11));
  const std::size_t eleven = fbb.GetSize();
  MESSAGE("Events: " << one << " bytes with one event, " << (eleven - one) / 10.0
                     << " per further event");
  CHECK(one <= 110);
  CHECK((eleven - one) / 10 <= 42);
  build_events(fbb, 77, events);
  s = parse_server_packet(bytes_of(fbb));
  REQUIRE(s != nullptr);
  const Events* e = s->message_as_Events();
  REQUIRE(e != nullptr);
  CHECK(e->server_tick() == 77);
  REQUIRE(e->events()->size() == kMaxEventsPerMessage);
  CHECK(e->events()->Get(0)->sequence() == 100);
  CHECK(e->events()->Get(63)->sequence() == 163);
  CHECK(e->events()->Get(5)->args()->Get(0) == 12);
  CHECK(e->events()->Get(5)->text() == nullptr);
  // A chat line carries its text and the speaker's name.
  const std::array<std::int32_t, 1> say = {0};
  const std::array<EventView, 1> line = {EventView{9, kChatEvent, 5, 0, say, "hi all", "alice"}};
  build_events(fbb, 78, line);
  s = parse_server_packet(bytes_of(fbb));
  REQUIRE(s != nullptr);
  CHECK(s->message_as_Events()->events()->Get(0)->text()->str() == "hi all");
  CHECK(s->message_as_Events()->events()->Get(0)->name()->str() == "alice");
}
