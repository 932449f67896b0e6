// client-sim: thousands of headless bots against a zone server, with a live progress
// line, a JSON summary, and (in verification mode) an end-to-end truth check.
//
//   client-sim --server 127.0.0.1:7777 --bots 1000 --ramp 200 --duration 60
//              --scenario wander --seed 1 --summary-json out.json [--truth 127.0.0.1:7780]
//
// --truth needs the server's admin token (/debug/truth is protected): from the file
// --truth-token-file names, else from the environment variable ZONE_ADMIN_TOKEN. Not as a
// command-line value, which every local user could read in the process list.
//
// In front of zones in ticket mode (auth.mode: ticket), --ticket-key names the login
// service's secret key (zone-ticket keygen's ticket.key) and --ticket-world the zones'
// auth.world: each bot then says Hello with a ticket of its own (bot i is account and
// character i + 1).
//
// --rejoin keeps bots playing through a zone restart: a bot whose session the zone ended
// logs in again (with its ticket or name) until it is back, and compares what came back
// with what it last saw of itself (rejoin_loss_max_m, rejoin_property_changes).
//
// SIGINT or SIGTERM (Ctrl-C) ends the run before --duration: the bots quit, the summary
// covers the time run, and the checks below decide the exit code as usual.
//
// Exit codes: 0 clean run; 1 protocol violations, truth, chunk or static layer mismatches,
// event errors (missing, extra, duplicate, before spawn) or crossed --fail-if thresholds;
// 2 bad arguments or scenario.
#include <cctype>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include "auth/key_files.hpp"
#include "net/enet_host.hpp"
#include "sim/scenario.hpp"
#include "sim/summary.hpp"
#include "sim/swarm.hpp"
#include "util/signal_watch.hpp"

namespace {

bool split_host_port(const std::string& text, std::string& host, std::uint16_t& port) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) return false;
  host = text.substr(0, colon);
  try {
    const unsigned long p = std::stoul(text.substr(colon + 1));
    if (p == 0 || p > 65535) return false;
    port = static_cast<std::uint16_t>(p);
  } catch (const std::exception&) {
    return false;
  }
  return true;
}

