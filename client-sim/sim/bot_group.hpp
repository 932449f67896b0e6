// One thread's share of the swarm: a range of bots, the ENet client hosts they connect
// through, their scenario driving and their checks. Nothing in a group is touched by
// another thread except through the calls below, which exchange copies under a mutex.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "client/bot.hpp"
#include "net/enet_host.hpp"
#include "sim/bot_tickets.hpp"
#include "sim/driver.hpp"
#include "sim/scenario.hpp"
#include "sim/truth_check.hpp"
#include "util/splitmix64.hpp"

namespace zone::sim {

struct GroupOptions {
  std::string server_host = "127.0.0.1";
  std::uint16_t server_port = 7777;
  std::uint32_t first_bot = 0;  // bots [first_bot, first_bot + bots) are this group's
  std::uint32_t bots = 0;
  double ramp_per_s = 100.0;  // this group's share of the ramp
  std::uint32_t bots_per_host = 250;
  std::uint64_t seed = 1;
  std::uint64_t party_seed = 1;  // the run's seed: party keys are the same in every group
  bool light = false;
  bool progress = true;  // print server disconnects to stderr
  // The zone's static map, for the bots' exact check of the static layer (or none).
  // Each zone's static map (by the Welcome's zone name), for the bots' exact check of
  // the static layer; a bot in a zone without one checks against its position only.
  client::ZoneStatics static_truth;
  // Login tickets for the bots (client-sim --ticket-key); none: hellos without one.
  std::optional<BotTickets> tickets;
  // The event truth check is on: bots keep the events they receive until checked.
  bool check_events = false;
  // client-sim --rejoin: a bot whose zone ended its session (shut down, crashed, timed
  // out) logs in again until it is back, and checks what came back against what it last
  // saw of itself.
  bool rejoin = false;
};

// Events of recent ticks of one zone, as the server lists them (shared by the groups).
using EventTruthBatch = std::vector<TickEvents>;

// What a group reports: counters since the start, and this moment's state.
struct GroupStats {
  std::uint32_t playing = 0;
  std::uint32_t connected_ever = 0;
  std::uint32_t connect_failures = 0;
  std::uint32_t server_disconnects = 0;
  std::map<std::string, std::uint64_t> disconnects_by_reason;  // of those, by the reason given
  std::uint64_t bytes_in = 0, bytes_out = 0, packets_in = 0, enters = 0, leaves = 0;
  double view_sum = 0.0;       // entities in view, summed over playing bots
  std::vector<double> rtt_ms;  // one per playing bot
  // Newest frame any bot holds, by zone (the Welcome's name): each zone counts its own.
  std::map<std::string, std::uint32_t> newest_tick;
  std::uint64_t transfers = 0;            // Transfers followed to another zone
  std::uint64_t transfer_id_changes = 0;  // of those, arrivals under another entity id
  std::uint64_t transfer_failures = 0;    // Transfers that could not be followed
  // Reconnects (scenario reconnect): connections dropped, resumed (Welcomed again),
  // resumed under another entity id (the id must not change), and resumes refused.
  std::uint64_t drops = 0;
  std::uint64_t resumes = 0;
  std::uint64_t resume_id_changes = 0;
  std::uint64_t resumes_refused = 0;
  // Resume attempts that ended before they connected, and were made again.
  std::uint64_t resume_retries = 0;
  // Rejoins (--rejoin): sessions the zone ended that the bot logged in again after, and
  // what the player lost: the distance from where it last saw itself to where it came
  // back (worst, and the sum for the mean), its game properties that came back with
  // another value than it last saw, and the longest time from the last packet of the
  // lost session to the first frame of the new one.
  std::uint64_t rejoins = 0;
  double rejoin_loss_max_m = 0.0;
  double rejoin_loss_sum_m = 0.0;
  std::uint64_t rejoin_property_changes = 0;
  double rejoin_wait_max_s = 0.0;
  // Of the rejoins, those that came back at a position the bot had held (within a tick's
  // walk), and those that did not (a failure: not a checkpoint of it); for the former,
  // the play lost (from that position's time to the last frame it saw before).
  std::uint64_t rejoins_held = 0;
  std::uint64_t rejoin_unheld = 0;
  double rejoin_lost_play_max_s = 0.0;
  double rejoin_lost_play_sum_s = 0.0;
  std::vector<std::string> rejoin_details;  // the first few changes and unheld comebacks
  std::uint32_t in_party = 0;               // playing bots the server has in a party now
  std::uint32_t in_guild = 0;               // ... in a guild now
  // Chunk and static layers (client::LayerCheck), summed over the bots, finished sessions
  // included.
  client::LayerTotals chunks;
  client::LayerTotals statics;
  std::uint64_t static_objects = 0;      // static objects received
  std::uint64_t static_truth_cells = 0;  // static cells compared with the map
  std::uint64_t violations = 0;
  std::map<std::string, std::uint64_t> violations_by_kind;
  std::vector<std::string> violation_details;  // the first few
  TruthReport truth;
  // Gameplay: the bots' actions, chat and events (finished sessions included), actions
  // sent by name, events received by kind name, and the event truth check.
  client::GameCounters game;
  std::map<std::string, std::uint64_t> actions_by_name;
  std::map<std::string, std::uint64_t> events_by_kind;
  std::vector<std::string> before_spawn_details;  // the first few
  EventReport events;
};

// Tick -> the bots' own entity ids whose frame at that tick was taken for a check.
using FramesTaken = std::map<std::uint32_t, std::vector<std::uint32_t>>;

class BotGroup {
 public:
  BotGroup(const GroupOptions& options, const Scenario& scenario);
  ~BotGroup();
  BotGroup(const BotGroup&) = delete;
  BotGroup& operator=(const BotGroup&) = delete;

