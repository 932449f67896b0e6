#include "sim/swarm.hpp"

#include <algorithm>
#include <cmath>
#include <thread>

#include <fmt/format.h>
#include <httplib.h>

#include "protocol/codec.hpp"

namespace zone::sim {

using clock = std::chrono::steady_clock;

namespace {

double seconds(clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0.0;
  const auto k = static_cast<std::size_t>(q * static_cast<double>(v.size() - 1));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

}  // namespace

Swarm::Swarm(const SwarmOptions& options, const Scenario& scenario)
    : options_(options), scenario_(scenario), rng_(options.seed) {
  const std::uint32_t per_host = std::max(1u, std::min(options.bots_per_host, 4000u));
  const std::uint32_t hosts = (options.bots + per_host - 1) / per_host;
  for (std::uint32_t h = 0; h < hosts; ++h) {
    net::HostOptions o;
    o.max_peers = per_host;
    o.channels = 2;
    o.timeout_ms = 60000;  // generous: an overloaded server must not shed the load test
    hosts_.push_back(std::make_unique<net::EnetHost>(o));
    bot_of_peer_.emplace_back(per_host, -1);
  }
  slots_.resize(options.bots);
  for (std::uint32_t i = 0; i < options.bots; ++i) slots_[i].host = i / per_host;
}

Swarm::~Swarm() = default;

void Swarm::connect(std::uint32_t index, clock::time_point now) {
  Slot& slot = slots_[index];
  ++slot.generation;
  slot.bot = std::make_unique<client::Bot>(fmt::format("bot-{}", index));
  slot.bot->set_light(options_.light);
  slot.bot->connect(*hosts_[slot.host], options_.server_host, options_.server_port);
  bot_of_peer_[slot.host][slot.bot->peer().index] = static_cast<std::int32_t>(index);
  slot.driver = DriverState{};
  slot.driver.heading = rng_.u01() * 6.283185307179586;
  slot.counted_join = false;
  slot.violations_seen = 0;
  if (scenario_.churn) {
    slot.leave_at = now + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(
                              rng_.range(scenario_.session_s.min, scenario_.session_s.max)));
  }
}

void Swarm::retire(Slot& slot) {
  if (!slot.bot) return;
  collect_violations(slot);
  const client::BotCounters& c = slot.bot->counters();
  slot.past.bytes_in += c.bytes_in;
  slot.past.bytes_out += c.bytes_out;
  slot.past.packets_in += c.packets_in;
  slot.past.packets_out += c.packets_out;
  slot.past_enters += slot.bot->replica().enters();
  slot.past_leaves += slot.bot->replica().leaves();
  bot_of_peer_[slot.host][slot.bot->peer().index] = -1;
  slot.bot.reset();
}

void Swarm::route(std::uint32_t host, const net::NetEvent& ev) {
  if (ev.peer.index >= bot_of_peer_[host].size()) return;
  const std::int32_t index = bot_of_peer_[host][ev.peer.index];
  if (index < 0) return;
  Slot& slot = slots_[static_cast<std::size_t>(index)];
  client::Bot& bot = *slot.bot;
  if (!(bot.peer() == ev.peer)) return;
  switch (ev.type) {
    case net::NetEvent::Type::kConnect:
      bot.on_connect(*hosts_[host]);
      break;
    case net::NetEvent::Type::kDisconnect: {
      const bool joined = bot.phase() == client::Bot::Phase::kPlaying;
      bot.on_disconnect(ev.data);
      if (!joined) {
        ++connect_failures_;
      } else {
        ++server_disconnects_;
      }
      if (options_.progress) {
        fmt::print(stderr, "{}: disconnected by the server ({})\n", bot.name(),
                   protocol::to_string(static_cast<protocol::DisconnectReason>(ev.data)));
      }
      retire(slot);
      break;
    }
    case net::NetEvent::Type::kReceive: {
      bot.on_packet(ev.bytes);
      if (!slot.counted_join && bot.phase() == client::Bot::Phase::kPlaying) {
        slot.counted_join = true;
        if (!slot.joined_once) ++connected_ever_;
        slot.joined_once = true;
      }
      break;
    }
  }
}

void Swarm::pump_network() {
  net::NetEvent ev;
  for (std::uint32_t h = 0; h < hosts_.size(); ++h) {
    hosts_[h]->service(0);
    while (hosts_[h]->next_event(ev)) route(h, ev);
  }
}

void Swarm::send_inputs(double dt) {
  for (Slot& slot : slots_) {
    if (!slot.bot || slot.bot->phase() != client::Bot::Phase::kPlaying) continue;
    const auto [mx, my] = next_intent(scenario_, slot.driver, *slot.bot, rng_, dt);
    slot.bot->send_input(*hosts_[slot.host], mx, my);
    collect_violations(slot);
  }
}

void Swarm::churn(clock::time_point now) {
  if (!scenario_.churn) return;
  for (std::uint32_t i = 0; i < slots_.size(); ++i) {
    Slot& slot = slots_[i];
    if (slot.bot && slot.bot->phase() == client::Bot::Phase::kPlaying && now >= slot.leave_at) {
      slot.bot->quit(*hosts_[slot.host]);
      retire(slot);
      slot.rejoin_at =
          now + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(
                    rng_.range(scenario_.offline_s.min, scenario_.offline_s.max)));
    } else if (!slot.bot && slot.joined_once && now >= slot.rejoin_at) {
      connect(i, now);
    }
  }
}

