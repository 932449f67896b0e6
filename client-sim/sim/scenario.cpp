#include "sim/scenario.hpp"

#include <array>
#include <cmath>
#include <filesystem>
#include <set>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

namespace zone::sim {
namespace {

class Reader {
 public:
  Reader(std::string source, std::vector<std::string>& errors)
      : source_(std::move(source)), errors_(errors) {}

  void error(const YAML::Node& n, const std::string& key, const std::string& msg) {
    errors_.push_back(fmt::format("{}:{}: {}: {}", source_, n.Mark().line + 1, key, msg));
  }

  void number(const YAML::Node& map, const char* key, double& out, double lo, double hi) {
    const YAML::Node n = map[key];
    if (!n) return;
    try {
      const double v = n.as<double>();
      if (!(v >= lo && v <= hi)) {
        error(n, key, fmt::format("expected a number in [{}, {}], got {}", lo, hi, n.Scalar()));
        return;
      }
      out = v;
    } catch (const YAML::Exception&) {
      error(n, key, fmt::format("expected a number in [{}, {}]", lo, hi));
    }
  }

  void range(const YAML::Node& map, const char* key, Range& out) {
    const YAML::Node n = map[key];
    if (!n) return;
    if (!n.IsSequence() || n.size() != 2) {
      error(n, key, "expected [min, max] in seconds");
      return;
    }
    try {
      Range r{n[0].as<double>(), n[1].as<double>()};
      if (!(r.min >= 0.0 && r.min <= r.max && r.max <= 86400.0)) {
        error(n, key, "expected 0 <= min <= max <= 86400");
        return;
      }
      out = r;
    } catch (const YAML::Exception&) {
      error(n, key, "expected [min, max] in seconds");
    }
  }

  void known_keys(const YAML::Node& map, const std::set<std::string>& keys,
                  const std::string& prefix) {
    for (const auto& kv : map) {
      const std::string k = kv.first.as<std::string>();
      if (!keys.count(k)) error(kv.first, prefix + k, "unknown key");
    }
  }