  // Starts the thread; the ramp counts from `start`.
  void start(std::chrono::steady_clock::time_point start);
  // Every bot says goodbye, the thread ends; returns the final stats.
  GroupStats finish();
  // The newest stats, refreshed by the thread a few times a second.
  GroupStats sample() const;
  // A truth check, step 1: at the thread's next pass, every playing bot's newest complete
  // frame at a tick in [from, to] is copied aside. The future gives the ticks of those
  // frames, each with the entity ids of the bots taken at it: the truth the check needs.
  std::future<FramesTaken> take_frames(const std::string& zone, std::uint32_t from,
                                       std::uint32_t to);
  // Step 2: the frames taken are checked against `window` at the thread's next pass.
  void check(std::shared_ptr<const TruthWindow> window);
  // The events of some ticks of `zone` (consecutive, each newer than any given before):
  // each bot there is compared with each tick once everything about it has arrived.
  void check_events(const std::string& zone, std::shared_ptr<const EventTruthBatch> batch);

 private:
  struct TrailPoint {
    double x = 0.0, y = 0.0;  // metres
    std::uint32_t tick = 0;
    std::chrono::steady_clock::time_point at{};
  };
  struct Slot {
    std::unique_ptr<client::Bot> bot;
    std::uint32_t host = 0;
    DriverState driver;
    std::chrono::steady_clock::time_point leave_at{};   // churn: quit then
    std::chrono::steady_clock::time_point rejoin_at{};  // churn: reconnect then
    // Parties: when the bot next joins (or leaves) its party; whether it asked to be in.
    std::chrono::steady_clock::time_point party_at{};
    bool party_wanted = false;
    bool guild_asked = false;  // this session's JoinGuild sent
    bool joined_once = false;
    bool counted_join = false;  // this session's join already counted
    client::BotCounters past;   // finished sessions, so rejoining does not lose them
    std::uint64_t past_enters = 0, past_leaves = 0;
    client::LayerTotals past_chunks, past_statics;
    std::uint64_t past_static_objects = 0, past_static_truth_cells = 0;
    std::uint64_t past_transfers = 0, past_transfer_id_changes = 0;
    // Reconnects: when the connection drops, when the bot comes back.
    std::chrono::steady_clock::time_point drop_at{}, resume_at{};
    std::uint64_t past_resumes = 0, past_resume_id_changes = 0;
    std::uint32_t resume_retries_left = 0;  // this resume's, after a stale goodbye
    // Rejoins: when the bot logs in again, and what it last saw of itself in the session
    // the zone ended (its values row, when that frame arrived); empty: not rejoining.
    std::chrono::steady_clock::time_point rejoin_after_loss_at{};
    std::vector<std::int32_t> last_self;
    std::chrono::steady_clock::time_point last_self_at{};
    bool comeback_pending = false;  // the next session's first frame is compared with it
    // --rejoin: where the bot was, one position a tick, the newest at trail_last (a ring).
    std::vector<TrailPoint> trail;
    std::size_t trail_last = 0;
    std::size_t violations_seen = 0;
    // Gameplay: when the bot next chats and acts, its own chat rate limit, since when it
    // has been dead, and the newest tick its events were compared with the truth at.
    std::chrono::steady_clock::time_point next_chat{}, next_action{}, dead_since{};
    double chat_tokens = -1.0;  // < 0: full at the first line
    std::chrono::steady_clock::time_point chat_refilled{};
    std::uint64_t lines = 0;
    std::uint32_t events_cursor = 0;
    client::GameCounters past_game;
    std::map<std::string, std::uint64_t> past_events_by_kind;
  };

