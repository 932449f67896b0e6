#include "cluster/transfer_codec.hpp"

#include <algorithm>
#include <cmath>

#include "protocol/byte_io.hpp"
#include "world/entity.hpp"

namespace zone::cluster {
namespace {

// Layout (docs/world.md): u8 magic, u8 version, u8 kind, u8 sender, u32 request, u32 id,
// then for an offer: u8 entity kind, f64 x, f64 y, f32 heading, u16 type, u8 property
// count, per property a zigzag varint, u64 party key, u64 guild key, u64 account, u64
// character, u8 name length, name;
// for an answer:
// u8 result, 16 token bytes, u16 port, u8 host length, host.
constexpr std::size_t kHeaderBytes = 1 + 1 + 1 + 1 + 4 + 4;
constexpr std::size_t kMaxText = 255;

bool coordinate_ok(double v) {
  return std::isfinite(v) && std::abs(v) <= world::kMaxCoordinate;
}

void text(protocol::ByteWriter& w, const std::string& s) {
  const std::size_t n = std::min(s.size(), kMaxText);
  w.u8(static_cast<std::uint8_t>(n));
  w.bytes({reinterpret_cast<const std::uint8_t*>(s.data()), n});
}

std::string read_text(protocol::ByteReader& r) {
  const std::span<const std::uint8_t> b = r.bytes(r.u8());
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}

}  // namespace

const char* to_string(TransferResult r) {
  switch (r) {
    case TransferResult::kAccepted:
      return "accepted";
    case TransferResult::kFull:
      return "full";
    case TransferResult::kNotMine:
      return "not_mine";
    case TransferResult::kIdInUse:
      return "id_in_use";
    case TransferResult::kUnavailable:
      return "unavailable";
    case TransferResult::kBadName:
      return "bad_name";
  }
  return "unknown";
}

void encode(const TransferMessage& m, std::vector<std::uint8_t>& out) {
  std::size_t size = kHeaderBytes;
  if (m.kind == TransferKind::kOffer) {
    size += 1 + 8 + 8 + 4 + 2 + 1 + 8 + 8 + 8 + 8 + 1 + std::min(m.entity.name.size(), kMaxText);
    for (const std::int32_t v : m.entity.properties.view()) {
      size += protocol::varint_size(protocol::zigzag(v));
    }
  } else if (m.kind == TransferKind::kAnswer) {
    size += 1 + kTransferTokenBytes + 2 + 1 + std::min(m.host.size(), kMaxText);
  }
  out.resize(size);
  protocol::ByteWriter w(out);
  w.u8(kTransferMagic);
  w.u8(kTransferVersion);
  w.u8(static_cast<std::uint8_t>(m.kind));
  w.u8(static_cast<std::uint8_t>(m.sender));
  w.u32(m.request);
  w.u32(m.entity.id);
  if (m.kind == TransferKind::kOffer) {
    const TransferEntity& e = m.entity;
    w.u8(static_cast<std::uint8_t>(e.kind));
    w.f64(e.x);
    w.f64(e.y);
    w.f32(static_cast<float>(e.heading));
    w.u16(e.properties.type);
    w.u8(e.properties.count);
    for (const std::int32_t v : e.properties.view()) w.svarint(v);
    w.u64(e.party_key);
    w.u64(e.guild_key);
    w.u64(e.account);
    w.u64(e.character);
    text(w, e.name);
  } else if (m.kind == TransferKind::kAnswer) {
    w.u8(static_cast<std::uint8_t>(m.result));
    w.bytes(m.token);
    w.u16(m.port);
    text(w, m.host);
  }
}

TransferDecodeError decode(std::span<const std::uint8_t> bytes, TransferMessage& out) {
  out = TransferMessage{};
  if (bytes.empty() || bytes[0] != kTransferMagic) return TransferDecodeError::kNotTransfer;
  if (bytes.size() < 2) return TransferDecodeError::kTruncated;
  if (bytes[1] != kTransferVersion) return TransferDecodeError::kVersion;
  if (bytes.size() < kHeaderBytes) return TransferDecodeError::kTruncated;
  protocol::ByteReader r(bytes.subspan(2));
  const std::uint8_t kind = r.u8();
  if (kind < 1 || kind > 3) return TransferDecodeError::kBadValue;
  out.kind = static_cast<TransferKind>(kind);
  out.sender = r.u8();
  out.request = r.u32();
  out.entity.id = r.u32();
  if (out.kind == TransferKind::kOffer) {
    TransferEntity& e = out.entity;
    const std::uint8_t entity_kind = r.u8();
    e.x = r.f64();
    e.y = r.f64();
    e.heading = r.f32();
    e.properties.type = r.u16();
    const std::uint8_t properties = r.u8();
    if (properties > world::kMaxProperties) return TransferDecodeError::kBadValue;
    e.properties.count = properties;
    for (std::size_t p = 0; p < properties; ++p) e.properties.values[p] = r.svarint();
    e.party_key = r.u64();
    e.guild_key = r.u64();
    e.account = r.u64();
    e.character = r.u64();
    e.name = read_text(r);
    if (r.failed()) return TransferDecodeError::kTruncated;
    if (entity_kind > 1 || !coordinate_ok(e.x) || !coordinate_ok(e.y) ||
        !std::isfinite(e.heading)) {
      return TransferDecodeError::kBadValue;
    }
    e.kind = entity_kind == 0 ? world::EntityKind::kPlayer : world::EntityKind::kNpc;
  } else if (out.kind == TransferKind::kAnswer) {
    const std::uint8_t result = r.u8();
    const std::span<const std::uint8_t> token = r.bytes(kTransferTokenBytes);
    out.port = r.u16();
    out.host = read_text(r);
    if (r.failed()) return TransferDecodeError::kTruncated;
    if (result > static_cast<std::uint8_t>(TransferResult::kBadName)) {
      return TransferDecodeError::kBadValue;
    }
    out.result = static_cast<TransferResult>(result);
    std::copy(token.begin(), token.end(), out.token.begin());
  }
  if (r.failed()) return TransferDecodeError::kTruncated;
  if (out.entity.id == world::kNoEntity) return TransferDecodeError::kBadValue;
  if (!r.at_end()) return TransferDecodeError::kTrailing;
  return TransferDecodeError::kNone;
}

}  // namespace zone::cluster
