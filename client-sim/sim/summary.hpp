// The run's summary (printed and written as JSON) and the --fail-if thresholds on it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace zone::sim {

struct Summary {
  std::string scenario;
  std::uint64_t seed = 0;
  std::uint32_t threads = 0;  // bot threads used
  std::uint32_t bots_requested = 0;
  std::uint32_t bots_connected = 0;      // bots that completed a join at least once
  std::uint32_t bots_peak = 0;           // most bots playing at the same time
  std::uint32_t bots_in_party_peak = 0;  // most bots in a party at the same time (scenario party)
  std::uint32_t bots_in_guild_peak = 0;  // most bots in a guild at the same time
  std::uint32_t connect_failures = 0;
  std::uint32_t disconnects = 0;                               // by the server, unexpected
  std::map<std::string, std::uint64_t> disconnects_by_reason;  // their reasons (protocol names)
  double duration_s = 0.0;
  double rtt_p50_ms = 0.0, rtt_p99_ms = 0.0, rtt_max_ms = 0.0;
  double bytes_in_per_bot_per_s = 0.0;
  double bytes_out_per_bot_per_s = 0.0;
  double packets_in_per_bot_per_s = 0.0;
  double entities_in_view_avg = 0.0;
  std::uint64_t enters_total = 0;
  std::uint64_t leaves_total = 0;
  std::uint64_t protocol_violations = 0;
  // A world of zones: Transfers followed, and arrivals under another entity id than
  // the Transfer named (counted as violations: the id must not change).
  std::uint64_t transfers = 0;
  std::uint64_t transfer_id_changes = 0;
  std::uint64_t transfer_failures = 0;  // Transfers whose new zone could not be reached
  // Reconnects (scenario reconnect): connections dropped without a goodbye, resumed with
  // the resume token, resumed under another entity id (a failure: the id must not
  // change), and resumes the zone refused (a failure: every bot came back in its grace).
  std::uint64_t drops = 0;
  std::uint64_t resumes = 0;
  std::uint64_t resume_id_changes = 0;
  std::uint64_t resumes_refused = 0;
  // Resume attempts that ended before they connected, each made again from the next socket
  // set (at most 3 times), as a client whose connect fails tries again: ENet's time-out
  // (the handshake lost on a lossy link), or a goodbye of an earlier connection in the
  // same peer slot of the same socket (ENet tells a slot's sessions apart by two bits),
  // never the zone's answer to this one.
  std::uint64_t resume_retries = 0;
  // Rejoins (--rejoin): sessions the zone ended (a restart, a crash) after which the bot
  // logged in again, and what its player lost: the distance from where the bot last saw
  // itself to where it came back (worst, mean), game properties that came back with
  // another value than last seen, and the longest wait from the last frame of the lost
  // session to the first of the new one.
  std::uint64_t rejoins = 0;
  double rejoin_loss_max_m = 0.0;
  double rejoin_loss_mean_m = 0.0;
  std::uint64_t rejoin_property_changes = 0;
  double rejoin_wait_max_s = 0.0;
  // Rejoins that came back at no position the bot had held in its last 20 s (within a
  // tick's walk: a failure, not a checkpoint of it), and for the others the play lost:
  // from the time it held that position to the last frame it saw before (worst, mean).
  std::uint64_t rejoin_unheld = 0;
  double rejoin_lost_play_max_s = 0.0;
  double rejoin_lost_play_mean_s = 0.0;
  std::map<std::string, std::uint64_t> violations_by_kind;
  std::uint64_t truth_rounds = 0;  // truth windows fetched and handed to the bots
  // Requests to a truth endpoint that failed (each a mismatch, but with --rejoin: a zone
  // restarting is unreachable for a while).
  std::uint64_t truth_fetch_failures = 0;
  // Ticks a window wanted that the server's history (debug.truth_history_ticks) had let
  // go: the bots lag that far behind the zone. The check is then over the rest.
  std::uint64_t truth_expired_ticks = 0;
  std::uint64_t truth_checks = 0;
  std::uint64_t truth_entity_checks = 0;
  std::uint64_t truth_mismatches = 0;
  std::uint64_t truth_skipped = 0;
  std::uint64_t truth_stale_entities = 0;       // held at an older position (budget), within bound
  std::uint64_t truth_deferred_spawns = 0;      // in view, spawn held back (budget), within bound
  std::uint64_t truth_tier_stale_entities = 0;  // of those, in a tier whose updates may wait
  std::uint32_t truth_max_staleness_ticks = 0;
  // Chunk layer: ChunkUpdates received, checked against the bot's own position at their
  // tick, not checkable (frame never complete), and wrong.
  std::uint64_t chunk_updates = 0;
  std::uint64_t chunk_checks = 0;
  std::uint64_t chunk_skipped = 0;
  std::uint64_t chunk_mismatches = 0;
  std::uint64_t static_messages = 0;     // StaticObjects received
  std::uint64_t static_objects = 0;      // static objects in them
  std::uint64_t static_checks = 0;       // radius checks made after a tick's last message
  std::uint64_t static_truth_cells = 0;  // cells compared with the map (GET /debug/static)
  std::uint64_t static_skipped = 0;
  std::uint64_t static_mismatches = 0;
  std::uint64_t truth_coarse_checks = 0;    // entity checks of an entity sent coarser than 1 cm
  std::uint64_t truth_party_checks = 0;     // entity checks of a member of the bot's party or guild
  std::uint64_t truth_property_checks = 0;  // entity checks that compared game properties too
  // Gameplay (protocol 8): actions sent (in all, and by the schema's action name), their
  // answers by ActionStatus name, chat lines sent by channel name and refused by
  // ChatStatus name, events received (in all, and by the schema's event name).
  std::uint64_t actions_sent = 0;
  std::uint64_t actions_ok = 0;
  std::map<std::string, std::uint64_t> actions_by_name;
  std::map<std::string, std::uint64_t> action_results;
  std::uint64_t chat_lines_sent = 0;
  std::uint64_t chat_refused = 0;
  std::map<std::string, std::uint64_t> chat_lines_by_channel;
  std::map<std::string, std::uint64_t> chat_refusals;
  std::uint64_t events_received = 0;
  std::map<std::string, std::uint64_t> events_by_kind;
  // The event truth check: events x recipients compared, and the errors (any fails the
  // run): listed but not received, received but not listed, received twice, and about an
  // entity the bot never held (checked on receipt, with or without --truth).
  std::uint64_t truth_event_checks = 0;
  std::uint64_t truth_event_missing = 0;
  std::uint64_t truth_event_extra = 0;
  std::uint64_t truth_event_duplicate = 0;
  std::uint64_t truth_event_before_spawn = 0;
  // Bot-ticks compared, and bot-ticks never compared (the bot's events of the tick had
  // not all arrived while the truth was kept).
  std::uint64_t truth_event_ticks = 0;
  std::uint64_t truth_event_skipped = 0;
  std::uint64_t event_errors() const {
    return truth_event_missing + truth_event_extra + truth_event_duplicate +
           truth_event_before_spawn;
  }

  nlohmann::json to_json() const;
  // The numeric fields by their JSON names, for --fail-if.
  std::optional<double> metric(const std::string& name) const;
};

// A threshold such as "rtt_p99_ms>100" or "truth_checks<1".
struct FailIf {
  std::string metric;
  char op = '>';
  double value = 0.0;
  std::string text;
};
// Parses one --fail-if expression; returns an error message on failure.
std::optional<std::string> parse_fail_if(const std::string& text, FailIf& out);
// The thresholds crossed, as readable lines.
std::vector<std::string> crossed(const Summary& s, const std::vector<FailIf>& thresholds);

}  // namespace zone::sim
