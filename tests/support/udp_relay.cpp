#include "udp_relay.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <stdexcept>
#include <utility>
#include <vector>

#include "util/splitmix64.hpp"

namespace zone::test {
namespace {

sockaddr_in loopback(std::uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

int bound_socket() {
  const int fd = socket(AF_INET, SOCK_DGRAM, 0);
  if (fd < 0) throw std::runtime_error("udp relay: socket() failed");
  sockaddr_in a = loopback(0);
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    close(fd);
    throw std::runtime_error("udp relay: bind() failed");
  }
  return fd;
}

}  // namespace

UdpRelay::UdpRelay(std::uint16_t server_port, double loss, std::uint64_t seed)
    : server_port_(server_port), loss_(loss), seed_(seed) {
  listen_fd_ = bound_socket();
  sockaddr_in a{};
  socklen_t len = sizeof a;
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len);
  port_ = ntohs(a.sin_port);
  thread_ = std::thread([this] { run(); });
}

UdpRelay::~UdpRelay() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  if (listen_fd_ >= 0) close(listen_fd_);
}

void UdpRelay::run() {
  util::SplitMix64 rng(seed_);
  // Client address (ip, port) -> the upstream socket that speaks for it.
  std::map<std::pair<std::uint32_t, std::uint16_t>, int> upstream;
  std::map<int, sockaddr_in> client_of;
  const sockaddr_in server = loopback(server_port_);
  std::vector<pollfd> fds;
  std::vector<std::uint8_t> buf(65536);
  while (!stop_) {
    fds.clear();
    fds.push_back({listen_fd_, POLLIN, 0});
    for (const auto& [fd, addr] : client_of) fds.push_back({fd, POLLIN, 0});
    if (poll(fds.data(), fds.size(), 20) <= 0) continue;
    for (const pollfd& p : fds) {
      if (!(p.revents & POLLIN)) continue;
      sockaddr_in from{};
      socklen_t len = sizeof from;
      const ssize_t n =
          recvfrom(p.fd, buf.data(), buf.size(), 0, reinterpret_cast<sockaddr*>(&from), &len);
      if (n < 0) continue;
      bool lose = rng.u01() < loss_ || blackout_.load();
      if (p.fd != listen_fd_) {
        std::uint32_t left = drop_from_server_.load();
        while (left > 0 && !drop_from_server_.compare_exchange_weak(left, left - 1)) {
        }
        lose = lose || left > 0;
      }
      if (lose) {
        ++dropped_;
        continue;
      }
      ++forwarded_;
      if (p.fd == listen_fd_) {
        const auto key = std::make_pair(from.sin_addr.s_addr, from.sin_port);
        auto it = upstream.find(key);
        if (it == upstream.end()) {
          const int fd = bound_socket();
          it = upstream.emplace(key, fd).first;
          client_of[fd] = from;
        }
        sendto(it->second, buf.data(), static_cast<std::size_t>(n), 0,
               reinterpret_cast<const sockaddr*>(&server), sizeof server);
      } else {
        const sockaddr_in& client = client_of[p.fd];
        sendto(listen_fd_, buf.data(), static_cast<std::size_t>(n), 0,
               reinterpret_cast<const sockaddr*>(&client), sizeof client);
      }
    }
  }
  for (const auto& [fd, addr] : client_of) close(fd);
}

}  // namespace zone::test
