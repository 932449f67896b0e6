// The deployment files (deploy/, docs/deployment.md): every YAML document of the Agones
// and NATS manifests, and deploy/Dockerfile, checked against the server itself.
//
// Each game server (a GameServer, or a Fleet's template) is started the way zone-server
// starts: its --config and --world files, taken from the ConfigMap mounted in its pod,
// go through the server's own loaders (load_config_string, load_world_map_string,
// apply_world_zone, set_value for the other arguments, validate, check_zone_in_world),
// so a manifest cannot ship a config the server refuses. The effective config then
// decides what the manifest must say: the game port (UDP) and the admin port (TCP),
// container ports only, no Agones port; the probes on the admin endpoint, the admin token
// from a Secret, the threads within the CPU request. Each zone's public address in the
// world map (where handoff sends clients) must be one clients can reach, the zone's own,
// and the port of the one LoadBalancer Service that selects the zone's pod and sends UDP
// to its game port. The Dockerfile must copy the binary
// from where CMake puts it, install what cmake/Dependencies.cmake requires, run as a
// numeric non-root user and stop on SIGTERM.
//
// Every check returns the problems it finds; the last test cases break copies of the
// shipped files and expect each check to name the problem.
#include <doctest/doctest.h>
#include <fnmatch.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cluster/subjects.hpp"
#include "config/config_loader.hpp"
#include "config/world_map.hpp"
#include "deploy_files.hpp"

using namespace zone::deploy_test;
using zone::config::LoadResult;
using zone::config::WorldMap;
using zone::config::WorldMapResult;
using zone::config::ZoneConfig;

namespace {

const fs::path kSource = ZONE_SOURCE_DIR;

// Problems found by one check, each prefixed with where it was found, each once (a
// Service selecting the pods of two game servers is checked for each).
struct Problems {
  std::vector<std::string> list;
  void add(const std::string& where, const std::string& what) {
    std::string problem = where + ": " + what;
    if (std::find(list.begin(), list.end(), problem) == list.end()) {
      list.push_back(std::move(problem));
    }
  }
  bool has(const std::string& fragment) const {
    for (const std::string& p : list) {
      if (p.find(fragment) != std::string::npos) return true;
    }
    return false;
  }
  std::string text() const {
    std::string out;
    for (const std::string& p : list) out += "  " + p + "\n";
    return out;
  }
};

const std::vector<Document>& shipped_manifests() {
  static const std::vector<Document> documents = load_manifests(kSource);
  return documents;
}

const std::string& shipped_dockerfile() {
  static const std::string text = read_text(kSource / "deploy" / "Dockerfile").value_or("");
  return text;
}

// Deep copies, for the tests that break them.
std::vector<Document> clone(const std::vector<Document>& documents) {
  std::vector<Document> out;
  for (const Document& d : documents) out.push_back({d.file, d.index, YAML::Clone(d.node)});
  return out;
}

std::vector<std::string> string_list(const YAML::Node& node) {
  std::vector<std::string> out;
  if (!node || !node.IsSequence()) return out;
  for (const YAML::Node& n : node) out.push_back(text(n));
  return out;
}

// --- Starting a zone as zone-server's main() does ---------------------------------------

// zone-server's command line (server/zone/main.cpp): the options a manifest may use.
struct Arguments {
  std::string config = "configs/zone.yaml";  // main()'s default
  std::string world, zone;
  std::vector<std::pair<std::string, std::string>> overrides;  // key, value as for --set
  std::vector<std::string> problems;
};

Arguments parse_arguments(const std::vector<std::string>& args) {
  // The flags of main() that set one config key each.
  static const std::map<std::string, std::string> kKeyFlags = {
      {"--bind", "network.bind_address"}, {"--port", "network.port"},
      {"--admin-port", "admin.port"},     {"--tick-rate", "tick.rate_hz"},
      {"--cell-size", "aoi.cell_size"},   {"--view-radius", "aoi.view_radius"},
      {"--npcs", "npcs.count"},           {"--log-level", "log.level"}};
  Arguments a;
  std::map<std::string, int> seen;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string flag = args[i], value;
    const auto eq = flag.find('=');
    if (flag.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      a.problems.push_back("argument " + flag + " without a value");
      break;
    }
    if (flag == "-c") flag = "--config";
    // CLI11 refuses a single-valued option given twice (zone-server exits with code 2).
    if (flag != "--set" && ++seen[flag] > 1) {
      a.problems.push_back(flag + " given twice: zone-server refuses that");
    }
    if (flag == "--config") {
      a.config = value;
    } else if (flag == "--world") {
      a.world = value;
    } else if (flag == "--zone") {
      a.zone = value;
    } else if (flag == "--set") {
      const auto kv = value.find('=');
      if (kv == std::string::npos) {
        a.problems.push_back("--set " + value + ": expected KEY=VALUE");
      } else {
        a.overrides.emplace_back(value.substr(0, kv), value.substr(kv + 1));
      }
    } else if (const auto key = kKeyFlags.find(flag); key != kKeyFlags.end()) {
      a.overrides.emplace_back(key->second, value);
    } else {
      a.problems.push_back("argument " + flag + " is not one of zone-server's options here");
    }
  }
  if (a.world.empty() != a.zone.empty()) {
    a.problems.push_back("--world and --zone go together");
  }
  return a;
}

struct StartedZone {
  bool ok = false;
  std::string report;  // why not, when not ok
  Arguments arguments;
  ZoneConfig config;
  WorldMap world;
  std::string config_origin, world_origin;  // where the two files came from
};

// The effective config of the game server's zone, built as main() builds it.
StartedZone start_zone(const std::vector<Document>& documents, const GameServerSpec& gs) {
  StartedZone s;
  const YAML::Node container = gs.game_container();
  if (!container) {
    s.report = "spec.container names no container of the pod";
    return s;
  }
  s.arguments = parse_arguments(string_list(container["args"]));
  for (const std::string& p : s.arguments.problems) s.report += p + "\n";
  if (s.arguments.world.empty()) {
    s.report += "no --world and --zone: a zone of a world needs both\n";
  }
  if (!s.report.empty()) return s;

  std::string why;
  const auto config_file =
      resolve_file(documents, gs.pod_spec(), container, s.arguments.config, kSource, why);
  if (!config_file) {
    s.report = "--config " + why;
    return s;
  }
  const auto world_file =
      resolve_file(documents, gs.pod_spec(), container, s.arguments.world, kSource, why);
  if (!world_file) {
    s.report = "--world " + why;
    return s;
  }
  s.config_origin = config_file->origin;
  s.world_origin = world_file->origin;
  const WorldMapResult map = zone::config::load_world_map_string(world_file->text, s.world_origin);
  if (!map.ok()) {
    s.report = map.error_report();
    return s;
  }
  const auto index = map.map.find(s.arguments.zone);
  if (!index) {
    s.report = "--zone " + s.arguments.zone + ": no such zone in " + s.world_origin;
    return s;
  }
  LoadResult r = zone::config::load_config_string(config_file->text, s.config_origin);
  if (r.ok()) {
    zone::config::apply_world_zone(map.map, *index, r.config);
    for (const auto& [key, value] : s.arguments.overrides) {
      if (auto err = zone::config::set_value(r.config, key, value)) r.errors.push_back(*err);
    }
    for (auto& err : zone::config::validate(r.config)) r.errors.push_back(std::move(err));
    if (r.ok()) {
      for (auto& err : zone::config::check_zone_in_world(map.map, *index, r.config)) {
        r.errors.push_back(std::move(err));
      }
    }
  }
  if (!r.ok()) {
    s.report = r.error_report();
    return s;
  }
  s.ok = true;
  s.config = r.config;
  s.world = map.map;
  return s;
}

// --- Checks of the manifests ------------------------------------------------------------

// "2" -> 2, "1500m" -> 1.5; nullopt if it is neither.
std::optional<double> cpu_quantity(const std::string& q) {
  static const std::regex kCpu(R"(^([0-9]+(\.[0-9]+)?)(m?)$)");
  std::smatch m;
  if (!std::regex_match(q, m, kCpu)) return std::nullopt;
  const double v = std::stod(m[1].str());
  return m[3].str() == "m" ? v / 1000.0 : v;
}

// An httpGet probe of `container` on `path` at the admin port, or why not.
std::optional<std::string> http_probe_problem(const YAML::Node& container, const char* probe,
                                              const std::string& path, long long admin_port) {
  const YAML::Node p = container[probe];
  if (!p) return std::string("no ") + probe;
  const YAML::Node get = p["httpGet"];
  if (!get) return std::string(probe) + " is not an httpGet probe";
  if (text(get["path"]) != path) {
    return std::string(probe) + " asks for " + text(get["path"]) + ", expected " + path;
  }
  const auto port = container_port(container, get["port"]);
  if (port != admin_port) {
    return std::string(probe) + " port " + text(get["port"]) + " is not the admin port " +
           std::to_string(admin_port);
  }
  if (get["host"]) return std::string(probe) + " sets host: the probe must reach the pod";
  if (get["scheme"] && text(get["scheme"]) != "HTTP") {
    return std::string(probe) + ": the admin endpoint speaks plain HTTP";
  }
  return std::nullopt;
}

