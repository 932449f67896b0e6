#include "config/world_map.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "config/config_schema.hpp"
#include "config/config_text.hpp"
#include "config/key_suggest.hpp"
#include "config/secret_file.hpp"

namespace zone::config {
namespace {

// Same coordinate range as the zone config's world.* keys.
constexpr double kMaxCoordinate = 1.0e6;
constexpr double kMaxGhostDistance = 10000.0;
constexpr std::uint32_t kMinGhostTimeoutMs = 100;
constexpr std::uint32_t kMaxGhostTimeoutMs = 60000;
constexpr std::size_t kMaxNameBytes = 32;

std::optional<double> to_real(const RawValue& raw) {
  if (raw.kind != RawValue::Kind::kScalar || raw.quoted) return std::nullopt;
  std::string_view text = raw.text;
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  if (text.empty() || text.front() == '+') return std::nullopt;
  double out = 0.0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, out);
  if (ec != std::errc{} || ptr != end || !std::isfinite(out)) return std::nullopt;
  return out;
}

std::optional<std::uint64_t> to_count(const RawValue& raw) {
  if (raw.kind != RawValue::Kind::kScalar || raw.quoted) return std::nullopt;
  std::string_view text = raw.text;
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  if (text.empty() || text.front() < '0' || text.front() > '9') return std::nullopt;
  std::uint64_t out = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, out);
  if (ec != std::errc{} || ptr != end) return std::nullopt;
  return out;
}

// Zone names end up in NATS subjects and log lines: letters, digits, '-' and '_' only.
bool valid_name(std::string_view s) {
  if (s.empty() || s.size() > kMaxNameBytes) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_';
  });
}

// A subject prefix: names joined by dots ("world", "game.eu1").
bool valid_prefix(std::string_view s) {
  if (s.empty() || s.size() > 64) return false;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = s.find('.', start);
    const std::string_view part = s.substr(start, dot - start);
    if (part.empty() || !valid_name(part)) return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

// "host:port" (an IPv4 literal or a host name, then a port 0-65535).
std::optional<Address> to_address(const RawValue& raw) {
  if (raw.kind != RawValue::Kind::kScalar) return std::nullopt;
  const std::string& text = raw.text;
  const std::size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) return std::nullopt;
  Address a;
  a.host = text.substr(0, colon);
  if (a.host.find_first_of(" \t:/") != std::string::npos) return std::nullopt;
  const std::string_view port = std::string_view(text).substr(colon + 1);
  unsigned value = 0;
  const auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || ec != std::errc{} || ptr != port.data() + port.size() || value > 65535) {
    return std::nullopt;
  }
  a.port = static_cast<std::uint16_t>(value);
  return a;
}

bool is_wildcard(const std::string& host) {
  return host == "0.0.0.0" || host == "::" || host == "[::]" || host.empty();
}

class WorldLoader {
 public:
  explicit WorldLoader(WorldMapResult& result) : result_(result), walk_(result.errors) {}

  void load(const YAML::Node& root) {
    if (root.IsNull()) {
      walk_.error("", 0, "expected the sections nats, ghosts and zones; the file is empty");
      return;
    }
    bool has_url = false, has_zones = false;
    walk_.map(root, "", line_of(root), {"nats", "ghosts", "handoff", "zones"},
              [&](const std::string& key, const YAML::Node& value, int line) {
                if (key == "nats") has_url = load_nats(value, line);
                if (key == "ghosts") load_ghosts(value, line);
                if (key == "handoff") load_handoff(value, line);
                if (key == "zones") has_zones = load_zones(value, line);
              });
    if (!root.IsMap()) return;
    if (!has_url && !url_reported_) walk_.error("nats.url", 0, "missing: expected a NATS URL");
    if (!has_zones && !zones_reported_) {
      walk_.error("zones", 0, "missing: expected a list of at least one zone");
    }
    check_auth();
    if (result_.errors.empty()) check_zones();
  }

