// One ENet host on a thread of its own. The thread reads the socket as datagrams arrive
// (until it is empty, or for at most a couple of milliseconds at a time), hands every
// event to a callback on that thread, and sends the batch of packets that the simulation
// thread posts once per tick. Every ENet call for the host happens on this thread: ENet
// hosts are not thread-safe. Posting never waits for the thread: a batch posted before the
// thread took the previous one is appended to it, and the poster waits (wait_sent) only
// when it is about to reuse memory that a batch it posted refers to.
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
  // Bytes that stay valid until the host reports this batch sent (wait_sent(number) for
  // the number post() returned: a replication arena).
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
  // Appends other's packets and closes after this batch's, in order.
  void append(const SendBatch& other) {
    const auto base = static_cast<std::int64_t>(owned_.size());
    for (Packet p : other.packets_) {
      if (p.owned_at >= 0) p.owned_at += base;
      packets_.push_back(p);
    }
    owned_.insert(owned_.end(), other.owned_.begin(), other.owned_.end());
    closes_.insert(closes_.end(), other.closes_.begin(), other.closes_.end());
  }
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

  // Hands `batch` to the thread and returns at once, leaving `batch` empty: swapped with
  // an empty one, or, if the thread has not yet taken the previous batch (it is late),
  // appended to that one, so it goes out after it. Returns the batch's number (1, 2, ...).
  std::uint64_t post(SendBatch& batch);
  // Blocks until batch `number` and every one before it have been handed to the socket
  // (at once for 0).
  void wait_sent(std::uint64_t number);
  // Blocks until everything posted has been.
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
  std::uint64_t posted_ = 0;  // batches posted / taken by the thread / sent, under mutex_
  std::uint64_t taken_ = 0;
  std::uint64_t sent_ = 0;
  TrafficStats stats_;  // under mutex_
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> full_drains_{0};
  std::thread thread_;  // last: starts after everything it uses
};

}  // namespace zone::net
