#include "sim/swarm.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <future>
#include <span>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <httplib.h>

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

// Bots one thread drives comfortably with full replicas.
constexpr std::uint32_t kBotsPerThread = 2000;
// The newest ticks of a truth window a bot may be checked on (see truth_check).
constexpr std::uint32_t kCheckableTicks = 16;
// Players named in one truth request (the server takes up to 1,000; ids of up to 10
// digits keep the URL under 6 kB).
constexpr std::size_t kPlayersPerRequest = 500;
// Ticks of events one round asks for at most (a round a second at 20 Hz needs 20; the
// server keeps 64 by default).
constexpr std::uint32_t kEventTicksPerRound = 48;
// The newest tick the bots hold of a zone falls this far below the last one fetched only
// when the zone restarted (and its old bots are gone): a bot that moves on to another
// zone takes a few ticks with it at most.
constexpr std::uint32_t kRestartedBelowTicks = 100;

}  // namespace

Swarm::Swarm(const SwarmOptions& options, const Scenario& scenario)
    : options_(options), scenario_(scenario) {
  const std::uint32_t cores = std::max(1u, std::thread::hardware_concurrency());
  std::uint32_t threads = options.threads;
  if (threads == 0) threads = std::min(cores, (options.bots + kBotsPerThread - 1) / kBotsPerThread);
  threads = std::clamp(threads, 1u, std::max(1u, options.bots));
  fetch_static_truths();
  for (std::uint32_t g = 0; g < threads; ++g) {
    GroupOptions o;
    o.static_truth = statics_;
    o.server_host = options.server_host;
    o.server_port = options.server_port;
    o.first_bot = options.bots * g / threads;
    o.bots = options.bots * (g + 1) / threads - o.first_bot;
    o.ramp_per_s = options.ramp_per_s * o.bots / std::max(1u, options.bots);
    o.bots_per_host = options.bots_per_host;
    o.seed = options.seed + 0x9E3779B97F4A7C15ull * g;
    o.party_seed = options.seed;
    o.light = options.light;
    o.tickets = options.tickets;
    o.progress = options.progress;
    o.check_events = !options.truth.empty();
    o.rejoin = options.rejoin;
    groups_.push_back(std::make_unique<BotGroup>(o, scenario));
  }
}

Swarm::~Swarm() = default;

void Swarm::fetch_static_truths() {
  for (const TruthSource& source : options_.truth) {
    httplib::Client http(source.host, source.port);
    http.set_connection_timeout(5);
    http.set_read_timeout(10);
    if (!options_.truth_token.empty()) http.set_bearer_token_auth(options_.truth_token);
    auto res = http.Get("/debug/static");
    auto truth = std::make_shared<client::StaticTruth>();
    std::string error;
    if (res && res->status == 200 && client::StaticTruth::parse(res->body, *truth, error)) {
      if (statics_.count(truth->zone) != 0) {
        truth_fetch_errors_.push_back(
            fmt::format("truth endpoints: two of them serve zone '{}' ({}:{} is the second)",
                        truth->zone, source.host, source.port));
      }
      source_zones_.push_back(truth->zone);
      statics_[truth->zone] = std::move(truth);
      continue;
    }
    source_zones_.emplace_back();  // never matches a zone: its bots are not checked
    truth_fetch_errors_.push_back(
        fmt::format("static truth endpoint {}:{} failed: {}", source.host, source.port,
                    res ? fmt::format("HTTP {} {}", res->status, error.empty() ? res->body : error)
                        : httplib::to_string(res.error())));
  }
}