 private:
  bool load_nats(const YAML::Node& node, int line) {
    bool has_url = false;
    walk_.map(node, "nats", line, {"url", "subject_prefix", "password_file", "tls"},
              [&](const std::string& key, const YAML::Node& value, int key_line) {
                const RawValue raw = to_raw(value);
                if (key == "url") {
                  has_url = true;
                  url_reported_ = true;
                  url_line_ = key_line;
                  const bool nats = raw.text.rfind("nats://", 0) == 0;
                  const bool tls = raw.text.rfind("tls://", 0) == 0;
                  if (raw.kind != RawValue::Kind::kScalar || !(nats || tls) ||
                      raw.text.size() <= (nats ? 7u : 6u)) {
                    walk_.error("nats.url", key_line,
                                fmt::format("expected a URL nats://HOST:PORT or tls://HOST:PORT, "
                                            "got {}",
                                            describe_found(raw)));
                  } else {
                    result_.map.nats_url = raw.text;
                  }
                } else if (key == "password_file") {
                  load_path(raw, "nats.password_file", key_line, result_.map.auth.password_file);
                } else if (key == "tls") {
                  load_tls(value, key_line);
                } else if (raw.kind != RawValue::Kind::kScalar || !valid_prefix(raw.text)) {
                  walk_.error("nats.subject_prefix", key_line,
                              fmt::format("expected names of letters, digits, '-' or '_' "
                                          "joined by dots (at most 64 bytes), got {}",
                                          describe_found(raw)));
                } else {
                  result_.map.subject_prefix = raw.text;
                }
              });
    return has_url;
  }

  // A file's path: a non-empty string (may hold "{zone}").
  void load_path(const RawValue& raw, const std::string& key, int line, std::string& out) {
    if (raw.kind != RawValue::Kind::kScalar || raw.text.empty() || raw.text.size() > 4096 ||
        raw.text.find('\0') != std::string::npos) {
      walk_.error(key, line,
                  fmt::format("expected the path of a file (\"{{zone}}\" is replaced by the "
                              "zone's name), got {}",
                              describe_found(raw)));
    } else {
      out = raw.text;
    }
  }

  void load_tls(const YAML::Node& node, int line) {
    tls_line_ = line;
    BusAuth& auth = result_.map.auth;
    walk_.map(node, "nats.tls", line, {"ca_file", "cert_file", "key_file"},
              [&](const std::string& key, const YAML::Node& value, int key_line) {
                const RawValue raw = to_raw(value);
                load_path(raw, "nats.tls." + key, key_line,
                          key == "ca_file"     ? auth.tls_ca_file
                          : key == "cert_file" ? auth.tls_cert_file
                                               : auth.tls_key_file);
              });
  }

  // TLS needs the CA that signed the server's certificate; a client certificate needs
  // its key and the other way round.
  void check_auth() {
    const BusAuth& auth = result_.map.auth;
    const bool tls_url = result_.map.nats_url.rfind("tls://", 0) == 0;
    if (auth.tls_cert_file.empty() != auth.tls_key_file.empty()) {
      walk_.error(auth.tls_cert_file.empty() ? "nats.tls.cert_file" : "nats.tls.key_file",
                  tls_line_,
                  "missing: a client certificate needs both nats.tls.cert_file and "
                  "nats.tls.key_file");
    }
    if (auth.tls_ca_file.empty() && (tls_url || !auth.tls_cert_file.empty())) {
      walk_.error("nats.tls.ca_file", tls_url ? url_line_ : tls_line_,
                  "missing: TLS needs the CA certificate that signed the NATS server's "
                  "certificate");
    }
  }

  void load_ghosts(const YAML::Node& node, int line) {
    walk_.map(node, "ghosts", line, {"distance", "timeout_ms"},
              [&](const std::string& key, const YAML::Node& value, int key_line) {
                const RawValue raw = to_raw(value);
                if (key == "distance") {
                  const auto v = to_real(raw);
                  if (!v || *v <= 0.0 || *v > kMaxGhostDistance) {
                    walk_.error("ghosts.distance", key_line,
                                fmt::format("expected a number > 0 and <= {}, got {}",
                                            kMaxGhostDistance, describe_found(raw)));
                  } else {
                    result_.map.ghost_distance = *v;
                  }
                } else {
                  const auto v = to_count(raw);
                  if (!v || *v < kMinGhostTimeoutMs || *v > kMaxGhostTimeoutMs) {
                    walk_.error(
                        "ghosts.timeout_ms", key_line,
                        fmt::format("expected an integer >= {} and <= {}, got {}",
                                    kMinGhostTimeoutMs, kMaxGhostTimeoutMs, describe_found(raw)));
                  } else {
                    result_.map.ghost_timeout_ms = static_cast<std::uint32_t>(*v);
                  }
                }
              });
  }

