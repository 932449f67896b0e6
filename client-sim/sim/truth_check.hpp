// The end-to-end truth check: compares bots' replicas, frame by frame, with the server's
// ground truth for the same server ticks. Zero tolerance: the wire is exact.
//
// The server (with debug.truth on) serves GET /debug/truth?tick=T on its admin port:
// every entity's exact position at tick T, the view radius, hysteresis and the longest
// a record may wait for budget (max_deferral_ticks), and per player the entities in its
// view whose spawn the budget held back, with the tick each entered the view.
//
// A check has two steps. First every bot's newest complete frame within the recent ticks
// is copied out of its replica (take_frame), so the bot can go on playing while the
// truth for those ticks is fetched, however long that takes. Then each copied frame is
// compared with the truth of its tick (check_frame):
//   - its own position is the truth at T, quantised to the protocol's step;
//   - every entity within view_radius is in the frame, and so is every member of the
//     bot's party and guild when those are full range, unless its spawn is held back,
//     for less than max_deferral_ticks;
//   - nothing else beyond view_radius + hysteresis is, and nothing that does not exist;
//   - every entity's position, party and guild are the truth at T, or, when its update was
//     held back, the truth at the tick the client last got a record for it, less than
//     max_deferral_ticks before T; for an entity whose interest tier lets its updates
//     wait (tier_slack), less than max_deferral_ticks + its slack.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "client/bot.hpp"
#include "replica/frame_replica.hpp"

