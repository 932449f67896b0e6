// The swarm: thousands of bots spread over threads (BotGroup), each thread with its own
// ENet client hosts, connected at a ramp, driven by a scenario, measured once a second
// and, in verification mode, checked against the server's ground truth.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/bot_group.hpp"
#include "sim/scenario.hpp"
#include "sim/summary.hpp"
#include "sim/truth_check.hpp"

namespace zone::sim {

struct TruthSource {
  std::string host;
  std::uint16_t port = 0;
};

struct SwarmOptions {
  std::string server_host = "127.0.0.1";
  std::uint16_t server_port = 7777;
  std::uint32_t bots = 10;
  double ramp_per_s = 100.0;  // new connections per second
  double duration_s = 10.0;   // from the first connection
  std::uint64_t seed = 1;
  // Bots sharing one ENet client host, i.e. one source address. A zone with several
  // network hosts spreads clients over them by source address, so more, smaller client
  // hosts spread a swarm evenly; each host costs a socket read per pass.
  std::uint32_t bots_per_host = 250;
  std::uint32_t threads = 0;  // bot threads; 0: one per 2,000 bots, at most one per core
  // Verification mode: the admin addresses serving /debug/truth, one per zone (a world
  // of zones: every zone the bots may be transferred to). Each bot is checked against
  // the truth of the zone it is in.
  std::vector<TruthSource> truth;
  std::string truth_token;  // the servers' admin token, sent as a bearer token
  double truth_interval_s = 1.0;
  double settle_s = 2.0;              // no truth checks before this (initial joins)
  bool progress = true;               // the once-per-second line on stderr
  bool light = false;                 // bots skip replicas (see client::Bot::set_light)
  std::optional<BotTickets> tickets;  // --ticket-key: the bots log in with tickets
  // --rejoin: bots whose zone ended their session log in again (a zone restart), and the
  // truth endpoint being unreachable for a while is expected (truth_fetch_failures).
  bool rejoin = false;
};

class Swarm {
 public:
  Swarm(const SwarmOptions& options, const Scenario& scenario);
  ~Swarm();
  // Runs for the configured duration, or until stop() returns true (polled every 20 ms;
  // a Ctrl-C), then disconnects every bot. The summary covers the time it ran.
  void run(const std::function<bool()>& stop = [] { return false; });
  Summary summary() const;
  const TruthReport& truth() const { return final_.truth; }
  // The first violations seen, readable.
  const std::vector<std::string>& violation_details() const { return final_.violation_details; }
  const std::vector<std::string>& chunk_details() const { return final_.chunks.details; }
  const std::vector<std::string>& static_details() const { return final_.statics.details; }
  const std::vector<std::string>& event_details() const { return final_.events.details; }
  const std::vector<std::string>& rejoin_details() const { return final_.rejoin_details; }
  const std::vector<std::string>& before_spawn_details() const {
    return final_.before_spawn_details;
  }
  std::uint32_t threads() const { return static_cast<std::uint32_t>(groups_.size()); }

 private:
  GroupStats combine(const std::vector<GroupStats>& parts) const;
  void report_second(const GroupStats& now, double elapsed_s, double window_s);
  // One round of checks: each zone's bots against that zone's truth.
  void truth_check(const GroupStats& now);
  void truth_check(const TruthSource& source, const std::string& zone, std::uint32_t newest);
  // The events of every tick since the last round (GET /debug/truth?only=events), handed
  // to the groups, which compare each bot once its events of a tick have all arrived.
  void event_truth(const TruthSource& source, const std::string& zone, std::uint32_t newest);
  // GET /debug/static of every source: its zone's name and static map, for the bots'
  // exact check (a failure is recorded as a truth fetch error).
  void fetch_static_truths();

  // Per truth source: the zone it serves (as /debug/static names it).
  std::vector<std::string> source_zones_;
  client::ZoneStatics statics_;
  SwarmOptions options_;
  Scenario scenario_;
  std::vector<std::unique_ptr<BotGroup>> groups_;
  GroupStats final_;
  std::uint32_t peak_ = 0;
  std::uint32_t party_peak_ = 0;  // most bots in a party at the same time
  std::uint32_t guild_peak_ = 0;  // ... in a guild
  std::vector<double> rtt_samples_;
  double bot_seconds_ = 0.0;
  double view_samples_sum_ = 0.0;
  std::uint64_t view_samples_ = 0;
  double duration_s_ = 0.0;
  std::uint64_t truth_rounds_ = 0;
  std::uint64_t truth_fetch_failures_ = 0;
  std::uint64_t truth_expired_ticks_ = 0;  // asked for after the server's history let them go
  std::vector<std::string> truth_fetch_errors_;
  std::map<std::string, std::uint32_t> events_fetched_to_;  // by zone: the newest tick asked for
  // Per-second window.
  std::uint64_t last_in_ = 0, last_out_ = 0, last_enters_ = 0, last_leaves_ = 0;
  std::uint64_t last_events_ = 0;
};

}  // namespace zone::sim