  void load_handoff(const YAML::Node& node, int line) {
    walk_.map(node, "handoff", line, {"timeout_ms", "arrival_timeout_ms"},
              [&](const std::string& key, const YAML::Node& value, int key_line) {
                const RawValue raw = to_raw(value);
                const auto v = to_count(raw);
                const std::string full = "handoff." + key;
                if (!v || *v < kMinHandoffTimeoutMs || *v > kMaxHandoffTimeoutMs) {
                  walk_.error(
                      full, key_line,
                      fmt::format("expected an integer >= {} and <= {}, got {}",
                                  kMinHandoffTimeoutMs, kMaxHandoffTimeoutMs, describe_found(raw)));
                } else if (key == "timeout_ms") {
                  result_.map.handoff_timeout_ms = static_cast<std::uint32_t>(*v);
                } else {
                  result_.map.arrival_timeout_ms = static_cast<std::uint32_t>(*v);
                }
              });
  }

  bool load_zones(const YAML::Node& node, int line) {
    zones_reported_ = true;
    if (!node.IsSequence() || node.size() == 0) {
      walk_.error("zones", line,
                  fmt::format("expected a list of at least one zone, got {}",
                              node.IsSequence() ? "an empty list" : describe_found(to_raw(node))));
      return true;
    }
    if (node.size() > kMaxWorldZones) {
      walk_.error("zones", line,
                  fmt::format("expected at most {} zones (entity ids hold the zone's index in "
                              "6 bits), got {}",
                              kMaxWorldZones, node.size()));
      return true;
    }
    for (std::size_t i = 0; i < node.size(); ++i) load_zone(node[i], i);
    return true;
  }

  void load_zone(const YAML::Node& node, std::size_t index) {
    const std::string path = fmt::format("zones[{}]", index);
    const int line = line_of(node);
    WorldZone zone;
    std::set<std::string> present;
    bool game_ok = false;
    const bool is_map = walk_.map(
        node, path, line, {"name", "rect", "game", "admin", "public"},
        [&](const std::string& key, const YAML::Node& value, int key_line) {
          const RawValue raw = to_raw(value);
          const std::string full = path + "." + key;
          present.insert(key);
          if (key == "name") {
            if (raw.kind != RawValue::Kind::kScalar || !valid_name(raw.text)) {
              walk_.error(full, key_line,
                          fmt::format("expected a name of 1 to {} letters, digits, '-' or '_', "
                                      "got {}",
                                      kMaxNameBytes, describe_found(raw)));
            } else {
              zone.name = raw.text;
            }
          } else if (key == "rect") {
            load_rect(value, full, key_line, zone.rect);
          } else {
            const auto a = to_address(raw);
            if (!a) {
              walk_.error(
                  full, key_line,
                  fmt::format("expected HOST:PORT (port 0-65535), got {}", describe_found(raw)));
            } else if (key == "public" && (a->port == 0 || is_wildcard(a->host))) {
              walk_.error(full, key_line,
                          fmt::format("expected the HOST:PORT clients reach the zone at (a "
                                      "port > 0, not a wildcard host), got {}",
                                      describe_found(raw)));
            } else {
              (key == "game" ? zone.game : key == "admin" ? zone.admin : zone.public_game) = *a;
              if (key == "game") game_ok = true;
            }
          }
        });
    if (!is_map) return;
    for (const char* required : {"name", "rect", "game", "admin"}) {
      if (present.count(required) == 0) {
        walk_.error(path, line, fmt::format("missing key '{}'", required));
      }
    }
    // Transfers send clients to the zone: a wildcard bind address is not one they can
    // connect to.
    if (game_ok && present.count("public") == 0 && is_wildcard(zone.game.host)) {
      walk_.error(path + ".public", line,
                  fmt::format("missing: the game address {} is a wildcard, which clients cannot "
                              "connect to; expected public: HOST:PORT (where clients reach it)",
                              zone.game.host));
    }
    if (present.count("public") == 0) zone.public_game = zone.game;
    lines_.push_back(line);
    result_.map.zones.push_back(std::move(zone));
  }

