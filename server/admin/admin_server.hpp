// The admin HTTP server, on threads of its own so nothing it does can block the tick.
// Handlers run on its worker threads; whatever state they read must be published to
// them by the tick thread (metrics board, map publisher, truth recorder), never shared
// live.
//
// cpp-httplib parses requests and routes them; this class owns the sockets. One poller
// thread accepts connections and reads each request whole (head and body) before a
// worker sees it, so a client that trickles bytes, or opens a connection and says
// nothing, holds no worker: /healthz stays fast whatever other clients do. Every request
// has a deadline from its first byte, every connection an idle deadline, responses a
// write deadline, and stop() returns promptly whatever the clients do. The limits are in
// Limits below and in docs/security.md.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace httplib {
struct Request;
struct Response;
}  // namespace httplib

namespace zone::admin {

using Handler = std::function<void(const httplib::Request&, httplib::Response&)>;

// Who may call a route.
enum class Access : std::uint8_t {
  kOpen,   // no token: health, readiness, metrics and the (data-free) map page
  kToken,  // Authorization: Bearer <token>: world state, debug data, anything that changes
};

struct Security {
  std::string token;  // the bearer token (never empty)
  // Host header names accepted besides IP literals and "localhost" (lower case).
  std::vector<std::string> allowed_hosts;
};

struct Limits {
  std::size_t workers = 4;                 // threads running handlers
  std::size_t max_connections = 1024;      // open at once; beyond, the oldest waiting one is closed
  int backlog = 1024;                      // listen queue (the kernel caps it at somaxconn)
  std::size_t max_head_bytes = 16 * 1024;  // request line and headers
  std::size_t max_body_bytes = 64 * 1024;  // larger bodies are refused (413) unread
  // A connection with no request in progress is closed after this.
  std::chrono::milliseconds idle_timeout{5000};
  // A request must arrive whole within this from its first byte (else 408 and close).
  std::chrono::milliseconds request_timeout{5000};
  // A response must be taken by the client within this (else the connection is closed).
  std::chrono::milliseconds write_timeout{5000};
};

class AdminServer {
 public:
  // Binds and listens now (throws std::runtime_error naming the address if it cannot).
  AdminServer(const std::string& bind_address, std::uint16_t port, Security security,
              Limits limits = {});
  ~AdminServer();  // stop()
  AdminServer(const AdminServer&) = delete;
  AdminServer& operator=(const AdminServer&) = delete;

  // Register routes before start(). Any path not registered as kOpen needs the token,
  // so an unknown path answers 401 to a caller without it, 404 with it.
  void get(const std::string& pattern, Access access, Handler handler);
  // POST routes change things: they always need the token, and a browser may only send
  // them from a page of this server (same origin).
  void post(const std::string& pattern, Handler handler);
  void start();
  // Closes the listening socket and every connection, waits for running handlers.
  // Idempotent.
  void stop();
  std::uint16_t port() const { return port_; }

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
  std::uint16_t port_ = 0;
};

}  // namespace zone::admin
