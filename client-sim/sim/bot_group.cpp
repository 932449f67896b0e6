#include "sim/bot_group.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include <fmt/format.h>

#include "protocol/codec.hpp"
#include "sim/driver.hpp"

namespace zone::sim {

using clock = std::chrono::steady_clock;

namespace {

// Attempts a resume may make again after a stale goodbye ended one before it connected.
constexpr std::uint32_t kResumeRetries = 3;

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
// How often bots decide to chat and act (their rates are a few per second at most).
constexpr auto kPlayEvery = std::chrono::milliseconds(10);
// How often the bots' events are compared with the truth that has come.
constexpr auto kCompareEventsEvery = std::chrono::milliseconds(100);
// A bot's events of a tick are compared once it holds a frame this many seconds newer,
// if nothing later reliable closed the tick before.
constexpr std::uint32_t kEventSettleSeconds = 5;
// --rejoin: a zone that stops answering is given up after this long (ENet's time-out for
// the bots' connections), and a bot whose session ended logs in again after a pause drawn
// from this range (spread, so that a zone's whole population does not knock at once).
constexpr std::uint32_t kRejoinTimeoutMs = 5000;
constexpr double kRejoinPauseMinS = 0.5;
constexpr double kRejoinPauseMaxS = 1.5;
// What a bot remembers of where it was, for --rejoin's check that it came back at a
// position it held (a checkpoint's): one position a tick for this long.
constexpr std::size_t kTrailPositions = 400;  // 20 s at 20 Hz
// Reconnects: each resume goes out through the next of this many sets of sockets, as a
// client whose network changed has a new address. A zone that goes on resending its
// goodbye to the old connection (its acknowledgement lost) then reaches a socket whose
// peers were all opened seconds before, never the bot's new connection in the old one's
// place (ENet tells sessions of a peer slot apart by a 2-bit id only).
constexpr std::uint32_t kResumeSocketSets = 4;

}  // namespace

BotGroup::BotGroup(const GroupOptions& options, const Scenario& scenario)
    : options_(options), scenario_(scenario), rng_(options.seed) {
  const std::uint32_t per_host = std::max(1u, std::min(options.bots_per_host, 4000u));
  const std::uint32_t hosts = std::max(1u, (options.bots + per_host - 1) / per_host);
  hosts_per_set_ = hosts;
  const std::uint32_t sets = scenario.reconnect ? kResumeSocketSets : 1;
  for (std::uint32_t h = 0; h < hosts * sets; ++h) {
    net::HostOptions o;
    // Reconnects: a silent connection keeps its slot until the zone closes it, while the
    // bot's new one needs another.
    o.max_peers = scenario.reconnect ? 2 * per_host : per_host;
    o.channels = protocol::kChannelCount;
    // Generous: an overloaded server must not shed the load test. With --rejoin, a zone
    // that went away must be noticed soon, and a slow one shedding a bot costs a rejoin.
    o.timeout_ms = options.rejoin ? kRejoinTimeoutMs : 60000;
    hosts_.push_back(std::make_unique<net::EnetHost>(o));
    bot_of_peer_.emplace_back(o.max_peers, -1);
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

void BotGroup::check_events(const std::string& zone, std::shared_ptr<const EventTruthBatch> batch) {
  std::lock_guard lock(mutex_);
  pending_events_.emplace_back(zone, std::move(batch));
}

void BotGroup::serve_truth_requests() {
  std::optional<TakeRequest> take;
  std::shared_ptr<const TruthWindow> truth;
  std::vector<std::pair<std::string, std::shared_ptr<const EventTruthBatch>>> events;
  {
    std::lock_guard lock(mutex_);
    take.swap(pending_take_);
    truth.swap(pending_truth_);
    events.swap(pending_events_);
  }
  for (const auto& [zone, batch] : events) {
    auto& ticks = event_truth_[zone];
    // Ticks start again when a zone restarts: what it said before is of no use now.
    if (!ticks.empty() && !batch->empty() && batch->front().tick <= ticks.rbegin()->first) {
      ticks.clear();
    }
    for (const TickEvents& t : *batch) ticks[t.tick] = t;
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
  slot.bot->set_keep_events(options_.check_events && !options_.light);
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
  slot.next_chat = slot.next_action = slot.dead_since = clock::time_point{};
  slot.chat_tokens = -1.0;
  slot.events_cursor = 0;
}

void BotGroup::bank_game(Slot& slot) {
  const client::Bot& bot = *slot.bot;
  slot.past_game.add(bot.game());
  const auto kinds = bot.schema().events();
  for (std::size_t k = 0; k < bot.events_by_kind().size() && k < kinds.size(); ++k) {
    if (bot.events_by_kind()[k] != 0)
      slot.past_events_by_kind[kinds[k].name] += bot.events_by_kind()[k];
  }
  for (const std::string& d : bot.before_spawn_details()) {
    if (counters_.before_spawn_details.size() < 20) counters_.before_spawn_details.push_back(d);
  }
}

void BotGroup::bank_session(Slot& slot) {
  const client::Bot& bot = *slot.bot;
  collect_violations(slot);
  slot.violations_seen = 0;
  slot.past_enters += bot.replica().enters();
  slot.past_leaves += bot.replica().leaves();
  slot.past_statics.add(bot.statics(), bot.name());
  slot.past_chunks.add(bot.chunks(), bot.name());
  slot.past_static_objects += bot.statics().objects_received;
  slot.past_static_truth_cells += bot.statics().truth_cells;
  bank_game(slot);
  slot.events_cursor = 0;
}

void BotGroup::retire(Slot& slot) {
  if (!slot.bot) return;
  collect_violations(slot);
  slot.past_transfers += slot.bot->transfers();
  slot.past_transfer_id_changes += slot.bot->transfer_id_changes();
  slot.past_resumes += slot.bot->resumes();
  slot.past_resume_id_changes += slot.bot->resume_id_changes();
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
  bank_game(slot);
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
      if (bot.phase() == client::Bot::Phase::kConnecting && !bot.resume_token().empty() &&
          slot.resume_retries_left > 0) {
        // A resume attempt that ended before it connected: ENet's time-out (its handshake
        // lost on a lossy link), or a reason, which the zone never gives a connection it
        // has not accepted: the goodbye of an earlier connection in the same peer slot of
        // this socket (ENet tells a slot's sessions apart by two bits). Made again from
        // the next socket set, as a client whose connect fails tries again; the player
        // waits in the zone for its grace meanwhile.
        --slot.resume_retries_left;
        ++counters_.resume_retries;
        bot_of_peer_[host][ev.peer.index] = -1;
        slot.host = (slot.host + hosts_per_set_) % static_cast<std::uint32_t>(hosts_.size());
        bot.resume(*hosts_[slot.host]);
        bot_of_peer_[slot.host][bot.peer().index] = index;
        break;
      }
      const bool joined = bot.phase() == client::Bot::Phase::kPlaying;
      bot.on_disconnect(ev.data);
      if (bot.phase() == client::Bot::Phase::kTransferring) {
        // Another zone took the player over: on to it, with the token. The counters of
        // the old zone's session are banked; the replica starts again there.
        bank_session(slot);
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
      if (ev.data == static_cast<std::uint32_t>(protocol::DisconnectReason::ResumeRefused)) {
        ++counters_.resumes_refused;
      }
      if (!joined) {
        ++counters_.connect_failures;
      } else {
        ++counters_.server_disconnects;
        ++counters_.disconnects_by_reason[protocol::to_string(
            static_cast<protocol::DisconnectReason>(ev.data))];
      }
      if (options_.progress && (joined || !options_.rejoin)) {
        fmt::print(stderr, "{}: disconnected by the server ({})\n", bot.name(),
                   protocol::to_string(static_cast<protocol::DisconnectReason>(ev.data)));
      }
      retire(slot);
      if (options_.rejoin) lose_session(slot, clock::now());
      break;
    }
    case net::NetEvent::Type::kReceive:
      bot.on_packet(ev.channel, ev.bytes);
      if (options_.rejoin && bot.phase() == client::Bot::Phase::kPlaying &&
          bot.replica().current().tick != 0 && !bot.light()) {
        const auto now = clock::now();
        if (slot.comeback_pending) check_comeback(slot, now);
        remember_self(slot, now);
      }
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

void BotGroup::reconnect(clock::time_point now) {
  if (!scenario_.reconnect) return;
  for (std::uint32_t i = 0; i < slots_.size(); ++i) {
    Slot& slot = slots_[i];
    if (!slot.bot) continue;
    client::Bot& bot = *slot.bot;
    if (bot.phase() == client::Bot::Phase::kPlaying && !bot.resume_token().empty()) {
      if (slot.drop_at == clock::time_point{}) {
        slot.drop_at =
            now + span_of(rng_.range(scenario_.connected_s.min, scenario_.connected_s.max));
      } else if (now >= slot.drop_at) {
        // The network goes: not a word to the zone. What this connection counted is
        // banked; the replica starts again from the resume's Welcome.
        bank_session(slot);
        bot_of_peer_[slot.host][bot.peer().index] = -1;
        bot.go_silent();
        ++counters_.drops;
        slot.drop_at = {};
        slot.resume_at = now + span_of(rng_.range(scenario_.away_s.min, scenario_.away_s.max));
      }
    } else if (bot.phase() == client::Bot::Phase::kIdle && slot.resume_at != clock::time_point{} &&
               now >= slot.resume_at) {
      slot.resume_at = {};
      slot.resume_retries_left = kResumeRetries;
      slot.host = (slot.host + hosts_per_set_) % static_cast<std::uint32_t>(hosts_.size());
      bot.resume(*hosts_[slot.host]);
      bot_of_peer_[slot.host][bot.peer().index] = static_cast<std::int32_t>(i);
    }
  }
}

void BotGroup::lose_session(Slot& slot, clock::time_point now) {
  // What the bot last saw of itself stays until a new session shows it where it is back
  // (a failed login on the way changes nothing).
  slot.comeback_pending = !slot.last_self.empty();
  slot.rejoin_after_loss_at = now + span_of(rng_.range(kRejoinPauseMinS, kRejoinPauseMaxS));
}

void BotGroup::rejoin(clock::time_point now) {
  if (!options_.rejoin) return;
  for (std::uint32_t i = 0; i < slots_.size(); ++i) {
    Slot& slot = slots_[i];
    if (slot.bot || slot.rejoin_after_loss_at == clock::time_point{}) continue;
    if (now < slot.rejoin_after_loss_at) continue;
    slot.rejoin_after_loss_at = {};
    connect(i, now);
  }
}

void BotGroup::remember_self(Slot& slot, clock::time_point now) {
  // Once a frame: a tick's frame arrives in several packets (parts, events).
  const std::uint32_t tick = slot.bot->replica().current().tick;
  if (!slot.trail.empty() && slot.trail[slot.trail_last].tick == tick) return;
  const protocol::Values self = slot.bot->replica().self();
  if (self.size() < protocol::kEngineFieldCount) return;
  slot.last_self.assign(self.begin(), self.end());
  slot.last_self_at = now;
  const TrailPoint p{protocol::position_metres(self, protocol::kX),
                     protocol::position_metres(self, protocol::kY), tick, now};
  if (slot.trail.size() < kTrailPositions) {
    if (slot.trail.capacity() < kTrailPositions) slot.trail.reserve(kTrailPositions);
    slot.trail.push_back(p);
    slot.trail_last = slot.trail.size() - 1;
  } else {
    slot.trail_last = (slot.trail_last + 1) % kTrailPositions;
    slot.trail[slot.trail_last] = p;
  }
}

void BotGroup::check_comeback(Slot& slot, clock::time_point now) {
  slot.comeback_pending = false;
  const client::Bot& bot = *slot.bot;
  const protocol::Values now_self = bot.replica().self();
  const protocol::Values before(slot.last_self);
  if (now_self.size() < protocol::kEngineFieldCount || before.size() != now_self.size()) return;
  ++counters_.rejoins;
  const double x = protocol::position_metres(now_self, protocol::kX);
  const double y = protocol::position_metres(now_self, protocol::kY);
  const double loss = std::hypot(x - protocol::position_metres(before, protocol::kX),
                                 y - protocol::position_metres(before, protocol::kY));
  counters_.rejoin_loss_max_m = std::max(counters_.rejoin_loss_max_m, loss);
  counters_.rejoin_loss_sum_m += loss;
  counters_.rejoin_wait_max_s =
      std::max(counters_.rejoin_wait_max_s, seconds(now - slot.last_self_at));
  // It came back where it once was (a checkpoint of it): within one tick's walk of a
  // position it held (the bot may not have seen the frame of the checkpoint's tick).
  // How long before it last saw itself that was is the play it lost.
  const double reach =
      bot.welcome().max_speed / std::max<double>(1, bot.welcome().tick_rate) + 0.02;
  const TrailPoint* held = nullptr;
  double nearest = 1e300;
  for (const TrailPoint& p : slot.trail) {
    const double d = std::hypot(p.x - x, p.y - y);
    // Of the positions within reach, the newest (the latest checkpoint's).
    if (d <= reach && (held == nullptr || p.tick > held->tick)) held = &p;
    nearest = std::min(nearest, d);
  }
  if (held == nullptr) {
    ++counters_.rejoin_unheld;
    if (counters_.rejoin_details.size() < 20) {
      counters_.rejoin_details.push_back(fmt::format(
          "{}: came back at ({:.2f}, {:.2f}), {:.2f} m from any position it held in the last {} "
          "frames",
          bot.name(), x, y, nearest, slot.trail.size()));
    }
  } else {
    const double lost = seconds(slot.last_self_at - held->at);
    counters_.rejoin_lost_play_max_s = std::max(counters_.rejoin_lost_play_max_s, lost);
    counters_.rejoin_lost_play_sum_s += lost;
    ++counters_.rejoins_held;
  }
  slot.trail.clear();
  // The game's properties (the rows after the engine's): a property the game does not
  // save comes back at its default, and one a fight changed within the last checkpoint
  // interval at its saved value; without either, each comes back as the bot last saw it.
  const auto fields = bot.schema().fields();
  for (std::size_t row = protocol::kEngineFieldCount; row < now_self.size(); ++row) {
    if (now_self[row] == before[row]) continue;
    ++counters_.rejoin_property_changes;
    if (counters_.rejoin_details.size() < 20) {
      counters_.rejoin_details.push_back(
          fmt::format("{}: {} came back as {}, last seen {}", bot.name(),
                      row < fields.size() ? fields[row].name : fmt::format("row {}", row),
                      now_self[row], before[row]));
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

void BotGroup::play(clock::time_point now) {
  const bool chat = scenario_.chat.total() > 0.0;
  if (!chat && !scenario_.combat.enabled) return;
  for (std::uint32_t i = 0; i < slots_.size(); ++i) {
    Slot& slot = slots_[i];
    if (!slot.bot || slot.bot->phase() != client::Bot::Phase::kPlaying) continue;
    if (slot.bot->ack_tick() == 0) continue;  // not a frame yet: it holds nothing
    if (scenario_.combat.enabled) fight(slot, now);
    if (chat) talk(i, slot, now);
  }
}

void BotGroup::fight(Slot& slot, clock::time_point now) {
  const CombatPlan& c = scenario_.combat;
  if (c.actions_per_second <= 0.0 || now < slot.next_action) return;
  client::Bot& bot = *slot.bot;
  DriverState& d = slot.driver;
  // Hunters chose at their last input; others choose now.
  if (scenario_.movement != Movement::kHunt) choose_target(scenario_, d, bot);
  const char* action = nullptr;
  std::uint32_t target = 0;
  if (d.dead) {
    if (slot.dead_since == clock::time_point{}) slot.dead_since = now;
    if (now - slot.dead_since < span_of(c.respawn_after_s)) return;
    action = "respawn";
  } else {
    slot.dead_since = clock::time_point{};
    if (d.target == 0) return;
    if (d.target_distance <= c.melee_range) {
      action = "attack";
    } else if (d.target_distance <= c.ranged_range) {
      action = "shoot";
    } else {
      return;
    }
    target = d.target;
  }
  const auto index = bot.schema().find_action(action);
  if (!index) return;  // a game without it
  bot.send_action(*hosts_[slot.host], static_cast<std::uint16_t>(*index), target);
  ++counters_.actions_by_name[action];
  // Never faster than the plan's rate (a little jitter, slower only).
  slot.next_action = now + span_of(rng_.range(1.0, 1.2) / c.actions_per_second);
}

void BotGroup::talk(std::uint32_t index, Slot& slot, clock::time_point now) {
  const ChatPlan& plan = scenario_.chat;
  const double total = plan.total();
  if (slot.next_chat == clock::time_point{}) {
    // The first line at a random moment of the first interval: bots do not speak in step.
    slot.next_chat = now + span_of(rng_.u01() / total);
    return;
  }
  if (now < slot.next_chat) return;
  slot.next_chat = now + span_of(rng_.range(0.5, 1.5) / total);
  // The bot's own limit, like the zone's: max_per_second with bursts of `burst`.
  if (slot.chat_tokens < 0.0) {
    slot.chat_tokens = plan.burst;
    slot.chat_refilled = now;
  }
  slot.chat_tokens = std::min(
      plan.burst, slot.chat_tokens + plan.max_per_second * seconds(now - slot.chat_refilled));
  slot.chat_refilled = now;
  if (slot.chat_tokens < 1.0) return;
  slot.chat_tokens -= 1.0;
  client::Bot& bot = *slot.bot;
  // A channel by the plan's rates; one the bot cannot use now falls back to say.
  double pick = rng_.u01() * total;
  std::size_t channel = 0;
  for (; channel + 1 < plan.per_second.size(); ++channel) {
    if (pick < plan.per_second[channel]) break;
    pick -= plan.per_second[channel];
  }
  auto ch = static_cast<protocol::ChatChannel>(channel);
  std::string to;
  if (ch == protocol::ChatChannel::kParty && bot.party().id == 0) ch = protocol::ChatChannel::kSay;
  if (ch == protocol::ChatChannel::kGuild && bot.guild().id == 0) ch = protocol::ChatChannel::kSay;
  if (ch == protocol::ChatChannel::kWhisper) {
    // Another bot of this thread that plays now, by name.
    const std::uint32_t n = static_cast<std::uint32_t>(slots_.size());
    const std::uint32_t start = static_cast<std::uint32_t>(rng_.u01() * n);
    for (std::uint32_t k = 0; k < n && to.empty(); ++k) {
      const std::uint32_t j = (start + k) % n;
      if (j != index && slots_[j].bot && slots_[j].bot->phase() == client::Bot::Phase::kPlaying) {
        to = slots_[j].bot->name();
      }
    }
    if (to.empty()) ch = protocol::ChatChannel::kSay;
  }
  static constexpr std::array<const char*, 5> kWords = {"hello", "over here", "anyone around?",
                                                        "nice weather", "follow me"};
  bot.send_chat(
      *hosts_[slot.host], ch,
      fmt::format("{}, {} #{}", kWords[slot.lines % kWords.size()], bot.name(), slot.lines + 1),
      to);
  ++slot.lines;
}

void BotGroup::compare_events() {
  for (auto& [zone, truths] : event_truth_) {
    if (truths.empty()) continue;
    std::uint32_t lag_ticks = 0;
    for (Slot& slot : slots_) {
      if (!slot.bot || slot.bot->phase() != client::Bot::Phase::kPlaying) continue;
      client::Bot& bot = *slot.bot;
      if (bot.light() || bot.welcome().zone != zone) continue;
      // Generous: everything about a tick has arrived long before this many of the bot's
      // own frames later (the bound only matters for a bot nothing reliable reaches).
      lag_ticks = kEventSettleSeconds * std::max(1u, bot.welcome().tick_rate);
      const std::uint32_t welcome = bot.welcome().server_tick;
      std::uint32_t cursor = std::max(slot.events_cursor, welcome > 0 ? welcome - 1 : 0);
      const auto& log = bot.event_log();
      for (auto it = truths.upper_bound(cursor); it != truths.end(); ++it) {
        const std::uint32_t t = it->first;
        if (bot.events_settled_before() <= t && bot.ack_tick() < t + lag_ticks) break;
        event_scratch_.clear();
        for (const client::ReceivedEvent& r : log) {
          if (r.tick > t) break;
          if (r.tick == t) event_scratch_.push_back(r);
        }
        ++counters_.events.ticks;
        sim::check_events(bot.welcome().entity_id, bot.name(), it->second, event_scratch_,
                          counters_.events);
        cursor = t;
      }
      slot.events_cursor = cursor;
      bot.drop_events_through(cursor);
    }
    // Keep the truth while a bot may still settle on it; what a bot never settled on in
    // that time is counted as skipped.
    const std::uint32_t newest = truths.rbegin()->first;
    const std::uint32_t keep = 2 * std::max(lag_ticks, 20u * kEventSettleSeconds);
    while (!truths.empty() && truths.begin()->first + keep < newest) {
      const std::uint32_t t = truths.begin()->first;
      for (Slot& slot : slots_) {
        if (!slot.bot || slot.bot->phase() != client::Bot::Phase::kPlaying) continue;
        if (slot.bot->welcome().zone != zone || slot.bot->light()) continue;
        if (slot.events_cursor < t && slot.bot->welcome().server_tick <= t) {
          ++counters_.events.skipped;
        }
      }
      truths.erase(truths.begin());
    }
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
    s.resumes += slot.past_resumes;
    s.resume_id_changes += slot.past_resume_id_changes;
    s.game.add(slot.past_game);
    for (const auto& [kind, n] : slot.past_events_by_kind) s.events_by_kind[kind] += n;
    if (!slot.bot) continue;
    const client::Bot& b = *slot.bot;
    s.game.add(b.game());
    {
      const auto kinds = b.schema().events();
      for (std::size_t k = 0; k < b.events_by_kind().size() && k < kinds.size(); ++k) {
        if (b.events_by_kind()[k] != 0) s.events_by_kind[kinds[k].name] += b.events_by_kind()[k];
      }
    }
    for (const std::string& d : b.before_spawn_details()) {
      if (s.before_spawn_details.size() < 20) s.before_spawn_details.push_back(d);
    }
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
    s.resumes += b.resumes();
    s.resume_id_changes += b.resume_id_changes();
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
  auto last_compare = start_;
  auto last_play = start_;
  while (!stop_.load()) {
    const auto now = clock::now();
    // Ramp: as many connections as the elapsed time allows.
    const auto due = static_cast<std::uint32_t>(std::min<double>(
        options_.bots, std::floor(seconds(now - start_) * options_.ramp_per_s) + 1));
    for (; next_bot < due; ++next_bot) connect(next_bot, now);

    pump_network();
    churn(now);
    reconnect(now);
    rejoin(now);
    groups(now);
    if (now - last_play >= kPlayEvery) {
      play(now);
      last_play = now;
    }

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
    if (options_.check_events && now - last_compare >= kCompareEventsEvery) {
      compare_events();
      last_compare = now;
    }
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