void Swarm::collect_violations(Slot& slot) {
  const auto& v = slot.bot->replica().violations();
  for (; slot.violations_seen < v.size(); ++slot.violations_seen) {
    const replica::ViolationRecord& rec = v[slot.violations_seen];
    ++violations_;
    ++violations_by_kind_[replica::to_string(rec.kind)];
    if (violation_details_.size() < 20) {
      violation_details_.push_back(fmt::format("{}: {} (entity {}, server tick {})",
                                               slot.bot->name(), replica::to_string(rec.kind),
                                               rec.entity_id, rec.server_tick));
    }
  }
}

Swarm::Totals Swarm::totals() const {
  Totals t;
  for (const Slot& slot : slots_) {
    t.bytes_in += slot.past.bytes_in;
    t.bytes_out += slot.past.bytes_out;
    t.packets_in += slot.past.packets_in;
    t.enters += slot.past_enters;
    t.leaves += slot.past_leaves;
    if (!slot.bot) continue;
    t.bytes_in += slot.bot->counters().bytes_in;
    t.bytes_out += slot.bot->counters().bytes_out;
    t.packets_in += slot.bot->counters().packets_in;
    t.enters += slot.bot->replica().enters();
    t.leaves += slot.bot->replica().leaves();
  }
  return t;
}

void Swarm::report_second(double elapsed_s, double window_s) {
  std::uint32_t playing = 0;
  const Totals t = totals();
  const std::uint64_t in = t.bytes_in, out = t.bytes_out, enters = t.enters, leaves = t.leaves;
  std::vector<double> rtts;
  double view = 0.0;
  for (const Slot& slot : slots_) {
    if (!slot.bot || slot.bot->phase() != client::Bot::Phase::kPlaying) continue;
    ++playing;
    rtts.push_back(hosts_[slot.host]->round_trip_ms(slot.bot->peer()));
    view += static_cast<double>(slot.bot->replica().current().entities.size());
  }
  peak_ = std::max(peak_, playing);
  bot_seconds_ += playing * window_s;
  if (playing > 0) {
    view_samples_sum_ += view / playing;
    ++view_samples_;
  }
  rtt_samples_.insert(rtt_samples_.end(), rtts.begin(), rtts.end());
  if (options_.progress) {
    const double per_bot = playing > 0 ? 1.0 / playing : 0.0;
    fmt::print(stderr,
               "[{:5.1f}s] bots {}/{} | rtt p50 {:.0f} ms p99 {:.0f} ms | per bot in {:.2f} kB/s "
               "out {:.2f} kB/s | view {:.1f} | enters {:.0f}/s leaves {:.0f}/s | violations {} | "
               "truth {} checks {} mismatches\n",
               elapsed_s, playing, options_.bots, percentile(rtts, 0.5), percentile(rtts, 0.99),
               static_cast<double>(in - last_in_) / window_s / 1000.0 * per_bot,
               static_cast<double>(out - last_out_) / window_s / 1000.0 * per_bot, view * per_bot,
               static_cast<double>(enters - last_enters_) / window_s,
               static_cast<double>(leaves - last_leaves_) / window_s, violations_, truth_.checks,
               truth_.mismatches);
  }
  last_in_ = in;
  last_out_ = out;
  last_enters_ = enters;
  last_leaves_ = leaves;
}

void Swarm::truth_check() {
  // Check a tick a few frames old, which nearly every bot has completed by now.
  std::uint32_t newest = 0;
  for (const Slot& slot : slots_) {
    if (slot.bot && slot.bot->phase() == client::Bot::Phase::kPlaying) {
      newest = std::max(newest, slot.bot->ack_tick());
    }
  }
  if (newest < 4) return;
  const std::uint32_t tick = newest - 3;
  httplib::Client http(*options_.truth_host, options_.truth_port);
  http.set_connection_timeout(2, 0);
  http.set_read_timeout(5, 0);
  if (!options_.truth_token.empty()) http.set_bearer_token_auth(options_.truth_token);
  const auto res = http.Get(fmt::format("/debug/truth?tick={}", tick).c_str());
  if (!res || res->status != 200) {
    ++truth_.mismatches;
    truth_.details.push_back(fmt::format(
        "truth endpoint {}:{} failed for tick {}: {}", *options_.truth_host, options_.truth_port,
        tick,
        res ? fmt::format("HTTP {} {}", res->status, res->body) : httplib::to_string(res.error())));
    return;
  }
  Truth truth;
  std::string error;
  if (!parse_truth(res->body, truth, error)) {
    ++truth_.mismatches;
    truth_.details.push_back("truth endpoint returned unreadable JSON: " + error);
    return;
  }
  for (const Slot& slot : slots_) {
    if (slot.bot) check_bot(*slot.bot, truth, truth_);
  }
}