GroupStats Swarm::combine(const std::vector<GroupStats>& parts) const {
  GroupStats t;
  for (const GroupStats& g : parts) {
    t.playing += g.playing;
    t.in_party += g.in_party;
    t.in_guild += g.in_guild;
    t.chunks.add(g.chunks);
    t.statics.add(g.statics);
    t.static_objects += g.static_objects;
    t.static_truth_cells += g.static_truth_cells;
    t.transfers += g.transfers;
    t.transfer_id_changes += g.transfer_id_changes;
    t.transfer_failures += g.transfer_failures;
    t.drops += g.drops;
    t.resumes += g.resumes;
    t.resume_id_changes += g.resume_id_changes;
    t.resumes_refused += g.resumes_refused;
    t.resume_retries += g.resume_retries;
    t.rejoins += g.rejoins;
    t.rejoin_loss_max_m = std::max(t.rejoin_loss_max_m, g.rejoin_loss_max_m);
    t.rejoin_loss_sum_m += g.rejoin_loss_sum_m;
    t.rejoin_property_changes += g.rejoin_property_changes;
    t.rejoin_wait_max_s = std::max(t.rejoin_wait_max_s, g.rejoin_wait_max_s);
    t.rejoins_held += g.rejoins_held;
    t.rejoin_unheld += g.rejoin_unheld;
    t.rejoin_lost_play_max_s = std::max(t.rejoin_lost_play_max_s, g.rejoin_lost_play_max_s);
    t.rejoin_lost_play_sum_s += g.rejoin_lost_play_sum_s;
    for (const std::string& d : g.rejoin_details) {
      if (t.rejoin_details.size() < 20) t.rejoin_details.push_back(d);
    }
    t.connected_ever += g.connected_ever;
    t.connect_failures += g.connect_failures;
    t.server_disconnects += g.server_disconnects;
    for (const auto& [why, n] : g.disconnects_by_reason) t.disconnects_by_reason[why] += n;
    t.bytes_in += g.bytes_in;
    t.bytes_out += g.bytes_out;
    t.packets_in += g.packets_in;
    t.enters += g.enters;
    t.leaves += g.leaves;
    t.view_sum += g.view_sum;
    t.rtt_ms.insert(t.rtt_ms.end(), g.rtt_ms.begin(), g.rtt_ms.end());
    for (const auto& [zone, tick] : g.newest_tick) {
      t.newest_tick[zone] = std::max(t.newest_tick[zone], tick);
    }
    t.violations += g.violations;
    for (const auto& [k, n] : g.violations_by_kind) t.violations_by_kind[k] += n;
    for (const std::string& d : g.violation_details) {
      if (t.violation_details.size() < 20) t.violation_details.push_back(d);
    }
    t.truth.add(g.truth);
    t.game.add(g.game);
    for (const auto& [k, n] : g.actions_by_name) t.actions_by_name[k] += n;
    for (const auto& [k, n] : g.events_by_kind) t.events_by_kind[k] += n;
    for (const std::string& d : g.before_spawn_details) {
      if (t.before_spawn_details.size() < 20) t.before_spawn_details.push_back(d);
    }
    t.events.add(g.events);
  }
  return t;
}

void Swarm::report_second(const GroupStats& now, double elapsed_s, double window_s) {
  peak_ = std::max(peak_, now.playing);
  party_peak_ = std::max(party_peak_, now.in_party);
  guild_peak_ = std::max(guild_peak_, now.in_guild);
  bot_seconds_ += now.playing * window_s;
  if (now.playing > 0) {
    view_samples_sum_ += now.view_sum / now.playing;
    ++view_samples_;
  }
  rtt_samples_.insert(rtt_samples_.end(), now.rtt_ms.begin(), now.rtt_ms.end());
  if (options_.progress) {
    const double per_bot = now.playing > 0 ? 1.0 / now.playing : 0.0;
    fmt::print(stderr,
               "[{:5.1f}s] bots {}/{} | rtt p50 {:.0f} ms p99 {:.0f} ms | per bot in {:.2f} kB/s "
               "out {:.2f} kB/s | view {:.1f} | enters {:.0f}/s leaves {:.0f}/s | violations {} | "
               "truth {} checks {} mismatches | events {:.0f}/s, {} checked, {} errors\n",
               elapsed_s, now.playing, options_.bots, percentile(now.rtt_ms, 0.5),
               percentile(now.rtt_ms, 0.99),
               static_cast<double>(now.bytes_in - last_in_) / window_s / 1000.0 * per_bot,
               static_cast<double>(now.bytes_out - last_out_) / window_s / 1000.0 * per_bot,
               now.view_sum * per_bot, static_cast<double>(now.enters - last_enters_) / window_s,
               static_cast<double>(now.leaves - last_leaves_) / window_s, now.violations,
               now.truth.checks, now.truth.mismatches,
               static_cast<double>(now.game.events_received - last_events_) / window_s,
               now.events.checks, now.events.errors() + now.game.events_before_spawn);
  }
  last_in_ = now.bytes_in;
  last_out_ = now.bytes_out;
  last_enters_ = now.enters;
  last_leaves_ = now.leaves;
  last_events_ = now.game.events_received;
}