 private:
  std::string source_;
  std::vector<std::string>& errors_;
};

}  // namespace

ScenarioLoad load_scenario(const std::string& name, const std::string& scenario_dir) {
  ScenarioLoad out;
  std::string path = name;
  if (!std::filesystem::exists(path)) path = scenario_dir + "/" + name + ".yaml";
  if (!std::filesystem::exists(path)) {
    out.errors.push_back(
        fmt::format("scenario '{}': no such file (looked for {} and {})", name, name, path));
    return out;
  }
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::Exception& e) {
    out.errors.push_back(fmt::format("{}:{}: {}", path, e.mark.line + 1, e.msg));
    return out;
  }
  if (!root.IsMap()) {
    out.errors.push_back(fmt::format("{}: expected a map of scenario keys", path));
    return out;
  }
  Scenario& s = out.scenario;
  Reader r(path, out.errors);
  r.known_keys(root,
               {"name", "description", "movement", "speed", "turn_rate", "target", "arrive_radius",
                "patrol_length", "input_rate_hz", "cross_zones", "route", "churn", "reconnect",
                "party", "guild", "chat", "combat"},
               "");
  s.name =
      root["name"] ? root["name"].as<std::string>() : std::filesystem::path(path).stem().string();
  if (root["description"]) s.description = root["description"].as<std::string>();
  if (const YAML::Node m = root["movement"]) {
    const std::string v = m.as<std::string>();
    if (v == "idle")
      s.movement = Movement::kIdle;
    else if (v == "wander")
      s.movement = Movement::kWander;
    else if (v == "hotspot")
      s.movement = Movement::kHotspot;
    else if (v == "patrol")
      s.movement = Movement::kPatrol;
    else if (v == "route")
      s.movement = Movement::kRoute;
    else if (v == "hunt")
      s.movement = Movement::kHunt;
    else
      r.error(m, "movement",
              "expected one of idle, wander, hotspot, patrol, route, hunt, got '" + v + "'");
  }
  r.number(root, "speed", s.speed, 0.0, 1.0);
  r.number(root, "turn_rate", s.turn_rate, 0.0, 100.0);
  r.number(root, "arrive_radius", s.arrive_radius, 0.0, 1e6);
  r.number(root, "patrol_length", s.patrol_length, 1.0, 1e6);
  r.number(root, "input_rate_hz", s.input_rate_hz, 0.0, 1000.0);
  if (const YAML::Node route = root["route"]) {
    bool ok = route.IsSequence() && route.size() >= 2;
    for (std::size_t i = 0; ok && i < route.size(); ++i) {
      const YAML::Node pt = route[i];
      ok = pt.IsSequence() && pt.size() == 2;
      try {
        if (ok) {
          const double x = pt[0].as<double>(), y = pt[1].as<double>();
          ok = std::isfinite(x) && std::isfinite(y);
          s.route.emplace_back(x, y);
        }
      } catch (const YAML::Exception&) {
        ok = false;
      }
    }
    if (!ok) {
      s.route.clear();
      r.error(route, "route", "expected a list of at least two points [x, y] (world metres)");
    }
  }
  if (s.movement == Movement::kRoute && s.route.empty() && !root["route"]) {
    r.error(root, "route", "movement route needs a route: a list of points [x, y]");
  }
  if (const YAML::Node c = root["cross_zones"]) {
    try {
      s.cross_zones = c.as<bool>();
    } catch (const YAML::Exception&) {
      r.error(c, "cross_zones", "expected true or false");
    }
  }
  if (const YAML::Node t = root["target"]) {
    if (!t.IsMap()) {
      r.error(t, "target", "expected a map with x and y (fractions of the world, 0..1)");
    } else {
      r.known_keys(t, {"x", "y"}, "target.");
      r.number(t, "x", s.target_x, 0.0, 1.0);
      r.number(t, "y", s.target_y, 0.0, 1.0);
    }
  }
  if (const YAML::Node c = root["churn"]) {
    if (!c.IsMap()) {
      r.error(c, "churn", "expected a map with enabled, session_s, offline_s");
    } else {
      r.known_keys(c, {"enabled", "session_s", "offline_s"}, "churn.");
      if (c["enabled"]) {
        try {
          s.churn = c["enabled"].as<bool>();
        } catch (const YAML::Exception&) {
          r.error(c["enabled"], "churn.enabled", "expected true or false");
        }
      }
      r.range(c, "session_s", s.session_s);
      r.range(c, "offline_s", s.offline_s);
    }
  }
  if (const YAML::Node c = root["reconnect"]) {
    if (!c.IsMap()) {
      r.error(c, "reconnect", "expected a map with enabled, connected_s, away_s");
    } else {
      r.known_keys(c, {"enabled", "connected_s", "away_s"}, "reconnect.");
      if (c["enabled"]) {
        try {
          s.reconnect = c["enabled"].as<bool>();
        } catch (const YAML::Exception&) {
          r.error(c["enabled"], "reconnect.enabled", "expected true or false");
        }
      }
      r.range(c, "connected_s", s.connected_s);
      r.range(c, "away_s", s.away_s);
    }
  }
  if (const YAML::Node p = root["party"]) {
    if (!p.IsMap()) {
      r.error(p, "party", "expected a map with size and switch_s");
    } else {
      r.known_keys(p, {"size", "switch_s"}, "party.");
      double size = 0.0;
      if (!p["size"]) r.error(p, "party.size", "missing (members per party, 2 to 64)");
      r.number(p, "size", size, 2.0, 64.0);
      if (size != std::floor(size)) r.error(p["size"], "party.size", "expected a whole number");
      s.party_size = static_cast<std::uint32_t>(size);
      r.range(p, "switch_s", s.party_switch_s);
    }
  }
  if (const YAML::Node g = root["guild"]) {
    if (!g.IsMap()) {
      r.error(g, "guild", "expected a map with size");
    } else {
      r.known_keys(g, {"size"}, "guild.");
      double size = 0.0;
      if (!g["size"]) r.error(g, "guild.size", "missing (members per guild, 2 to 256)");
      r.number(g, "size", size, 2.0, 256.0);
      if (size != std::floor(size)) r.error(g["size"], "guild.size", "expected a whole number");
      s.guild_size = static_cast<std::uint32_t>(size);
    }
  }
  if (const YAML::Node c = root["chat"]) {
    if (!c.IsMap()) {
      r.error(c, "chat", "expected a map of lines per second by channel");
    } else {
      static const std::array<const char*, 5> kChannels = {"say", "party", "guild", "whisper",
                                                           "zone"};
      r.known_keys(c, {"say", "party", "guild", "whisper", "zone", "max_per_second", "burst"},
                   "chat.");
      for (std::size_t i = 0; i < kChannels.size(); ++i) {
        r.number(c, kChannels[i], s.chat.per_second[i], 0.0, 100.0);
      }
      r.number(c, "max_per_second", s.chat.max_per_second, 0.01, 100.0);
      r.number(c, "burst", s.chat.burst, 1.0, 100.0);
    }
  }
  if (const YAML::Node c = root["combat"]) {
    if (!c.IsMap()) {
      r.error(c, "combat", "expected a map with actions_per_second, melee_range, ...");
    } else {
      s.combat.enabled = true;
      r.known_keys(
          c, {"actions_per_second", "melee_range", "ranged_range", "respawn_after_s", "targets"},
          "combat.");
      r.number(c, "actions_per_second", s.combat.actions_per_second, 0.0, 1000.0);
      r.number(c, "melee_range", s.combat.melee_range, 0.0, 1e6);
      r.number(c, "ranged_range", s.combat.ranged_range, 0.0, 1e6);
      r.number(c, "respawn_after_s", s.combat.respawn_after_s, 0.0, 86400.0);
      if (const YAML::Node t = c["targets"]) {
        const std::string v = t.as<std::string>();
        if (v == "any")
          s.combat.targets = CombatPlan::Targets::kAny;
        else if (v == "npcs")
          s.combat.targets = CombatPlan::Targets::kNpcs;
        else if (v == "players")
          s.combat.targets = CombatPlan::Targets::kPlayers;
        else
          r.error(t, "combat.targets", "expected one of any, npcs, players, got '" + v + "'");
      }
    }
  }
  if (s.movement == Movement::kHunt) s.combat.enabled = true;
  return out;
}

}  // namespace zone::sim
