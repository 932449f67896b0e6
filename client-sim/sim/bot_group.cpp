#include "sim/bot_group.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "protocol/codec.hpp"

namespace zone::sim {

using clock = std::chrono::steady_clock;

namespace {

double seconds(clock::duration d) {
  return std::chrono::duration<double>(d).count();
}
clock::duration span_of(double s) {
  return std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(s));
}
// Shortest time between two passes over the network.
constexpr auto kPassInterval = std::chrono::milliseconds(2);
// How often a group refreshes the stats the main thread reads.
constexpr auto kPublishEvery = std::chrono::milliseconds(250);

}  // namespace

BotGroup::BotGroup(const GroupOptions& options, const Scenario& scenario)
    : options_(options), scenario_(scenario), rng_(options.seed) {
  const std::uint32_t per_host = std::max(1u, std::min(options.bots_per_host, 4000u));
  const std::uint32_t hosts = std::max(1u, (options.bots + per_host - 1) / per_host);
  for (std::uint32_t h = 0; h < hosts; ++h) {
    net::HostOptions o;
    o.max_peers = per_host;
    o.channels = protocol::kChannelCount;
    o.timeout_ms = 60000;  // generous: an overloaded server must not shed the load test
    hosts_.push_back(std::make_unique<net::EnetHost>(o));
    bot_of_peer_.emplace_back(per_host, -1);
  }
  slots_.resize(options.bots);
  for (std::uint32_t i = 0; i < options.bots; ++i) slots_[i].host = i / per_host;
}

BotGroup::~BotGroup() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void BotGroup::start(clock::time_point start) {
  start_ = start;
  thread_ = std::thread([this] { run(); });
}

GroupStats BotGroup::finish() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  std::lock_guard lock(mutex_);
  return published_;
}

GroupStats BotGroup::sample() const {
  std::lock_guard lock(mutex_);
  return published_;
}

std::future<FramesTaken> BotGroup::take_frames(const std::string& zone, std::uint32_t from,
                                               std::uint32_t to) {
  std::lock_guard lock(mutex_);
  pending_take_.emplace();
  pending_take_->zone = zone;
  pending_take_->from = from;
  pending_take_->to = to;
  return pending_take_->taken.get_future();
}

void BotGroup::check(std::shared_ptr<const TruthWindow> window) {
  std::lock_guard lock(mutex_);
  pending_truth_ = std::move(window);
}

void BotGroup::serve_truth_requests() {
  std::optional<TakeRequest> take;
  std::shared_ptr<const TruthWindow> truth;
  {
    std::lock_guard lock(mutex_);
    take.swap(pending_take_);
    truth.swap(pending_truth_);
  }
  if (truth) {
    for (const TakenFrame& frame : taken_) check_frame(frame, *truth, counters_.truth);
    taken_.clear();
  }
  if (take) {
    taken_.clear();
    FramesTaken by_tick;
    for (const Slot& slot : slots_) {
      if (!slot.bot || slot.bot->phase() != client::Bot::Phase::kPlaying) continue;
      if (slot.bot->welcome().zone != take->zone) continue;
      const TakenFrame& t =
          taken_.emplace_back(take_frame(slot.bot->replica(), slot.bot->welcome().entity_id,
                                         slot.bot->name(), take->from, take->to));
      if (t.frame.tick != 0) by_tick[t.frame.tick].push_back(t.self_id);
    }
    take->taken.set_value(std::move(by_tick));
  }
}

void BotGroup::connect(std::uint32_t index, clock::time_point now) {
  Slot& slot = slots_[index];
  slot.bot = std::make_unique<client::Bot>(fmt::format("bot-{}", options_.first_bot + index));
  slot.bot->set_zone_statics(&options_.static_truth);
  slot.bot->set_light(options_.light);
  if (options_.tickets) {
    slot.bot->set_ticket(options_.tickets->issue(options_.first_bot + index, slot.bot->name()));
  }
  slot.bot->connect(*hosts_[slot.host], options_.server_host, options_.server_port);
  bot_of_peer_[slot.host][slot.bot->peer().index] = static_cast<std::int32_t>(index);
  slot.driver = DriverState{};
  slot.driver.heading = rng_.u01() * 6.283185307179586;
  slot.counted_join = false;
  slot.violations_seen = 0;
  if (scenario_.churn) {
    slot.leave_at = now + span_of(rng_.range(scenario_.session_s.min, scenario_.session_s.max));
  }
  slot.party_at = now;  // joins its party and guild as soon as it plays
  slot.party_wanted = false;
  slot.guild_asked = false;
}

