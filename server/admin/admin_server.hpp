// The admin HTTP server: cpp-httplib on its own thread, so nothing it does can block
// the tick. Handlers run on that thread; whatever state they read must be published to
// them by the tick thread (see zone/published_state.hpp), never shared live.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace zone::admin {

using Handler = std::function<void(const httplib::Request&, httplib::Response&)>;

class AdminServer {
 public:
  // Binds now (throws std::runtime_error naming the address if it cannot).
  AdminServer(const std::string& bind_address, std::uint16_t port);
  ~AdminServer();
  AdminServer(const AdminServer&) = delete;
  AdminServer& operator=(const AdminServer&) = delete;

  // Register routes before start().
  void get(const std::string& pattern, Handler handler);
  void post(const std::string& pattern, Handler handler);
  void start();
  void stop();
  std::uint16_t port() const { return port_; }

 private:
  std::unique_ptr<httplib::Server> http_;
  std::uint16_t port_ = 0;
  std::thread thread_;
};

}  // namespace zone::admin