void Swarm::truth_check(const GroupStats& now) {
  ++truth_rounds_;
  for (std::size_t i = 0; i < options_.truth.size(); ++i) {
    const std::string& zone = source_zones_[i];
    const auto it = now.newest_tick.find(zone);
    if (zone.empty() && !statics_.count(zone)) continue;  // its static map never came
    truth_check(options_.truth[i], zone, it == now.newest_tick.end() ? 0 : it->second);
  }
}

void Swarm::event_truth(const TruthSource& source, const std::string& zone, std::uint32_t newest) {
  if (newest < 2) return;
  // From the tick after the last round's; the first round starts a little back (events
  // of earlier ticks are not checked). Never further back than the server's history
  // keeps (debug.truth_history_ticks, 64 by default): a round that lagged more skips on.
  std::uint32_t& fetched = events_fetched_to_[zone];
  // The zone restarted (its ticks start again): fetch from its present.
  if (fetched > newest + kRestartedBelowTicks) fetched = 0;
  const std::uint32_t top = newest;
  std::uint32_t from = fetched != 0 ? fetched + 1 : (top > 8 ? top - 8 : 1);
  if (top >= from + kEventTicksPerRound) {
    truth_expired_ticks_ += top + 1 - kEventTicksPerRound - from;
    from = top + 1 - kEventTicksPerRound;
  }
  if (from > top) return;
  httplib::Client http(source.host, source.port);
  http.set_connection_timeout(2, 0);
  http.set_read_timeout(5, 0);
  http.set_keep_alive(true);
  if (!options_.truth_token.empty()) http.set_bearer_token_auth(options_.truth_token);
  auto batch = std::make_shared<EventTruthBatch>();
  for (std::uint32_t t = from; t <= top; ++t) {
    const auto res = http.Get(fmt::format("/debug/truth?tick={}&only=events", t).c_str());
    TickEvents events;
    std::string error;
    if (res && res->status == 200 && parse_event_truth(res->body, events, error)) {
      batch->push_back(std::move(events));
      fetched = t;
      continue;
    }
    if (res && res->status == 404) break;  // not recorded yet: the next round asks again
    if (res && res->status == 410) {
      ++truth_expired_ticks_;
      fetched = t;
      continue;
    }
    ++truth_fetch_failures_;
    if (!options_.rejoin && truth_fetch_errors_.size() < 5) {
      truth_fetch_errors_.push_back(fmt::format(
          "truth endpoint {}:{} failed for the events of tick {}: {}", source.host, source.port, t,
          res ? fmt::format("HTTP {} {}", res->status, error.empty() ? res->body : error)
              : httplib::to_string(res.error())));
    }
    break;
  }
  if (batch->empty()) return;
  std::shared_ptr<const EventTruthBatch> shared = std::move(batch);
  for (auto& g : groups_) g->check_events(zone, shared);
}