void BotGroup::retire(Slot& slot) {
  if (!slot.bot) return;
  collect_violations(slot);
  slot.past_transfers += slot.bot->transfers();
  slot.past_transfer_id_changes += slot.bot->transfer_id_changes();
  const client::BotCounters& c = slot.bot->counters();
  slot.past.bytes_in += c.bytes_in;
  slot.past.bytes_out += c.bytes_out;
  slot.past.packets_in += c.packets_in;
  slot.past.packets_out += c.packets_out;
  slot.past_enters += slot.bot->replica().enters();
  slot.past_leaves += slot.bot->replica().leaves();
  slot.past_chunks.add(slot.bot->chunks(), slot.bot->name());
  slot.past_statics.add(slot.bot->statics(), slot.bot->name());
  slot.past_static_objects += slot.bot->statics().objects_received;
  slot.past_static_truth_cells += slot.bot->statics().truth_cells;
  bot_of_peer_[slot.host][slot.bot->peer().index] = -1;
  slot.bot.reset();
}

void BotGroup::route(std::uint32_t host, const net::NetEvent& ev) {
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
      if (bot.phase() == client::Bot::Phase::kTransferring) {
        // Another zone took the player over: on to it, with the token. The counters of
        // the old zone's session are banked; the replica starts again there.
        collect_violations(slot);
        slot.violations_seen = 0;
        slot.past_enters += bot.replica().enters();
        slot.past_leaves += bot.replica().leaves();
        slot.past_statics.add(bot.statics(), bot.name());
        slot.past_chunks.add(bot.chunks(), bot.name());
        slot.past_static_objects += bot.statics().objects_received;
        slot.past_static_truth_cells += bot.statics().truth_cells;
        bot_of_peer_[host][ev.peer.index] = -1;
        try {
          bot.connect_transfer(*hosts_[host]);
        } catch (const net::NetError& e) {  // an address that does not resolve, no peer free
          ++counters_.transfer_failures;
          if (options_.progress)
            fmt::print(stderr, "{}: transfer failed: {}\n", bot.name(), e.what());
          bot.on_disconnect(0);
          retire(slot);
          break;
        }
        bot_of_peer_[host][bot.peer().index] = index;
        slot.counted_join = true;
        break;
      }
      if (!joined) {
        ++counters_.connect_failures;
      } else {
        ++counters_.server_disconnects;
      }
      if (options_.progress) {
        fmt::print(stderr, "{}: disconnected by the server ({})\n", bot.name(),
                   protocol::to_string(static_cast<protocol::DisconnectReason>(ev.data)));
      }
      retire(slot);
      break;
    }
    case net::NetEvent::Type::kReceive:
      bot.on_packet(ev.channel, ev.bytes);
      if (!slot.counted_join && bot.phase() == client::Bot::Phase::kPlaying) {
        slot.counted_join = true;
        if (!slot.joined_once) ++counters_.connected_ever;
        slot.joined_once = true;
      }
      break;
  }
}

void BotGroup::pump_network() {
  net::NetEvent ev;
  for (std::uint32_t h = 0; h < hosts_.size(); ++h) {
    hosts_[h]->drain(clock::now() + std::chrono::milliseconds(2));
    while (hosts_[h]->next_event(ev)) route(h, ev);
  }
}

void BotGroup::send_inputs(double dt) {
  for (Slot& slot : slots_) {
    if (!slot.bot || slot.bot->phase() != client::Bot::Phase::kPlaying) continue;
    const auto [mx, my] = next_intent(scenario_, slot.driver, *slot.bot, rng_, dt);
    slot.bot->send_input(*hosts_[slot.host], mx, my);
    collect_violations(slot);
  }
  for (auto& h : hosts_) h->flush();
}

void BotGroup::churn(clock::time_point now) {
  if (!scenario_.churn) return;
  for (std::uint32_t i = 0; i < slots_.size(); ++i) {
    Slot& slot = slots_[i];
    if (slot.bot && slot.bot->phase() == client::Bot::Phase::kPlaying && now >= slot.leave_at) {
      slot.bot->quit(*hosts_[slot.host]);
      retire(slot);
      slot.rejoin_at = now + span_of(rng_.range(scenario_.offline_s.min, scenario_.offline_s.max));
    } else if (!slot.bot && slot.joined_once && now >= slot.rejoin_at) {
      connect(i, now);
    }
  }
}

void BotGroup::groups(clock::time_point now) {
  if (scenario_.party_size == 0 && scenario_.guild_size == 0) return;
  // Consecutive bot numbers share a key, so the groups cut across bot threads the same
  // way whatever the thread count; parties and guilds draw keys from different streams.
  auto key_of = [&](std::uint32_t index, std::uint32_t size, std::uint64_t stream) {
    const std::uint32_t group = (options_.first_bot + index) / size;
    return util::SplitMix64(options_.party_seed ^ stream ^ group).next() | 1u;
  };
  for (std::uint32_t i = 0; i < slots_.size(); ++i) {
    Slot& slot = slots_[i];
    if (!slot.bot || slot.bot->phase() != client::Bot::Phase::kPlaying) continue;
    if (scenario_.guild_size > 0 && !slot.guild_asked) {
      slot.guild_asked = true;
      slot.bot->join_guild(*hosts_[slot.host], key_of(i, scenario_.guild_size, 0x6D11Dull << 32));
    }
    if (scenario_.party_size == 0 || now < slot.party_at) continue;
    const std::uint64_t key = key_of(i, scenario_.party_size, 0);
    slot.party_wanted = !slot.party_wanted;
    slot.bot->join_party(*hosts_[slot.host], slot.party_wanted ? key : 0);
    const Range& r = scenario_.party_switch_s;
    slot.party_at =
        r.max > 0.0 ? now + span_of(rng_.range(r.min, r.max)) : clock::time_point::max();
  }
}

