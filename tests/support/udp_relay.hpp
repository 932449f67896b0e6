// A lossy UDP relay for tests: clients talk to the relay's port, the relay forwards to
// the server and back, dropping a configured share of datagrams in each direction, and
// on request the next few datagrams from the server.
// Runs on its own thread; one upstream socket per client address keeps ENet's peers
// apart on the server side.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>

namespace zone::test {

class UdpRelay {
 public:
  explicit UdpRelay(std::uint16_t server_port, double loss = 0.0, std::uint64_t seed = 1);
  ~UdpRelay();
  UdpRelay(const UdpRelay&) = delete;
  UdpRelay& operator=(const UdpRelay&) = delete;

  std::uint16_t port() const { return port_; }
  std::uint64_t forwarded() const { return forwarded_.load(); }
  std::uint64_t dropped() const { return dropped_.load(); }
  // Loses the next n datagrams from the server to any client, on purpose.
  void drop_next_from_server(std::uint32_t n) { drop_from_server_ = n; }
  // While on, every datagram both ways is lost: the network is gone.
  void set_blackout(bool on) { blackout_ = on; }

 private:
  void run();

  std::uint16_t server_port_;
  double loss_;
  std::uint64_t seed_;
  int listen_fd_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> forwarded_{0};
  std::atomic<std::uint64_t> dropped_{0};
  std::atomic<std::uint32_t> drop_from_server_{0};
  std::atomic<bool> blackout_{false};
  std::thread thread_;
};

}  // namespace zone::test