Problems check_game_server(const std::vector<Document>& documents, const GameServerSpec& gs) {
  Problems p;
  const std::string where = gs.where();
  const YAML::Node c = gs.game_container();
  const StartedZone s = start_zone(documents, gs);
  if (!s.ok) {
    p.add(where, "zone-server would not start:\n" + s.report);
    return p;
  }
  const ZoneConfig& cfg = s.config;
  const long long game_port = cfg.network.port, admin_port = cfg.admin.port;

  if (c["command"]) p.add(where, "the game container sets command, replacing the ENTRYPOINT");

  // No Agones port: clients reach the zone at its public address, its Service
  // (check_services). An Agones port would publish the game port again on a port of the
  // node, chosen anew whenever the GameServer is replaced (docs/deployment.md says why).
  const YAML::Node agones_ports = at(gs.spec, {"ports"});
  if (agones_ports && agones_ports.IsSequence() && agones_ports.size() == 0) {
    // Agones' CRD refuses an empty list (minItems 1); without the key there are none.
    p.add(where, "spec.ports is an empty list, which Agones refuses: leave it out");
  } else if (agones_ports) {
    for (const YAML::Node& port : agones_ports) {
      const auto number = integer(port["containerPort"]);
      p.add(where, "spec.ports has Agones port " + text(port["name"]) + " (" +
                       text(port["portPolicy"]) + ", containerPort " + text(port["containerPort"]) +
                       "): it would publish the " +
                       (number == admin_port ? std::string("admin") : std::string("game")) +
                       " port on the node's address, besides the zone's Service");
    }
  }

  // The game port: a UDP container port on the port the zone binds, which the zone's
  // Service targets, on the pod's address; and the admin endpoint: a TCP container port,
  // on the pod's address too. Neither on the node.
  if (cfg.network.bind_address != "0.0.0.0") {
    p.add(where, "network.bind_address is " + cfg.network.bind_address +
                     ": the Service reaches the pod's address, so bind 0.0.0.0");
  }
  if (!cfg.admin.enabled) p.add(where, "admin.enabled is false: no /healthz for the probes");
  if (cfg.admin.bind_address != "0.0.0.0") {
    p.add(where, "admin.bind_address is " + cfg.admin.bind_address +
                     ": the kubelet's probes and Prometheus reach the pod's address, bind 0.0.0.0");
  }
  bool game_declared = false, admin_declared = false;
  for (const YAML::Node& cp : c["ports"]) {
    const auto number = integer(cp["containerPort"]);
    // A container port's protocol defaults to TCP.
    const std::string protocol = cp["protocol"] ? text(cp["protocol"]) : "TCP";
    if (cp["hostPort"]) {
      p.add(where, "container port " + text(cp["name"]) +
                       " has a hostPort: it would be published on the node's address");
    }
    if (number == game_port) {
      game_declared = true;
      if (protocol != "UDP") p.add(where, "the game port's protocol is " + protocol + ", not UDP");
    }
    if (number == admin_port) {
      admin_declared = true;
      if (protocol != "TCP") p.add(where, "the admin port's protocol is not TCP");
    }
  }
  if (!game_declared) {
    std::string declared;
    for (const YAML::Node& cp : c["ports"]) {
      declared += " " + text(cp["name"]) + "=" + text(cp["containerPort"]);
    }
    p.add(where, "the game container has no container port " + std::to_string(game_port) +
                     " (the zone's game port); it has" + declared);
  }
  if (!admin_declared) {
    p.add(where, "the game container has no container port " + std::to_string(admin_port) +
                     " (the zone's admin port)");
  }

  // Probes: the kubelet's on the admin endpoint; liveness is Agones' own.
  const YAML::Node health = at(gs.spec, {"health"});
  if (text(health["disabled"]) == "true") p.add(where, "Agones health is disabled");
  if (c["livenessProbe"]) {
    p.add(where,
          "the game container has a livenessProbe: Agones then adds no /gshealthz probe, and "
          "without that probe the SDK server never checks the health pings");
  }
  if (auto e = http_probe_problem(c, "startupProbe", "/healthz", admin_port)) p.add(where, *e);
  if (auto e = http_probe_problem(c, "readinessProbe", "/readyz", admin_port)) p.add(where, *e);
  const auto period = integer(health["periodSeconds"]);
  const auto failures = integer(health["failureThreshold"]);
  if (!period || *period < 1) p.add(where, "health.periodSeconds missing or below 1");
  if (!failures || *failures < 1) p.add(where, "health.failureThreshold missing or below 1");
  if (!integer(health["initialDelaySeconds"])) p.add(where, "health.initialDelaySeconds missing");

  // The sidecar that turns /healthz into Agones health pings.
  int sidecars = 0;
  for (const YAML::Node& other : gs.pod_spec()["containers"]) {
    const auto url = env_value(other, "ZONE_HEALTH_URL");
    if (!url) continue;
    ++sidecars;
    const std::string port = std::to_string(admin_port);
    if (*url != "http://127.0.0.1:" + port + "/healthz" &&
        *url != "http://localhost:" + port + "/healthz") {
      p.add(where, text(other["name"]) + " checks " + *url + ", expected the zone's /healthz " +
                       "on 127.0.0.1:" + port);
    }
    const double interval = std::stod(env_value(other, "HEALTH_INTERVAL").value_or("2"));
    if (period && !(interval < static_cast<double>(*period))) {
      p.add(where, text(other["name"]) + " pings every " + std::to_string(interval) +
                       " s, not within health.periodSeconds");
    }
  }
  if (sidecars != 1) p.add(where, "expected one container with ZONE_HEALTH_URL (agones-health)");

  // The admin token: from a Secret, never from the ConfigMap or a literal.
  if (cfg.admin.token_file.empty() && cfg.admin.token_env.empty()) {
    p.add(where, "neither admin.token_file nor admin.token_env: the zone would log a token");
  }
  if (!cfg.admin.token_env.empty()) {
    bool from_secret = false;
    for (const YAML::Node& e : c["env"]) {
      if (text(e["name"]) != cfg.admin.token_env) continue;
      if (e["value"]) p.add(where, cfg.admin.token_env + " is a literal value, not a Secret");
      const YAML::Node ref = at(e, {"valueFrom", "secretKeyRef"});
      from_secret = !text(ref["name"]).empty() && !text(ref["key"]).empty();
    }
    if (!from_secret) {
      p.add(where, "admin.token_env names " + cfg.admin.token_env +
                       ", which the container does not take from a Secret");
    }
  }
  if (!cfg.admin.token_file.empty()) {
    bool in_secret = false;
    for (const YAML::Node& m : c["volumeMounts"]) {
      const std::string at = text(m["mountPath"]);
      if (cfg.admin.token_file.rfind(at + "/", 0) != 0 && cfg.admin.token_file != at) continue;
      for (const YAML::Node& v : gs.pod_spec()["volumes"]) {
        if (text(v["name"]) == text(m["name"]) && v["secret"]) in_secret = true;
      }
    }
    if (!in_secret) p.add(where, "admin.token_file is not in a Secret volume");
  }
  if (cfg.debug.truth) p.add(where, "debug.truth is on: every position would be served");
  if (cfg.auth.mode != zone::config::AuthMode::kTicket) {
    p.add(where,
          "auth.mode is open: anyone could join under any name; production needs "
          "auth.mode: ticket");
  }

  // Threads: 0 sizes them to the node's cores, not the pod's.
  const auto cpu = cpu_quantity(text(at(c, {"resources", "requests", "cpu"})));
  if (!cpu) {
    p.add(where, "the game container requests no CPU");
  } else {
    const double cores = std::ceil(*cpu);
    for (const auto& [key, value] : {std::pair{"threads.workers", cfg.threads.workers},
                                     std::pair{"threads.network", cfg.threads.network}}) {
      if (value == 0) {
        p.add(where, std::string(key) + " is 0, one per core of the node: set it to the request");
      } else if (value > cores) {
        p.add(where, std::string(key) + " = " + std::to_string(value) + " exceeds the " +
                         text(at(c, {"resources", "requests", "cpu"})) + " CPUs requested");
      }
    }
  }

  // SIGTERM: the server exits within a second (tests/server/shutdown_test.cpp).
  const auto grace = integer(at(gs.pod_spec(), {"terminationGracePeriodSeconds"}));
  if (!grace || *grace < 2) {
    p.add(where, "terminationGracePeriodSeconds missing or below 2 (the server needs up to 1 s)");
  }
  const YAML::Node port_annotation =
      at(gs.spec, {"template", "metadata", "annotations", "prometheus.io/port"});
  if (port_annotation && integer(port_annotation) != admin_port) {
    p.add(where, "prometheus.io/port is not the admin port");
  }
  return p;
}

