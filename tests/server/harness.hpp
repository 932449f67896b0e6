// Test harness: a real ZoneServer on an ephemeral loopback port, running its own fixed-
// tick loop in a background thread, and a client host driving real bots against it.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "client/bot.hpp"
#include "config/zone_config.hpp"
#include "net/enet_host.hpp"
#include "zone/logger.hpp"
#include "zone/zone_server.hpp"

namespace zone::test {

// A small, fast zone: 50 Hz, a 200 x 200 m world, idle NPCs unless a test says otherwise.
inline config::ZoneConfig small_zone() {
  config::ZoneConfig c;
  c.world = {0.0, 0.0, 200.0, 200.0};
  c.tick.rate_hz = 50;
  c.aoi.cell_size = 16.0;
  c.aoi.view_radius = 30.0;
  c.aoi.hysteresis = 2.0;
  c.npcs.count = 40;
  c.npcs.behaviour = config::NpcBehaviour::kIdle;
  c.network.bind_address = "127.0.0.1";
  c.network.port = 0;
  c.admin.port = 0;
  c.players.max_players = 16;
  c.log.level = config::LogLevel::kWarn;
  return c;
}

class ServerThread {
 public:
  explicit ServerThread(const config::ZoneConfig& c, AdminSetup admin = {})
      : log_(c.log.level), server_(std::make_unique<ZoneServer>(c, log_, std::move(admin))) {
    thread_ = std::thread([this] { server_->run([this] { return stop_.load(); }); });
  }
  ~ServerThread() { stop(); }
  std::uint16_t port() const { return server_->port(); }
  // Thread-safe parts only while running (request_reload); everything after stop().
  ZoneServer& zone() { return *server_; }
  // Stops the loop; afterwards the server may be inspected from the test thread.
  ZoneServer& stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    return *server_;
  }

 private:
  Logger log_;
  std::unique_ptr<ZoneServer> server_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// Bots sharing ENet client hosts (one by default; several give the bots several source
// addresses, as real clients have, which is what spreads them over a zone's network
// hosts); pump() routes events and sends inputs.
//
// Besides bots, a test may open raw connections (connect_raw) that never say hello, and
// send any bytes on any connection through host(). Events for raw connections are
// recorded in RawPeer. A frame observer, when set, is called every time a bot's replica
// makes a newer frame current, so a test can check invariants on every frame.
class Clients {
 public:
  struct RawPeer {
    net::PeerId peer;
    bool connected = false;
    bool closed = false;
    std::uint32_t disconnect_reason = 0;
    std::uint64_t packets_in = 0;
  };
  using FrameObserver = std::function<void(client::Bot&)>;

  explicit Clients(std::size_t max_bots = 32, std::size_t hosts = 1) {
    for (std::size_t h = 0; h < hosts; ++h) {
      hosts_.push_back(
          std::make_unique<net::EnetHost>(net::HostOptions{.bind_address = "",
                                                           .port = 0,
                                                           .max_peers = max_bots,
                                                           .channels = 2,
                                                           .max_unreliable_bytes = 1200,
                                                           .timeout_ms = 5000}));
    }
  }

  // `prepare` runs before the bot connects (a test's settings: a protocol version, a
  // transfer token).
  client::Bot& add(const std::string& name, std::uint16_t port,
                   const std::function<void(client::Bot&)>& prepare = {}) {
    bots_.push_back(std::make_unique<client::Bot>(name));
    host_of_.push_back((bots_.size() - 1) % hosts_.size());
    if (prepare) prepare(*bots_.back());
    bots_.back()->connect(*hosts_[host_of_.back()], "127.0.0.1", port);
    return *bots_.back();
  }

  // Opens a connection that sends nothing by itself (no hello, no inputs).
  net::PeerId connect_raw(std::uint16_t port) {
    raws_.push_back(std::make_unique<RawPeer>());
    raws_.back()->peer = host().connect("127.0.0.1", port);
    return raws_.back()->peer;
  }
  const RawPeer& raw(net::PeerId peer) const {
    for (const auto& r : raws_) {
      if (r->peer == peer) return *r;
    }
    throw std::out_of_range("no such raw peer");
  }