void BotGroup::collect_violations(Slot& slot) {
  const auto& v = slot.bot->replica().violations();
  for (; slot.violations_seen < v.size(); ++slot.violations_seen) {
    const replica::ViolationRecord& rec = v[slot.violations_seen];
    ++counters_.violations;
    ++counters_.violations_by_kind[replica::to_string(rec.kind)];
    if (counters_.violation_details.size() < 20) {
      counters_.violation_details.push_back(
          fmt::format("{}: {} (entity {}, server tick {})", slot.bot->name(),
                      replica::to_string(rec.kind), rec.entity_id, rec.server_tick));
    }
  }
}

void BotGroup::publish() {
  GroupStats s = counters_;
  for (const Slot& slot : slots_) {
    s.bytes_in += slot.past.bytes_in;
    s.bytes_out += slot.past.bytes_out;
    s.packets_in += slot.past.packets_in;
    s.enters += slot.past_enters;
    s.leaves += slot.past_leaves;
    s.chunks.add(slot.past_chunks);
    s.statics.add(slot.past_statics);
    s.static_objects += slot.past_static_objects;
    s.static_truth_cells += slot.past_static_truth_cells;
    s.transfers += slot.past_transfers;
    s.transfer_id_changes += slot.past_transfer_id_changes;
    if (!slot.bot) continue;
    const client::Bot& b = *slot.bot;
    s.bytes_in += b.counters().bytes_in;
    s.bytes_out += b.counters().bytes_out;
    s.packets_in += b.counters().packets_in;
    s.enters += b.replica().enters();
    s.leaves += b.replica().leaves();
    s.chunks.add(b.chunks(), b.name());
    s.statics.add(b.statics(), b.name());
    s.static_objects += b.statics().objects_received;
    s.static_truth_cells += b.statics().truth_cells;
    s.transfers += b.transfers();
    s.transfer_id_changes += b.transfer_id_changes();
    if (b.phase() != client::Bot::Phase::kPlaying) continue;
    ++s.playing;
    s.rtt_ms.push_back(hosts_[slot.host]->round_trip_ms(b.peer()));
    s.view_sum += static_cast<double>(b.replica().current().entities.size());
    std::uint32_t& newest = s.newest_tick[b.welcome().zone];
    newest = std::max(newest, b.ack_tick());
    if (b.party().id != 0) ++s.in_party;
    if (b.guild().id != 0) ++s.in_guild;
  }
  std::lock_guard lock(mutex_);
  published_ = std::move(s);
}

void BotGroup::run() {
  std::uint32_t next_bot = 0;
  auto next_input = start_;
  auto last_input = start_;
  auto last_publish = start_;
  while (!stop_.load()) {
    const auto now = clock::now();
    // Ramp: as many connections as the elapsed time allows.
    const auto due = static_cast<std::uint32_t>(std::min<double>(
        options_.bots, std::floor(seconds(now - start_) * options_.ramp_per_s) + 1));
    for (; next_bot < due; ++next_bot) connect(next_bot, now);

    pump_network();
    churn(now);
    groups(now);

    // Inputs at the scenario's rate, or the server's tick rate (learnt from a welcome).
    double rate = scenario_.input_rate_hz;
    for (const Slot& s : slots_) {
      if (rate > 0.0) break;
      if (s.bot && s.bot->welcome().tick_rate) rate = s.bot->welcome().tick_rate;
    }
    if (rate <= 0.0) rate = 20.0;
    if (now >= next_input) {
      send_inputs(seconds(now - last_input));
      last_input = now;
      next_input += span_of(1.0 / rate);
      if (next_input < now) next_input = now;  // fell behind: do not burst
    }

    serve_truth_requests();
    if (now - last_publish >= kPublishEvery) {
      publish();
      last_publish = now;
    }
    // Every ENet service call walks all of a host's peers: read in passes a couple of
    // milliseconds apart rather than at every datagram.
    std::this_thread::sleep_until(now + kPassInterval);
  }
  goodbye();
  publish();
}

void BotGroup::goodbye() {
  for (Slot& slot : slots_) {
    if (slot.bot && slot.bot->phase() != client::Bot::Phase::kClosed) {
      slot.bot->quit(*hosts_[slot.host]);
    }
    retire(slot);
  }
  // Give the goodbyes a moment to reach the server, so it frees the players at once
  // instead of waiting for them to time out.
  const auto deadline = clock::now() + std::chrono::milliseconds(500);
  net::NetEvent ev;
  while (clock::now() < deadline) {
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

}  // namespace zone::sim