Problems check_config_maps(const std::vector<Document>& documents) {
  Problems p;
  // What each game server reads from a ConfigMap, and as what.
  std::map<std::string, std::string> used;  // origin -> "world" or "config"
  for (const GameServerSpec& gs : game_servers(documents)) {
    const YAML::Node c = gs.game_container();
    if (!c) continue;  // check_game_server reports it
    const Arguments a = parse_arguments(string_list(c["args"]));
    std::string why;
    for (const auto& [path, as] : {std::pair{a.world, "world"}, std::pair{a.config, "config"}}) {
      if (const auto f = resolve_file(documents, gs.pod_spec(), c, path, kSource, why)) {
        used[f->origin] = as;
      }
    }
  }
  for (const Document& d : documents) {
    if (d.kind() != "ConfigMap") continue;
    // NATS's own config: check_nats_auth reads it.
    if (text(at(d.node, {"metadata", "labels", "app.kubernetes.io/name"})) == "nats") continue;
    for (const auto& entry : d.node["data"]) {
      const std::string key = entry.first.Scalar();
      const std::string value = text(entry.second);
      std::string lower = key;
      for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      if (lower.find("token") != std::string::npos) {
        p.add(d.where(), "key " + key + ": the admin token belongs in a Secret");
      }
      const std::string origin = "ConfigMap " + d.name() + ", key " + key;
      const auto use = used.find(origin);
      if (use == used.end()) {
        p.add(d.where(), "key " + key + " is read by no game server");
      } else if (use->second == "world") {
        const WorldMapResult r = zone::config::load_world_map_string(value, origin);
        if (!r.ok()) p.add(d.where(), "the world map loader refuses it:\n" + r.error_report());
      } else {
        const LoadResult r = zone::config::load_config_string(value, origin);
        if (!r.ok()) p.add(d.where(), "the config loader refuses it:\n" + r.error_report());
      }
    }
  }
  return p;
}

Problems check_fleets(const std::vector<Document>& documents) {
  Problems p;
  std::map<std::string, std::vector<std::string>> fleets_of;  // world + zone -> Fleets
  std::map<std::string, WorldMap> worlds;
  for (const GameServerSpec& gs : game_servers(documents)) {
    if (gs.document->kind() != "Fleet") continue;
    const YAML::Node fleet = at(gs.document->node, {"spec"});
    if (integer(fleet["replicas"]) != 1) {
      p.add(gs.where(), "replicas is " + text(fleet["replicas"]) + ": a zone runs once");
    }
    if (text(at(fleet, {"strategy", "type"})) != "Recreate") {
      p.add(gs.where(), "strategy is not Recreate: an update would run the zone twice at once");
    }
    const StartedZone s = start_zone(documents, gs);
    if (!s.ok) continue;  // check_game_server reports it
    worlds[s.world_origin] = s.world;
    fleets_of[s.world_origin + " zone " + s.arguments.zone].push_back(gs.document->name());
  }
  if (worlds.empty()) {
    p.add("manifests", "no Fleet starts a zone of a world map: nothing to check them against");
  }
  for (const auto& [origin, world] : worlds) {
    for (const auto& z : world.zones) {
      const auto& fleets = fleets_of[origin + " zone " + z.name];
      if (fleets.size() != 1) {
        p.add(origin,
              "zone " + z.name + " has " + std::to_string(fleets.size()) + " Fleets; expected one");
      }
    }
  }
  return p;
}

Problems check_nats(const std::vector<Document>& documents) {
  Problems p;
  std::set<std::string> urls;
  for (const GameServerSpec& gs : game_servers(documents)) {
    const StartedZone s = start_zone(documents, gs);
    if (s.ok) urls.insert(s.world.nats_url);
  }
  if (urls.empty()) p.add("manifests", "no zone of a world");
  static const std::regex kUrl(R"(^(?:nats|tls)://([a-z0-9-]+)(\.[a-z0-9.-]+)?:([0-9]+)$)");
  for (const std::string& url : urls) {
    std::smatch m;
    if (!std::regex_match(url, m, kUrl)) {
      p.add(url, "expected nats://SERVICE[.NAMESPACE...]:PORT or tls://...");
      continue;
    }
    const std::string service = m[1].str();
    const long long port = std::stoll(m[3].str());
    const Document* svc = nullptr;
    for (const Document& d : documents) {
      if (d.kind() == "Service" && d.name() == service) svc = &d;
    }
    if (svc == nullptr) {
      p.add(url, "no Service " + service + " in the manifests");
      continue;
    }
    YAML::Node target(YAML::NodeType::Undefined);
    for (const YAML::Node& sp : at(svc->node, {"spec", "ports"})) {
      if (integer(sp["port"]) == port) target.reset(sp["targetPort"]);
    }
    if (!target) p.add(svc->where(), "no port " + std::to_string(port));
    const YAML::Node selector = at(svc->node, {"spec", "selector"});
    if (!selector || selector.size() == 0) p.add(svc->where(), "no selector");
    bool selected = false;
    for (const Document& d : documents) {
      if (d.kind() != "Deployment") continue;
      const YAML::Node labels = at(d.node, {"spec", "template", "metadata", "labels"});
      const auto has_all = [&](const YAML::Node& wanted) {
        for (const auto& kv : wanted) {
          if (text(labels[kv.first.Scalar()]) != text(kv.second)) return false;
        }
        return true;
      };
      if (!has_all(at(d.node, {"spec", "selector", "matchLabels"}))) {
        p.add(d.where(), "its selector does not match its own template's labels");
      }
      if (!selector || !has_all(selector)) continue;
      selected = true;
      bool port_found = false;
      for (const YAML::Node& c : at(d.node, {"spec", "template", "spec", "containers"})) {
        if (target && container_port(c, target)) port_found = true;
      }
      if (!port_found) p.add(d.where(), "no container port for the Service's targetPort");
    }
    if (!selected) p.add(svc->where(), "selects no Deployment of the manifests");
  }
  return p;
}

// A Secret's key that a container sees as a file: which Secret and key, and its mode.
struct SecretFile {
  std::string secret, key;
  long long mode = 0644;  // Kubernetes' default
};

long long file_mode(const YAML::Node& n, long long otherwise) {
  const std::string t = text(n);
  if (t.empty()) return otherwise;
  try {
    // YAML 1.1, as kubectl reads it: 0440 is octal.
    return t.size() > 1 && t[0] == '0' ? std::stoll(t, nullptr, 8) : std::stoll(t);
  } catch (const std::exception&) {
    return -1;
  }
}

// The Secret behind `path` in `container` of `pod_spec`: a secret volume, or a projected
// one's secret source, mounted where the path lies and listing the file's key.
std::optional<SecretFile> secret_file(const YAML::Node& pod_spec, const YAML::Node& container,
                                      const std::string& path) {
  for (const YAML::Node& mount : container["volumeMounts"]) {
    std::string dir = text(mount["mountPath"]);
    if (!dir.empty() && dir.back() != '/') dir += "/";
    if (path.rfind(dir, 0) != 0) continue;
    const std::string file = path.substr(dir.size());
    for (const YAML::Node& v : pod_spec["volumes"]) {
      if (text(v["name"]) != text(mount["name"])) continue;
      const auto from_items = [&](const std::string& secret, const YAML::Node& items,
                                  long long mode) -> std::optional<SecretFile> {
        for (const YAML::Node& item : items) {
          if (text(item["path"]) == file) {
            return SecretFile{secret, text(item["key"]), file_mode(item["mode"], mode)};
          }
        }
        return std::nullopt;
      };
      if (const YAML::Node secret = v["secret"]) {
        return from_items(text(secret["secretName"]), secret["items"],
                          file_mode(secret["defaultMode"], 0644));
      }
      const long long mode = file_mode(at(v, {"projected", "defaultMode"}), 0644);
      for (const YAML::Node& source : at(v, {"projected", "sources"})) {
        if (const YAML::Node secret = source["secret"]) {
          if (auto f = from_items(text(secret["name"]), secret["items"], mode)) return f;
        }
      }
    }
  }
  return std::nullopt;
}