void Swarm::truth_check(const TruthSource& source, const std::string& zone, std::uint32_t newest) {
  event_truth(source, zone, newest);
  if (newest < 4) return;
  // Step 1: every bot's newest complete frame among the newest kCheckableTicks is copied
  // aside (a client at its byte budget gets a frame only every few ticks and loses some
  // of them, so the span covers several of those gaps). The truth may then take as long
  // as it takes to arrive: the frames it is compared with stay.
  const std::uint32_t top = newest - 1;
  const std::uint32_t from = top > kCheckableTicks ? top - kCheckableTicks + 1 : 1;
  std::vector<std::future<FramesTaken>> taking;
  for (auto& g : groups_) taking.push_back(g->take_frames(zone, from, top));
  FramesTaken checked;  // tick -> the bots taken at it
  for (auto& f : taking) {
    try {
      if (f.wait_for(std::chrono::seconds(5)) != std::future_status::ready) continue;
      for (auto& [tick, players] : f.get()) {
        auto& all = checked[tick];
        all.insert(all.end(), players.begin(), players.end());
      }
    } catch (const std::future_error&) {  // the group's thread has ended
    }
  }
  auto window = std::make_shared<TruthWindow>();
  const auto check = [&] {
    for (auto& g : groups_) g->check(window);
  };
  if (checked.empty()) return check();  // every bot is counted as skipped

  // Step 2: the truth of those ticks with the per-player lists, and of every tick a
  // held-back record in them may come from with positions only (a fraction of the size).
  httplib::Client http(source.host, source.port);
  http.set_connection_timeout(2, 0);
  http.set_read_timeout(5, 0);
  http.set_keep_alive(true);
  if (!options_.truth_token.empty()) http.set_bearer_token_auth(options_.truth_token);
  std::uint32_t gone_below = 0;  // the newest tick the server no longer kept, plus one
  // One tick's truth, with the per-player lists of `players` (or none).
  auto fetch = [&](std::uint32_t tick, std::span<const std::uint32_t> players) {
    const std::string query =
        players.empty()
            ? fmt::format("/debug/truth?tick={}&only=positions", tick)
            : fmt::format("/debug/truth?tick={}&players={}", tick, fmt::join(players, ","));
    const auto res = http.Get(query.c_str());
    std::string error;
    Truth truth;
    if (res && res->status == 200 && parse_truth(res->body, truth, error)) {
      auto [it, fresh] = window->by_tick.try_emplace(tick, std::move(truth));
      if (!fresh) {
        if (it->second.per_player) {
          it->second.merge_players(std::move(truth));
        } else {
          it->second = std::move(truth);
        }
      }
      return true;
    }
    if (res && res->status == 410) {  // the swarm lags further behind than the history
      ++truth_expired_ticks_;
      gone_below = std::max(gone_below, tick + 1);
      return false;
    }
    ++truth_fetch_failures_;
    if (!options_.rejoin && truth_fetch_errors_.size() < 5) {
      truth_fetch_errors_.push_back(fmt::format(
          "truth endpoint {}:{} failed for tick {}: {}", source.host, source.port, tick,
          res ? fmt::format("HTTP {} {}", res->status, error.empty() ? res->body : error)
              : httplib::to_string(res.error())));
    }
    return false;
  };
  // How far back held-back records reach (max_staleness_ticks), from the newest tick
  // checked; then the window oldest first: the server keeps a limited history
  // (debug.truth_history_ticks), and the oldest tick is the one that would fall out of it
  // while the others are fetched.
  const std::uint32_t newest_checked = checked.rbegin()->first;
  if (!fetch(newest_checked, {})) return check();
  const std::uint32_t depth = window->by_tick.begin()->second.max_staleness_ticks;
  const std::uint32_t first = checked.begin()->first;
  const std::uint32_t oldest = first > depth ? first - depth + 1 : 1;
  for (std::uint32_t t = oldest; t <= newest_checked; ++t) {
    const auto it = checked.find(t);
    if (it == checked.end()) {
      fetch(t, {});
      continue;
    }
    // The players a request names are bounded (the server's limit, and a URL's length).
    std::span<const std::uint32_t> players = it->second;
    while (!players.empty()) {
      const std::size_t n = std::min(players.size(), kPlayersPerRequest);
      fetch(t, players.first(n));
      players = players.subspan(n);
    }
  }
  // Only an unbroken run of ticks is a window: below a tick the server had let go, a bot
  // could be held to positions the check cannot see.
  std::erase_if(window->by_tick, [&](const auto& entry) { return entry.first < gone_below; });
  check();
}

