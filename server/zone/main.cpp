// zone-server: runs one zone until SIGINT or SIGTERM; SIGHUP reloads the config.
//
//   zone-server [--config configs/zone.yaml] [--port N] [--check-config] ...
//   zone-server --world configs/world.yaml --zone NAME ...   (one zone of a world)
//
// Exit codes (zone::ExitCode in zone/run_zone.hpp):
//   0  clean shutdown (SIGINT or SIGTERM; clients were told)
//   1  start-up failure: a port in use, an address not available
//   2  bad configuration or arguments, or an admin token file or variable that is
//      missing or unusable
//   3  internal error: an unexpected exception stopped the tick loop (logged as such)
#include <csignal>
#include <cstdio>
#include <ctime>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "admin/admin_access.hpp"
#include "config/config_loader.hpp"
#include "config/game_data.hpp"
#include "config/secret_file.hpp"
#include "config/static_map.hpp"
#include "config/world_map.hpp"
#include "net/enet_host.hpp"
#include "util/signal_watch.hpp"
#include "zone/game_params.hpp"
#include "zone/logger.hpp"
#include "zone/run_zone.hpp"
#include "zone/zone_params.hpp"
#include "zone/zone_rules.hpp"
#include "zone/zone_server.hpp"

namespace {

struct Overrides {
  std::vector<std::string> sets;  // key=value
  std::optional<std::string> bind;
  std::optional<std::string> port, admin_port, tick_rate, cell_size, view_radius, npcs, log_level;
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"zone-server: one authoritative MMO zone (grid AOI, ENet, FlatBuffers)"};
  std::string config_path = "configs/zone.yaml";
  bool check_only = false;
  Overrides o;
  app.add_option("-c,--config", config_path, "YAML config file")->capture_default_str();
  app.add_option("--bind", o.bind, "network.bind_address");
  app.add_option("--port", o.port, "network.port (0 = ephemeral)");
  app.add_option("--admin-port", o.admin_port, "admin.port (0 = ephemeral)");
  app.add_option("--tick-rate", o.tick_rate, "tick.rate_hz");
  app.add_option("--cell-size", o.cell_size, "aoi.cell_size in metres");
  app.add_option("--view-radius", o.view_radius, "aoi.view_radius in metres");
  app.add_option("--npcs", o.npcs, "npcs.count");
  app.add_option("--log-level", o.log_level, "log.level: trace|debug|info|warn|error");
  app.add_option("--set", o.sets, "override any key: --set aoi.hysteresis=3 (repeatable)");
  app.add_flag("--check-config", check_only, "validate, print the effective config, exit");
  std::string world_path, zone_name;
  auto* world_opt =
      app.add_option("--world", world_path, "world map (configs/world.yaml): run one of its zones");
  auto* zone_opt = app.add_option("--zone", zone_name, "the world map's zone this process runs");
  world_opt->needs(zone_opt);
  zone_opt->needs(world_opt);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }

  std::vector<std::pair<std::string, std::string>> kv;
  if (o.bind) kv.emplace_back("network.bind_address", *o.bind);
  if (o.port) kv.emplace_back("network.port", *o.port);
  if (o.admin_port) kv.emplace_back("admin.port", *o.admin_port);
  if (o.tick_rate) kv.emplace_back("tick.rate_hz", *o.tick_rate);
  if (o.cell_size) kv.emplace_back("aoi.cell_size", *o.cell_size);
  if (o.view_radius) kv.emplace_back("aoi.view_radius", *o.view_radius);
  if (o.npcs) kv.emplace_back("npcs.count", *o.npcs);
  if (o.log_level) kv.emplace_back("log.level", *o.log_level);
  for (const std::string& s : o.sets) {
    const auto eq = s.find('=');
    if (eq == std::string::npos) {
      std::fprintf(stderr, "--set %s: expected KEY=VALUE\n", s.c_str());
      return 2;
    }
    kv.emplace_back(s.substr(0, eq), s.substr(eq + 1));
  }
  // A world map is read once: a zone's place in the world does not change while it runs.
  std::optional<zone::config::WorldMap> world;
  std::size_t zone_index = 0;
  zone::config::BusSecrets bus_secrets;
  if (!world_path.empty()) {
    zone::config::WorldMapResult map = zone::config::load_world_map_file(world_path);
    if (!map.ok()) {
      std::fputs(map.error_report().c_str(), stderr);
      return 2;
    }
    const auto index = map.map.find(zone_name);
    if (!index) {
      std::string names;
      for (const auto& z : map.map.zones) names += (names.empty() ? "" : ", ") + z.name;
      std::fprintf(stderr, "--zone %s: no such zone in %s (expected one of: %s)\n",
                   zone_name.c_str(), world_path.c_str(), names.c_str());
      return 2;
    }
    world = std::move(map.map);
    zone_index = *index;
    // The zone's NATS credentials and TLS files, read once (--check-config checks them).
    const auto secret_errors = zone::config::load_bus_secrets(*world, zone_index, bus_secrets);
    if (!secret_errors.empty()) {
      std::fputs(zone::config::format_errors(secret_errors, world_path).c_str(), stderr);
      return 2;
    }
  }
  // The file, then the zone's entry in the world map, then the command line's overrides,
  // then the checks across keys (and against the world map): at start-up
  // and again on every reload, so a reload never silently drops an override. It captures
  // copies: reloads run it on other threads, which may outlive this scope at exit.
  const auto load = [config_path, kv, world, zone_index, world_path]() {
    zone::config::LoadResult r = zone::config::load_config_file(config_path);
    if (!r.ok()) return r;
    if (world) zone::config::apply_world_zone(*world, zone_index, r.config);
    for (const auto& [key, value] : kv) {
      if (auto err = zone::config::set_value(r.config, key, value)) {
        err->line = 0;
        r.errors.push_back(*err);
      }
    }
    for (auto& err : zone::config::validate(r.config)) r.errors.push_back(std::move(err));
    if (world && r.ok()) {
      for (auto& err : zone::config::check_zone_in_world(*world, zone_index, r.config)) {
        err.message += " (world map " + world_path + ")";
        r.errors.push_back(std::move(err));
      }
    }
    return r;
  };
  const zone::config::LoadResult loaded = load();
  if (!loaded.ok()) {
    std::fputs(loaded.error_report().c_str(), stderr);
    return 2;
  }
  const zone::config::ZoneConfig& cfg = loaded.config;
  // The static layer's map is read once, like the world map (static.map_file needs a
  // restart), and checked with the config: --check-config covers it too.
  zone::world::StaticParams statics;
  if (!cfg.statics.map_file.empty()) {
    const zone::config::StaticMapResult map =
        zone::config::load_static_map_file(cfg.statics.map_file, cfg);
    if (!map.ok()) {
      std::fputs(map.error_report().c_str(), stderr);
      return 2;
    }
    statics = zone::make_static_params(map, cfg.statics);
  }
  // The game's data, checked the same way (game.data_file needs a restart too), and its
  // rules: they load over an empty world of this game.
  zone::config::GameData game_data = zone::config::builtin_game_data();
  if (!cfg.game.data_file.empty()) {
    const zone::config::GameDataResult game = zone::config::load_game_data_file(cfg.game.data_file);
    if (!game.ok()) {
      std::fputs(game.error_report().c_str(), stderr);
      return 2;
    }
    game_data = game.data;
  }
  // The character store's connection string (persist.backend postgres), read once like
  // the bus's secrets: --check-config checks the file (not the server, which it does not
  // contact).
  std::string conninfo;
  if (const auto errors = zone::config::read_conninfo_file(cfg, conninfo); !errors.empty()) {
    std::fputs(zone::config::format_errors(errors, config_path).c_str(), stderr);
    return 2;
  }
  if (check_only) {
    if (auto error = zone::check_rules(cfg, zone::make_game_types(game_data))) {
      std::fprintf(stderr, "%s\n", error->c_str());
      return 2;
    }
  }
  if (check_only) {
    std::printf("# %s: OK\n%s", config_path.c_str(), zone::config::describe(cfg).c_str());
    return 0;
  }

  std::string token_error;
  const std::optional<std::string> token =
      cfg.admin.enabled
          ? zone::admin::configured_token(cfg.admin.token_file, cfg.admin.token_env, token_error)
          : std::optional<std::string>(std::string());
  if (!token) {
    std::fprintf(stderr, "%s\n", token_error.c_str());
    return zone::kExitBadConfig;
  }

  // Before the logger: its writer thread, like every later thread, inherits the mask.
  // SIGINT, SIGTERM (stop) and SIGHUP (reload the config), collected by the tick loop.
  zone::util::SignalWatch signals{SIGINT, SIGTERM, SIGHUP};
  zone::Logger log(cfg.log.level);
  try {
    zone::net::EnetLibrary enet;
    zone::ZoneServer server(
        cfg, log, {.token = *token, .config_source = load},
        {.map = world, .zone_index = zone_index, .bus_secrets = bus_secrets, .statics = statics},
        {.postgres_conninfo = std::move(conninfo)});
    log.info(
        "zone '{}' listening on udp {}:{} | {} Hz | world {}x{} m | aoi {} cell {} m radius {} m "
        "hysteresis {} m | {} npcs | max {} players",
        cfg.name, cfg.network.bind_address, server.port(), cfg.tick.rate_hz,
        cfg.world.max_x - cfg.world.min_x, cfg.world.max_y - cfg.world.min_y,
        cfg.aoi.enabled ? "on" : "OFF (broadcast)", cfg.aoi.cell_size, cfg.aoi.view_radius,
        cfg.aoi.hysteresis, cfg.npcs.count, cfg.players.max_players);
    if (world && bus_secrets.user.empty()) {
      log.warn(
          "world: NATS without credentials (nats.password_file is not set): anyone who "
          "can reach {} can speak for any zone (docs/security.md, \"The bus\")",
          world->nats_url);
    }
    if (world && !bus_secrets.tls) {
      log.warn(
          "world: NATS without TLS (nats.tls.ca_file is not set): the bus, its "
          "credentials and transfer tokens cross the network in clear");
    }
    if (server.admin_port() != 0) {
      log.info("admin endpoint on http://{}:{}/ (live map, metrics, health{}; token from {})",
               cfg.admin.bind_address, server.admin_port(), cfg.debug.truth ? ", debug truth" : "",
               !cfg.admin.token_file.empty()  ? "admin.token_file"
               : !cfg.admin.token_env.empty() ? "admin.token_env"
                                              : "the log above");
    }
    if (cfg.auth.mode == zone::config::AuthMode::kOpen) {
      log.warn(
          "auth.mode is open: ANYONE WHO REACHES UDP port {} JOINS UNDER ANY NAME, as often as "
          "they like, with no account. Fine for a local run; anywhere else set auth.mode: ticket "
          "with the login service's auth.public_key (docs/security.md, \"Accounts\")",
          server.port());
    } else {
      log.info("auth: login tickets required, for world '{}', signed by key {}",
               zone::config::ticket_world(cfg), cfg.auth.public_key);
    }
    log.debug("effective config:\n{}", zone::config::describe(cfg));
    return zone::run_zone(server, log,
                          {.poll_signal = [&signals] { return signals.poll(); },
                           .load = load,
                           .config_path = config_path,
                           .grace = std::chrono::milliseconds(500)});
  } catch (const std::exception& e) {
    // Only construction throws this far: run_zone() catches what the loop throws.
    log.error("cannot start: {}", e.what());
    return zone::kExitStartFailure;
  }
}
