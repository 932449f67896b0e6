#include "admin/admin_server.hpp"

#include <stdexcept>

#include <httplib.h>

namespace zone::admin {

AdminServer::AdminServer(const std::string& bind_address, std::uint16_t port)
    : http_(std::make_unique<httplib::Server>()) {
  // Small fixed pool: admin traffic is light, and threads here compete with the tick.
  http_->new_task_queue = [] { return new httplib::ThreadPool(2); };
  const int bound = port == 0 ? http_->bind_to_any_port(bind_address)
                              : (http_->bind_to_port(bind_address, port) ? port : -1);
  if (bound <= 0) {
    throw std::runtime_error("cannot bind admin HTTP " + bind_address + ":" + std::to_string(port) +
                             " (address in use or not available)");
  }
  port_ = static_cast<std::uint16_t>(bound);
}

AdminServer::~AdminServer() {
  stop();
}

void AdminServer::get(const std::string& pattern, Handler handler) {
  http_->Get(pattern, std::move(handler));
}

void AdminServer::post(const std::string& pattern, Handler handler) {
  http_->Post(pattern, std::move(handler));
}

void AdminServer::start() {
  thread_ = std::thread([this] { http_->listen_after_bind(); });
}

void AdminServer::stop() {
  if (http_) http_->stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace zone::admin
