// The world map: which zone processes make up one seamless world, and where each is.
//
// configs/world.yaml documents every key. A zone started with `--world FILE --zone NAME`
// takes its bounds, name and addresses from its entry (apply_world_zone), then the
// command line's overrides apply as usual, and check_zone_in_world() checks the result
// against the map (its view must fit within the ghost distance). The loader is as strict
// as the zone config's: every problem is reported as FILE:LINE: KEY: MESSAGE.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config_loader.hpp"
#include "config/zone_config.hpp"

namespace zone::config {

// Entity ids carry the index of the zone that created them in their top bits
// (world::IdSpace, docs/world.md), which leaves room for this many zones.
inline constexpr std::size_t kMaxWorldZones = 64;
inline constexpr std::uint32_t kMinHandoffTimeoutMs = 100;
inline constexpr std::uint32_t kMaxHandoffTimeoutMs = 60000;

struct Rect {
  double min_x = 0.0;  // metres
  double min_y = 0.0;
  double max_x = 0.0;
  double max_y = 0.0;
};

// Shortest distance between two rectangles (0 when they touch or overlap).
double rect_distance(const Rect& a, const Rect& b);
// Whether the interiors of two rectangles overlap (sharing an edge is not overlapping).
bool rects_overlap(const Rect& a, const Rect& b);

// "host:port" as written in the map.
struct Address {
  std::string host;
  std::uint16_t port = 0;  // 0: an ephemeral port (tests override it on the command line)
};

struct WorldZone {
  std::string name;  // also the last part of its bus subjects
  Rect rect;
  Address game;   // UDP address clients connect to
  Address admin;  // admin HTTP address
  // Where clients reach the game port, sent to them in a Transfer: `public` in the map,
  // else the game address (which must then not be a wildcard). A port of 0 (the game
  // address's, in tests) means the port the zone bound.
  Address public_game;
};

// How the zones log in to NATS (docs/security.md, "The bus"): each zone as the NATS user
// named like the zone, with the password in a file; optionally over TLS. Paths may hold
// "{zone}", replaced by the zone's name (so one map serves zones that share a machine).
// Secrets are never in the map itself, only where to find them.
struct BusAuth {
  std::string password_file;  // empty: no credentials (anyone reaching NATS is trusted)
  std::string tls_ca_file;    // empty: no TLS (unless the URL is tls://)
  std::string tls_cert_file;  // the zone's client certificate (with tls_key_file), optional
  std::string tls_key_file;
};

struct WorldMap {
  std::string nats_url;
  std::string subject_prefix = "world";
  BusAuth auth;
  double ghost_distance = 40.0;           // metres
  std::uint32_t ghost_timeout_ms = 1000;  // a silent owner's ghosts leave after this
  // Handoff: how long a zone waits for a neighbour's answer before it keeps the player
  // (handoff.timeout_ms), and how long a zone holds a handed-over player for its client
  // to reconnect (handoff.arrival_timeout_ms).
  std::uint32_t handoff_timeout_ms = 2000;
  std::uint32_t arrival_timeout_ms = 10000;
  std::vector<WorldZone> zones;

  std::optional<std::size_t> find(std::string_view name) const;
  // The zones whose rectangles lie within ghost_distance of zone `index`'s (its
  // neighbours: it sends them ghosts and receives theirs), in map order.
  std::vector<std::size_t> neighbours(std::size_t index) const;
};

struct WorldMapResult {
  WorldMap map;                     // valid only when ok()
  std::vector<ConfigError> errors;  // in line order, checks across zones last
  std::string source;

  bool ok() const { return errors.empty(); }
  std::string error_report() const;  // one format_error() line per error
};

WorldMapResult load_world_map_file(const std::string& path);
WorldMapResult load_world_map_string(std::string_view yaml, std::string source_name);

// What zone `index` presents to NATS, read from the files the map names.
struct BusSecrets {
  std::string user;      // the zone's name; empty without credentials
  std::string password;  // read from nats.password_file
  std::string tls_ca_file, tls_cert_file, tls_key_file;  // "{zone}" replaced
  bool tls = false;
};
// "{zone}" in `pattern` replaced by `zone`.
std::string zone_path(std::string_view pattern, std::string_view zone);
// Reads and checks zone `index`'s secrets: the password file must be a regular file,
// not readable by others (mode o-r), holding 1 to 1,024 printable ASCII characters
// without spaces (a final newline ignored); the TLS files must be readable. Errors name
// the world map's keys.
std::vector<ConfigError> load_bus_secrets(const WorldMap& map, std::size_t index, BusSecrets& out);

// Makes `config` the config of zone `index` of the map: zone.name, the world bounds, the
// game address (network.bind_address, network.port) and the admin address.
void apply_world_zone(const WorldMap& map, std::size_t index, ZoneConfig& config);

// A zone's effective config against the map: the zone must see no further than the
// ghost distance (aoi.view_radius + aoi.hysteresis <= ghosts.distance, and the AOI on),
// or its players would miss entities across the border; and its bounds must still be its
// rectangle; and in ticket mode auth.world must name the world (zones' names differ).
// Errors name the zone config's keys.
std::vector<ConfigError> check_zone_in_world(const WorldMap& map, std::size_t index,
                                             const ZoneConfig& config);

}  // namespace zone::config