  void run();
  void connect(std::uint32_t index, std::chrono::steady_clock::time_point now);
  void pump_network();
  void route(std::uint32_t host, const net::NetEvent& ev);
  void send_inputs(double dt);
  void churn(std::chrono::steady_clock::time_point now);
  void reconnect(std::chrono::steady_clock::time_point now);
  // --rejoin: the bot's session ended without its asking; it logs in again after a pause.
  void lose_session(Slot& slot, std::chrono::steady_clock::time_point now);
  void rejoin(std::chrono::steady_clock::time_point now);
  // The first frame of a rejoined session: compared with what the bot last saw.
  void check_comeback(Slot& slot, std::chrono::steady_clock::time_point now);
  // Once per frame of a playing bot: what it sees of itself (last_self, the trail).
  void remember_self(Slot& slot, std::chrono::steady_clock::time_point now);
  // Banks the counts of the bot's session (a Transfer, a dropped connection): its
  // replica, layers and gameplay start again with the next Welcome.
  void bank_session(Slot& slot);
  void groups(std::chrono::steady_clock::time_point now);
  void collect_violations(Slot& slot);
  void retire(Slot& slot);
  // Banks the session's gameplay counts (a quit, a disconnect, a Transfer).
  void bank_game(Slot& slot);
  // Chat and combat, at the scenario's rates.
  void play(std::chrono::steady_clock::time_point now);
  void fight(Slot& slot, std::chrono::steady_clock::time_point now);
  void talk(std::uint32_t index, Slot& slot, std::chrono::steady_clock::time_point now);
  void compare_events();

  void publish();
  void goodbye();
  void serve_truth_requests();

  GroupOptions options_;
  Scenario scenario_;
  std::vector<std::unique_ptr<net::EnetHost>> hosts_;
  std::uint32_t hosts_per_set_ = 1;                     // hosts_ is this many per set of sockets
  std::vector<std::vector<std::int32_t>> bot_of_peer_;  // per host, by peer index
  std::vector<Slot> slots_;
  util::SplitMix64 rng_;
  GroupStats counters_;  // the thread's own; published copies go to published_
  std::chrono::steady_clock::time_point start_{};

  mutable std::mutex mutex_;
  GroupStats published_;
  struct TakeRequest {
    std::string zone;
    std::uint32_t from = 0, to = 0;
    std::promise<FramesTaken> taken;
  };
  std::optional<TakeRequest> pending_take_;
  std::shared_ptr<const TruthWindow> pending_truth_;
  std::vector<std::pair<std::string, std::shared_ptr<const EventTruthBatch>>> pending_events_;
  // The thread's own: events of recent ticks by zone, until every bot there is past them.
  std::map<std::string, std::map<std::uint32_t, TickEvents>> event_truth_;
  std::vector<client::ReceivedEvent> event_scratch_;
  std::vector<TakenFrame> taken_;  // the thread's own: frames waiting for their truth
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace zone::sim