// The bus's credentials (docs/security.md, "The bus"): every world map logs its zones in
// (nats.password_file) over TLS (nats.tls.ca_file); NATS's config (the ConfigMap its
// Deployment reads with --config) has exactly one user per zone, with exactly the
// permissions of cluster::bus_permissions, and a password from the environment that
// comes from the very Secret key that zone's pods mount as the password file, readable
// by no other user; and NATS requires TLS.
Problems check_nats_auth(const std::vector<Document>& documents) {
  Problems p;
  // The NATS server's config, from its Deployment's --config.
  YAML::Node conf, nats_container;
  std::string conf_origin;
  for (const Document& d : documents) {
    if (d.kind() != "Deployment") continue;
    const YAML::Node pod = at(d.node, {"spec", "template", "spec"});
    for (const YAML::Node& c : pod["containers"]) {
      const std::vector<std::string> args = string_list(c["args"]);
      const auto flag = std::find(args.begin(), args.end(), "--config");
      if (flag == args.end() || flag + 1 == args.end()) {
        p.add(d.where(), "nats-server is started without --config: no users, no TLS");
        continue;
      }
      std::string why;
      const auto f = resolve_file(documents, pod, c, *(flag + 1), kSource, why);
      if (!f) {
        p.add(d.where(), "--config " + why);
        continue;
      }
      try {
        conf = YAML::Load(f->text);
      } catch (const YAML::Exception& e) {
        p.add(f->origin, std::string("not readable as YAML: ") + e.what());
        continue;
      }
      conf_origin = f->origin;
      nats_container.reset(c);
    }
  }
  if (!conf) {
    if (p.list.empty()) p.add("manifests", "no NATS Deployment with a config");
    return p;
  }
  if (text(at(conf, {"tls", "cert_file"})).empty() || text(at(conf, {"tls", "key_file"})).empty()) {
    p.add(conf_origin, "no tls with cert_file and key_file: the bus would be in clear");
  }
  if (conf["no_auth_user"]) p.add(conf_origin, "no_auth_user lets clients in without credentials");
  std::map<std::string, YAML::Node> users;
  for (const YAML::Node& u : at(conf, {"authorization", "users"})) {
    if (!users.emplace(text(u["user"]), u).second) {
      p.add(conf_origin, "user " + text(u["user"]) + " given twice");
    }
  }
  if (users.empty()) p.add(conf_origin, "no authorization.users: anyone may publish as any zone");
  const auto sorted = [](std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  std::set<std::string> zones;
  for (const GameServerSpec& gs : game_servers(documents)) {
    const StartedZone s = start_zone(documents, gs);
    if (!s.ok) continue;  // check_game_server reports it
    const std::string& zone = s.arguments.zone;
    zones.insert(zone);
    const zone::config::BusAuth& auth = s.world.auth;
    if (auth.password_file.empty()) {
      p.add(s.world_origin, "no nats.password_file: any client of NATS could speak for any zone");
      continue;
    }
    if (auth.tls_ca_file.empty()) p.add(s.world_origin, "no nats.tls.ca_file: no TLS to NATS");
    const std::string where = gs.where() + ", zone " + zone;
    const auto user = users.find(zone);
    if (user == users.end()) {
      p.add(conf_origin, "no user " + zone + ": the zone cannot log in");
      continue;
    }
    const zone::cluster::BusPermissions want =
        zone::cluster::bus_permissions(s.world.subject_prefix, zone);
    const YAML::Node perms = user->second["permissions"];
    for (const auto& [kind, subjects] :
         {std::pair{"publish", want.publish}, std::pair{"subscribe", want.subscribe}}) {
      if (sorted(string_list(at(perms, {kind, "allow"}))) != sorted(subjects)) {
        p.add(conf_origin, "user " + zone + ": " + kind + " permissions are not the zone's own " +
                               "subjects (cluster::bus_permissions)");
      }
      if (at(perms, {kind, "deny"})) {
        p.add(conf_origin, "user " + zone + ": a deny list beside the allow list");
      }
    }
    // The password: $VAR from a Secret key, the one the zone's pods mount.
    const std::string password = text(user->second["password"]);
    if (password.size() < 2 || password[0] != '$') {
      p.add(conf_origin, "user " + zone + ": the password is not a $VARIABLE (a Secret's)");
      continue;
    }
    std::string secret, key;
    for (const YAML::Node& e : nats_container["env"]) {
      if (text(e["name"]) == password.substr(1)) {
        secret = text(at(e, {"valueFrom", "secretKeyRef", "name"}));
        key = text(at(e, {"valueFrom", "secretKeyRef", "key"}));
      }
    }
    if (secret.empty()) {
      p.add(conf_origin, "user " + zone + ": " + password.substr(1) +
                             " is not set from a Secret in the NATS container");
      continue;
    }
    const std::string file = zone::config::zone_path(auth.password_file, zone);
    const auto mounted = secret_file(gs.pod_spec(), gs.game_container(), file);
    if (!mounted) {
      p.add(where, "its password file " + file + " is no Secret's key in the pod");
    } else if (mounted->secret != secret || mounted->key != key) {
      p.add(where, "its password file is Secret " + mounted->secret + " key " + mounted->key +
                       ", NATS checks Secret " + secret + " key " + key);
    } else if (mounted->mode < 0 || (mounted->mode & 07) != 0) {
      p.add(where, "its password file is readable by other users (mode " +
                       std::to_string(mounted->mode) + "); zone-server refuses it");
    }
  }
  for (const auto& [name, u] : users) {
    if (zones.count(name) == 0) p.add(conf_origin, "user " + name + " is no zone of the world");
  }
  return p;
}

// A host of the world map that no client can connect to, or why not: a wildcard, this
// machine, or a name that only the cluster's DNS (or a LAN's) resolves.
std::optional<std::string> unreachable_host(const std::string& host) {
  if (host.empty() || host == "0.0.0.0" || host == "::" || host == "[::]") {
    return std::string("a wildcard, no address to connect to");
  }
  if (host == "localhost" || host.rfind("127.", 0) == 0 || host == "::1" || host == "[::1]") {
    return std::string("the client's own machine");
  }
  const auto ends_with = [&](const std::string& tail) {
    return host.size() >= tail.size() &&
           host.compare(host.size() - tail.size(), tail.size(), tail) == 0;
  };
  if (host.find('.') == std::string::npos || ends_with(".svc") || ends_with(".cluster.local") ||
      ends_with(".local")) {
    return std::string("a name only the cluster's DNS resolves, not clients'");
  }
  return std::nullopt;
}

std::string address_text(const zone::config::Address& a) {
  return a.host + ":" + std::to_string(a.port);
}

// Each zone's public address (docs/deployment.md, "Addresses"): in every world map, a
// host clients can reach, distinct for every zone; and for each game server, exactly one
// Service selecting its pod, a LoadBalancer with externalTrafficPolicy Local that sends
// UDP on the public port to the zone's game port, and nothing else of the zone.
Problems check_services(const std::vector<Document>& documents) {
  Problems p;
  std::map<std::string, WorldMap> worlds;  // by origin
  for (const GameServerSpec& gs : game_servers(documents)) {
    const StartedZone s = start_zone(documents, gs);
    if (!s.ok) continue;  // check_game_server reports it
    worlds[s.world_origin] = s.world;
    const auto& entry = s.world.zones[*s.world.find(s.arguments.zone)];
    const std::string where = gs.where();
    const long long game_port = s.config.network.port, admin_port = s.config.admin.port;
    const YAML::Node container = gs.game_container();
    const auto labels = gs.pod_labels();

    std::vector<const Document*> services;
    bool fleet_selector = false;
    for (const Document& d : documents) {
      if (d.kind() != "Service") continue;
      const YAML::Node selector = at(d.node, {"spec", "selector"});
      if (selects(selector, labels)) services.push_back(&d);
      if (selector && selector.IsMap() && selector["agones.dev/fleet"]) fleet_selector = true;
    }
    if (services.empty()) {
      p.add(where, "no Service selects its pod: clients sent to zone " + entry.name + " at " +
                       address_text(entry.public_game) + " reach nothing" +
                       (fleet_selector ? std::string(" (a selector on agones.dev/fleet "
                                                     "selects no pod: Agones puts that label "
                                                     "on the GameServer only)")
                                       : std::string()));
    } else if (services.size() > 1) {
      std::string names;
      for (const Document* d : services) names += " " + d->name();
      p.add(where, std::to_string(services.size()) + " Services select its pod:" + names +
                       "; expected one, zone " + entry.name + "'s public address");
    }
    for (const Document* svc : services) {
      const std::string sw = svc->where();
      const YAML::Node spec = at(svc->node, {"spec"});
      const std::string type = spec["type"] ? text(spec["type"]) : "ClusterIP";
      if (type != "LoadBalancer") {
        p.add(sw, "type " + type + ": clients outside the cluster reach zone " + entry.name +
                      " through a LoadBalancer");
      }
      if (text(spec["externalTrafficPolicy"]) != "Local") {
        p.add(sw,
              "externalTrafficPolicy is not Local: the zone would see a node's address "
              "instead of each client's, and its per-address limits would count all the "
              "clients entering by one node as one");
      }
      int game_entries = 0;
      for (const YAML::Node& sp : spec["ports"]) {
        const std::string protocol = sp["protocol"] ? text(sp["protocol"]) : "TCP";
        const YAML::Node target_node = sp["targetPort"] ? sp["targetPort"] : sp["port"];
        const auto target = container_port(container, target_node);
        const std::string name = text(sp["name"]);
        if (target == admin_port) {
          p.add(sw, "port " + name + " publishes zone " + entry.name +
                        "'s admin endpoint: it stays inside the cluster");
        } else if (target != game_port) {
          p.add(sw, "port " + name + " targets " + text(target_node) + ", which zone " +
                        entry.name + " does not listen on (its game port is " +
                        std::to_string(game_port) + ")");
        } else if (protocol != "UDP") {
          p.add(sw, "port " + name + " is " + protocol + ": the game is ENet over UDP");
        } else {
          ++game_entries;
          if (integer(sp["port"]) != entry.public_game.port) {
            p.add(sw, "port " + name + " is " + text(sp["port"]) + ", not the port of zone " +
                          entry.name + "'s public address " + address_text(entry.public_game));
          }
        }
      }
      if (game_entries != 1) {
        p.add(sw, std::to_string(game_entries) + " UDP ports to zone " + entry.name +
                      "'s game port " + std::to_string(game_port) + "; expected one");
      }
      const YAML::Node dns =
          at(svc->node, {"metadata", "annotations", "external-dns.alpha.kubernetes.io/hostname"});
      if (dns && text(dns) != entry.public_game.host) {
        p.add(sw, "its external-dns hostname " + text(dns) + " is not the host of zone " +
                      entry.name + "'s public address " + address_text(entry.public_game));
      }
    }
  }
  if (worlds.empty()) p.add("manifests", "no game server starts a zone of a world map");
  for (const auto& [origin, world] : worlds) {
    std::map<std::string, std::string> zone_at;  // public address -> zone
    for (const auto& z : world.zones) {
      const std::string address = address_text(z.public_game);
      if (const auto why = unreachable_host(z.public_game.host)) {
        p.add(origin, "zone " + z.name + "'s public address " + address + " is " + *why);
      }
      if (z.public_game.port == 0) p.add(origin, "zone " + z.name + " has no public port");
      const auto [other, inserted] = zone_at.emplace(address, z.name);
      if (!inserted) {
        p.add(origin, "zones " + other->second + " and " + z.name + " have one public address, " +
                          address + ": a client sent to one could reach the other");
      }
    }
  }
  return p;
}

// --- Checks of the Dockerfile -----------------------------------------------------------

// The Debian packages cmake/Dependencies.cmake requires (zone_require(VAR package)); those
// of the tests only when the build configures them.
std::vector<std::string> required_packages(bool with_tests) {
  const std::string text = read_text(kSource / "cmake" / "Dependencies.cmake").value_or("");
  std::vector<std::string> out;
  bool in_tests = false;
  static const std::regex kRequire(R"(zone_require\(\s*\w+\s+([A-Za-z0-9.+-]+)\s*\))");
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.find("if(ZONE_BUILD_TESTS)") != std::string::npos) in_tests = true;
    if (line.rfind("endif()", 0) == 0) in_tests = false;
    std::smatch m;
    if (std::regex_search(line, m, kRequire) && (with_tests || !in_tests)) {
      out.push_back(m[1].str());
    }
  }
  return out;
}

