// The handoff messages' codec: every kind reads back exactly; truncated, foreign, future
// and damaged messages are refused, never read past.
#include <doctest/doctest.h>

#include <limits>

#include "cluster/transfer_codec.hpp"

using namespace zone;
using namespace zone::cluster;

namespace {

world::PropertyValues properties(std::uint16_t type, std::vector<std::int32_t> values) {
  world::PropertyValues p;
  p.type = type;
  p.assign(values);
  return p;
}

TransferMessage offer() {
  TransferMessage m;
  m.kind = TransferKind::kOffer;
  m.sender = 3;
  m.request = 0xA1B2C3D4u;
  m.entity = {.id = (3u << world::kLocalIdBits) | 17,
              .kind = world::EntityKind::kPlayer,
              .x = 1000.25,
              .y = -3.5,
              .heading = 1.5,
              .properties = properties(0, {80, 100, -3}),
              .party_key = 0x1122334455667788ull,
              .guild_key = 9,
              .account = 0xA0A1A2A3A4A5A6A7ull,
              .character = 42,
              .name = "bob"};
  return m;
}

TransferMessage answer() {
  TransferMessage m;
  m.kind = TransferKind::kAnswer;
  m.sender = 4;
  m.request = 7;
  m.entity.id = 99;
  m.result = TransferResult::kAccepted;
  for (std::size_t i = 0; i < m.token.size(); ++i) m.token[i] = static_cast<std::uint8_t>(i * 7);
  m.host = "10.0.0.5";
  m.port = 7787;
  return m;
}

}  // namespace

TEST_CASE("transfer codec: offers, answers and cancels read back exactly") {
  std::vector<std::uint8_t> bytes;
  TransferMessage back;
  const TransferMessage o = offer();
  encode(o, bytes);
  REQUIRE(decode(bytes, back) == TransferDecodeError::kNone);
  CHECK(back.kind == TransferKind::kOffer);
  CHECK(back.sender == 3);
  CHECK(back.request == o.request);
  CHECK(back.entity.id == o.entity.id);
  CHECK(back.entity.kind == world::EntityKind::kPlayer);
  CHECK(back.entity.x == 1000.25);
  CHECK(back.entity.y == -3.5);
  CHECK(back.entity.heading == 1.5);
  CHECK(back.entity.properties == properties(0, {80, 100, -3}));
  CHECK(back.entity.party_key == o.entity.party_key);
  CHECK(back.entity.account == 0xA0A1A2A3A4A5A6A7ull);  // the player's login (ticket mode)
  CHECK(back.entity.character == 42);
  CHECK(back.entity.guild_key == 9);
  CHECK(back.entity.name == "bob");

  const TransferMessage a = answer();
  encode(a, bytes);
  REQUIRE(decode(bytes, back) == TransferDecodeError::kNone);
  CHECK(back.kind == TransferKind::kAnswer);
  CHECK(back.result == TransferResult::kAccepted);
  CHECK(back.token == a.token);
  CHECK(back.host == "10.0.0.5");
  CHECK(back.port == 7787);
  CHECK(back.entity.id == 99);

  TransferMessage c;
  c.kind = TransferKind::kCancel;
  c.sender = 1;
  c.request = 5;
  c.entity.id = 12;
  encode(c, bytes);
  CHECK(bytes.size() == 12);
  REQUIRE(decode(bytes, back) == TransferDecodeError::kNone);
  CHECK(back.kind == TransferKind::kCancel);
  CHECK(back.request == 5);
  CHECK(back.entity.id == 12);
}

TEST_CASE("transfer codec: every truncation is refused") {
  for (const TransferMessage& m : {offer(), answer()}) {
    std::vector<std::uint8_t> bytes;
    encode(m, bytes);
    TransferMessage back;
    for (std::size_t n = 0; n < bytes.size(); ++n) {
      const std::span<const std::uint8_t> cut(bytes.data(), n);
      const TransferDecodeError e = decode(cut, back);
      CHECK_MESSAGE((e == TransferDecodeError::kTruncated ||
                     (n == 0 && e == TransferDecodeError::kNotTransfer)),
                    "length ", n);
    }
  }
}

TEST_CASE("transfer codec: foreign, future and damaged messages are refused with a reason") {
  std::vector<std::uint8_t> bytes;
  encode(offer(), bytes);
  TransferMessage back;
  SUBCASE("a ghost message") {
    bytes[0] = 0x47;
    CHECK(decode(bytes, back) == TransferDecodeError::kNotTransfer);
  }
  SUBCASE("another version") {
    bytes[1] = kTransferVersion + 1;
    CHECK(decode(bytes, back) == TransferDecodeError::kVersion);
    bytes[1] = kTransferVersion - 1;  // 2: no login
    CHECK(decode(bytes, back) == TransferDecodeError::kVersion);
  }
  SUBCASE("an unknown kind") {
    bytes[2] = 9;
    CHECK(decode(bytes, back) == TransferDecodeError::kBadValue);
  }
  SUBCASE("trailing bytes") {
    bytes.push_back(0);
    CHECK(decode(bytes, back) == TransferDecodeError::kTrailing);
  }
  SUBCASE("a coordinate that is not finite") {
    TransferMessage m = offer();
    m.entity.x = std::numeric_limits<double>::infinity();
    encode(m, bytes);
    CHECK(decode(bytes, back) == TransferDecodeError::kBadValue);
  }
  SUBCASE("more properties than an entity has rows for") {
    TransferMessage m = offer();
    encode(m, bytes);
    // Header 12 bytes, then kind, x, y, heading and the u16 type: the property count.
    bytes[12 + 1 + 8 + 8 + 4 + 2] = 57;
    CHECK(decode(bytes, back) == TransferDecodeError::kBadValue);
  }
  SUBCASE("entity id 0") {
    TransferMessage m = offer();
    m.entity.id = 0;
    encode(m, bytes);
    CHECK(decode(bytes, back) == TransferDecodeError::kBadValue);
  }
  SUBCASE("an unknown answer") {
    TransferMessage m = answer();
    encode(m, bytes);
    bytes[12] = 200;  // the result byte
    CHECK(decode(bytes, back) == TransferDecodeError::kBadValue);
  }
}
