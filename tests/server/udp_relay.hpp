// A one-client UDP relay between a test client and the zone, on loopback, that can lose
// datagrams on purpose: tests use it to check what survives a lossy network.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <thread>

namespace zone::test {

class UdpRelay {
 public:
  // Listens on an ephemeral loopback port and forwards to 127.0.0.1:server_port.
  explicit UdpRelay(std::uint16_t server_port) {
    front_ = open_socket();
    back_ = open_socket();
    sockaddr_in server{};
    server.sin_family = AF_INET;
    server.sin_port = htons(server_port);
    server.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(back_, reinterpret_cast<const sockaddr*>(&server), sizeof server) != 0) {
      throw std::runtime_error("relay: connect failed");
    }
    sockaddr_in a{};
    socklen_t len = sizeof a;
    ::getsockname(front_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { run(); });
  }
  ~UdpRelay() {
    stop_ = true;
    thread_.join();
    ::close(front_);
    ::close(back_);
  }
  UdpRelay(const UdpRelay&) = delete;
  UdpRelay& operator=(const UdpRelay&) = delete;

  std::uint16_t port() const { return port_; }
  // Loses the next n datagrams from the server to the client.
  void drop_next_from_server(std::uint32_t n) { drop_from_server_ = n; }
  std::uint64_t dropped() const { return dropped_; }
  std::uint64_t from_server() const { return from_server_; }

 private:
  static int open_socket() {
    const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) throw std::runtime_error("relay: socket failed");
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = 0;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0) {
      ::close(fd);
      throw std::runtime_error("relay: bind failed");
    }
    return fd;
  }

  void run() {
    unsigned char buf[65536];
    sockaddr_in client{};
    bool have_client = false;
    while (!stop_) {
      pollfd fds[2] = {{front_, POLLIN, 0}, {back_, POLLIN, 0}};
      if (::poll(fds, 2, 5) <= 0) continue;
      if (fds[0].revents & POLLIN) {
        sockaddr_in from{};
        socklen_t len = sizeof from;
        const ssize_t n =
            ::recvfrom(front_, buf, sizeof buf, 0, reinterpret_cast<sockaddr*>(&from), &len);
        if (n >= 0) {
          client = from;
          have_client = true;
          ::send(back_, buf, static_cast<std::size_t>(n), 0);
        }
      }
      if (fds[1].revents & POLLIN) {
        const ssize_t n = ::recv(back_, buf, sizeof buf, 0);
        if (n >= 0 && have_client) {
          ++from_server_;
          std::uint32_t left = drop_from_server_.load();
          if (left > 0 && drop_from_server_.compare_exchange_strong(left, left - 1)) {
            ++dropped_;
            continue;
          }
          ::sendto(front_, buf, static_cast<std::size_t>(n), 0,
                   reinterpret_cast<const sockaddr*>(&client), sizeof client);
        }
      }
    }
  }

  int front_ = -1;
  int back_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint32_t> drop_from_server_{0};
  std::atomic<std::uint64_t> dropped_{0};
  std::atomic<std::uint64_t> from_server_{0};
  std::thread thread_;
};

}  // namespace zone::test
