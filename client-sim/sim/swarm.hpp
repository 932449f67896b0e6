// The swarm: thousands of bots in one thread, spread over a few ENet client hosts (one
// host holds many peers), connected at a ramp, driven by a scenario, measured once a
// second and, in verification mode, checked against the server's ground truth.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "client/bot.hpp"
#include "net/enet_host.hpp"
#include "sim/driver.hpp"
#include "sim/scenario.hpp"
#include "sim/summary.hpp"
#include "sim/truth_check.hpp"
#include "util/splitmix64.hpp"

namespace zone::sim {

struct SwarmOptions {
  std::string server_host = "127.0.0.1";
  std::uint16_t server_port = 7777;
  std::uint32_t bots = 10;
  double ramp_per_s = 100.0;  // new connections per second
  double duration_s = 10.0;   // from the first connection
  std::uint64_t seed = 1;
  std::uint32_t bots_per_host = 1000;
  // Verification mode: the server's admin address serving /debug/truth.
  std::optional<std::string> truth_host;
  std::uint16_t truth_port = 0;
  std::string truth_token;  // the server's admin token, sent as a bearer token
  double truth_interval_s = 1.0;
  double settle_s = 2.0;  // no truth checks before this (initial joins)
  bool progress = true;   // the once-per-second line on stderr
  bool light = false;     // bots skip replicas (see client::Bot::set_light)
};

class Swarm {
 public:
  Swarm(const SwarmOptions& options, const Scenario& scenario);
  ~Swarm();
  // Runs for the configured duration, then disconnects every bot.
  void run();
  Summary summary() const;
  const TruthReport& truth() const { return truth_; }
  // The first violations seen, readable.
  const std::vector<std::string>& violation_details() const { return violation_details_; }

 private:
  struct Slot {
    std::unique_ptr<client::Bot> bot;
    std::uint32_t host = 0;
    std::uint32_t generation = 0;  // rejoins so far
    DriverState driver;
    std::chrono::steady_clock::time_point leave_at{};   // churn: quit then
    std::chrono::steady_clock::time_point rejoin_at{};  // churn: reconnect then
    bool joined_once = false;
    bool counted_join = false;  // this session's join already counted
    // Counters of finished sessions, so rejoining does not lose them.
    client::BotCounters past;
    std::uint64_t past_enters = 0, past_leaves = 0;
    std::size_t violations_seen = 0;
  };

  // Traffic and view changes of every bot, finished sessions and live ones.
  struct Totals {
    std::uint64_t bytes_in = 0, bytes_out = 0, packets_in = 0, enters = 0, leaves = 0;
  };
  Totals totals() const;
  void connect(std::uint32_t index, std::chrono::steady_clock::time_point now);
  void pump_network();
  void route(std::uint32_t host, const net::NetEvent& ev);
  void send_inputs(double dt);
  void churn(std::chrono::steady_clock::time_point now);
  void collect_violations(Slot& slot);
  void report_second(double elapsed_s, double window_s);
  void truth_check();
  void retire(Slot& slot);

  SwarmOptions options_;
  Scenario scenario_;
  std::vector<std::unique_ptr<net::EnetHost>> hosts_;
  std::vector<std::vector<std::int32_t>> bot_of_peer_;  // per host, by peer index
  std::vector<Slot> slots_;
  util::SplitMix64 rng_;

  // Totals.
  std::uint32_t connected_ever_ = 0;
  std::uint32_t peak_ = 0;
  std::uint32_t connect_failures_ = 0;
  std::uint32_t server_disconnects_ = 0;
  std::vector<double> rtt_samples_;
  double bot_seconds_ = 0.0;
  double view_samples_sum_ = 0.0;
  std::uint64_t view_samples_ = 0;
  std::uint64_t violations_ = 0;
  std::map<std::string, std::uint64_t> violations_by_kind_;
  std::vector<std::string> violation_details_;
  TruthReport truth_;
  double duration_s_ = 0.0;

  // Per-second window.
  std::uint64_t last_in_ = 0, last_out_ = 0, last_enters_ = 0, last_leaves_ = 0;
};

}  // namespace zone::sim
