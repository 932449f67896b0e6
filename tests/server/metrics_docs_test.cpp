// The metric names the documentation gives are the ones /metrics exports, so that a doc and
// the code cannot drift apart unnoticed (issue 32: docs/security.md named admission
// counters that /metrics never had).
//
// What is read: every file docs/*.md, README.md and configs/*.yaml. Every word matching
// \bzone_[a-z0-9_]+ in them is a metric name, except:
//   - a file name: the word followed by a file extension (zone_params.hpp, zone_reload.cpp);
//   - a word of kNotMetrics below (library targets, a function), each with its reason;
//     an entry must still occur in the files and must not be a metric family, so the list
//     cannot go stale or hide a metric.
// A metric name must be a family of /metrics (a `# TYPE` line) or the name of one of its
// samples (histograms' and summaries' _bucket, _sum and _count). A name followed by `*`
// (zone_bus_*) is a prefix: some family must start with it. A name followed by labels in
// braces is held to them as well:
//   - `{reason}`: the family's samples carry a `reason` label;
//   - `{reason="bad_hello"}`: some sample carries reason="bad_hello" (quoted: those
//     values exist, others may too);
//   - `{reason=address|handshakes}`: the values the family's samples carry for `reason`
//     are exactly these (unquoted: the complete list, checked both ways).
//
// /metrics of two zones: one alone and one in a world of zones (its NATS server is not
// there: the zone starts anyway, and its world families are exported all the same). Every
// family is always exported, at 0 if nothing happened, except the world's own families
// (ghosts, bus, handoff), which a zone alone does not have. Checked: a zone in a world
// exports every family a zone alone does; every metric name in the files is exported by
// the zone in a world; and the families only a zone in a world exports are exactly those
// docs/world.md names in its "Metrics" section (which says "Only in a world").
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "admin_http.hpp"
#include "config/world_map.hpp"
#include "harness.hpp"
#include "zone/logger.hpp"
#include "zone/zone_server.hpp"

using namespace std::chrono_literals;
using namespace zone;

namespace {

// zone_ words of the scanned files that are not metrics.
const std::map<std::string, std::string> kNotMetrics = {
    {"zone_bus", "docs/world.md: the CMake library of server/bus/"},
    {"zone_cluster", "docs/world.md: the CMake library of server/cluster/"},
    {"zone_world", "docs/world.md: the CMake library of server/world/"},
    {"zone_of", "docs/world.md: world::zone_of() in world/entity.hpp, an id's zone index"},
    {"zone_script", "docs/scripting.md: the CMake library of server/script/"},
    {"zone_game", "docs/scripting.md: the CMake library of server/game/"},
    {"zone_channel", "configs/zone.yaml: the key chat.zone_channel"},
    // docs/architecture.md's layer table names every library's CMake target.
    {"zone_aoi", "docs/architecture.md: the CMake library of server/aoi/"},
    {"zone_replication", "docs/architecture.md: the CMake library of server/replication/"},
    {"zone_net", "docs/architecture.md: the CMake library of server/net/"},
    {"zone_auth", "docs/architecture.md: the CMake library of server/auth/"},
    {"zone_persist", "docs/architecture.md: the CMake library of server/persist/"},
    {"zone_config", "docs/architecture.md: the CMake library of server/config/"},
    {"zone_admin", "docs/architecture.md: the CMake library of server/admin/"},
    {"zone_ingest", "docs/architecture.md: the CMake library of server/zone/ingest.*"},
    {"zone_core", "docs/architecture.md: the CMake library of server/zone/"},
    {"zone_protocol", "docs/architecture.md: the CMake library of shared/protocol/"},
    {"zone_replica", "docs/architecture.md: the CMake library of shared/replica/"},
    {"zone_util", "docs/architecture.md: the CMake library of shared/util/"},
    {"zone_motion", "docs/architecture.md: the CMake library of shared/motion/"},
    {"zone_game_params", "docs/architecture.md: the CMake library of server/zone/game_params.hpp"},
    {"zone_client", "docs/architecture.md: the CMake library of client-sim/client/"},
    {"zone_sim", "docs/architecture.md: the CMake library of client-sim/sim/"},
};

// One /metrics answer: its families (from the `# TYPE` lines), its sample names, and the
// label values each family's samples carry.
struct Exposition {
  std::map<std::string, std::string> families;  // name -> type
  std::set<std::string> samples;
  std::map<std::string, std::map<std::string, std::set<std::string>>> labels;
  std::vector<std::string> errors;  // lines that do not parse or belong to no family
};

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The family a sample belongs to, or "" for none.
std::string family_of(const Exposition& e, const std::string& sample) {
  if (e.families.count(sample)) return sample;
  for (const char* suffix : {"_bucket", "_sum", "_count"}) {
    if (!ends_with(sample, suffix)) continue;
    const std::string base = sample.substr(0, sample.size() - std::string(suffix).size());
    const auto f = e.families.find(base);
    if (f == e.families.end()) continue;
    if (f->second == "histogram" || (f->second == "summary" && std::string(suffix) != "_bucket")) {
      return base;
    }
  }
  return "";
}

Exposition parse_exposition(const std::string& text) {
  Exposition e;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    if (line.rfind("# TYPE ", 0) == 0) {
      std::istringstream words(line.substr(7));
      std::string name, type;
      words >> name >> type;
      e.families[name] = type;
      continue;
    }
    if (line[0] == '#') continue;
    const std::size_t name_end = line.find_first_of("{ ");
    if (name_end == std::string::npos) {
      e.errors.push_back("no value: " + line);
      continue;
    }
    const std::string name = line.substr(0, name_end);
    e.samples.insert(name);
    const std::string family = family_of(e, name);
    if (family.empty()) {
      e.errors.push_back("a sample of no family (no # TYPE line before it): " + line);
      continue;
    }
    if (line[name_end] != '{') continue;
    // label="value",... with \\, \" and \n escaped in values.
    std::size_t i = name_end + 1;
    while (i < line.size() && line[i] != '}') {
      const std::size_t eq = line.find("=\"", i);
      if (eq == std::string::npos) break;
      const std::string label = line.substr(i, eq - i);
      std::string value;
      std::size_t j = eq + 2;
      for (; j < line.size() && line[j] != '"'; ++j) {
        if (line[j] == '\\' && j + 1 < line.size()) ++j;
        value += line[j];
      }
      e.labels[family][label].insert(value);
      i = j + 1;
      if (i < line.size() && line[i] == ',') ++i;
    }
    if (i >= line.size() || line[i] != '}') e.errors.push_back("bad labels: " + line);
  }
  return e;
}

