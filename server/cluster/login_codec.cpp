#include "cluster/login_codec.hpp"

#include "protocol/byte_io.hpp"

namespace zone::cluster {

void encode(const LoginNotice& login, std::vector<std::uint8_t>& out) {
  out.resize(1 + 1 + 8 + 8 + 8);
  protocol::ByteWriter w(out);
  w.u8(kLoginMagic);
  w.u8(kLoginVersion);
  w.u64(login.account);
  w.u64(login.character);
  w.u64(static_cast<std::uint64_t>(login.login_ms));
}

LoginDecodeError decode(std::span<const std::uint8_t> bytes, LoginNotice& out) {
  if (bytes.empty() || bytes[0] != kLoginMagic) return LoginDecodeError::kNotLogin;
  if (bytes.size() < 2) return LoginDecodeError::kTruncated;
  if (bytes[1] != kLoginVersion) return LoginDecodeError::kVersion;
  protocol::ByteReader r(bytes.subspan(2));
  out.account = r.u64();
  out.character = r.u64();
  out.login_ms = static_cast<std::int64_t>(r.u64());
  if (r.failed()) return LoginDecodeError::kTruncated;
  if (!r.at_end()) return LoginDecodeError::kTrailing;
  if (out.account == 0 || out.character == 0 || out.login_ms <= 0)
    return LoginDecodeError::kBadValue;
  return LoginDecodeError::kNone;
}

}  // namespace zone::cluster
