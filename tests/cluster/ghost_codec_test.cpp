// Ghost messages: exact round trips, and every kind of bad message refused whole.
#include <doctest/doctest.h>

#include <cstring>
#include <limits>

#include "cluster/ghost_codec.hpp"

using namespace zone;
using cluster::GhostDecodeError;
using cluster::GhostMessage;

namespace {

GhostMessage sample() {
  GhostMessage m;
  m.source = 3;
  m.tick = 123456;
  m.epoch = 1700000000000001;
  m.sent_us = 1700000000123456;
  world::GhostState a;
  a.id = (3u << 26) | 7;
  a.kind = world::EntityKind::kPlayer;
  a.x = 1234.5678901234;
  a.y = -0.125;
  a.heading = 1.5f;
  a.vx = 7.0f;
  a.vy = -2.0f;
  a.properties.type = 2;
  a.properties.assign(std::vector<std::int32_t>{80, 100, -7, 2147483647});
  a.name = "alice";
  world::GhostState b;
  b.id = (3u << 26) | 9;
  b.kind = world::EntityKind::kNpc;
  b.x = 40.0;
  b.y = 1e6;
  b.properties.type = 1;
  b.properties.assign(std::vector<std::int32_t>{65535, 65535, 0, -2147483647 - 1});
  m.ghosts = {a, b};
  cluster::GhostEvent hit;
  hit.kind = 1;
  hit.entity = a.id;
  hit.target = b.id;
  hit.arg_count = 2;
  hit.args = {12, -1, 0, 0};
  cluster::GhostEvent say;
  say.kind = 0;
  say.entity = a.id;
  say.arg_count = 1;
  say.text = "over here";
  say.name = "alice";
  m.events = {hit, say};
  return m;
}

std::vector<std::uint8_t> bytes_of(const GhostMessage& m) {
  std::vector<std::uint8_t> out;
  cluster::encode(m, out);
  return out;
}

}  // namespace

TEST_CASE("ghost codec: a message reads back exactly") {
  const GhostMessage m = sample();
  const auto bytes = bytes_of(m);
  GhostMessage got;
  REQUIRE(cluster::decode(bytes, got) == GhostDecodeError::kNone);
  CHECK(got.source == 3);
  CHECK(got.tick == 123456);
  CHECK(got.epoch == m.epoch);
  CHECK(got.sent_us == m.sent_us);
  REQUIRE(got.ghosts.size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    const auto& a = m.ghosts[i];
    const auto& b = got.ghosts[i];
    CHECK(a.id == b.id);
    CHECK(a.kind == b.kind);
    CHECK(a.x == b.x);  // positions travel as doubles: exactly what the owner holds
    CHECK(a.y == b.y);
    CHECK(a.heading == b.heading);
    CHECK(a.vx == b.vx);
    CHECK(a.vy == b.vy);
    CHECK(a.properties == b.properties);
    CHECK(a.name == b.name);
  }
  REQUIRE(got.events.size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    const auto& a = m.events[i];
    const auto& b = got.events[i];
    CHECK(a.kind == b.kind);
    CHECK(a.entity == b.entity);
    CHECK(a.target == b.target);
    CHECK(a.arg_count == b.arg_count);
    CHECK(a.args == b.args);
    CHECK(a.text == b.text);
    CHECK(a.name == b.name);
  }
  // 26 header bytes, then per ghost 37, its properties' zigzag varints (80, 100, -7 and
  // 2^31 - 1: 2 + 2 + 1 + 5 bytes; 65535 twice, 0 and -2^31: 3 + 3 + 1 + 5) and its name;
  // then 2 for the event count and per event 13, its arguments (12 and -1: 1 + 1; 0: 1),
  // text and name.
  CHECK(bytes.size() == 26 + (37 + 10 + 5) + (37 + 12) + 2 + (13 + 2) + (13 + 1 + 9 + 5));
}

TEST_CASE("ghost codec: an event with more than four arguments or about entity 0 is refused") {
  for (int k = 0; k < 2; ++k) {
    GhostMessage m = sample();
    auto bytes = bytes_of(m);
    // The first event starts after the ghosts and the event count: kind (2 bytes), entity
    // (4), target (4), then the argument count.
    const std::size_t first_event = 26 + (37 + 10 + 5) + (37 + 12) + 2;
    if (k == 0) bytes[first_event + 10] = 5;
    if (k == 1) std::memset(&bytes[first_event + 2], 0, 4);
    GhostMessage got;
    CHECK(cluster::decode(bytes, got) == GhostDecodeError::kBadValue);
    CHECK(got.ghosts.empty());
    CHECK(got.events.empty());
  }
}

TEST_CASE("ghost codec: an empty list is a valid message (the sender is alive)") {
  GhostMessage m;
  m.source = 1;
  GhostMessage got;
  got.ghosts.resize(3);
  REQUIRE(cluster::decode(bytes_of(m), got) == GhostDecodeError::kNone);
  CHECK(got.ghosts.empty());
}

TEST_CASE("ghost codec: every truncation is refused, never read past") {
  const auto bytes = bytes_of(sample());
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    GhostMessage got;
    const GhostDecodeError e = cluster::decode(std::span<const std::uint8_t>(bytes.data(), n), got);
    INFO("length ", n);
    CHECK(e != GhostDecodeError::kNone);
    CHECK(got.ghosts.empty());
  }
}

TEST_CASE("ghost codec: foreign, future and damaged messages are refused with a reason") {
  GhostMessage got;
  auto bytes = bytes_of(sample());
  SUBCASE("not a ghost message") {
    bytes[0] = '{';
    CHECK(cluster::decode(bytes, got) == GhostDecodeError::kNotGhost);
  }
  SUBCASE("another version (version 1 had no epoch)") {
    for (const std::uint8_t version : {1, 2, 3, 5}) {
      bytes[1] = version;
      CHECK(cluster::decode(bytes, got) == GhostDecodeError::kVersion);
    }
  }
  SUBCASE("unknown flags") {
    bytes[3] = 1;
    CHECK(cluster::decode(bytes, got) == GhostDecodeError::kBadValue);
  }
  SUBCASE("trailing bytes") {
    bytes.push_back(0);
    CHECK(cluster::decode(bytes, got) == GhostDecodeError::kTrailing);
  }
  SUBCASE("a count larger than the bytes can hold") {
    bytes[24] = 0xFF;
    bytes[25] = 0xFF;
    CHECK(cluster::decode(bytes, got) == GhostDecodeError::kTruncated);
  }
  SUBCASE("an unknown kind") {
    bytes[26 + 4] = 7;
    CHECK(cluster::decode(bytes, got) == GhostDecodeError::kBadValue);
  }
  SUBCASE("a coordinate that is not finite") {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    std::memcpy(&bytes[26 + 5], &nan, sizeof nan);
    CHECK(cluster::decode(bytes, got) == GhostDecodeError::kBadValue);
  }
  SUBCASE("more properties than an entity has rows for") {
    // After id, kind, x, y, heading, vx, vy and the u16 type: the property count.
    bytes[26 + 4 + 1 + 8 + 8 + 4 + 4 + 4 + 2] = 57;
    CHECK(cluster::decode(bytes, got) == GhostDecodeError::kBadValue);
  }
  SUBCASE("entity id 0") {
    std::memset(&bytes[26], 0, 4);
    CHECK(cluster::decode(bytes, got) == GhostDecodeError::kBadValue);
  }
  CHECK(got.ghosts.empty());
}