// The port/protocol pairs of the shipped manifests' game servers: "7777/udp", "7780/tcp".
std::set<std::string> manifest_ports(const std::vector<Document>& documents) {
  std::set<std::string> out;
  for (const GameServerSpec& gs : game_servers(documents)) {
    const StartedZone s = start_zone(documents, gs);
    if (!s.ok) continue;
    out.insert(std::to_string(s.config.network.port) + "/udp");
    out.insert(std::to_string(s.config.admin.port) + "/tcp");
  }
  return out;
}

bool is_non_root_numeric_user(const std::string& user) {
  static const std::regex kUser(R"(^([0-9]+)(:[0-9]+)?$)");
  std::smatch m;
  return std::regex_match(user, m, kUser) && std::stoll(m[1].str()) != 0;
}

Problems check_dockerfile(const std::string& dockerfile, const std::set<std::string>& ports) {
  Problems p;
  const std::string where = "deploy/Dockerfile";
  const std::vector<Stage> stages = parse_dockerfile(dockerfile);
  if (stages.size() < 2) {
    p.add(where, "expected a build stage and a runtime stage");
    return p;
  }
  for (const Stage& s : stages) {
    if (s.base.rfind("debian:bookworm", 0) != 0) {
      p.add(where, "stage " + s.name + " is based on " + s.base + ", not Debian bookworm");
    }
    for (const Instruction& i : s.instructions) {
      if ((i.op == "RUN" || i.op == "ADD") && i.args.find("://") != std::string::npos) {
        p.add(where + ":" + std::to_string(i.line), "downloads something: apt only");
      }
    }
  }
  const Stage& runtime = stages.back();
  if (runtime.base != "debian:bookworm-slim") p.add(where, "the runtime is not bookworm-slim");

  // The binary: copied from where the build stage's CMake puts it, and run.
  const Instruction* copy = nullptr;
  std::string from;
  for (const Instruction* c : runtime.all("COPY")) {
    const auto w = words(c->args);
    if (!w.empty() && w[0].rfind("--from=", 0) == 0) {
      copy = c;
      from = w[0].substr(7);
    }
  }
  const Stage* build = nullptr;
  for (const Stage& s : stages) {
    if (!from.empty() && s.name == from) build = &s;
  }
  std::string binary;
  if (copy == nullptr || build == nullptr) {
    p.add(where, "the runtime stage copies nothing from a build stage");
  } else {
    std::string build_dir;
    bool release = false, target = false, no_tests = false;
    static const std::regex kBuildDir(R"(cmake\s+-S\s+\.\s+-B\s*(\S+))");
    for (const Instruction* run : build->all("RUN")) {
      std::smatch m;
      if (std::regex_search(run->args, m, kBuildDir)) build_dir = m[1].str();
      release |= run->args.find("-DCMAKE_BUILD_TYPE=Release") != std::string::npos;
      target |= run->args.find("--target zone-server") != std::string::npos;
      no_tests |= run->args.find("-DZONE_BUILD_TESTS=OFF") != std::string::npos;
    }
    if (!release) p.add(where, "the build is not a Release build");
    if (!target) p.add(where, "the build does not build the zone-server target");
    const Instruction* workdir = build->last("WORKDIR");
    const fs::path produced =
        (fs::path(workdir ? workdir->args : "/") / build_dir / ZONE_SERVER_BUILD_PATH)
            .lexically_normal();
    const auto w = words(copy->args);
    if (w.size() != 3 || fs::path(w[1]).lexically_normal() != produced) {
      p.add(where + ":" + std::to_string(copy->line), "copies " + (w.size() > 1 ? w[1] : "?") +
                                                          ", but CMake builds zone-server at " +
                                                          produced.string());
    }
    binary = w.size() == 3 ? w[2] : "";
    // Every package CMake requires of this build.
    const auto installed = build->apt_packages();
    for (const std::string& pkg : required_packages(!no_tests)) {
      if (std::find(installed.begin(), installed.end(), pkg) == installed.end()) {
        p.add(where, "the build stage does not install " + pkg +
                         " (cmake/Dependencies.cmake requires it)");
      }
    }
    for (const char* tool : {"build-essential", "cmake"}) {
      if (std::find(installed.begin(), installed.end(), tool) == installed.end()) {
        p.add(where, std::string("the build stage does not install ") + tool);
      }
    }
  }
  for (const std::string& pkg : runtime.apt_packages()) {
    if (pkg.size() > 4 && pkg.compare(pkg.size() - 4, 4, "-dev") == 0) {
      p.add(where, "the runtime installs a -dev package: " + pkg);
    }
    if (pkg == "build-essential" || pkg == "cmake") p.add(where, "the runtime installs " + pkg);
  }
  const Instruction* entry = runtime.last("ENTRYPOINT");
  const auto entry_argv = entry ? exec_form(entry->args) : std::nullopt;
  if (!entry_argv || entry_argv->empty() || entry_argv->front() != binary) {
    p.add(where, "the runtime's ENTRYPOINT is not the exec form of " + binary);
  }
  // The default command: a config of configs/, copied into the working directory.
  const Instruction* cmd = runtime.last("CMD");
  const auto cmd_argv = cmd ? exec_form(cmd->args) : std::nullopt;
  const Instruction* workdir = runtime.last("WORKDIR");
  bool configs_copied = false;
  for (const Instruction* c : runtime.all("COPY")) {
    const auto w = words(c->args);
    if (w.size() == 2 && fs::path(w[0]).lexically_normal() == "configs/" && workdir &&
        (fs::path(workdir->args) / w[1]).lexically_normal() ==
            (fs::path(workdir->args) / "configs/").lexically_normal()) {
      configs_copied = true;
    }
  }
  if (!configs_copied) p.add(where, "the runtime does not copy configs/ to its WORKDIR");
  if (!cmd_argv || cmd_argv->size() != 2 || (*cmd_argv)[0] != "--config") {
    p.add(where, "the runtime's CMD is not [\"--config\", FILE]");
  } else if (!zone::config::load_config_file((kSource / (*cmd_argv)[1]).string()).ok()) {
    p.add(where, "the runtime's CMD names " + (*cmd_argv)[1] + ", which does not load");
  }

  // Every stage that runs something: a numeric non-root user, SIGTERM.
  for (const Stage& s : stages) {
    if (s.last("ENTRYPOINT") == nullptr) continue;
    const Instruction* user = s.last("USER");
    if (user == nullptr || !is_non_root_numeric_user(user->args)) {
      p.add(where, "stage " + s.name + " runs as " + (user ? user->args : "root") +
                       ", expected a numeric non-root USER (runAsNonRoot checks it)");
    } else if (user->line > s.last("ENTRYPOINT")->line) {
      p.add(where, "stage " + s.name + ": USER after ENTRYPOINT");
    }
    const Instruction* stop = s.last("STOPSIGNAL");
    if (stop == nullptr || stop->args != "SIGTERM") {
      p.add(where, "stage " + s.name + " does not stop on SIGTERM");
    }
  }
  // The ports: those of the manifests, each with its protocol.
  std::set<std::string> exposed;
  for (const Instruction* e : runtime.all("EXPOSE")) {
    for (const std::string& w : words(e->args)) exposed.insert(w);
  }
  if (exposed != ports) {
    std::string want, got;
    for (const auto& s : ports) want += " " + s;
    for (const auto& s : exposed) got += " " + s;
    p.add(where, "EXPOSE" + got + ", expected the manifests' ports:" + want);
  }
  // The health sidecar's stage runs the script of deploy/.
  bool health_stage = false;
  for (const Stage& s : stages) {
    for (const Instruction* c : s.all("COPY")) {
      const auto w = words(c->args);
      const Instruction* e = s.last("ENTRYPOINT");
      const auto argv = e ? exec_form(e->args) : std::nullopt;
      if (w.size() == 2 && w[0] == "deploy/agones-health.sh" && argv &&
          std::find(argv->begin(), argv->end(), w[1]) != argv->end()) {
        health_stage = true;
      }
    }
  }
  if (!health_stage) p.add(where, "no stage runs deploy/agones-health.sh");
  return p;
}