void Swarm::run(const std::function<bool()>& stop) {
  const auto start = clock::now();
  const auto end = start + std::chrono::duration_cast<clock::duration>(
                               std::chrono::duration<double>(options_.duration_s));
  for (auto& g : groups_) g->start(start);
  auto last_report = start;
  auto next_truth = start + std::chrono::duration_cast<clock::duration>(
                                std::chrono::duration<double>(options_.settle_s));
  std::vector<GroupStats> parts(groups_.size());
  while (clock::now() < end && !stop()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const auto now = clock::now();
    const bool truth_due = !options_.truth.empty() && now >= next_truth;
    if (now - last_report < std::chrono::seconds(1) && !truth_due) continue;
    for (std::size_t g = 0; g < groups_.size(); ++g) parts[g] = groups_[g]->sample();
    const GroupStats total = combine(parts);
    if (truth_due) {
      truth_check(total);
      next_truth = now + std::chrono::duration_cast<clock::duration>(
                             std::chrono::duration<double>(options_.truth_interval_s));
    }
    if (now - last_report >= std::chrono::seconds(1)) {
      report_second(total, seconds(now - start), seconds(now - last_report));
      last_report = now;
    }
  }
  for (std::size_t g = 0; g < groups_.size(); ++g) parts[g] = groups_[g]->finish();
  final_ = combine(parts);
  for (const std::string& e : truth_fetch_errors_) {
    ++final_.truth.mismatches;
    final_.truth.details.push_back(e);
  }
  duration_s_ = seconds(clock::now() - start);
}

