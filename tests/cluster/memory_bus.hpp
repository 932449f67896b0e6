// An in-memory message bus for tests: zones' exchanges publish and subscribe as on NATS,
// and the test decides what is delivered: every message passes a filter that can drop it
// or hold it back (to deliver later, out of order).
#pragma once

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "bus/bus.hpp"

namespace zone::test {

class MemoryBroker {
 public:
  enum class Fate { kDeliver, kDrop, kHold };
  // Decides each published message's fate (default: deliver).
  std::function<Fate(const bus::BusMessage&)> filter;
  std::vector<bus::BusMessage> held;  // messages held back, in order

  class Endpoint final : public bus::Bus {
   public:
    explicit Endpoint(MemoryBroker& broker) : broker_(broker) {}
    void subscribe(const std::string& subject) override { subjects_.insert(subject); }
    bool publish(const std::string& subject, std::span<const std::uint8_t> data) override {
      ++stats_.published;
      stats_.bytes_out += data.size();
      broker_.route({subject, {data.begin(), data.end()}});
      return true;
    }
    void take(std::vector<bus::BusMessage>& out) override {
      out.clear();
      out.swap(inbox_);
    }
    bus::LinkStats stats() const override { return stats_; }

   private:
    friend class MemoryBroker;
    MemoryBroker& broker_;
    std::set<std::string> subjects_;
    std::vector<bus::BusMessage> inbox_;
    bus::LinkStats stats_{.connected = true};
  };

  // A bus for one zone; the broker keeps track of it (it must outlive the endpoint).
  std::unique_ptr<bus::Bus> endpoint() {
    auto e = std::make_unique<Endpoint>(*this);
    endpoints_.push_back(e.get());
    return e;
  }
  // Delivers a message now, whatever the filter says (a held one, late).
  void deliver(const bus::BusMessage& m) {
    for (Endpoint* e : endpoints_) {
      if (e->subjects_.count(m.subject) != 0) {
        e->inbox_.push_back(m);
        ++e->stats_.received;
        e->stats_.bytes_in += m.data.size();
      }
    }
  }

 private:
  void route(bus::BusMessage m) {
    const Fate fate = filter ? filter(m) : Fate::kDeliver;
    if (fate == Fate::kDrop) return;
    if (fate == Fate::kHold) {
      held.push_back(std::move(m));
      return;
    }
    deliver(m);
  }
  std::vector<Endpoint*> endpoints_;
};

}  // namespace zone::test