  void load_rect(const YAML::Node& node, const std::string& path, int line, Rect& rect) {
    int present = 0, found = 0;
    const bool is_map = walk_.map(
        node, path, line, {"min_x", "min_y", "max_x", "max_y"},
        [&](const std::string& key, const YAML::Node& value, int key_line) {
          ++present;
          const RawValue raw = to_raw(value);
          const auto v = to_real(raw);
          if (!v || std::abs(*v) > kMaxCoordinate) {
            walk_.error(path + "." + key, key_line,
                        fmt::format("expected a number >= {} and <= {}, got {}", -kMaxCoordinate,
                                    kMaxCoordinate, describe_found(raw)));
            return;
          }
          ++found;
          if (key == "min_x") rect.min_x = *v;
          if (key == "min_y") rect.min_y = *v;
          if (key == "max_x") rect.max_x = *v;
          if (key == "max_y") rect.max_y = *v;
        });
    if (!is_map) return;
    if (found == 4 && (rect.min_x >= rect.max_x || rect.min_y >= rect.max_y)) {
      walk_.error(path, line,
                  fmt::format("expected min_x < max_x and min_y < max_y, got x {} .. {}, y {} .. "
                              "{}",
                              rect.min_x, rect.max_x, rect.min_y, rect.max_y));
    } else if (present < 4) {
      walk_.error(path, line, "expected all four of min_x, min_y, max_x, max_y");
    }
  }

  // Across zones: unique names, disjoint rectangles.
  void check_zones() {
    const auto& zones = result_.map.zones;
    for (std::size_t i = 0; i < zones.size(); ++i) {
      for (std::size_t j = 0; j < i; ++j) {
        const std::string path = fmt::format("zones[{}]", i);
        if (zones[i].name == zones[j].name) {
          walk_.error(path + ".name", lines_[i],
                      fmt::format("duplicate zone name '{}' (zones[{}], line {}); expected "
                                  "unique names",
                                  zones[i].name, j, lines_[j]));
        }
        if (rects_overlap(zones[i].rect, zones[j].rect)) {
          walk_.error(path + ".rect", lines_[i],
                      fmt::format("overlaps zone '{}' (zones[{}], line {}); expected zones "
                                  "whose rectangles share at most an edge",
                                  zones[j].name, j, lines_[j]));
        }
      }
    }
  }

  WorldMapResult& result_;
  KeyWalker walk_;
  std::vector<int> lines_;  // of each zone entry
  bool url_reported_ = false;
  int url_line_ = 0;
  int tls_line_ = 0;
  bool zones_reported_ = false;
};

}  // namespace

double rect_distance(const Rect& a, const Rect& b) {
  const double dx = std::max({0.0, a.min_x - b.max_x, b.min_x - a.max_x});
  const double dy = std::max({0.0, a.min_y - b.max_y, b.min_y - a.max_y});
  return std::hypot(dx, dy);
}

bool rects_overlap(const Rect& a, const Rect& b) {
  return a.min_x < b.max_x && b.min_x < a.max_x && a.min_y < b.max_y && b.min_y < a.max_y;
}

std::optional<std::size_t> WorldMap::find(std::string_view name) const {
  for (std::size_t i = 0; i < zones.size(); ++i) {
    if (zones[i].name == name) return i;
  }
  return std::nullopt;
}

std::vector<std::size_t> WorldMap::neighbours(std::size_t index) const {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < zones.size(); ++i) {
    if (i != index && rect_distance(zones[i].rect, zones[index].rect) <= ghost_distance) {
      out.push_back(i);
    }
  }
  return out;
}

std::string WorldMapResult::error_report() const {
  return format_errors(errors, source);
}

WorldMapResult load_world_map_string(std::string_view yaml, std::string source_name) {
  WorldMapResult result;
  result.source = std::move(source_name);
  YAML::Node root;
  if (auto error = parse_one_document(yaml, root)) {
    result.errors.push_back(std::move(*error));
    return result;
  }
  WorldLoader(result).load(root);
  std::stable_sort(result.errors.begin(), result.errors.end(),
                   [](const ConfigError& a, const ConfigError& b) {
                     return (a.line == 0 ? 1 << 30 : a.line) < (b.line == 0 ? 1 << 30 : b.line);
                   });
  return result;
}

WorldMapResult load_world_map_file(const std::string& path) {
  std::string text;
  if (auto message = read_config_text(path, text)) {
    WorldMapResult result;
    result.source = path;
    result.errors.push_back({"", 0, std::move(*message)});
    return result;
  }
  return load_world_map_string(text, path);
}

std::string zone_path(std::string_view pattern, std::string_view zone) {
  std::string out;
  constexpr std::string_view kZone = "{zone}";
  for (std::size_t i = 0; i < pattern.size();) {
    if (pattern.substr(i, kZone.size()) == kZone) {
      out += zone;
      i += kZone.size();
    } else {
      out += pattern[i++];
    }
  }
  return out;
}

