#include "cluster/action_codec.hpp"

#include <algorithm>
#include <cmath>

#include "protocol/byte_io.hpp"
#include "world/entity.hpp"

namespace zone::cluster {
namespace {

constexpr std::size_t kFixedBytes = 1 + 1 + 1 + 1 + 4 + 4 + 8 + 8 + 1;

bool coordinate_ok(double v) {
  return std::isfinite(v) && std::abs(v) <= world::kMaxCoordinate;
}

}  // namespace

void encode(const RemoteAction& a, std::vector<std::uint8_t>& out) {
  const std::size_t args = std::min<std::size_t>(a.arg_count, kMaxActionArgs);
  out.resize(kFixedBytes + 4 * args);
  protocol::ByteWriter w(out);
  w.u8(kActionMagic);
  w.u8(kActionVersion);
  w.u8(a.sender);
  w.u8(a.action);
  w.u32(a.actor);
  w.u32(a.target);
  w.f64(a.x);
  w.f64(a.y);
  w.u8(static_cast<std::uint8_t>(args));
  for (std::size_t i = 0; i < args; ++i) w.u32(static_cast<std::uint32_t>(a.args[i]));
}

ActionDecodeError decode(std::span<const std::uint8_t> bytes, RemoteAction& out) {
  if (bytes.empty() || bytes[0] != kActionMagic) return ActionDecodeError::kNotAction;
  if (bytes.size() < 2) return ActionDecodeError::kTruncated;
  if (bytes[1] != kActionVersion) return ActionDecodeError::kVersion;
  protocol::ByteReader r(bytes.subspan(2));
  out.sender = r.u8();
  out.action = r.u8();
  out.actor = r.u32();
  out.target = r.u32();
  out.x = r.f64();
  out.y = r.f64();
  out.arg_count = r.u8();
  if (r.failed()) return ActionDecodeError::kTruncated;
  if (out.arg_count > kMaxActionArgs) return ActionDecodeError::kBadValue;
  for (std::size_t i = 0; i < out.arg_count; ++i) {
    out.args[i] = static_cast<std::int32_t>(r.u32());
  }
  if (r.failed()) return ActionDecodeError::kTruncated;
  if (!r.at_end()) return ActionDecodeError::kTrailing;
  if (out.actor == 0 || out.target == 0 || out.actor == out.target || !coordinate_ok(out.x) ||
      !coordinate_ok(out.y)) {
    return ActionDecodeError::kBadValue;
  }
  return ActionDecodeError::kNone;
}

}  // namespace zone::cluster