namespace zone::sim {

struct TruthEntity {
  std::uint32_t id;
  double x;
  double y;
  std::uint32_t party = 0;  // 0: none
  std::uint32_t guild = 0;  // 0: none
  // The entity's precision tier: centimetres per unit of x and y it must be sent in.
  std::uint32_t position_cm = 1;
  // Its game properties, in the schema's order (rows kEngineFieldCount..).
  std::vector<std::int32_t> properties;
};

struct Truth {
  std::uint32_t tick = 0;
  double view_radius = 0.0;
  double hysteresis = 0.0;
  // Members of one party (guild) are in each other's view at any distance.
  bool party_full_range = false;
  bool guild_full_range = false;
  std::uint32_t max_deferral_ticks = 0;
  // How far back the truth is needed: max_deferral_ticks plus the largest tier slack.
  std::uint32_t max_staleness_ticks = 0;
  std::vector<TruthEntity> entities;  // sorted by id
  // Per player: entity -> the tick it entered the view (its spawn is held back).
  std::unordered_map<std::uint32_t, std::unordered_map<std::uint32_t, std::uint32_t>> deferred;
  // Per player: entity -> ticks its tier lets its update wait beyond the interval.
  std::unordered_map<std::uint32_t, std::unordered_map<std::uint32_t, std::uint32_t>> tier_slack;
  // False for a tick fetched with only=positions (no per-player lists): a bot is not
  // checked on it, it only tells where entities were.
  bool per_player = true;
  // False when the lists were asked for some players only (players=): those are in
  // `players` (sorted), and no other player can be checked on this tick.
  bool all_players = true;
  std::vector<std::uint32_t> players;
  const TruthEntity* find(std::uint32_t id) const;
  bool lists_player(std::uint32_t id) const;
  // Adds the per-player lists of another answer for the same tick (a checker that asks
  // for its players in several requests).
  void merge_players(Truth&& other);
};

// Parses the endpoint's JSON; returns false with `error` set if it is not as expected.
bool parse_truth(const std::string& json, Truth& out, std::string& error);

// Consecutive recent ticks of truth, read-only once built (shared with the bot threads).
struct TruthWindow {
  std::map<std::uint32_t, Truth> by_tick;
  const Truth* at(std::uint32_t tick) const {
    auto it = by_tick.find(tick);
    return it == by_tick.end() ? nullptr : &it->second;
  }
};

struct TruthReport {
  std::uint64_t checks = 0;  // bot frames compared
  std::uint64_t entity_checks = 0;
  std::uint64_t mismatches = 0;
  std::uint64_t skipped = 0;              // bots without a complete frame to check
  std::uint64_t stale_entities = 0;       // held at an older tick's position (budget)
  std::uint64_t deferred_spawns = 0;      // in view, spawn held back (budget)
  std::uint64_t tier_stale_entities = 0;  // of those, in a tier whose updates may wait
  std::uint64_t coarse_checks = 0;        // entity checks of an entity sent coarser than 1 cm
  std::uint64_t party_checks = 0;         // entity checks of a member of the bot's party or guild
  // Entity checks that compared the game's properties too (the truth carried them).
  std::uint64_t property_checks = 0;
  std::uint32_t max_staleness_ticks = 0;
  std::vector<std::string> details;  // first few mismatches, readable
  void add(const TruthReport& o, std::size_t max_details = 20);
};

// A client's frame copied out of its replica for a check.
struct TakenFrame {
  std::string name;  // labels the details
  std::uint32_t self_id = 0;
  replica::Frame frame;  // frame.tick == 0: no complete frame in the span asked for
  // The session schema's rows a client may receive of another entity: everyone's, and
  // everyone's plus the party's (for a member of its party).
  std::uint64_t public_mask = ~0ull;
  std::uint64_t party_mask = ~0ull;
};

// The newest complete frame `replica` holds at a tick in [from, to].
TakenFrame take_frame(const replica::FrameReplica& replica, std::uint32_t self_id,
                      std::string_view name, std::uint32_t from, std::uint32_t to);

// The event truth check. The server lists each tick's events and the players each was
// sent to (GET /debug/truth?tick=T&only=events); every bot the truth names must have
// received the event exactly once, with the same kind, entity and target, and no bot may
// have received an event of that tick the truth does not list for it. Events travel
// reliably but apart from the snapshots: a bot is compared on a tick once everything the
// server sent it about that tick has arrived (client::Bot::events_settled_before, or a
// generous number of its own frames later).
struct TruthEvent {
  std::uint32_t sequence = 0;
  std::uint16_t kind = 0;
  std::uint32_t entity = 0;
  std::uint32_t target = 0;
  std::vector<std::uint32_t> recipients;  // player entity ids, ascending
};

struct TickEvents {
  std::uint32_t tick = 0;
  std::vector<TruthEvent> events;  // in the order they happened
};

// Parses the endpoint's JSON (only=events, or a full answer: its `events`).
bool parse_event_truth(const std::string& json, TickEvents& out, std::string& error);

struct EventReport {
  std::uint64_t checks = 0;     // events x recipients compared
  std::uint64_t missing = 0;    // listed for a bot, never received
  std::uint64_t extra = 0;      // received, not listed for that bot
  std::uint64_t duplicate = 0;  // received more than once (each copy beyond the first)
  std::uint64_t skipped = 0;    // bot-ticks never compared (the truth went before they settled)
  std::uint64_t ticks = 0;      // ticks of truth compared with at least one bot
  std::vector<std::string> details;  // the first few errors, readable
  std::uint64_t errors() const { return missing + extra + duplicate; }
  void add(const EventReport& o, std::size_t max_details = 20);
};

// Compares what bot `self_id` received about one tick (`received`: its events of that
// tick, in arrival order) with the truth of that tick.
void check_events(std::uint32_t self_id, std::string_view name, const TickEvents& truth,
                  std::span<const client::ReceivedEvent> received, EventReport& report,
                  std::size_t max_details = 20);

// Checks a taken frame against the truth of its tick. A frame whose tick, or any tick its
// held-back records may come from, is not in `window` is skipped, not compared against
// positions the check cannot see.
void check_frame(const TakenFrame& taken, const TruthWindow& window, TruthReport& report,
                 std::size_t max_details = 20);

}  // namespace zone::sim
