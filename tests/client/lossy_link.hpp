// A deterministic simulated link for the client kit's unit tests: messages sent at a
// time (milliseconds) arrive after a random delay, or never (a loss), in arrival order,
// so that a late message can overtake... or be overtaken by a later one (reordering).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "util/splitmix64.hpp"

namespace zone::test {

struct LinkShape {
  double loss = 0.05;        // share of messages lost
  std::int64_t min_ms = 20;  // delay, uniform in [min_ms, max_ms]
  std::int64_t max_ms = 80;
};

template <typename Message>
class LossyLink {
 public:
  LossyLink(LinkShape shape, std::uint64_t seed) : shape_(shape), rng_(seed) {}
  void send(std::int64_t now_ms, const Message& m) {
    ++sent_;
    if (rng_.u01() < shape_.loss) {
      ++lost_;
      return;
    }
    const auto delay =
        shape_.min_ms + static_cast<std::int64_t>(
                            rng_.u01() * static_cast<double>(shape_.max_ms - shape_.min_ms + 1));
    in_flight_.push_back({now_ms + delay, order_++, m});
  }
  // Everything that has arrived by `now_ms`, in arrival order, into `out` (cleared).
  void receive(std::int64_t now_ms, std::vector<Message>& out) {
    out.clear();
    std::sort(in_flight_.begin(), in_flight_.end(), [](const Flight& a, const Flight& b) {
      return a.at != b.at ? a.at < b.at : a.order < b.order;
    });
    std::size_t n = 0;
    while (n < in_flight_.size() && in_flight_[n].at <= now_ms) {
      if (in_flight_[n].order < last_order_) ++reordered_;
      last_order_ = std::max(last_order_, in_flight_[n].order);
      out.push_back(in_flight_[n].message);
      ++n;
    }
    in_flight_.erase(in_flight_.begin(), in_flight_.begin() + static_cast<std::ptrdiff_t>(n));
  }
  std::uint64_t sent() const { return sent_; }
  std::uint64_t lost() const { return lost_; }
  std::uint64_t reordered() const { return reordered_; }

 private:
  struct Flight {
    std::int64_t at;
    std::uint64_t order;
    Message message;
  };
  LinkShape shape_;
  util::SplitMix64 rng_;
  std::vector<Flight> in_flight_;
  std::uint64_t order_ = 0;
  std::uint64_t last_order_ = 0;
  std::uint64_t sent_ = 0, lost_ = 0, reordered_ = 0;
};

}  // namespace zone::test