  // A muted bot sends no inputs from pump(); the test sends for it.
  void mute(const client::Bot& bot, bool muted = true) {
    if (muted) {
      muted_.push_back(&bot);
    } else {
      std::erase(muted_, &bot);
    }
  }
  void set_frame_observer(FrameObserver observer) { observer_ = std::move(observer); }

  // Runs the client side for `duration`: every `input_period` each playing bot sends the
  // intent `intent(bot)` returns (muted bots excepted).
  using Intent = std::function<std::pair<float, float>(client::Bot&)>;
  void pump(std::chrono::milliseconds duration, const Intent& intent = nullptr,
            std::chrono::milliseconds input_period = std::chrono::milliseconds(20)) {
    using clock = std::chrono::steady_clock;
    const auto end = clock::now() + duration;
    while (clock::now() < end) {
      for (std::size_t h = 0; h < hosts_.size(); ++h) {
        hosts_[h]->service(hosts_.size() == 1 ? 2 : 0);
        net::NetEvent ev;
        while (hosts_[h]->next_event(ev)) route(h, ev);
      }
      if (hosts_.size() > 1) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      // The input schedule carries over from one pump() call to the next, so slicing a
      // run into many short pumps does not raise the input rate; after a pause it
      // restarts instead of catching up with a burst.
      const auto now = clock::now();
      if (now - next_input_ > input_period) next_input_ = now;
      if (now >= next_input_) {
        next_input_ += input_period;
        for (std::size_t i = 0; i < bots_.size(); ++i) {
          client::Bot* b = bots_[i].get();
          if (std::find(muted_.begin(), muted_.end(), b) != muted_.end()) continue;
          auto [mx, my] = intent ? intent(*b) : std::pair<float, float>{0.0f, 0.0f};
          b->send_input(*hosts_[host_of_[i]], mx, my);
        }
      }
    }
  }
  // Pumps until pred() or the timeout; returns pred().
  bool pump_until(const std::function<bool()>& pred, std::chrono::milliseconds timeout,
                  const Intent& intent = nullptr) {
    const auto end = std::chrono::steady_clock::now() + timeout;
    while (!pred() && std::chrono::steady_clock::now() < end) {
      pump(std::chrono::milliseconds(20), intent);
    }
    return pred();
  }

  // The first host: raw connections use it; a test sending on a bot's behalf uses the
  // bot's own (host_of).
  net::EnetHost& host() { return *hosts_.front(); }
  net::EnetHost& host_of(const client::Bot& bot) {
    for (std::size_t i = 0; i < bots_.size(); ++i) {
      if (bots_[i].get() == &bot) return *hosts_[host_of_[i]];
    }
    throw std::out_of_range("no such bot");
  }

 private:
  void route(std::size_t host, const net::NetEvent& ev) {
    for (std::size_t i = 0; i < bots_.size(); ++i) {
      client::Bot* b = bots_[i].get();
      if (host_of_[i] != host || !(b->peer() == ev.peer)) continue;
      switch (ev.type) {
        case net::NetEvent::Type::kConnect:
          b->on_connect(*hosts_[host]);
          break;
        case net::NetEvent::Type::kDisconnect:
          b->on_disconnect(ev.data);
          break;
        case net::NetEvent::Type::kReceive: {
          const std::uint32_t before = b->replica().current().tick;
          b->on_packet(ev.channel, ev.bytes);
          if (observer_ && b->replica().current().tick != before) observer_(*b);
          break;
        }
      }
      return;
    }
    for (auto& r : raws_) {
      if (host != 0 || !(r->peer == ev.peer)) continue;
      switch (ev.type) {
        case net::NetEvent::Type::kConnect:
          r->connected = true;
          break;
        case net::NetEvent::Type::kDisconnect:
          r->closed = true;
          r->disconnect_reason = ev.data;
          break;
        case net::NetEvent::Type::kReceive:
          ++r->packets_in;
          break;
      }
      return;
    }
  }

  std::vector<std::unique_ptr<net::EnetHost>> hosts_;
  std::vector<std::unique_ptr<client::Bot>> bots_;
  std::vector<std::size_t> host_of_;  // per bot
  std::vector<std::unique_ptr<RawPeer>> raws_;
  std::vector<const client::Bot*> muted_;
  FrameObserver observer_;
  std::chrono::steady_clock::time_point next_input_{};
};

}  // namespace zone::test