namespace {

constexpr std::size_t kMaxPasswordBytes = 1024;

}  // namespace

std::vector<ConfigError> load_bus_secrets(const WorldMap& map, std::size_t index, BusSecrets& out) {
  std::vector<ConfigError> errors;
  out = BusSecrets{};
  const std::string& zone = map.zones.at(index).name;
  const BusAuth& auth = map.auth;
  if (!auth.password_file.empty()) {
    const std::string path = zone_path(auth.password_file, zone);
    std::string text;
    if (auto problem = read_secret_file(path, true, kMaxPasswordBytes + 64, text)) {
      errors.push_back({"nats.password_file", 0, std::move(*problem)});
    } else {
      while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
      const bool printable = std::all_of(text.begin(), text.end(), [](char c) {
        return c > 0x20 && c < 0x7f && c != '"' && c != '\\';
      });
      if (text.empty() || text.size() > kMaxPasswordBytes || !printable) {
        errors.push_back(
            {"nats.password_file", 0,
             fmt::format("{}: expected 1 to {} printable ASCII characters without spaces, "
                         "quotes or backslashes (e.g. openssl rand -hex 32)",
                         path, kMaxPasswordBytes)});
      } else {
        out.user = zone;
        out.password = std::move(text);
      }
    }
  }
  out.tls = !auth.tls_ca_file.empty() || map.nats_url.rfind("tls://", 0) == 0;
  const auto check_file = [&](const std::string& pattern, const char* key, bool secret,
                              std::string& resolved) {
    if (pattern.empty()) return;
    resolved = zone_path(pattern, zone);
    std::string text;
    if (auto problem = read_secret_file(resolved, secret, 1 << 20, text)) {
      errors.push_back({key, 0, std::move(*problem)});
    }
  };
  check_file(auth.tls_ca_file, "nats.tls.ca_file", false, out.tls_ca_file);
  check_file(auth.tls_cert_file, "nats.tls.cert_file", false, out.tls_cert_file);
  check_file(auth.tls_key_file, "nats.tls.key_file", true, out.tls_key_file);
  return errors;
}

void apply_world_zone(const WorldMap& map, std::size_t index, ZoneConfig& config) {
  const WorldZone& z = map.zones.at(index);
  config.name = z.name;
  config.world.min_x = z.rect.min_x;
  config.world.min_y = z.rect.min_y;
  config.world.max_x = z.rect.max_x;
  config.world.max_y = z.rect.max_y;
  config.network.bind_address = z.game.host;
  config.network.port = z.game.port;
  config.admin.bind_address = z.admin.host;
  config.admin.port = z.admin.port;
}

std::vector<ConfigError> check_zone_in_world(const WorldMap& map, std::size_t index,
                                             const ZoneConfig& config) {
  std::vector<ConfigError> errors;
  const WorldZone& z = map.zones.at(index);
  if (!config.aoi.enabled) {
    errors.push_back({"aoi.enabled", 0,
                      "expected true in a world of zones: with the AOI off a player sees the "
                      "whole zone, and ghosts cover only ghosts.distance across a border"});
  }
  const double reach = config.aoi.view_radius + config.aoi.hysteresis;
  if (reach > map.ghost_distance) {
    errors.push_back(
        {"aoi.view_radius", 0,
         fmt::format("aoi.view_radius + aoi.hysteresis = {} m, expected at most the world map's "
                     "ghosts.distance ({} m): players near the border would miss entities of "
                     "the neighbouring zone",
                     reach, map.ghost_distance)});
  }
  if (config.world.min_x != z.rect.min_x || config.world.min_y != z.rect.min_y ||
      config.world.max_x != z.rect.max_x || config.world.max_y != z.rect.max_y) {
    errors.push_back({"world.min_x", 0,
                      fmt::format("expected the rectangle of zone '{}' in the world map (x {} .. "
                                  "{}, y {} .. {}); do not override world.* with --world",
                                  z.name, z.rect.min_x, z.rect.max_x, z.rect.min_y, z.rect.max_y)});
  }
  if (config.auth.mode == AuthMode::kTicket && config.auth.world.empty()) {
    errors.push_back({"auth.world", 0,
                      fmt::format("expected the world's name in ticket mode: every zone of a world "
                                  "must accept the same tickets, and \"\" would mean this zone's "
                                  "name ('{}')",
                                  z.name)});
  }
  return errors;
}

}  // namespace zone::config
