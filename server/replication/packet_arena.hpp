// Where a worker writes the packets it builds in one tick.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

namespace zone::replication {

using ClientId = std::uint32_t;

// Packets built by one worker in one tick: bytes back to back, and where each starts.
class PacketArena {
 public:
  struct Packet {
    ClientId client;
    std::uint32_t offset;
    std::uint32_t size;
  };
  // Room for one packet of up to n bytes at the end; commit() keeps what was written.
  std::span<std::uint8_t> reserve(std::size_t n) {
    if (bytes_.size() < used_ + n) bytes_.resize(std::max(used_ + n, bytes_.size() * 2));
    return {bytes_.data() + used_, n};
  }
  void commit(ClientId client, std::size_t n) {
    packets_.push_back({client, static_cast<std::uint32_t>(used_), static_cast<std::uint32_t>(n)});
    used_ += n;
  }
  void clear() {
    used_ = 0;
    packets_.clear();
  }
  const std::vector<Packet>& packets() const { return packets_; }
  std::span<const std::uint8_t> bytes(const Packet& p) const {
    return {bytes_.data() + p.offset, p.size};
  }

 private:
  std::vector<std::uint8_t> bytes_;
  std::size_t used_ = 0;
  std::vector<Packet> packets_;
};

}  // namespace zone::replication