void Swarm::run() {
  const auto start = clock::now();
  const auto end = start + std::chrono::duration_cast<clock::duration>(
                               std::chrono::duration<double>(options_.duration_s));
  std::uint32_t next_bot = 0;
  auto last_report = start;
  auto next_truth = start + std::chrono::duration_cast<clock::duration>(
                                std::chrono::duration<double>(options_.settle_s));
  auto next_input = start;
  auto last_input = start;
  while (clock::now() < end) {
    const auto now = clock::now();
    // Ramp: as many connections as the elapsed time allows.
    const auto due = static_cast<std::uint32_t>(std::min<double>(
        options_.bots, std::floor(seconds(now - start) * options_.ramp_per_s) + 1));
    for (; next_bot < due; ++next_bot) connect(next_bot, now);

    pump_network();
    churn(now);

    // Inputs at the scenario's rate, or the server's tick rate (learnt from a welcome).
    double rate = scenario_.input_rate_hz;
    if (rate <= 0.0) {
      for (const Slot& s : slots_) {
        if (s.bot && s.bot->welcome().tick_rate) {
          rate = s.bot->welcome().tick_rate;
          break;
        }
      }
    }
    if (rate <= 0.0) rate = 20.0;
    if (now >= next_input) {
      send_inputs(seconds(now - last_input));
      last_input = now;
      next_input +=
          std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(1.0 / rate));
      if (next_input < now) next_input = now;  // fell behind: do not burst
    }
    if (options_.truth_host && now >= next_truth) {
      truth_check();
      next_truth = now + std::chrono::duration_cast<clock::duration>(
                             std::chrono::duration<double>(options_.truth_interval_s));
    }
    if (now - last_report >= std::chrono::seconds(1)) {
      report_second(seconds(now - start), seconds(now - last_report));
      last_report = now;
    }
    // Sleep briefly in the socket wait of the first host.
    hosts_.front()->service(1);
  }
  report_second(seconds(clock::now() - start), std::max(1e-3, seconds(clock::now() - last_report)));
  duration_s_ = seconds(clock::now() - start);
  for (Slot& slot : slots_) {
    if (slot.bot && slot.bot->phase() != client::Bot::Phase::kClosed) {
      slot.bot->quit(*hosts_[slot.host]);
    }
    retire(slot);
  }
  // Give the goodbyes a moment to reach the server, so it frees the players at once
  // instead of waiting for them to time out.
  const auto goodbye_deadline = clock::now() + std::chrono::milliseconds(500);
  net::NetEvent ev;
  while (clock::now() < goodbye_deadline) {
    std::size_t connected = 0;
    for (auto& h : hosts_) {
      h->service(0);
      while (h->next_event(ev)) {
      }
      connected += h->connected_peers();
    }
    if (connected == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

Summary Swarm::summary() const {
  Summary s;
  s.scenario = scenario_.name;
  s.seed = options_.seed;
  s.bots_requested = options_.bots;
  s.bots_connected = connected_ever_;
  s.bots_peak = peak_;
  s.connect_failures = connect_failures_;
  s.disconnects = server_disconnects_;
  s.duration_s = duration_s_;
  s.rtt_p50_ms = percentile(rtt_samples_, 0.5);
  s.rtt_p99_ms = percentile(rtt_samples_, 0.99);
  s.rtt_max_ms =
      rtt_samples_.empty() ? 0.0 : *std::max_element(rtt_samples_.begin(), rtt_samples_.end());
  const Totals t = totals();
  s.enters_total = t.enters;
  s.leaves_total = t.leaves;
  if (bot_seconds_ > 0) {
    s.bytes_in_per_bot_per_s = static_cast<double>(t.bytes_in) / bot_seconds_;
    s.bytes_out_per_bot_per_s = static_cast<double>(t.bytes_out) / bot_seconds_;
    s.packets_in_per_bot_per_s = static_cast<double>(t.packets_in) / bot_seconds_;
  }
  s.entities_in_view_avg =
      view_samples_ ? view_samples_sum_ / static_cast<double>(view_samples_) : 0.0;
  s.protocol_violations = violations_;
  s.violations_by_kind = violations_by_kind_;
  s.truth_checks = truth_.checks;
  s.truth_entity_checks = truth_.entity_checks;
  s.truth_mismatches = truth_.mismatches;
  s.truth_skipped = truth_.skipped;
  return s;
}

}  // namespace zone::sim
