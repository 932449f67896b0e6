// Bounds-checked little-endian byte writing and reading, with LEB128 varints and zigzag
// signed integers: the building blocks of the compact channel-1 messages (inputs and
// snapshot parts, docs/protocol.md). Neither side ever reads or writes past its buffer;
// a reader that runs out, or meets a varint longer than its type, fails and stays failed.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>

namespace zone::protocol {

inline constexpr std::uint32_t zigzag(std::int32_t v) {
  return (static_cast<std::uint32_t>(v) << 1) ^ static_cast<std::uint32_t>(v >> 31);
}
inline constexpr std::int32_t unzigzag(std::uint32_t v) {
  return static_cast<std::int32_t>((v >> 1) ^ (~(v & 1) + 1));
}
// Bytes a varint takes (1 to 5 for 32 bits, 1 to 10 for 64).
inline constexpr std::uint32_t varint_size(std::uint64_t v) {
  std::uint32_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

class ByteWriter {
 public:
  explicit ByteWriter(std::span<std::uint8_t> out) : out_(out) {}
  void u8(std::uint8_t v) {
    if (pos_ < out_.size()) {
      out_[pos_++] = v;
    } else {
      overflow_ = true;
    }
  }
  void u16(std::uint16_t v) {
    for (int i = 0; i < 2; ++i) u8(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  void u32(std::uint32_t v) {
    for (int i = 0; i < 4; ++i) u8(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  void u64(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) u8(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  void f32(float v) {
    std::uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    u32(bits);
  }
  void f64(double v) {
    std::uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    u64(bits);
  }
  void varint(std::uint64_t v) {
    while (v >= 0x80) {
      u8(static_cast<std::uint8_t>(v | 0x80));
      v >>= 7;
    }
    u8(static_cast<std::uint8_t>(v));
  }
  void svarint(std::int32_t v) { varint(zigzag(v)); }
  void bytes(std::span<const std::uint8_t> b) {
    if (b.size() > out_.size() - pos_) {
      overflow_ = true;
      return;
    }
    if (!b.empty()) std::memcpy(out_.data() + pos_, b.data(), b.size());
    pos_ += b.size();
  }
  // Writes into a byte reserved earlier (a count known only at the end).
  void patch_u8(std::size_t at, std::uint8_t v) {
    if (at < pos_) out_[at] = v;
  }
  std::size_t size() const { return pos_; }
  // True when something did not fit: the output is then unusable.
  bool overflow() const { return overflow_; }
  std::span<const std::uint8_t> written() const { return out_.first(pos_); }

 private:
  std::span<std::uint8_t> out_;
  std::size_t pos_ = 0;
  bool overflow_ = false;
};

class ByteReader {
 public:
  explicit ByteReader(std::span<const std::uint8_t> in) : in_(in) {}
  std::uint8_t u8() {
    if (pos_ >= in_.size()) {
      failed_ = true;
      return 0;
    }
    return in_[pos_++];
  }
  std::uint16_t u16() {
    std::uint16_t v = 0;
    for (int i = 0; i < 2; ++i) v = static_cast<std::uint16_t>(v | (u8() << (8 * i)));
    return v;
  }
  std::uint32_t u32() {
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= static_cast<std::uint32_t>(u8()) << (8 * i);
    return v;
  }
  std::uint64_t u64() {
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= static_cast<std::uint64_t>(u8()) << (8 * i);
    return v;
  }
  float f32() {
    const std::uint32_t bits = u32();
    float v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
  }
  double f64() {
    const std::uint64_t bits = u64();
    double v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
  }
  // A varint of at most 5 bytes whose value fits 32 bits; anything else fails.
  std::uint32_t varint() {
    std::uint32_t v = 0;
    for (int shift = 0; shift < 35; shift += 7) {
      const std::uint8_t b = u8();
      if (failed_) return 0;
      if (shift == 28 && (b & 0xF0) != 0) break;  // more than 32 bits
      v |= static_cast<std::uint32_t>(b & 0x7F) << shift;
      if ((b & 0x80) == 0) return v;
    }
    failed_ = true;
    return 0;
  }
  std::int32_t svarint() { return unzigzag(varint()); }
  // A varint of at most 10 bytes whose value fits 64 bits; anything else fails.
  std::uint64_t varint64() {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
      const std::uint8_t b = u8();
      if (failed_) return 0;
      if (shift == 63 && (b & 0xFE) != 0) break;  // more than 64 bits
      v |= static_cast<std::uint64_t>(b & 0x7F) << shift;
      if ((b & 0x80) == 0) return v;
    }
    failed_ = true;
    return 0;
  }
  std::span<const std::uint8_t> bytes(std::size_t n) {
    if (n > in_.size() - pos_) {
      failed_ = true;
      pos_ = in_.size();
      return {};
    }
    const auto b = in_.subspan(pos_, n);
    pos_ += n;
    return b;
  }
  bool failed() const { return failed_; }
  bool at_end() const { return pos_ == in_.size(); }
  std::size_t remaining() const { return in_.size() - pos_; }
  std::size_t position() const { return pos_; }

 private:
  std::span<const std::uint8_t> in_;
  std::size_t pos_ = 0;
  bool failed_ = false;
};

}  // namespace zone::protocol