// Breaks a copy of the shipped manifests with `edit` and returns the problems every
// manifest check finds in it.
Problems broken_manifests(const std::function<void(std::vector<Document>&)>& edit) {
  std::vector<Document> documents = clone(shipped_manifests());
  edit(documents);
  Problems all;
  for (const GameServerSpec& gs : game_servers(documents)) {
    for (auto& s : check_game_server(documents, gs).list) all.list.push_back(s);
  }
  for (auto* check :
       {&check_config_maps, &check_fleets, &check_nats, &check_nats_auth, &check_services}) {
    for (auto& s : check(documents).list) all.list.push_back(s);
  }
  return all;
}

Document& find(std::vector<Document>& documents, const std::string& kind, const std::string& name) {
  for (Document& d : documents) {
    if (d.kind() == kind && d.name() == name) return d;
  }
  FAIL("no " << kind << " " << name << " in the manifests");
  throw std::logic_error("unreachable");
}

YAML::Node game_container(Document& fleet) {
  for (YAML::Node c : fleet.node["spec"]["template"]["spec"]["template"]["spec"]["containers"]) {
    if (text(c["name"]) == "zone-server") return c;
  }
  FAIL("no zone-server container in " << fleet.where());
  throw std::logic_error("unreachable");
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto found = text.find(from);
  REQUIRE_MESSAGE(found != std::string::npos, "'" << from << "' not found");
  return text.replace(found, from.size(), to);
}

}  // namespace

TEST_CASE(
    "deploy manifests: every document is a known kind with its apiVersion and a unique name") {
  const std::map<std::string, std::string> api = {{"GameServer", "agones.dev/v1"},
                                                  {"Fleet", "agones.dev/v1"},
                                                  {"ConfigMap", "v1"},
                                                  {"Service", "v1"},
                                                  {"Deployment", "apps/v1"}};
  std::map<std::string, int> count;
  std::set<std::string> names;
  for (const Document& d : shipped_manifests()) {
    INFO(d.where());
    const auto expected = api.find(d.kind());
    CHECK_MESSAGE(expected != api.end(), "unexpected kind (a Secret is never shipped)");
    if (expected != api.end()) CHECK(text(d.node["apiVersion"]) == expected->second);
    CHECK_FALSE(d.name().empty());
    CHECK_MESSAGE(names.insert(d.kind() + "/" + d.name()).second, "a second " << d.kind());
    ++count[d.kind()];
  }
  CHECK(count["ConfigMap"] == 2);  // the zones' configs, and NATS's
  CHECK(count["GameServer"] == 1);
  CHECK(count["Fleet"] >= 1);
  CHECK(count["Deployment"] == 1);
  // NATS's, and one per zone (a zone's public address).
  CHECK(count["Service"] == count["Fleet"] + 1);
}

TEST_CASE("deploy manifests: each game server starts as zone-server would and matches its config") {
  const auto servers = game_servers(shipped_manifests());
  REQUIRE(servers.size() >= 2);
  for (const GameServerSpec& gs : servers) {
    const StartedZone s = start_zone(shipped_manifests(), gs);
    INFO(gs.where());
    REQUIRE_MESSAGE(s.ok, s.report);
    // What the shipped manifests promise (docs/deployment.md).
    CHECK(s.config.name == s.arguments.zone);
    CHECK(s.config.network.port == 7777);
    CHECK(s.config.admin.port == 7780);
    CHECK(s.config.admin.token_env == "ZONE_ADMIN_TOKEN");
    CHECK(s.config_origin == "ConfigMap zone-world, key zone.yaml");
    CHECK(s.world_origin == "ConfigMap zone-world, key world.yaml");
    const Problems p = check_game_server(shipped_manifests(), gs);
    CHECK_MESSAGE(p.list.empty(), p.text());
  }
}

TEST_CASE(
    "deploy manifests: the ConfigMap holds configs the server's loaders accept and no token") {
  const Problems p = check_config_maps(shipped_manifests());
  CHECK_MESSAGE(p.list.empty(), p.text());
}

TEST_CASE("deploy manifests: one Fleet of one replica per zone of the world") {
  const Problems p = check_fleets(shipped_manifests());
  CHECK_MESSAGE(p.list.empty(), p.text());
}

TEST_CASE("deploy manifests: the world map's NATS URL names the NATS Service of deploy/nats.yaml") {
  const Problems p = check_nats(shipped_manifests());
  CHECK_MESSAGE(p.list.empty(), p.text());
}

TEST_CASE("deploy manifests: NATS admits each zone with its own Secret, TLS and permissions") {
  const Problems p = check_nats_auth(shipped_manifests());
  CHECK_MESSAGE(p.list.empty(), p.text());
}

TEST_CASE(
    "deploy manifests: every zone has a public address, its own LoadBalancer Service's, for "
    "handoff") {
  // The world map as the ConfigMap ships it: every zone has a public entry, which Transfers
  // send clients to; never the wildcard the zones bind.
  const std::vector<Document>& documents = shipped_manifests();
  const auto cm = std::find_if(documents.begin(), documents.end(), [](const Document& d) {
    return d.kind() == "ConfigMap" && d.name() == "zone-world";
  });
  REQUIRE(cm != documents.end());
  const std::string world_yaml = text(at(cm->node, {"data", "world.yaml"}));
  REQUIRE(world_yaml.find("public:") != std::string::npos);
  const WorldMapResult world = zone::config::load_world_map_string(world_yaml, "world.yaml");
  REQUIRE_MESSAGE(world.ok(), world.error_report());
  REQUIRE(world.map.zones.size() >= 2);
  std::set<std::string> addresses;
  for (const auto& z : world.map.zones) {
    INFO("zone " << z.name);
    CHECK(z.game.host == "0.0.0.0");  // what it binds in its pod
    CHECK_FALSE(unreachable_host(z.public_game.host).has_value());
    CHECK(z.public_game.host != z.game.host);
    CHECK(z.public_game.port == 7777);
    CHECK(addresses.insert(address_text(z.public_game)).second);
  }
  // And the Services that make those addresses real.
  const Problems p = check_services(documents);
  CHECK_MESSAGE(p.list.empty(), p.text());
}

TEST_CASE("deploy Dockerfile: builds zone-server from Debian packages and runs it as it should") {
  REQUIRE_FALSE(shipped_dockerfile().empty());
  const std::set<std::string> ports = manifest_ports(shipped_manifests());
  CHECK(ports == std::set<std::string>{"7777/udp", "7780/tcp"});
  const Problems p = check_dockerfile(shipped_dockerfile(), ports);
  CHECK_MESSAGE(p.list.empty(), p.text());
  // The binary's path is CMake's own answer, not a guess.
  CHECK(std::string(ZONE_SERVER_BUILD_PATH) == "server/zone/zone-server");
}

