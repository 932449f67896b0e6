// A load-test scenario: how bots move, how fast they send inputs, and whether they
// keep leaving and rejoining. Loaded from configs/scenarios/NAME.yaml.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace zone::sim {

// kHunt: towards the bot's combat target (the nearest living entity it holds), wandering
// while it holds none.
enum class Movement : std::uint8_t { kIdle, kWander, kHotspot, kPatrol, kRoute, kHunt };

// Chat (protocol 8): lines per second per bot on each channel the bot can use (party and
// guild once the server put it in one, whisper to another bot of its thread by name);
// the bot never goes beyond max_per_second with bursts of `burst` (keep them within the
// zone's chat.lines_per_second and chat.burst, or the zone answers RateLimited).
struct ChatPlan {
  // By protocol::ChatChannel: say, party, guild, whisper, zone.
  std::array<double, 5> per_second{};
  double max_per_second = 1.0;
  double burst = 5.0;
  double total() const {
    double t = 0.0;
    for (const double r : per_second) t += r;
    return t;
  }
};

// Combat (protocol 8): each bot picks the nearest living entity it holds (of the kinds
// `targets` names) and strikes at it with the schema's `attack` within melee_range, its
// `shoot` within ranged_range, at most actions_per_second (keep it within the zone's
// game.actions_per_second); dead (its own `state` property 1), it asks for `respawn`
// after respawn_after_s. Actions the game does not declare are not sent.
struct CombatPlan {
  bool enabled = false;
  double actions_per_second = 2.0;
  double melee_range = 3.0;
  double ranged_range = 25.0;
  double respawn_after_s = 1.0;
  enum class Targets : std::uint8_t { kAny, kNpcs, kPlayers } targets = Targets::kAny;
};

struct Range {
  double min = 0.0;
  double max = 0.0;
};

struct Scenario {
  std::string name;
  std::string description;
  Movement movement = Movement::kWander;
  double speed = 1.0;      // intent length, fraction of the server's max speed
  double turn_rate = 1.5;  // rad/s of heading drift (wander)
  double target_x = 0.5;   // hotspot centre as a fraction of the world bounds
  double target_y = 0.5;
  double arrive_radius = 20.0;   // metres: inside it, hotspot bots mill around
  double patrol_length = 300.0;  // metres per leg
  double input_rate_hz = 0.0;    // 0: one input per server tick
  // A world of zones: wanderers do not turn back at their zone's edges, so they walk
  // into the neighbours' (and follow the Transfers); the server stops them at the
  // world's outer edges.
  bool cross_zones = false;
  // Route: world points (metres) every bot walks to in turn, round and round; in a world
  // of zones the route may run through several.
  std::vector<std::pair<double, double>> route;
  bool churn = false;         // bots quit and rejoin
  Range session_s{3.0, 8.0};  // churn: connected time before quitting
  Range offline_s{0.5, 2.0};  // churn: time before rejoining
  // Reconnects (docs/protocol.md, "Reconnecting"): bots lose their connection without a
  // goodbye and come back with their resume token, to the same entity.
  bool reconnect = false;
  Range connected_s{3.0, 8.0};  // reconnect: connected time before the connection drops
  Range away_s{0.5, 3.0};       // reconnect: time without a connection before resuming
  // Parties: bots form parties of this many (consecutive bot numbers share a key), 0 off.
  std::uint32_t party_size = 0;
  // Each bot leaves its party and joins it again after a time drawn from this range
  // (seconds); {0, 0}: bots stay in their party.
  Range party_switch_s{0.0, 0.0};
  // Guilds: bots join guilds of this many (consecutive bot numbers) once and stay; 0 off.
  std::uint32_t guild_size = 0;
  ChatPlan chat;      // no line at all while every rate is 0
  CombatPlan combat;  // movement hunt, or combat: {...}
};

struct ScenarioLoad {
  Scenario scenario;
  std::vector<std::string> errors;  // "FILE:LINE: KEY: message"
  bool ok() const { return errors.empty(); }
};

// NAME is a path to a YAML file, or a scenario name looked up in `scenario_dir`.
ScenarioLoad load_scenario(const std::string& name, const std::string& scenario_dir);

}  // namespace zone::sim
