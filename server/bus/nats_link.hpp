// A connection to a NATS server: publish bytes to subjects, and receive what arrives on
// the subscribed subjects through a queue that the tick thread empties.
//
// NATS runs its own threads: message callbacks run on its delivery thread, connection
// events on another. They only touch this link's queue and counters (under a mutex or
// atomically), never game state: the simulation thread owns the world, and takes the
// queued messages once per tick (take()).
//
// The link survives the server going away: the client reconnects by itself (every
// reconnect_wait, forever), subscriptions are restored, and publishing while
// disconnected fails fast once a small buffer is full (ghost states are stale a tick
// later, so there is nothing worth keeping). It also starts without a server: the first
// connection is retried in the background, so a zone does not depend on the bus to run.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "bus/bus.hpp"

namespace zone::bus {

class BusError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct LinkOptions {
  std::string url;   // nats://host:port (or tls://host:port)
  std::string name;  // shown by the server (e.g. the zone's name)
  // Credentials (empty user: none). The server's permissions for the user decide what
  // it may publish and subscribe to; a refused publish or subscription is counted
  // (LinkStats::errors), never delivered.
  std::string user;
  std::string password;
  // TLS: on when `tls` (or the URL is tls://). The server's certificate must be signed by
  // the CA of `ca_file` and name the URL's host; `cert_file` and `key_file`, when given,
  // are this client's certificate and key.
  bool tls = false;
  std::string ca_file;
  std::string cert_file;
  std::string key_file;
  std::size_t max_queued = 4096;  // messages waiting for take(); more are dropped
  std::chrono::milliseconds reconnect_wait{250};
  int reconnect_buffer_bytes = 64 * 1024;  // published while disconnected, then refused
};

class NatsLink final : public Bus {
 public:
  // Starts connecting; returns at once whether or not the server is reachable. Throws
  // BusError for options the client library refuses (e.g. a malformed URL).
  explicit NatsLink(const LinkOptions& options);
  ~NatsLink() override;
  NatsLink(const NatsLink&) = delete;
  NatsLink& operator=(const NatsLink&) = delete;

  // Queues what arrives on `subject` (wildcards allowed) for take(). Throws BusError.
  void subscribe(const std::string& subject) override;
  // Sends `data` on `subject`; false (and counted) when the library refuses it.
  bool publish(const std::string& subject, std::span<const std::uint8_t> data) override;
  // Moves every queued message into `out` (cleared first), oldest first.
  void take(std::vector<BusMessage>& out) override;
  LinkStats stats() const override;
  bool connected() const;

  // What the library's callbacks share with the link (an implementation detail, public
  // only so that the C callbacks in nats_link.cpp can name it).
  struct Shared;

 private:
  struct Handles;
  Shared* shared_;  // owned; see the destructor for why it is not a unique_ptr
  std::unique_ptr<Handles> handles_;
};

}  // namespace zone::bus