// The admin token in `path`: the file's text without trailing white space.
bool read_token(const std::string& path, std::string& token) {
  std::ifstream in(path);
  if (!in) return false;
  std::ostringstream text;
  text << in.rdbuf();
  token = text.str();
  while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back()))) token.pop_back();
  return !token.empty();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"client-sim: headless bots that load a zone server and check what they see"};
  std::string server = "127.0.0.1:7777";
  std::string scenario_name = "wander";
  std::string scenario_dir = ZONE_SCENARIO_DIR;
  std::string summary_path;
  std::vector<std::string> truth;
  std::string truth_token_file;
  std::vector<std::string> fail_if_text;
  zone::sim::SwarmOptions o;
  bool quiet = false;
  std::string ticket_key_file, ticket_world;
  std::uint64_t ticket_ttl_s = 3600;
  app.add_option("--server", server, "zone server HOST:PORT")->capture_default_str();
  app.add_option("--bots", o.bots, "number of bots")
      ->capture_default_str()
      ->check(CLI::Range(1u, 100000u));
  app.add_option("--ramp", o.ramp_per_s, "new connections per second")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--duration", o.duration_s, "run time in seconds")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--scenario", scenario_name,
                 "scenario name (configs/scenarios/NAME.yaml) or a YAML path")
      ->capture_default_str();
  app.add_option("--scenario-dir", scenario_dir, "where scenario names are looked up")
      ->capture_default_str();
  app.add_option("--seed", o.seed, "random seed for bot behaviour")->capture_default_str();
  app.add_option("--summary-json", summary_path, "write the summary as JSON to this file");
  app.add_option("--truth", truth,
                 "verification mode: the server's admin HOST:PORT (needs debug.truth on the "
                 "server); in a world of zones, once per zone the bots may go to: each bot is "
                 "checked against the zone it is in");
  app.add_option("--truth-token-file", truth_token_file,
                 "file holding the server's admin token for --truth (default: the "
                 "ZONE_ADMIN_TOKEN environment variable)");
  app.add_option("--truth-interval", o.truth_interval_s, "seconds between truth checks")
      ->capture_default_str();
  app.add_option("--settle", o.settle_s, "seconds before the first truth check")
      ->capture_default_str();
  app.add_option("--bots-per-host", o.bots_per_host, "bots sharing one ENet client host")
      ->capture_default_str()
      ->check(CLI::Range(1u, 4000u));
  app.add_option("--threads", o.threads,
                 "bot threads, each with its own ENet hosts (0: one per 2,000 bots, at most one "
                 "per core)")
      ->capture_default_str()
      ->check(CLI::Range(0u, 256u));
  app.add_option("--fail-if", fail_if_text,
                 "fail the run if METRIC>VALUE or METRIC<VALUE (repeatable), e.g. rtt_p99_ms>100");
  app.add_option("--ticket-key", ticket_key_file,
                 "login tickets for the bots, signed with this secret key file (zone-ticket "
                 "keygen's ticket.key): for zones in ticket mode");
  app.add_option("--ticket-world", ticket_world,
                 "the world the bots' tickets are for (the zones' auth.world, or the zone's "
                 "name); needed with --ticket-key");
  app.add_option("--ticket-ttl", ticket_ttl_s, "seconds a bot's ticket is valid")
      ->capture_default_str()
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{10} * 365 * 86400));
  app.add_flag("--rejoin", o.rejoin,
               "a bot whose zone ended its session (a restart, a crash: noticed within 5 s) logs "
               "in again until it is back, and reports what its player lost (rejoin_*)");
  app.add_flag("-q,--quiet", quiet, "no progress line");
  app.add_flag("--light", o.light,
               "bots acknowledge snapshots without rebuilding replicas (no invariant or truth "
               "checks): for loads, such as broadcast, that full replicas could not keep up with");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  o.progress = !quiet;
  if (o.light && !truth.empty()) {
    std::fprintf(stderr, "--light and --truth exclude each other: light bots keep no replica\n");
    return 2;
  }
  if (!ticket_key_file.empty()) {
    if (ticket_world.empty()) {
      std::fprintf(stderr, "--ticket-key needs --ticket-world (the zones' auth.world)\n");
      return 2;
    }
    std::string error;
    const std::optional<zone::auth::SecretKey> key =
        zone::auth::read_secret_key_file(ticket_key_file, error);
    if (!key) {
      std::fprintf(stderr, "--ticket-key %s\n", error.c_str());
      return 2;
    }
    o.tickets = zone::sim::BotTickets{*key, ticket_world, ticket_ttl_s};
  } else if (!ticket_world.empty()) {
    std::fprintf(stderr, "--ticket-world needs --ticket-key\n");
    return 2;
  }
  if (!split_host_port(server, o.server_host, o.server_port)) {
    std::fprintf(stderr, "--server '%s': expected HOST:PORT\n", server.c_str());
    return 2;
  }
  for (const std::string& t : truth) {
    zone::sim::TruthSource source;
    if (!split_host_port(t, source.host, source.port)) {
      std::fprintf(stderr, "--truth '%s': expected HOST:PORT of the admin endpoint\n", t.c_str());
      return 2;
    }
    o.truth.push_back(source);
  }
  if (!truth.empty()) {
    if (!truth_token_file.empty()) {
      if (!read_token(truth_token_file, o.truth_token)) {
        std::fprintf(stderr, "--truth-token-file '%s': cannot read a token from it\n",
                     truth_token_file.c_str());
        return 2;
      }
    } else if (const char* env = std::getenv("ZONE_ADMIN_TOKEN"); env != nullptr && *env != 0) {
      o.truth_token = env;
    } else {
      std::fprintf(stderr,
                   "--truth needs the server's admin token: --truth-token-file PATH or the "
                   "ZONE_ADMIN_TOKEN environment variable (the server logs a generated one at "
                   "start-up when admin.token_file and admin.token_env are not set)\n");
      return 2;
    }
  }
  std::vector<zone::sim::FailIf> fail_if;
  for (const std::string& t : fail_if_text) {
    zone::sim::FailIf f;
    if (auto err = zone::sim::parse_fail_if(t, f)) {
      std::fprintf(stderr, "%s\n", err->c_str());
      return 2;
    }
    fail_if.push_back(f);
  }
  const zone::sim::ScenarioLoad loaded = zone::sim::load_scenario(scenario_name, scenario_dir);
  if (!loaded.ok()) {
    for (const std::string& e : loaded.errors) std::fprintf(stderr, "%s\n", e.c_str());
    return 2;
  }

  // SIGINT or SIGTERM ends the run early, with its summary: before the swarm's threads
  // start, so that they inherit the mask and the main loop collects the signal.
  const zone::util::SignalWatch signals{SIGINT, SIGTERM};
  zone::net::EnetLibrary enet;
  zone::sim::Swarm swarm(o, loaded.scenario);
  fmt::print(stderr,
             "client-sim: {} bots on {} thread(s) -> {}, scenario '{}', ramp {}/s, {} s{}\n",
             o.bots, swarm.threads(), server, loaded.scenario.name, o.ramp_per_s, o.duration_s,
             truth.empty() ? "" : fmt::format(", truth check via {}", fmt::join(truth, ", ")));
  int stopped_by = 0;
  swarm.run([&] {
    stopped_by = signals.poll();
    return stopped_by != 0;
  });
  if (stopped_by != 0) {
    fmt::print(stderr, "client-sim: {}, stopping early\n",
               stopped_by == SIGINT ? "SIGINT" : "SIGTERM");
  }
  const zone::sim::Summary summary = swarm.summary();
  const std::string json = summary.to_json().dump(2);
  std::printf("%s\n", json.c_str());
  if (!summary_path.empty()) {
    std::ofstream(summary_path) << json << "\n";
  }

  bool failed = false;
  if (summary.protocol_violations > 0) {
    failed = true;
    fmt::print(stderr, "FAIL: {} protocol violations, first ones:\n", summary.protocol_violations);
    for (const auto& d : swarm.violation_details()) fmt::print(stderr, "  {}\n", d);
  }
  if (summary.transfer_failures > 0) {
    failed = true;
    fmt::print(stderr, "FAIL: {} transfers could not be followed (the new zone was unreachable)\n",
               summary.transfer_failures);
  }
  if (summary.transfer_id_changes > 0) {
    failed = true;
    fmt::print(stderr, "FAIL: {} of {} transfers arrived under another entity id\n",
               summary.transfer_id_changes, summary.transfers);
  }
  if (summary.resume_id_changes > 0 || summary.resumes_refused > 0) {
    failed = true;
    fmt::print(stderr,
               "FAIL: of {} dropped connections, {} came back under another entity id and {} "
               "were refused their resume\n",
               summary.drops, summary.resume_id_changes, summary.resumes_refused);
  }
  if (summary.truth_mismatches > 0) {
    failed = true;
    fmt::print(stderr, "FAIL: {} truth mismatches in {} checks, first ones:\n",
               summary.truth_mismatches, summary.truth_checks);
    for (const auto& d : swarm.truth().details) fmt::print(stderr, "  {}\n", d);
  }
  if (summary.chunk_mismatches > 0) {
    failed = true;
    fmt::print(stderr, "FAIL: {} chunk mismatches in {} checks, first ones:\n",
               summary.chunk_mismatches, summary.chunk_checks);
    for (const auto& d : swarm.chunk_details()) fmt::print(stderr, "  {}\n", d);
  }
  if (summary.static_mismatches > 0) {
    failed = true;
    fmt::print(stderr, "FAIL: {} static layer mismatches in {} messages, first ones:\n",
               summary.static_mismatches, summary.static_messages);
    for (const auto& d : swarm.static_details()) fmt::print(stderr, "  {}\n", d);
  }
  if (summary.event_errors() > 0) {
    failed = true;
    fmt::print(stderr,
               "FAIL: event errors in {} event checks: {} missing, {} extra, {} duplicate, {} "
               "before spawn; first ones:\n",
               summary.truth_event_checks, summary.truth_event_missing, summary.truth_event_extra,
               summary.truth_event_duplicate, summary.truth_event_before_spawn);
    for (const auto& d : swarm.event_details()) fmt::print(stderr, "  {}\n", d);
    for (const auto& d : swarm.before_spawn_details()) fmt::print(stderr, "  {}\n", d);
  }
  if (summary.rejoin_property_changes > 0 || summary.rejoin_unheld > 0) {
    // Not failures by themselves: a fight within the last checkpoint interval changes
    // health, and a character the zone had not yet checkpointed comes back new.
    fmt::print(stderr,
               "client-sim: after rejoins, {} game properties came back changed and {} "
               "characters at no position they had held:\n",
               summary.rejoin_property_changes, summary.rejoin_unheld);
    for (const auto& d : swarm.rejoin_details()) fmt::print(stderr, "  {}\n", d);
  }
  for (const std::string& c : zone::sim::crossed(summary, fail_if)) {
    failed = true;
    fmt::print(stderr, "FAIL: threshold crossed: {}\n", c);
  }
  if (!failed) fmt::print(stderr, "client-sim: OK\n");
  return failed ? 1 : 0;
}