TEST_CASE("deploy .dockerignore: leaves out build folders and .git but none of the sources") {
  const auto text = read_text(kSource / ".dockerignore");
  REQUIRE(text.has_value());
  std::vector<std::string> patterns;
  std::istringstream in(*text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.front() != '#') patterns.push_back(line);
  }
  const auto ignored = [&](const std::string& name) {
    for (const std::string& pattern : patterns) {
      if (fnmatch(pattern.c_str(), name.c_str(), 0) == 0) return true;
    }
    return false;
  };
  for (const char* name : {"build", "build-release", "build-asan", "build-docker", ".git"}) {
    CHECK_MESSAGE(ignored(name), name << " would be sent to the Docker build");
  }
  for (const auto& entry : fs::directory_iterator(kSource)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("build", 0) == 0 || name.front() == '.') continue;
    // A local run's saved characters (make run writes data/), left out on purpose.
    if (name == "data") continue;
    CHECK_MESSAGE(!ignored(name), name << " is left out of the Docker build");
  }
}

TEST_CASE("deploy manifests: the checks name each kind of broken manifest") {
  SUBCASE("a game port that is not the zone's") {
    const Problems p = broken_manifests([](std::vector<Document>& d) {
      game_container(find(d, "Fleet", "zone-east"))["ports"][0]["containerPort"] = 7778;
    });
    CHECK_MESSAGE(p.has("Fleet zone-east): the game container has no container port 7777 "
                        "(the zone's game port); it has game=7778 admin=7780"),
                  p.text());
  }
  SUBCASE("a game port on the node: an Agones port or a hostPort") {
    const Problems p = broken_manifests([](std::vector<Document>& d) {
      YAML::Node port;
      port["name"] = "game";
      port["portPolicy"] = "Dynamic";
      port["containerPort"] = 7777;
      port["protocol"] = "UDP";
      find(d, "Fleet", "zone-west").node["spec"]["template"]["spec"]["ports"].push_back(port);
      game_container(find(d, "Fleet", "zone-east"))["ports"][0]["hostPort"] = 7777;
    });
    CHECK_MESSAGE(p.has("Fleet zone-west): spec.ports has Agones port game (Dynamic, "
                        "containerPort 7777): it would publish the game port"),
                  p.text());
    CHECK_MESSAGE(p.has("Fleet zone-east): container port game has a hostPort"), p.text());
  }
  SUBCASE("a zone without a public address") {
    const Problems p = broken_manifests([](std::vector<Document>& d) {
      YAML::Node data = find(d, "ConfigMap", "zone-world").node["data"];
      data["world.yaml"] =
          replaced(data["world.yaml"].Scalar(), "    public: \"east.game.example.com:7777\"\n", "");
    });
    CHECK_MESSAGE(p.has("zones[1].public: missing: the game address 0.0.0.0 is a wildcard"),
                  p.text());
  }
  SUBCASE("public addresses clients cannot reach") {
    const Problems p = broken_manifests([](std::vector<Document>& d) {
      YAML::Node data = find(d, "ConfigMap", "zone-world").node["data"];
      std::string world = data["world.yaml"].Scalar();
      world = replaced(world, "west.game.example.com:7777", "127.0.0.1:7777");
      world = replaced(world, "east.game.example.com:7777", "zone-east-game.world.svc:7777");
      data["world.yaml"] = world;
    });
    CHECK_MESSAGE(p.has("zone west's public address 127.0.0.1:7777 is the client's own machine"),
                  p.text());
    CHECK_MESSAGE(p.has("zone east's public address zone-east-game.world.svc:7777 is a name "
                        "only the cluster's DNS resolves"),
                  p.text());
  }
  SUBCASE("two zones at one public address") {
    const Problems p = broken_manifests([](std::vector<Document>& d) {
      YAML::Node data = find(d, "ConfigMap", "zone-world").node["data"];
      data["world.yaml"] =
          replaced(data["world.yaml"].Scalar(), "east.game.example.com", "west.game.example.com");
    });
    CHECK_MESSAGE(p.has("zones west and east have one public address, west.game.example.com:7777"),
                  p.text());
    CHECK_MESSAGE(p.has("Service zone-east-game): its external-dns hostname "
                        "east.game.example.com is not the host of zone east's public address"),
                  p.text());
  }
  SUBCASE("a public port that is not the Service's") {
    const Problems p = broken_manifests([](std::vector<Document>& d) {
      YAML::Node data = find(d, "ConfigMap", "zone-world").node["data"];
      data["world.yaml"] = replaced(data["world.yaml"].Scalar(), "east.game.example.com:7777",
                                    "east.game.example.com:7778");
    });
    CHECK_MESSAGE(p.has("Service zone-east-game): port game is 7777, not the port of zone east's "
                        "public address east.game.example.com:7778"),
                  p.text());
  }
  SUBCASE("a Service that selects the zone's pods by the Fleet's label") {
    const Problems p = broken_manifests([](std::vector<Document>& d) {
      YAML::Node spec = find(d, "Service", "zone-west-game").node["spec"];
      spec.remove("selector");
      spec["selector"]["agones.dev/fleet"] = "zone-west";
    });
    CHECK_MESSAGE(p.has("Fleet zone-west): no Service selects its pod: clients sent to zone west "
                        "at west.game.example.com:7777 reach nothing (a selector on "
                        "agones.dev/fleet selects no pod"),
                  p.text());
    CHECK_MESSAGE(p.has("GameServer zone-west): no Service selects its pod"), p.text());
    CHECK_MESSAGE(!p.has("Fleet zone-east): no Service"), p.text());
  }
  SUBCASE("a Service that selects every zone") {
    const Problems p = broken_manifests([](std::vector<Document>& d) {
      find(d, "Service", "zone-east-game").node["spec"]["selector"].remove("zone-server/zone");
    });
    CHECK_MESSAGE(p.has("Fleet zone-west): 2 Services select its pod: zone-west-game "
                        "zone-east-game; expected one"),
                  p.text());
  }
  SUBCASE("a Service to the wrong port, over TCP, with the admin port, without Local") {
    const Problems p = broken_manifests([](std::vector<Document>& d) {
      YAML::Node spec = find(d, "Service", "zone-west-game").node["spec"];
      spec["externalTrafficPolicy"] = "Cluster";
      spec["ports"][0]["protocol"] = "TCP";
      YAML::Node admin;
      admin["name"] = "admin";
      admin["port"] = 7780;
      admin["targetPort"] = "admin";  // by name, through the container's ports
      spec["ports"].push_back(admin);
      YAML::Node east = find(d, "Service", "zone-east-game").node["spec"];
      east["type"] = "NodePort";
      east["ports"][0]["targetPort"] = 7778;
    });
    CHECK_MESSAGE(p.has("Service zone-west-game): externalTrafficPolicy is not Local"), p.text());
    CHECK_MESSAGE(p.has("Service zone-west-game): port game is TCP"), p.text());
    CHECK_MESSAGE(p.has("Service zone-west-game): port admin publishes zone west's admin"),
                  p.text());
    CHECK_MESSAGE(p.has("Service zone-west-game): 0 UDP ports to zone west's game port 7777"),
                  p.text());
    CHECK_MESSAGE(p.has("Service zone-east-game): type NodePort"), p.text());
    CHECK_MESSAGE(p.has("Service zone-east-game): port game targets 7778, which zone east does "
                        "not listen on"),
                  p.text());
  }
  SUBCASE("a zone config the server refuses") {
    const Problems p = broken_manifests([](std::vector<Document>& d) {
      YAML::Node data = find(d, "ConfigMap", "zone-world").node["data"];
      data["zone.yaml"] =
          replaced(data["zone.yaml"].Scalar(), "view_radius: 30.0", "view_radius: 50.0");
    });
    CHECK_MESSAGE(p.has("zone-server would not start"), p.text());
    CHECK_MESSAGE(p.has("ghosts.distance"), p.text());
  }
  SUBCASE("a world map the server refuses") {
    const Problems p = broken_manifests([](std::vector<Document>& d) {
      YAML::Node data = find(d, "ConfigMap", "zone-world").node["data"];
      data["world.yaml"] = replaced(data["world.yaml"].Scalar(), "max_x: 2000.0", "max_x: 900.0");
    });
    CHECK_MESSAGE(p.has("world map loader refuses it"), p.text());
  }
  SUBCASE("a zone the world map does not have") {
    const Problems p = broken_manifests([](std::vector<Document>& d) {
      game_container(find(d, "Fleet", "zone-east"))["args"][5] = "north";
    });
    CHECK_MESSAGE(p.has("--zone north: no such zone"), p.text());
    CHECK_MESSAGE(p.has("zone east has 0 Fleets"), p.text());
  }
  SUBCASE("a config file that is not in the ConfigMap") {
    const Problems p = broken_manifests([](std::vector<Document>& d) {
      game_container(find(d, "Fleet", "zone-west"))["args"][1] = "/etc/zone/zone-west.yaml";
    });
    CHECK_MESSAGE(p.has("ConfigMap zone-world has no key 'zone-west.yaml'"), p.text());
  }
  SUBCASE("a livenessProbe that would switch Agones health off") {
    const Problems p = broken_manifests([](std::vector<Document>& d) {
      YAML::Node c = game_container(find(d, "Fleet", "zone-west"));
      c["livenessProbe"] = YAML::Clone(c["startupProbe"]);
    });
    CHECK_MESSAGE(p.has("has a livenessProbe"), p.text());
  }
  SUBCASE("a probe on the wrong port and a sidecar on the wrong URL") {
    const Problems p = broken_manifests([](std::vector<Document>& d) {
      YAML::Node c = game_container(find(d, "Fleet", "zone-west"));
      c["readinessProbe"]["httpGet"]["port"] = 7777;
      YAML::Node pod = find(d, "Fleet", "zone-west").node["spec"]["template"]["spec"]["template"];
      pod["spec"]["containers"][1]["env"][0]["value"] = "http://127.0.0.1:7781/healthz";
    });
    CHECK_MESSAGE(p.has("readinessProbe port 7777 is not the admin port 7780"), p.text());
    CHECK_MESSAGE(p.has("checks http://127.0.0.1:7781/healthz"), p.text());
  }
  SUBCASE("an admin endpoint on loopback") {
    const Problems p = broken_manifests([](std::vector<Document>& d) {
      YAML::Node c = game_container(find(d, "Fleet", "zone-west"));
      c["args"].push_back("--set");
      c["args"].push_back("admin.bind_address=127.0.0.1");
    });
    CHECK_MESSAGE(p.has("admin.bind_address is 127.0.0.1"), p.text());
  }
  SUBCASE("a zone anyone may join under any name") {
    const Problems p = broken_manifests([](std::vector<Document>& d) {
      YAML::Node c = game_container(find(d, "Fleet", "zone-east"));
      c["args"].push_back("--set");
      c["args"].push_back("auth.mode=open");
    });
    CHECK_MESSAGE(p.has("Fleet zone-east): auth.mode is open"), p.text());
  }
  SUBCASE("the token as a literal and in the ConfigMap") {
    const Problems p = broken_manifests([](std::vector<Document>& d) {
      YAML::Node env = game_container(find(d, "Fleet", "zone-west"))["env"][0];
      env.remove("valueFrom");
      env["value"] = "0123456789abcdef0123";
      find(d, "ConfigMap", "zone-world").node["data"]["admin-token"] = "0123456789abcdef0123";
    });
    CHECK_MESSAGE(p.has("ZONE_ADMIN_TOKEN is a literal value"), p.text());
    CHECK_MESSAGE(p.has("key admin-token: the admin token belongs in a Secret"), p.text());
  }
  SUBCASE("two replicas and a rolling update") {
    const Problems p = broken_manifests([](std::vector<Document>& d) {
      YAML::Node spec = find(d, "Fleet", "zone-east").node["spec"];
      spec["replicas"] = 2;
      spec["strategy"]["type"] = "RollingUpdate";
    });
    CHECK_MESSAGE(p.has("replicas is 2"), p.text());
    CHECK_MESSAGE(p.has("strategy is not Recreate"), p.text());
  }
  SUBCASE("threads beyond the CPU request") {
    const Problems p = broken_manifests([](std::vector<Document>& d) {
      game_container(find(d, "Fleet", "zone-west"))["resources"]["requests"]["cpu"] = "1500m";
    });
    CHECK_MESSAGE(!p.has("exceeds"), p.text());  // 1.5 CPUs: threads on 2 cores still fit
    const Problems q = broken_manifests([](std::vector<Document>& d) {
      game_container(find(d, "Fleet", "zone-west"))["resources"]["requests"]["cpu"] = "500m";
    });
    CHECK_MESSAGE(q.has("threads.workers = 2 exceeds the 500m CPUs requested"), q.text());
  }
  SUBCASE("a NATS URL that names no Service") {
    const Problems p = broken_manifests([](std::vector<Document>& d) {
      YAML::Node data = find(d, "ConfigMap", "zone-world").node["data"];
      data["world.yaml"] =
          replaced(data["world.yaml"].Scalar(), "tls://nats:4222", "tls://nats-main:4222");
    });
    CHECK_MESSAGE(p.has("no Service nats-main"), p.text());
  }
  SUBCASE("a zone allowed to publish as another") {
    const Problems p = broken_manifests([](std::vector<Document>& d) {
      YAML::Node data = find(d, "ConfigMap", "nats-config").node["data"];
      data["nats.conf"] =
          replaced(data["nats.conf"].Scalar(), "\"world.ghosts.*.west\"", "\"world.ghosts.*.*\"");
    });
    CHECK_MESSAGE(p.has("user west: publish permissions are not the zone's own subjects"),
                  p.text());
  }
  SUBCASE("a world map without credentials") {
    const Problems p = broken_manifests([](std::vector<Document>& d) {
      YAML::Node data = find(d, "ConfigMap", "zone-world").node["data"];
      data["world.yaml"] = replaced(data["world.yaml"].Scalar(),
                                    "password_file: \"/etc/zone-nats/{zone}.password\"", "");
    });
    CHECK_MESSAGE(p.has("no nats.password_file"), p.text());
  }
  SUBCASE("a zone's pod mounting another zone's password") {
    const Problems p = broken_manifests([](std::vector<Document>& d) {
      YAML::Node pod =
          find(d, "Fleet", "zone-east").node["spec"]["template"]["spec"]["template"]["spec"];
      for (YAML::Node v : pod["volumes"]) {
        if (v["name"].Scalar() == "nats")
          v["projected"]["sources"][0]["secret"]["name"] = "nats-zone-west";
      }
    });
    CHECK_MESSAGE(p.has("its password file is Secret nats-zone-west key password, NATS checks "
                        "Secret nats-zone-east"),
                  p.text());
  }
  SUBCASE("a password file others can read") {
    const Problems p = broken_manifests([](std::vector<Document>& d) {
      YAML::Node pod =
          find(d, "Fleet", "zone-west").node["spec"]["template"]["spec"]["template"]["spec"];
      for (YAML::Node v : pod["volumes"]) {
        if (v["name"].Scalar() == "nats") v["projected"]["defaultMode"] = "0444";
      }
    });
    CHECK_MESSAGE(p.has("readable by other users"), p.text());
  }
  SUBCASE("NATS without TLS, or with a user that is no zone") {
    const Problems p = broken_manifests([](std::vector<Document>& d) {
      YAML::Node data = find(d, "ConfigMap", "nats-config").node["data"];
      std::string conf = data["nats.conf"].Scalar();
      conf = replaced(conf,
                      conf.substr(conf.find("tls: {"),
                                  conf.find('\n', conf.find("tls: {")) - conf.find("tls: {") + 1),
                      "");
      conf = replaced(conf, "\n  ]\n", "\n    ,{user: \"ops\", password: \"x\"}\n  ]\n");
      data["nats.conf"] = conf;
    });
    CHECK_MESSAGE(p.has("no tls with cert_file and key_file"), p.text());
    CHECK_MESSAGE(p.has("user ops is no zone of the world"), p.text());
  }
}