// A metric name as a scanned file gives it.
struct Mention {
  std::string where;              // file:line
  std::string name;               // the zone_ word
  std::string labels;             // what the braces after it hold, without them ("" if none)
  bool prefix = false;            // followed by `*`
  bool in_world_section = false;  // in docs/world.md's "Metrics" section
};

struct Scan {
  std::vector<Mention> mentions;
  std::set<std::string> not_metrics_seen;  // kNotMetrics words met
  std::size_t file_names = 0;              // zone_ words skipped as file names
  std::vector<std::string> errors;
};

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in, "cannot read " << path.string());
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The files the docs are: docs/*.md, README.md and configs/*.yaml, relative to the source.
std::vector<std::string> doc_files() {
  const std::filesystem::path root = ZONE_SOURCE_DIR;
  std::vector<std::string> files = {"README.md"};
  for (const auto& [dir, ext] : {std::pair{"docs", ".md"}, std::pair{"configs", ".yaml"}}) {
    for (const auto& entry : std::filesystem::directory_iterator(root / dir)) {
      if (entry.is_regular_file() && entry.path().extension() == ext) {
        files.push_back(std::filesystem::relative(entry.path(), root).string());
      }
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

void scan_file(const std::string& relative, Scan& scan) {
  const std::string text = read_file(std::filesystem::path(ZONE_SOURCE_DIR) / relative);
  static const std::regex word(R"(\bzone_[a-z0-9_]+)");
  static const std::regex file_extension(
      R"(^\.(cpp|hpp|h|cc|md|yaml|yml|json|sh|py|txt|html|js)\b)");
  // docs/world.md's "Metrics" section: from its heading to the next one of its level.
  std::size_t section_begin = std::string::npos, section_end = std::string::npos;
  if (relative == "docs/world.md") {
    section_begin = text.find("\n## Metrics\n");
    if (section_begin == std::string::npos) {
      scan.errors.push_back("docs/world.md has no \"## Metrics\" section");
    } else {
      section_end = text.find("\n## ", section_begin + 1);
      if (section_end == std::string::npos) section_end = text.size();
    }
  }
  std::size_t line = 1, counted_to = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), word); it != std::sregex_iterator();
       ++it) {
    const auto at = static_cast<std::size_t>(it->position());
    line +=
        static_cast<std::size_t>(std::count(text.begin() + static_cast<std::ptrdiff_t>(counted_to),
                                            text.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
    counted_to = at;
    const std::string name = it->str();
    const std::string where = relative + ":" + std::to_string(line);
    const std::size_t end = at + name.size();
    const std::string after = text.substr(end, 64);
    if (std::regex_search(after, file_extension)) {
      ++scan.file_names;
      continue;
    }
    if (kNotMetrics.count(name)) {
      scan.not_metrics_seen.insert(name);
      continue;
    }
    Mention m{.where = where,
              .name = name,
              .labels = "",
              .prefix = false,
              .in_world_section =
                  at > section_begin && at < section_end && section_begin != std::string::npos};
    if (!after.empty() && after[0] == '*') {
      m.prefix = true;
    } else if (!after.empty() && after[0] == '{') {
      const std::size_t close = text.find('}', end);
      const std::size_t newline = text.find('\n', end);
      if (close == std::string::npos || (newline != std::string::npos && newline < close)) {
        scan.errors.push_back(where + ": " + name + "{ without a closing brace on its line");
        continue;
      }
      m.labels = text.substr(end + 1, close - end - 1);
    }
    scan.mentions.push_back(m);
  }
}

std::string trim(const std::string& s) {
  const std::size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

std::vector<std::string> split(const std::string& s, char by) {
  std::vector<std::string> out;
  std::string piece;
  std::istringstream in(s);
  while (std::getline(in, piece, by)) out.push_back(trim(piece));
  return out;
}

// What is wrong with one mention against /metrics ("" if nothing).
std::string check_mention(const Mention& m, const Exposition& e) {
  if (m.prefix) {
    for (const auto& [family, type] : e.families) {
      if (family.rfind(m.name, 0) == 0) return "";
    }
    return m.where + ": no family of /metrics starts with " + m.name + "\n";
  }
  if (!e.samples.count(m.name) && !e.families.count(m.name)) {
    return m.where + ": " + m.name + " is not in /metrics\n";
  }
  if (m.labels.empty()) return "";
  const std::string family = e.families.count(m.name) ? m.name : family_of(e, m.name);
  const auto labels = e.labels.find(family);
  std::string problems;
  for (const std::string& item : split(m.labels, ',')) {
    const std::size_t eq = item.find('=');
    const std::string label = trim(item.substr(0, eq));
    const auto values = labels == e.labels.end() ? nullptr : &labels->second;
    if (values == nullptr || !values->count(label)) {
      problems += m.where + ": " + family + " has no label " + label + " in /metrics\n";
      continue;
    }
    if (eq == std::string::npos) continue;
    const std::set<std::string>& exported = values->at(label);
    std::set<std::string> named;
    bool quoted = false;
    for (std::string v : split(item.substr(eq + 1), '|')) {
      if (v.size() >= 2 && v.front() == '"' && v.back() == '"') {
        v = v.substr(1, v.size() - 2);
        quoted = true;
      }
      named.insert(v);
    }
    for (const std::string& v : named) {
      if (!exported.count(v)) {
        problems += m.where + ": " + family + "{" + label + "=\"" + v + "\"} is not in /metrics\n";
      }
    }
    if (quoted) continue;  // quoted values: these exist; unquoted: the complete list
    for (const std::string& v : exported) {
      if (!named.count(v)) {
        problems += m.where + ": " + family + " exports " + label + "=\"" + v +
                    "\", which the list there lacks\n";
      }
    }
  }
  return problems;
}

std::string join(const std::set<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// A TCP port nobody listens on (the kernel's pick, closed again): the world's NATS server,
// which is not there.
std::uint16_t unused_tcp_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0;
  ::close(fd);
  REQUIRE(ok);
  return ntohs(a.sin_port);
}

// /metrics of a running test zone, once published after a tick (zone_ticks_total above 0:
// the copy published at start-up, before any tick, has no world families yet).
Exposition scrape(std::uint16_t admin_port) {
  // A deadline for failure only: the loop waits on a tick.
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  test::HttpAnswer answer;
  for (;;) {
    answer = test::admin_get(admin_port, "/metrics");
    if (answer.status == 200 && answer.body.find("\nzone_ticks_total ") != std::string::npos &&
        answer.body.find("\nzone_ticks_total 0\n") == std::string::npos) {
      break;
    }
    REQUIRE(std::chrono::steady_clock::now() < deadline);
    std::this_thread::sleep_for(20ms);
  }
  Exposition e = parse_exposition(answer.body);
  std::string errors;
  for (const std::string& error : e.errors) errors += error + "\n";
  CHECK_MESSAGE(errors.empty(), "/metrics does not parse:\n" << errors);
  return e;
}

}  // namespace

TEST_CASE("metrics docs: every metric name in docs/, README.md and configs/ is in /metrics") {
  net::EnetLibrary enet;
  const AdminSetup admin{.token = test::kTestAdminToken, .config_source = nullptr};

  Exposition alone;
  {
    test::ServerThread server(test::small_zone(), admin);
    alone = scrape(server.zone().admin_port());
  }

  // West of a world of two zones, on a NATS server that is not there.
  const std::string world_yaml =
      "nats:\n  url: \"nats://127.0.0.1:" + std::to_string(unused_tcp_port()) +
      "\"\n  subject_prefix: \"metrics-docs\"\n"
      "zones:\n"
      "  - name: west\n"
      "    rect: {min_x: 0, min_y: 0, max_x: 200, max_y: 200}\n"
      "    game: \"127.0.0.1:0\"\n    admin: \"127.0.0.1:0\"\n"
      "  - name: east\n"
      "    rect: {min_x: 200, min_y: 0, max_x: 400, max_y: 200}\n"
      "    game: \"127.0.0.1:0\"\n    admin: \"127.0.0.1:0\"\n";
  const config::WorldMapResult map = config::load_world_map_string(world_yaml, "<test world>");
  REQUIRE_MESSAGE(map.ok(), map.error_report());
  config::ZoneConfig west = test::small_zone();
  config::apply_world_zone(map.map, 0, west);
  REQUIRE(config::check_zone_in_world(map.map, 0, west).empty());
  Exposition in_world;
  {
    Logger log(west.log.level);
    ZoneServer zone(west, log, admin,
                    WorldSetup{.map = map.map, .zone_index = 0, .bus_secrets = {}, .statics = {}});
    std::atomic<bool> stop{false};
    std::thread loop([&] { zone.run([&] { return stop.load(); }); });
    in_world = scrape(zone.admin_port());
    stop = true;
    loop.join();
  }

  // A zone in a world exports everything a zone alone does.
  std::set<std::string> missing_in_world;
  for (const auto& [family, type] : alone.families) {
    if (!in_world.families.count(family)) missing_in_world.insert(family);
  }
  CHECK_MESSAGE(missing_in_world.empty(), "only a zone alone exports: " << join(missing_in_world));

  Scan scan;
  const std::vector<std::string> files = doc_files();
  for (const std::string& f : files) scan_file(f, scan);
  for (const std::string& error : scan.errors) FAIL_CHECK(error);
  // Enough found that a broken pattern cannot pass unnoticed.
  CHECK(files.size() >= 9);
  CHECK(scan.mentions.size() >= 80);
  CHECK(scan.file_names >= 4);

  // Every name the files give is in /metrics, with the labels they give.
  std::string problems;
  for (const Mention& m : scan.mentions) problems += check_mention(m, in_world);
  CHECK_MESSAGE(problems.empty(), "metric names the docs give that /metrics lacks:\n" << problems);

  // The world-only families are docs/world.md's "Metrics" section, no more, no fewer.
  std::set<std::string> world_only, world_section;
  for (const auto& [family, type] : in_world.families) {
    if (!alone.families.count(family)) world_only.insert(family);
  }
  for (const Mention& m : scan.mentions) {
    if (m.in_world_section) world_section.insert(m.name);
  }
  CHECK(world_only.size() >= 10);
  CHECK_MESSAGE(world_only == world_section,
                "exported only in a world: " << join(world_only)
                                             << "\ndocs/world.md's Metrics section names: "
                                             << join(world_section));

  // The list of words that are not metrics stays true and tight.
  for (const auto& [name, reason] : kNotMetrics) {
    CAPTURE(name);
    CAPTURE(reason);
    CHECK_MESSAGE(scan.not_metrics_seen.count(name),
                  "no longer in the docs: drop it from the list");
    CHECK_MESSAGE(!in_world.families.count(name), "a metric family of that name exists");
  }
}

TEST_CASE("metrics docs: the admission families are exported before anything is refused") {
  net::EnetLibrary enet;
  test::ServerThread server(test::small_zone(),
                            {.token = test::kTestAdminToken, .config_source = nullptr});
  const Exposition e = scrape(server.zone().admin_port());
  CHECK(e.families.at("zone_network_connects_refused_total") == "counter");
  CHECK(e.families.at("zone_network_handshakes_expired_total") == "counter");
  CHECK(e.families.at("zone_network_handshakes_in_progress") == "gauge");
  CHECK(e.families.at("zone_sessions_evicted_silent_total") == "counter");
  CHECK(e.labels.at("zone_network_connects_refused_total").at("reason") ==
        std::set<std::string>{"address", "handshakes", "cookie"});
}