Summary Swarm::summary() const {
  Summary s;
  s.scenario = scenario_.name;
  s.seed = options_.seed;
  s.threads = threads();
  s.bots_requested = options_.bots;
  s.bots_connected = final_.connected_ever;
  s.bots_peak = peak_;
  s.bots_in_party_peak = party_peak_;
  s.bots_in_guild_peak = guild_peak_;
  s.connect_failures = final_.connect_failures;
  s.disconnects = final_.server_disconnects;
  s.disconnects_by_reason = final_.disconnects_by_reason;
  s.duration_s = duration_s_;
  s.rtt_p50_ms = percentile(rtt_samples_, 0.5);
  s.rtt_p99_ms = percentile(rtt_samples_, 0.99);
  s.rtt_max_ms =
      rtt_samples_.empty() ? 0.0 : *std::max_element(rtt_samples_.begin(), rtt_samples_.end());
  s.enters_total = final_.enters;
  s.leaves_total = final_.leaves;
  if (bot_seconds_ > 0) {
    s.bytes_in_per_bot_per_s = static_cast<double>(final_.bytes_in) / bot_seconds_;
    s.bytes_out_per_bot_per_s = static_cast<double>(final_.bytes_out) / bot_seconds_;
    s.packets_in_per_bot_per_s = static_cast<double>(final_.packets_in) / bot_seconds_;
  }
  s.entities_in_view_avg =
      view_samples_ ? view_samples_sum_ / static_cast<double>(view_samples_) : 0.0;
  s.protocol_violations = final_.violations;
  s.violations_by_kind = final_.violations_by_kind;
  s.truth_rounds = truth_rounds_;
  s.truth_expired_ticks = truth_expired_ticks_;
  s.truth_checks = final_.truth.checks;
  s.truth_entity_checks = final_.truth.entity_checks;
  s.truth_mismatches = final_.truth.mismatches;
  s.truth_skipped = final_.truth.skipped;
  s.truth_stale_entities = final_.truth.stale_entities;
  s.truth_deferred_spawns = final_.truth.deferred_spawns;
  s.truth_tier_stale_entities = final_.truth.tier_stale_entities;
  s.truth_max_staleness_ticks = final_.truth.max_staleness_ticks;
  s.truth_party_checks = final_.truth.party_checks;
  s.truth_property_checks = final_.truth.property_checks;
  s.truth_coarse_checks = final_.truth.coarse_checks;
  s.chunk_updates = final_.chunks.updates;
  s.chunk_checks = final_.chunks.checks;
  s.chunk_skipped = final_.chunks.skipped;
  s.chunk_mismatches = final_.chunks.mismatches;
  s.static_messages = final_.statics.updates;
  s.static_objects = final_.static_objects;
  s.static_checks = final_.statics.checks;
  s.static_truth_cells = final_.static_truth_cells;
  s.transfers = final_.transfers;
  s.transfer_id_changes = final_.transfer_id_changes;
  s.transfer_failures = final_.transfer_failures;
  s.drops = final_.drops;
  s.resumes = final_.resumes;
  s.resume_id_changes = final_.resume_id_changes;
  s.resumes_refused = final_.resumes_refused;
  s.resume_retries = final_.resume_retries;
  s.rejoins = final_.rejoins;
  s.rejoin_loss_max_m = final_.rejoin_loss_max_m;
  s.rejoin_loss_mean_m = final_.rejoins ? final_.rejoin_loss_sum_m / final_.rejoins : 0.0;
  s.rejoin_property_changes = final_.rejoin_property_changes;
  s.rejoin_wait_max_s = final_.rejoin_wait_max_s;
  s.rejoin_unheld = final_.rejoin_unheld;
  s.rejoin_lost_play_max_s = final_.rejoin_lost_play_max_s;
  s.rejoin_lost_play_mean_s =
      final_.rejoins_held ? final_.rejoin_lost_play_sum_s / final_.rejoins_held : 0.0;
  s.truth_fetch_failures = truth_fetch_failures_;
  s.static_skipped = final_.statics.skipped;
  s.static_mismatches = final_.statics.mismatches;
  const client::GameCounters& g = final_.game;
  s.actions_sent = g.actions_sent;
  s.actions_ok = g.action_results[static_cast<std::size_t>(protocol::ActionStatus::Ok)];
  s.actions_by_name = final_.actions_by_name;
  for (std::size_t i = 0; i < g.action_results.size(); ++i) {
    if (g.action_results[i] != 0) {
      s.action_results[protocol::EnumNameActionStatus(static_cast<protocol::ActionStatus>(i))] =
          g.action_results[i];
    }
  }
  static constexpr std::array<const char*, protocol::kChatChannelCount> kChannels = {
      "say", "party", "guild", "whisper", "zone", "system"};
  for (std::size_t i = 0; i < g.chat_sent.size(); ++i) {
    s.chat_lines_sent += g.chat_sent[i];
    if (g.chat_sent[i] != 0) s.chat_lines_by_channel[kChannels[i]] = g.chat_sent[i];
  }
  for (std::size_t i = 0; i < g.chat_results.size(); ++i) {
    s.chat_refused += g.chat_results[i];
    if (g.chat_results[i] != 0) {
      s.chat_refusals[protocol::EnumNameChatStatus(static_cast<protocol::ChatStatus>(i))] =
          g.chat_results[i];
    }
  }
  s.events_received = g.events_received;
  s.events_by_kind = final_.events_by_kind;
  s.truth_event_checks = final_.events.checks;
  s.truth_event_missing = final_.events.missing;
  s.truth_event_extra = final_.events.extra;
  s.truth_event_duplicate = final_.events.duplicate;
  s.truth_event_before_spawn = g.events_before_spawn;
  s.truth_event_ticks = final_.events.ticks;
  s.truth_event_skipped = final_.events.skipped;
  return s;
}

}  // namespace zone::sim