TEST_CASE("deploy Dockerfile: the checks name each kind of broken Dockerfile") {
  const std::set<std::string> ports = {"7777/udp", "7780/tcp"};
  const std::string& good = shipped_dockerfile();
  SUBCASE("a binary path CMake does not produce") {
    const Problems p = check_dockerfile(replaced(good, "/src/build-docker/server/zone/zone-server",
                                                 "/src/build-docker/zone-server"),
                                        ports);
    CHECK_MESSAGE(
        p.has("but CMake builds zone-server at /src/build-docker/server/zone/zone-server"),
        p.text());
  }
  SUBCASE("root and no stop signal") {
    std::string broken = replaced(good, "USER 10001:10001\n# The game", "USER root\n# The game");
    broken = replaced(broken, "STOPSIGNAL SIGTERM\nENTRYPOINT [\"/usr/local/bin/zone-server\"]",
                      "ENTRYPOINT [\"/usr/local/bin/zone-server\"]");
    const Problems p = check_dockerfile(broken, ports);
    CHECK_MESSAGE(p.has("stage runtime runs as root"), p.text());
    CHECK_MESSAGE(p.has("stage runtime does not stop on SIGTERM"), p.text());
  }
  SUBCASE("a missing build dependency and a download") {
    std::string broken = replaced(good, "      libnats-dev \\\n", "");
    broken = replaced(broken, "WORKDIR /src\n",
                      "WORKDIR /src\nRUN curl -fsSL https://example.com/x | sh\n");
    const Problems p = check_dockerfile(broken, ports);
    CHECK_MESSAGE(p.has("does not install libnats-dev"), p.text());
    CHECK_MESSAGE(p.has("downloads something"), p.text());
  }
  SUBCASE("ports other than the manifests'") {
    const Problems p =
        check_dockerfile(replaced(good, "EXPOSE 7777/udp", "EXPOSE 7777/tcp"), ports);
    CHECK_MESSAGE(p.has("EXPOSE 7777/tcp 7780/tcp, expected the manifests' ports: 7777/udp"),
                  p.text());
  }
}
