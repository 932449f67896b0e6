// One ENet host on a thread of its own. The thread reads the socket as datagrams arrive
// (until it is empty, or for at most a couple of milliseconds at a time), hands every
// event to a callback on that thread, and sends the batch of packets that the simulation
// thread posts once per tick. Every ENet call for the host happens on this thread: ENet
// hosts are not thread-safe.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "net/enet_host.hpp"

namespace zone::net {

// What one host sends in one tick: packets (their bytes either referenced, valid until
// the host reports the batch sent, or copied into the batch) and connections to close.
class SendBatch {
 public:
  // Bytes that stay valid until wait_sent() returns (a replication arena).
  void add(PeerId peer, std::span<const std::uint8_t> bytes, Delivery delivery,
           std::uint8_t channel) {
    packets_.push_back(
        {peer, delivery, channel, bytes.data(), -1, static_cast<std::uint32_t>(bytes.size())});
  }
  // Bytes copied into the batch (control messages built on the spot).
  void add_copy(PeerId peer, std::span<const std::uint8_t> bytes, Delivery delivery,
                std::uint8_t channel) {
    packets_.push_back({peer, delivery, channel, nullptr, static_cast<std::int64_t>(owned_.size()),
                        static_cast<std::uint32_t>(bytes.size())});
    owned_.insert(owned_.end(), bytes.begin(), bytes.end());
  }
  // Graceful (queued packets first) or immediate.
  void close(PeerId peer, std::uint32_t reason, bool now = false) {
    closes_.push_back({peer, reason, now});
  }
  void clear() {
    packets_.clear();
    owned_.clear();
    closes_.clear();
  }
  bool empty() const { return packets_.empty() && closes_.empty(); }
  std::size_t packet_count() const { return packets_.size(); }

 private:
  friend class HostThread;
  struct Packet {
    PeerId peer;
    Delivery delivery;
    std::uint8_t channel;
    const std::uint8_t* data;  // referenced bytes, or
    std::int64_t owned_at;     // offset into owned_ (-1: referenced)
    std::uint32_t size;
  };
  struct Close {
    PeerId peer;
    std::uint32_t reason;
    bool now;
  };
  std::vector<Packet> packets_;
  std::vector<std::uint8_t> owned_;
  std::vector<Close> closes_;
};

class HostThread {
 public:
  using EventFn = std::function<void(const NetEvent&)>;
  using PassFn = std::function<void()>;

  // Creates the host (throws NetError like EnetHost) and starts its thread. on_event runs
  // on that thread for every event; a received packet's bytes are valid only during the
  // call. on_pass_end, if given, runs after each pass's events (to hand them over in one
  // go rather than one by one).
  HostThread(const HostOptions& options, EventFn on_event, PassFn on_pass_end = nullptr);
  ~HostThread();
  HostThread(const HostThread&) = delete;
  HostThread& operator=(const HostThread&) = delete;

  std::uint16_t port() const { return port_; }
  std::size_t max_peers() const { return max_peers_; }
  SocketBuffers socket_buffers() const { return buffers_; }

  // Hands `batch` to the thread (swapping it with an empty one) and returns at once.
  // The previous batch must have been sent (wait_sent()).
  void post(SendBatch& batch);
  // Blocks until everything posted has been handed to the socket.
  void wait_sent();
  // Traffic so far (a copy the thread refreshes every pass).
  TrafficStats stats() const;
  // Datagrams read per pass: how often a pass found the socket holding more than one
  // ENet batch (256), i.e. how close ingest came to falling behind.
  std::uint64_t full_drains() const { return full_drains_.load(std::memory_order_relaxed); }

 private:
  void run();
  void send(SendBatch& batch);
  void wake();

  EnetHost host_;
  EventFn on_event_;
  PassFn on_pass_end_;
  std::uint16_t port_;
  std::size_t max_peers_;
  SocketBuffers buffers_;
  int wake_fd_ = -1;

  mutable std::mutex mutex_;
  std::condition_variable sent_cv_;
  SendBatch pending_;
  std::uint64_t posted_ = 0;  // batches posted / sent, under mutex_
  std::uint64_t sent_ = 0;
  TrafficStats stats_;  // under mutex_
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> full_drains_{0};
  std::thread thread_;  // last: starts after everything it uses
};

}  // namespace zone::net
