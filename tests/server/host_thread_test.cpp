// HostThread (server/net/host_thread.*): posting never waits for the network thread. A
// batch posted before the thread took the previous one is appended to it, everything goes
// out in the order posted, and wait_sent(number) says when a batch's referenced bytes may
// be reused.
#include <doctest/doctest.h>

#include <enet/enet.h>

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "net/host_thread.hpp"

using namespace std::chrono_literals;
using namespace zone;

TEST_CASE("host thread: batches posted without waiting go out whole and in order") {
  net::EnetLibrary enet;
  std::mutex mutex;
  std::optional<net::PeerId> client;
  net::HostOptions options;
  options.bind_address = "127.0.0.1";
  net::HostThread host(options, [&](const net::NetEvent& ev) {
    if (ev.type == net::NetEvent::Type::kConnect) {
      std::lock_guard lock(mutex);
      client = ev.peer;
    }
  });

  ENetHost* raw = enet_host_create(nullptr, 1, 2, 0, 0);
  REQUIRE(raw != nullptr);
  ENetAddress address{};
  enet_address_set_host_ip(&address, "127.0.0.1");
  address.port = host.port();
  REQUIRE(enet_host_connect(raw, &address, 2, 0) != nullptr);
  ENetEvent ev;
  std::vector<std::string> got;
  // Services the client for at most `for_at_most`, or until it holds `until_packets`
  // (0: the whole time).
  auto service = [&](std::chrono::milliseconds for_at_most, std::size_t until_packets) {
    const auto end = std::chrono::steady_clock::now() + for_at_most;
    while (std::chrono::steady_clock::now() < end &&
           (until_packets == 0 || got.size() < until_packets)) {
      if (enet_host_service(raw, &ev, 1) <= 0) continue;
      if (ev.type == ENET_EVENT_TYPE_RECEIVE) {
        got.emplace_back(reinterpret_cast<const char*>(ev.packet->data), ev.packet->dataLength);
        enet_packet_destroy(ev.packet);
      }
    }
  };
  net::PeerId peer;
  for (int i = 0; i < 500; ++i) {
    service(10ms, 0);
    std::lock_guard lock(mutex);
    if (client) {
      peer = *client;
      break;
    }
  }
  REQUIRE(peer.valid());
  service(50ms, 0);  // the client side completes its handshake too

  // 30 batches back to back, each a referenced packet and a copied one; the referenced
  // bytes of batch b live in arena[b] until wait_sent(number of b).
  constexpr int kBatches = 30;
  std::vector<std::string> arena(kBatches);
  std::vector<std::uint64_t> numbers;
  net::SendBatch batch;
  for (int b = 0; b < kBatches; ++b) {
    arena[static_cast<std::size_t>(b)] = "ref " + std::to_string(b);
    const std::string& ref = arena[static_cast<std::size_t>(b)];
    const std::string copy = "copy " + std::to_string(b);
    batch.add(peer, {reinterpret_cast<const std::uint8_t*>(ref.data()), ref.size()},
              net::Delivery::kReliable, 0);
    batch.add_copy(peer, {reinterpret_cast<const std::uint8_t*>(copy.data()), copy.size()},
                   net::Delivery::kReliable, 0);
    numbers.push_back(host.post(batch));
    CHECK(batch.empty());
  }
  for (int b = 0; b < kBatches; ++b) CHECK(numbers[static_cast<std::size_t>(b)] == b + 1u);
  host.wait_sent(numbers.back());
  host.wait_sent(0);                             // at once
  arena.assign(kBatches, std::string(16, 'x'));  // reused: every batch went to the socket

  service(10s, 2 * kBatches);
  REQUIRE(got.size() == 2 * kBatches);
  for (int b = 0; b < kBatches; ++b) {
    CHECK(got[2 * static_cast<std::size_t>(b)] == "ref " + std::to_string(b));
    CHECK(got[2 * static_cast<std::size_t>(b) + 1] == "copy " + std::to_string(b));
  }
  enet_host_destroy(raw);
}
