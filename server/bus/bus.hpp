// What a zone needs of a message bus: subscribe to subjects, publish bytes, and take what
// arrived once per tick. NatsLink is the real one; tests put zones on an in-memory bus
// whose deliveries they control (lost, late or reordered messages).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace zone::bus {

struct BusMessage {
  std::string subject;
  std::vector<std::uint8_t> data;
};

struct LinkStats {
  bool connected = false;
  std::uint64_t published = 0;       // messages handed to the client library
  std::uint64_t publish_failed = 0;  // refused (disconnected and the buffer full, ...)
  std::uint64_t bytes_out = 0;
  std::uint64_t received = 0;  // messages queued for the tick
  std::uint64_t bytes_in = 0;
  std::uint64_t dropped = 0;  // arrived while the queue was full (a stalled tick)
  std::uint64_t disconnects = 0;
  std::uint64_t reconnects = 0;
  // Errors the server reported on a live connection (a publish or subscription its
  // permissions refuse, ...).
  std::uint64_t errors = 0;
};

class Bus {
 public:
  virtual ~Bus() = default;
  // Queues what arrives on `subject` for take(). Throws BusError on failure.
  virtual void subscribe(const std::string& subject) = 0;
  // Sends `data` on `subject`; false (and counted) when it cannot.
  virtual bool publish(const std::string& subject, std::span<const std::uint8_t> data) = 0;
  // Moves every queued message into `out` (cleared first), oldest first.
  virtual void take(std::vector<BusMessage>& out) = 0;
  virtual LinkStats stats() const = 0;
};

}  // namespace zone::bus
