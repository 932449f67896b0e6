// The zone server's configuration: every tuning knob, with its default.
//
// Loaded from YAML (configs/zone.yaml documents each key), overridden by command-line
// flags, then validated as a whole. This header is plain data; config_loader.hpp reads
// and checks it.
#pragma once

#include <cstdint>
#include <string>

namespace zone::config {

enum class NpcBehaviour : std::uint8_t { kIdle, kWander, kPatrol };
enum class LogLevel : std::uint8_t { kTrace, kDebug, kInfo, kWarn, kError };
enum class AuthMode : std::uint8_t { kOpen, kTicket };
enum class PersistBackend : std::uint8_t { kSqlite, kPostgres };

struct WorldConfig {
  double min_x = 0.0;  // metres
  double min_y = 0.0;
  double max_x = 2000.0;
  double max_y = 2000.0;
};

struct TickConfig {
  std::uint32_t rate_hz = 20;  // authoritative simulation ticks per second
};

struct AoiConfig {
  bool enabled = true;        // false: every client is sent every entity (broadcast baseline)
  double cell_size = 32.0;    // metres
  double view_radius = 30.0;  // metres, default for players
  double hysteresis = 2.0;    // metres; leave only beyond view_radius + hysteresis
  // Entities expected in view from which observers of one radius have their pairs with
  // each other decided by a crowd tier (aoi::GridConfig::crowd_min_in_view); 0: never.
  std::uint32_t crowd_min_in_view = 100;
};

struct PlayerConfig {
  std::uint32_t max_players = 1000;
  double max_speed = 7.0;              // m/s; input intents are clamped to this
  std::uint32_t max_name_length = 32;  // bytes of UTF-8
  // A player whose connection is lost (not a quit or a kick) stays in the world this long
  // for its client to come back with the Welcome's resume token; 0: it leaves at once.
  std::uint32_t resume_grace_ms = 10000;
};

struct NpcConfig {
  std::uint32_t count = 200;
  std::uint64_t seed = 1;  // placement and behaviour are reproducible
  NpcBehaviour behaviour = NpcBehaviour::kWander;
  double speed = 3.0;            // m/s
  double turn_rate = 1.0;        // rad/s, maximum random heading change (wander)
  double patrol_length = 200.0;  // metres, leg length (patrol)
  double idle_fraction = 0.2;    // share of time a wandering NPC stands still
};

// The game (docs/scripting.md): its data (game_data.hpp: entity types, properties,
// actions, events) and its rules (Lua scripts).
struct GameConfig {
  std::string data_file;    // "": the built-in game (health and max_health)
  std::string scripts_dir;  // its *.lua files are the rules, in name order; "": none
  double tick_hz = 10.0;    // how often the rules' on_tick runs (at most tick.rate_hz)
  std::uint32_t actions_per_second = 10;      // per player; one second's worth may come at once
  std::uint32_t max_events_per_tick = 8192;   // the zone's, all clients together
  std::uint32_t max_events_per_client = 256;  // game events to one client in one tick
};

// The rules' budgets (server/script): per VM, per handler call, per tick.
struct ScriptConfig {
  std::uint32_t memory_mb = 64;
  std::uint64_t instructions_per_call = 200'000;
  std::uint64_t instructions_per_tick = 2'000'000;
};

// Chat (docs/protocol.md, "Chat").
struct ChatConfig {
  bool enabled = true;
  std::uint32_t max_length = 200;      // bytes of UTF-8 per line
  std::uint32_t lines_per_second = 1;  // per player, with bursts of `burst` lines
  std::uint32_t burst = 5;
  bool zone_channel = true;  // players may speak to the whole zone
};

struct NetworkConfig {
  std::string bind_address = "0.0.0.0";
  std::uint16_t port = 7777;                  // 0 = pick an ephemeral port (tests)
  std::uint32_t channel_limit = 2;            // ENet channels per peer
  std::uint32_t max_packet_bytes = 1200;      // payload of one unreliable datagram, MTU-safe
  std::uint32_t client_bandwidth = 16000;     // bytes/s budget of updates per client
  std::uint32_t snapshot_interval_ticks = 1;  // send a snapshot every N ticks
  std::uint32_t history_ticks = 32;           // per-client sent-frame history (delta baselines)
  std::uint32_t timeout_ms = 5000;            // disconnect a silent client after this
  std::uint32_t max_deferral_ms = 1000;       // longest a due record waits for budget
};

// Interest policy (docs/architecture.md, "Interest policy"): how often entities in view
// are refreshed, by distance, crowd, view cone and server load. All off by default.
struct InterestConfig {
  bool tiers = false;                       // distance tiers of update rate
  double near_fraction = 0.5;               // of the view radius: within it, every snapshot
  double far_fraction = 0.8;                // of the view radius: beyond it, the far tier
  std::uint32_t middle_divisor = 2;         // middle tier: every Nth snapshot
  std::uint32_t far_divisor = 4;            // far (lowest) tier: every Nth snapshot
  std::uint32_t crowd_threshold = 0;        // more in view: all but the K nearest far; 0 off
  bool cone = false;                        // entities behind the player are far
  double cone_fov_degrees = 120.0;          // field of view around the direction of travel
  double cone_radius = 5.0;                 // metres: never "behind" within this
  bool load_adaptive = false;               // slow down and shrink under load
  double load_budget_ms = 0.0;              // tick time budget; 0: the tick period
  double load_raise_share = 0.8;            // smoothed tick time / budget above: level up
  double load_lower_share = 0.5;            // below: level down
  std::uint32_t load_smoothing_ticks = 20;  // time constant of the smoothing (ticks)
  std::uint32_t load_hold_ticks = 20;       // at least this long between level changes
  std::uint32_t load_far_slowdown = 2;      // level >= 1: far tier every far_divisor * N
  std::uint32_t load_radius_steps = 2;      // levels 2..1+N shrink the view radius
  double load_radius_step = 0.1;            // by this share of view_radius per level
};

// Precision tiers (docs/architecture.md, "Precision tiers"): how finely positions and
// headings are sent. Players, and NPCs engaged with a player, at the player precision;
// other NPCs (ambient) at the NPC precision. The defaults send everything at the finest.
struct PrecisionConfig {
  std::uint32_t player_position_cm = 1;    // centimetres per unit of x and y
  std::uint32_t player_heading_bits = 16;  // heading in units of 1/2^bits turn
  std::uint32_t npc_position_cm = 1;
  std::uint32_t npc_heading_bits = 16;
  double engage_radius = 10.0;  // metres: an NPC this close to a player is engaged; 0 never
};

// Parties and guilds: the same rules, separate tables and limits.
struct GroupConfig {
  bool enabled = true;                          // players may join (JoinParty / JoinGuild)
  std::uint32_t max_size = 5;                   // members per group
  bool full_range = true;                       // members see each other at any distance
  std::uint32_t min_request_interval_ms = 500;  // per player, between two requests
};

// The chunk layer: which map chunks each client streams (ChunkUpdate).
struct ChunkConfig {
  bool enabled = false;
  double size = 512.0;                // metres, the side of a chunk
  double load_radius = 768.0;         // metres: chunks this close to the player are loaded
  double hysteresis = 128.0;          // metres beyond it before a chunk is unloaded
  std::uint32_t interval_ticks = 10;  // how often each player's chunks are checked
};

// The static layer (docs/architecture.md, "Static layer"): environment objects from a map
// file, a coarse grid of them for collision, sent to each client once.
struct StaticConfig {
  std::string map_file;              // "" : no static layer
  double cell_size = 64.0;           // metres, the side of a static grid cell
  double view_radius = 100.0;        // metres: cells this close to a player are sent
  std::uint32_t interval_ticks = 5;  // how often each player's static cells are checked
};

struct LimitsConfig {
  std::uint32_t max_client_packet_bytes = 512;     // larger client packets are dropped
  std::uint32_t max_inputs_per_second = 60;        // more is an input flood
  std::uint32_t max_bad_packets = 20;              // per client, before it is disconnected
  std::uint32_t hello_timeout_ms = 10000;          // a connection must say hello within this
  std::uint32_t max_awaiting_hello = 1024;         // connections not yet said hello, in all
  std::uint32_t max_connections_per_address = 16;  // per network host; 0: no limit
  std::uint32_t max_handshakes = 256;              // unfinished ENet handshakes per host
  std::uint32_t max_handshakes_per_address = 4;    // per network host
  std::uint32_t handshake_timeout_ms = 8000;       // an unfinished handshake is dropped after
  bool loopback_exempt = true;  // per-address limits skip 127.0.0.0/8 (this machine)
  bool connect_cookies = true;  // a CONNECT must carry the cookie its source was given
};

// Who may join (docs/protocol.md, "Tickets"; docs/security.md, "Accounts").
struct AuthConfig {
  // kOpen: a Hello's name is enough (anyone joins as anyone: local runs and tests only).
  // kTicket: a Hello must carry a login ticket signed by the key below.
  AuthMode mode = AuthMode::kOpen;
  std::string public_key;  // the login service's Ed25519 public key, 64 hex digits
  std::string world;       // the world name tickets must carry; "": zone.name
};

// The character store (docs/persistence.md). Every key needs a restart.
struct PersistConfig {
  // Saves characters and loads them back on login. Tests turn it off (tests/server's
  // small_zone, and tests/support's Process unless the arguments name persist.*).
  bool enabled = true;
  PersistBackend backend = PersistBackend::kSqlite;
  // The SQLite file, relative to the working directory; created with its directory.
  std::string path = "data/zone.sqlite3";
  // backend postgres: the file holding the libpq connection string (a secret: read once
  // at start-up, never logged; config::read_conninfo_file).
  std::string conninfo_file;
  std::uint32_t checkpoint_seconds = 30;  // every online character saved this often
  // Characters waiting to be written beyond which new logins are refused (StoreUnavailable)
  // and /readyz says degraded.
  std::uint32_t max_queue = 10000;
  // How long a login waits for its character's row before it is refused (StoreUnavailable).
  std::uint32_t load_timeout_ms = 5000;
};

struct LogConfig {
  LogLevel level = LogLevel::kInfo;
  std::uint32_t status_interval_s = 10;
};

struct AdminConfig {
  bool enabled = true;                     // HTTP admin endpoint (metrics, health, map)
  std::string bind_address = "127.0.0.1";  // loopback only unless opened on purpose
  std::uint16_t port = 7780;               // 0 = pick an ephemeral port (tests)
  // Where the bearer token of the protected routes comes from (at most one of the two);
  // with neither, a random token is generated at start-up and logged.
  std::string token_file;     // path of a file holding the token
  std::string token_env;      // name of an environment variable holding the token
  std::string allowed_hosts;  // Host names besides IP literals and localhost, comma-separated
  // Where the GM commands keep banned accounts (docs/operations.md): read at start-up,
  // rewritten whole (temp file + rename) on every ban and unban. "": in memory only.
  std::string bans_file = "data/bans.json";
};

struct DebugConfig {
  bool truth = false;                      // serve /debug/truth (ground truth for client-sim)
  std::uint32_t truth_history_ticks = 64;  // ticks of ground truth kept for it
  // Busy-waits this long per entity record sent in a tick: simulated server load for
  // tests of interest.load_adaptive (reloads live). 0: off.
  std::uint32_t simulated_load_ns_per_record = 0;
};

struct ThreadsConfig {
  std::uint32_t workers = 0;  // replication workers, the tick thread included; 0: one per core
  std::uint32_t network = 0;  // ENet hosts, one thread each, sharing the port; 0: one per core
};

struct ZoneConfig {
  std::string name = "zone";
  WorldConfig world;
  TickConfig tick;
  AoiConfig aoi;
  PlayerConfig players;
  NpcConfig npcs;
  NetworkConfig network;
  InterestConfig interest;
  PrecisionConfig precision;
  GroupConfig party;
  GroupConfig guild{.max_size = 50};
  ChunkConfig chunks;
  StaticConfig statics;
  GameConfig game;
  ScriptConfig script;
  ChatConfig chat;
  ThreadsConfig threads;
  LimitsConfig limits;
  AuthConfig auth;
  PersistConfig persist;
  LogConfig log;
  AdminConfig admin;
  DebugConfig debug;
};

// The world name a ticket must carry to be let into this zone: auth.world, or the zone's
// own name when that is empty (a zone alone is its own world).
inline const std::string& ticket_world(const ZoneConfig& c) {
  return c.auth.world.empty() ? c.name : c.auth.world;
}

}  // namespace zone::config
