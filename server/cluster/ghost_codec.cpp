#include "cluster/ghost_codec.hpp"

#include <algorithm>
#include <cmath>

#include "protocol/byte_io.hpp"
#include "world/entity.hpp"

namespace zone::cluster {
namespace {

// Layout (docs/world.md): u8 magic, u8 version, u8 source, u8 flags (0), u32 tick,
// u64 epoch, u64 sent_us, u16 count, then per ghost: u32 id, u8 kind, f64 x, f64 y, f32 heading,
// f32 vx, f32 vy, u16 type, u8 property count, per property a zigzag varint, u8 name_length,
// name bytes; then u16 event count, per event: u16 kind, u32 entity, u32 target, u8 arg
// count (0..4), per argument a zigzag varint, u8 text length, text, u8 name length, name.
constexpr std::size_t kHeaderBytes = 1 + 1 + 1 + 1 + 4 + 8 + 8 + 2;
constexpr std::size_t kMinGhostBytes = 4 + 1 + 8 + 8 + 4 + 4 + 4 + 2 + 1 + 1;
constexpr std::size_t kMinEventBytes = 2 + 4 + 4 + 1 + 1 + 1;
constexpr std::size_t kMaxEventNameBytes = 64;

std::size_t event_bytes(const GhostEvent& e) {
  std::size_t args = 0;
  for (std::size_t i = 0; i < std::min<std::size_t>(e.arg_count, protocol::kMaxArgs); ++i) {
    args += protocol::varint_size(protocol::zigzag(e.args[i]));
  }
  return kMinEventBytes + args + std::min(e.text.size(), protocol::kMaxEventText) +
         std::min(e.name.size(), kMaxEventNameBytes);
}

// Bytes one ghost takes on the wire.
std::size_t ghost_bytes(const world::GhostState& g) {
  std::size_t properties = 0;
  for (const std::int32_t v : g.properties.view())
    properties += protocol::varint_size(protocol::zigzag(v));
  return kMinGhostBytes + properties + std::min(g.name.size(), kMaxGhostNameBytes);
}

bool coordinate_ok(double v) {
  return std::isfinite(v) && std::abs(v) <= world::kMaxCoordinate;
}

}  // namespace

const char* to_string(GhostDecodeError e) {
  switch (e) {
    case GhostDecodeError::kNone:
      return "none";
    case GhostDecodeError::kNotGhost:
      return "not_ghost";
    case GhostDecodeError::kVersion:
      return "version";
    case GhostDecodeError::kTruncated:
      return "truncated";
    case GhostDecodeError::kBadValue:
      return "bad_value";
    case GhostDecodeError::kTrailing:
      return "trailing";
  }
  return "unknown";
}

void encode(const GhostMessage& m, std::vector<std::uint8_t>& out) {
  const std::size_t count = std::min(m.ghosts.size(), kMaxGhostsPerMessage);
  std::size_t size = kHeaderBytes;
  for (std::size_t i = 0; i < count; ++i) size += ghost_bytes(m.ghosts[i]);
  const std::size_t events = std::min(m.events.size(), kMaxGhostEventsPerMessage);
  size += 2;
  for (std::size_t i = 0; i < events; ++i) size += event_bytes(m.events[i]);
  out.resize(size);
  protocol::ByteWriter w(out);
  w.u8(kGhostMagic);
  w.u8(kGhostVersion);
  w.u8(static_cast<std::uint8_t>(m.source));
  w.u8(0);
  w.u32(m.tick);
  w.u64(m.epoch);
  w.u64(static_cast<std::uint64_t>(m.sent_us));
  w.u16(static_cast<std::uint16_t>(count));
  for (std::size_t i = 0; i < count; ++i) {
    const world::GhostState& g = m.ghosts[i];
    w.u32(g.id);
    w.u8(static_cast<std::uint8_t>(g.kind));
    w.f64(g.x);
    w.f64(g.y);
    w.f32(g.heading);
    w.f32(g.vx);
    w.f32(g.vy);
    w.u16(g.properties.type);
    w.u8(g.properties.count);
    for (const std::int32_t v : g.properties.view()) w.svarint(v);
    const std::size_t name = std::min(g.name.size(), kMaxGhostNameBytes);
    w.u8(static_cast<std::uint8_t>(name));
    w.bytes({reinterpret_cast<const std::uint8_t*>(g.name.data()), name});
  }
  w.u16(static_cast<std::uint16_t>(events));
  for (std::size_t i = 0; i < events; ++i) {
    const GhostEvent& e = m.events[i];
    w.u16(e.kind);
    w.u32(e.entity);
    w.u32(e.target);
    const std::uint8_t args = std::min<std::uint8_t>(e.arg_count, protocol::kMaxArgs);
    w.u8(args);
    for (std::size_t a = 0; a < args; ++a) w.svarint(e.args[a]);
    const std::size_t text = std::min(e.text.size(), protocol::kMaxEventText);
    w.u8(static_cast<std::uint8_t>(text));
    w.bytes({reinterpret_cast<const std::uint8_t*>(e.text.data()), text});
    const std::size_t name = std::min(e.name.size(), kMaxEventNameBytes);
    w.u8(static_cast<std::uint8_t>(name));
    w.bytes({reinterpret_cast<const std::uint8_t*>(e.name.data()), name});
  }
}

GhostDecodeError decode(std::span<const std::uint8_t> bytes, GhostMessage& out) {
  out.ghosts.clear();
  out.events.clear();
  // A bad message is refused whole: nothing of it stays in `out`.
  const auto fail = [&out](GhostDecodeError e) {
    out.ghosts.clear();
    out.events.clear();
    return e;
  };
  if (bytes.empty() || bytes[0] != kGhostMagic) return GhostDecodeError::kNotGhost;
  if (bytes.size() < 2) return GhostDecodeError::kTruncated;
  if (bytes[1] != kGhostVersion) return GhostDecodeError::kVersion;
  if (bytes.size() < kHeaderBytes) return GhostDecodeError::kTruncated;
  protocol::ByteReader r(bytes.subspan(2));
  out.source = r.u8();
  if (r.u8() != 0) return GhostDecodeError::kBadValue;  // flags: none defined in version 2
  out.tick = r.u32();
  out.epoch = r.u64();
  out.sent_us = static_cast<std::int64_t>(r.u64());
  const std::size_t count = r.u16();
  // Refuse a count the bytes cannot hold before reserving anything for it.
  if (count > r.remaining() / kMinGhostBytes) return GhostDecodeError::kTruncated;
  out.ghosts.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    world::GhostState g;
    g.id = r.u32();
    const std::uint8_t kind = r.u8();
    g.x = r.f64();
    g.y = r.f64();
    g.heading = r.f32();
    g.vx = r.f32();
    g.vy = r.f32();
    g.properties.type = r.u16();
    const std::uint8_t properties = r.u8();
    if (properties > world::kMaxProperties) return fail(GhostDecodeError::kBadValue);
    g.properties.count = properties;
    for (std::size_t p = 0; p < properties; ++p) g.properties.values[p] = r.svarint();
    const std::span<const std::uint8_t> name = r.bytes(r.u8());
    g.name.assign(reinterpret_cast<const char*>(name.data()), name.size());
    if (r.failed()) return fail(GhostDecodeError::kTruncated);
    if (g.id == world::kNoEntity || kind > 1 || !coordinate_ok(g.x) || !coordinate_ok(g.y) ||
        !std::isfinite(g.heading) || !std::isfinite(g.vx) || !std::isfinite(g.vy)) {
      return fail(GhostDecodeError::kBadValue);
    }
    g.kind = kind == 0 ? world::EntityKind::kPlayer : world::EntityKind::kNpc;
    out.ghosts.push_back(std::move(g));
  }
  const std::size_t events = r.u16();
  if (r.failed()) return fail(GhostDecodeError::kTruncated);
  if (events > r.remaining() / kMinEventBytes) return fail(GhostDecodeError::kTruncated);
  out.events.reserve(events);
  for (std::size_t i = 0; i < events; ++i) {
    GhostEvent e;
    e.kind = r.u16();
    e.entity = r.u32();
    e.target = r.u32();
    e.arg_count = r.u8();
    if (e.arg_count > protocol::kMaxArgs) return fail(GhostDecodeError::kBadValue);
    for (std::size_t a = 0; a < e.arg_count; ++a) e.args[a] = r.svarint();
    const std::span<const std::uint8_t> text = r.bytes(r.u8());
    e.text.assign(reinterpret_cast<const char*>(text.data()), text.size());
    const std::span<const std::uint8_t> name = r.bytes(r.u8());
    e.name.assign(reinterpret_cast<const char*>(name.data()), name.size());
    if (r.failed()) return fail(GhostDecodeError::kTruncated);
    if (e.entity == world::kNoEntity || name.size() > kMaxEventNameBytes) {
      return fail(GhostDecodeError::kBadValue);
    }
    out.events.push_back(std::move(e));
  }
  if (!r.at_end()) return fail(GhostDecodeError::kTrailing);
  return GhostDecodeError::kNone;
}

}  // namespace zone::cluster
