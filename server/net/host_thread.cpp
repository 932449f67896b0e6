#include "net/host_thread.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

namespace zone::net {

namespace {

// Longest the thread sleeps without traffic: ENet's own timers (resends, pings,
// timeouts) are serviced at least this often.
constexpr int kIdleWaitMs = 5;
// Shortest time between two reads of the socket. Every ENet service call walks all of
// the host's peers, so reading at each datagram's arrival would cost O(peers) per
// datagram; batching arrivals for a few milliseconds costs that much latency on inputs
// the tick takes only every 50 ms anyway. A posted batch is sent at once regardless.
constexpr auto kMinPassInterval = std::chrono::milliseconds(4);
// Longest one pass keeps reading before it looks at a posted batch again.
constexpr auto kDrainBudget = std::chrono::milliseconds(2);

}  // namespace

HostThread::HostThread(const HostOptions& options, EventFn on_event, PassFn on_pass_end)
    : host_(options),
      on_event_(std::move(on_event)),
      on_pass_end_(std::move(on_pass_end)),
      port_(host_.port()),
      max_peers_(host_.max_peers()),
      buffers_(host_.socket_buffers()) {
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) throw NetError("eventfd failed");
  thread_ = std::thread([this] { run(); });
}

HostThread::~HostThread() {
  stop_ = true;
  wake();
  if (thread_.joinable()) thread_.join();
  if (wake_fd_ >= 0) close(wake_fd_);
}

void HostThread::wake() {
  const std::uint64_t one = 1;
  [[maybe_unused]] const auto n = write(wake_fd_, &one, sizeof one);
}

std::uint64_t HostThread::post(SendBatch& batch) {
  std::uint64_t number;
  {
    std::lock_guard lock(mutex_);
    if (taken_ == posted_) {
      std::swap(pending_, batch);  // pending_ is the empty batch the thread left
    } else {
      pending_.append(batch);  // the thread is late: one batch, sent in order
    }
    number = ++posted_;
  }
  batch.clear();
  wake();
  return number;
}

void HostThread::wait_sent(std::uint64_t number) {
  std::unique_lock lock(mutex_);
  sent_cv_.wait(lock, [&] { return sent_ >= number; });
}

void HostThread::wait_sent() {
  std::unique_lock lock(mutex_);
  sent_cv_.wait(lock, [&] { return sent_ == posted_; });
}

TrafficStats HostThread::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

void HostThread::send(SendBatch& batch) {
  for (const SendBatch::Packet& p : batch.packets_) {
    const std::uint8_t* data =
        p.owned_at < 0 ? p.data : batch.owned_.data() + static_cast<std::size_t>(p.owned_at);
    host_.send(p.peer, {data, p.size}, p.delivery, p.channel);
  }
  for (const SendBatch::Close& c : batch.closes_) {
    if (c.now) {
      host_.disconnect_now(c.peer, c.reason);
    } else {
      host_.disconnect(c.peer, c.reason);
    }
  }
  host_.flush();
}

void HostThread::run() {
  SendBatch batch;
  std::uint64_t taken = 0;  // this thread's copy of taken_
  NetEvent ev;
  auto last_pass = std::chrono::steady_clock::now() - kMinPassInterval;
  while (!stop_.load()) {
    // Until the next pass is due, only a posted batch (or stop) wakes the thread; then
    // traffic does too.
    const auto since = std::chrono::steady_clock::now() - last_pass;
    const bool rested = since >= kMinPassInterval;
    const int wait_ms =
        rested
            ? kIdleWaitMs
            : static_cast<int>(
                  std::chrono::ceil<std::chrono::milliseconds>(kMinPassInterval - since).count());
    pollfd fds[2] = {{wake_fd_, POLLIN, 0}, {host_.socket(), POLLIN, 0}};
    poll(fds, rested ? 2 : 1, wait_ms);
    if (fds[0].revents & POLLIN) {
      std::uint64_t count;
      [[maybe_unused]] const auto n = read(wake_fd_, &count, sizeof count);
    }
    last_pass = std::chrono::steady_clock::now();
    // A posted batch first: the tick waits for it before it reuses the packets' memory.
    // (batch is empty here: pending_ becomes the empty batch the next post() swaps in.)
    {
      std::lock_guard lock(mutex_);
      if (taken_ != posted_) {
        std::swap(batch, pending_);
        taken = taken_ = posted_;
      }
    }
    if (!batch.empty()) send(batch);
    batch.clear();
    {
      std::lock_guard lock(mutex_);
      if (sent_ != taken) {
        sent_ = taken;
        sent_cv_.notify_all();
      }
    }
    if (host_.drain(std::chrono::steady_clock::now() + kDrainBudget) >= 256) {
      full_drains_.fetch_add(1, std::memory_order_relaxed);
    }
    while (host_.next_event(ev)) on_event_(ev);
    if (on_pass_end_) on_pass_end_();
    std::lock_guard lock(mutex_);
    stats_ = host_.stats();
  }
  // Whatever was posted last still goes out (goodbyes at shutdown).
  std::lock_guard lock(mutex_);
  if (taken_ != posted_) {
    send(pending_);
    pending_.clear();
  }
  taken_ = sent_ = posted_;
  sent_cv_.notify_all();
}

}  // namespace zone::net
