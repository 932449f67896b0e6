#include "auth/ticket.hpp"

namespace zone::auth {

namespace {

void put_u64(std::vector<std::uint8_t>& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

std::uint64_t get_u64(std::span<const std::uint8_t> bytes, std::size_t at) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= std::uint64_t{bytes[at + i]} << (8 * i);
  return v;
}

}  // namespace

const char* to_string(LayoutError e) {
  switch (e) {
    case LayoutError::kNone:
      return "ok";
    case LayoutError::kZeroId:
      return "account and character ids must not be 0";
    case LayoutError::kNameLength:
      return "the name must be 1 to 255 bytes";
    case LayoutError::kWorldLength:
      return "the world name must be 1 to 64 bytes";
    case LayoutError::kTruncated:
      return "truncated";
    case LayoutError::kTrailing:
      return "bytes after the signature";
    case LayoutError::kUnknownVersion:
      return "unknown ticket format version";
  }
  return "unknown";
}

LayoutError encode_claims(const TicketClaims& c, std::vector<std::uint8_t>& out) {
  if (c.account_id == 0 || c.character_id == 0) return LayoutError::kZeroId;
  if (c.name.empty() || c.name.size() > kMaxTicketNameBytes) return LayoutError::kNameLength;
  if (c.world.empty() || c.world.size() > kMaxTicketWorldBytes) return LayoutError::kWorldLength;
  out.push_back(kTicketVersion);
  put_u64(out, c.account_id);
  put_u64(out, c.character_id);
  put_u64(out, c.issued_at);
  put_u64(out, c.expires_at);
  out.push_back(static_cast<std::uint8_t>(c.name.size()));
  out.insert(out.end(), c.name.begin(), c.name.end());
  out.push_back(static_cast<std::uint8_t>(c.world.size()));
  out.insert(out.end(), c.world.begin(), c.world.end());
  return LayoutError::kNone;
}

LayoutError read_ticket(std::span<const std::uint8_t> bytes, TicketLayout& out) {
  // The version first: a later format may lay out everything after it differently.
  if (bytes.empty()) return LayoutError::kTruncated;
  if (bytes[0] != kTicketVersion) return LayoutError::kUnknownVersion;
  std::size_t at = 1;
  const auto need = [&](std::size_t n) { return bytes.size() - at >= n; };
  if (!need(33)) return LayoutError::kTruncated;
  TicketClaims& c = out.claims;
  c.account_id = get_u64(bytes, at);
  c.character_id = get_u64(bytes, at + 8);
  c.issued_at = get_u64(bytes, at + 16);
  c.expires_at = get_u64(bytes, at + 24);
  at += 32;
  const std::size_t name_size = bytes[at++];
  if (name_size == 0) return LayoutError::kNameLength;
  if (!need(name_size + 1)) return LayoutError::kTruncated;
  c.name.assign(reinterpret_cast<const char*>(bytes.data() + at), name_size);
  at += name_size;
  const std::size_t world_size = bytes[at++];
  if (world_size == 0 || world_size > kMaxTicketWorldBytes) return LayoutError::kWorldLength;
  if (!need(world_size)) return LayoutError::kTruncated;
  c.world.assign(reinterpret_cast<const char*>(bytes.data() + at), world_size);
  at += world_size;
  if (!need(kSignatureBytes)) return LayoutError::kTruncated;
  if (bytes.size() - at > kSignatureBytes) return LayoutError::kTrailing;
  if (c.account_id == 0 || c.character_id == 0) return LayoutError::kZeroId;
  out.signed_bytes = bytes.first(at);
  out.signature = bytes.subspan(at, kSignatureBytes);
  return LayoutError::kNone;
}

}  // namespace zone::auth
