// ZoneServer: the admin HTTP routes (health, metrics, map, truth, reload) and who may
// call them: health, readiness, metrics and the map page are open; the map's data, the
// ground truth and reloads need the admin token (docs/security.md).
//
// Handlers run on the admin threads. They read only what does not change after start-up
// (copies made here), atomics, and what the tick thread publishes under a mutex.
#include "zone/zone_server.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>
#include <string_view>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "admin/admin_access.hpp"
#include "admin/map_page.hpp"

namespace zone {

using protocol::DisconnectReason;

namespace {

// Admin JSON is sent uncompressed: see the /api/map handler.
constexpr const char* kJsonUncompressed = "application/json; charset=utf-8";

// Players one /debug/truth request may name (a bound on the work a request asks for).
constexpr std::size_t kMaxTruthPlayers = 1000;

// "12,7,40" -> {7, 12, 40}; nullopt unless every item is a decimal id that fits 32 bits
// and there are at most kMaxTruthPlayers of them.
std::optional<std::vector<std::uint32_t>> parse_id_list(std::string_view text) {
  std::vector<std::uint32_t> ids;
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    std::uint32_t id = 0;
    const auto [end, err] = std::from_chars(item.data(), item.data() + item.size(), id);
    if (item.empty() || err != std::errc{} || end != item.data() + item.size()) return std::nullopt;
    if (ids.size() == kMaxTruthPlayers) return std::nullopt;
    ids.push_back(id);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
    if (text.empty()) return std::nullopt;  // a trailing comma
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

// /readyz of a zone that is up: degraded (503) while the character store refuses logins
// (its queue is full) or is failing, so a load balancer sends new players elsewhere.
// The store's state is read under its writer's lock (thread-safe), never the tick's.
void store_readiness(const CharacterStore* store, httplib::Response& res) {
  if (store == nullptr) return;
  if (store->full()) {
    res.status = 503;
    res.set_content("degraded: the character store's write queue is full (new logins refused)\n",
                    "text/plain");
  } else if (!store->stats().healthy) {
    res.status = 503;
    res.set_content("degraded: the character store is failing: " + store->last_error() + "\n",
                    "text/plain");
  }
}

}  // namespace

void ZoneServer::start_admin(std::string token) {
  using admin::Access;
  const bool generated = token.empty();
  admin_token_ = generated ? admin::generate_token() : std::move(token);
  admin_ = std::make_unique<admin::AdminServer>(
      config_.admin.bind_address, config_.admin.port,
      admin::Security{admin_token_, admin::parse_host_list(config_.admin.allowed_hosts)});
  if (generated) {
    const std::string& bind = config_.admin.bind_address;
    log_.warn(
        "admin: neither admin.token_file nor admin.token_env is set, so this run's admin token "
        "was generated: {} (live map: http://{}:{}/?token={})",
        admin_token_, bind == "0.0.0.0" ? "127.0.0.1" : bind, admin_->port(), admin_token_);
  }
  // config_ is replaced by reloads on the tick thread; the zone name is restart-only, so
  // this copy stays right.
  const std::string zone_name = config_.name;
  admin_->get("/healthz", Access::kOpen, [this](const httplib::Request&, httplib::Response& res) {
    // Healthy while the loop completes ticks: a stall of a second or ten periods fails it.
    const auto now = std::chrono::steady_clock::now().time_since_epoch();
    const auto age = std::chrono::nanoseconds(
        std::chrono::duration_cast<std::chrono::nanoseconds>(now).count() - last_tick_ns_.load());
    const auto limit = std::max<std::chrono::nanoseconds>(std::chrono::seconds(1), period_ * 10);
    const bool ok = last_tick_ns_.load() != 0 && age <= limit;
    res.status = ok ? 200 : 503;
    res.set_content(ok ? "ok\n" : "tick loop stalled\n", "text/plain");
  });
  admin_->get("/metrics", Access::kOpen,
              [this, zone_name](const httplib::Request&, httplib::Response& res) {
                const ZoneMetrics latest = observability_.metrics_board().latest();
                res.set_content(render_prometheus(latest, zone_name) + gm_counters_.render(),
                                "text/plain; version=0.0.4; charset=utf-8");
              });
  // The page holds no data: it asks for the token and sends it with every request.
  admin_->get("/", Access::kOpen, [](const httplib::Request&, httplib::Response& res) {
    res.set_content(std::string(admin::kMapPage), "text/html; charset=utf-8");
  });
  admin_->get(
      "/api/map", Access::kToken, [this](const httplib::Request& req, httplib::Response& res) {
        MapPublisher& map = observability_.map();
        MapWindow w;
        auto number = [&](const char* key, double& out) {
          if (!req.has_param(key)) return true;
          try {
            out = std::stod(req.get_param_value(key));
            return std::isfinite(out);
          } catch (const std::exception&) {
            return false;
          }
        };
        double max = static_cast<double>(w.max_entities);
        if (!number("x0", w.x0) || !number("y0", w.y0) || !number("x1", w.x1) ||
            !number("y1", w.y1) || !number("max", max) || max < 0) {
          res.status = 400;
          res.set_content("x0, y0, x1, y1 and max must be finite numbers (max >= 0)\n",
                          "text/plain");
          return;
        }
        w.max_entities = static_cast<std::size_t>(std::min(max, 1e6));
        if (req.has_param("select")) {
          try {
            map.select(static_cast<std::uint32_t>(std::stoul(req.get_param_value("select"))));
          } catch (const std::exception&) {
            res.status = 400;
            res.set_content("select must be an entity id\n", "text/plain");
            return;
          }
        }
        // Not exactly "application/json": cpp-httplib compresses that type with brotli at
        // its top quality, ~0.8 s for a 450 KB whole-world answer; plain it takes ~10 ms.
        res.set_content(map.frame_json(w), kJsonUncompressed);
      });
  // Loads here, on an admin thread; the tick applies the result at its next start.
  admin_->post("/admin/reload", [this](const httplib::Request&, httplib::Response& res) {
    if (!reloads_.has_source()) {
      res.status = 501;
      res.set_content("this server has no config file to reload\n", "text/plain");
      return;
    }
    config::LoadResult loaded = reloads_.load();
    const bool ok = loaded.ok();
    auto done = reloads_.request(std::move(loaded));
    if (done.wait_for(std::chrono::seconds(5)) != std::future_status::ready) {
      res.status = 504;
      res.set_content("reload scheduled, but the tick loop did not apply it within 5 s\n",
                      "text/plain");
      return;
    }
    const std::string report = done.get();
    // Shutting down: answered at once, nothing applied. A file that lost keys the running
    // zone has set is refused at the tick too.
    res.status = !accepting_.load() ? 503 : ok && report.rfind("reload failed", 0) != 0 ? 200 : 400;
    res.set_content(report + "\n", "text/plain");
  });
  admin_->get("/readyz", Access::kOpen, [this](const httplib::Request&, httplib::Response& res) {
    const bool ok = accepting_.load() && last_tick_ns_.load() != 0;
    res.status = ok ? 200 : 503;
    res.set_content(ok ? "ready\n" : "not accepting players\n", "text/plain");
    if (ok) store_readiness(store_.get(), res);
  });
  if (truth_) {
    // The static layer's objects never change: the answer is made once, here, and the
    // HTTP threads only read it.
    nlohmann::json statics;
    statics["zone"] = zone_name;  // which zone of a world this is (client-sim's truth check)
    statics["cell_size"] = world_.static_grid().empty() ? 0.0 : world_.static_grid().cell_size();
    statics["world"] = {config_.world.min_x, config_.world.min_y, config_.world.max_x,
                        config_.world.max_y};
    auto& objects = statics["objects"] = nlohmann::json::array();
    for (const world::StaticObject& o : world_.statics()) {
      objects.push_back({o.id, static_cast<int>(o.kind), o.x, o.y, o.radius});
    }
    admin_->get("/debug/static", Access::kToken,
                [body = statics.dump()](const httplib::Request&, httplib::Response& res) {
                  res.set_content(body, kJsonUncompressed);
                });
    admin_->get(
        "/debug/truth", Access::kToken,
        [this](const httplib::Request& req, httplib::Response& res) {
          std::uint32_t tick = truth_->newest_tick();
          if (req.has_param("tick")) {
            // Decimal digits only: no sign, no spaces, nothing beyond 32 bits
            // (std::stoul would wrap "-1" to the largest tick).
            const std::string text = req.get_param_value("tick");
            const auto [end, err] = std::from_chars(text.data(), text.data() + text.size(), tick);
            if (text.empty() || err != std::errc{} || end != text.data() + text.size()) {
              res.status = 400;
              res.set_content("tick must be a decimal integer from 0 to 4294967295\n",
                              "text/plain");
              return;
            }
          }
          TruthDetail detail = TruthDetail::kFull;
          if (req.has_param("only")) {
            const std::string only = req.get_param_value("only");
            if (only != "positions" && only != "events") {
              res.status = 400;
              res.set_content("only= takes one of: positions, events\n", "text/plain");
              return;
            }
            detail = only == "events" ? TruthDetail::kEvents : TruthDetail::kPositions;
          }
          // players=ID,ID,...: the per-player lists of those players only (a checker
          // asks for the players it holds a frame of at this tick).
          std::optional<std::vector<std::uint32_t>> players;
          if (req.has_param("players")) {
            players = parse_id_list(req.get_param_value("players"));
            if (!players) {
              res.status = 400;
              res.set_content(fmt::format("players= takes at most {} decimal ids separated by "
                                          "commas\n",
                                          kMaxTruthPlayers),
                              "text/plain");
              return;
            }
          }
          if (auto json = truth_->json_for(tick, detail, players ? &*players : nullptr)) {
            res.set_content(*json, kJsonUncompressed);
            return;
          }
          // 410 for a tick the history has let go (a checker that lags that far must
          // know it lags, not take it for an error), 404 for one not recorded yet. The
          // history holds the last history_ticks() ticks up to `newest`; `newest` only
          // grows, so a tick recorded since the lookup above is never called gone.
          const std::uint32_t newest = truth_->newest_tick();
          const bool gone =
              tick != 0 && static_cast<std::uint64_t>(tick) + truth_->history_ticks() <= newest;
          res.status = gone ? 410 : 404;
          res.set_content(fmt::format("tick {} is {} (kept: the last {} ticks, newest {})\n", tick,
                                      res.status == 410 ? "no longer kept" : "not recorded",
                                      truth_->history_ticks(), newest),
                          "text/plain");
        });
  }
  add_gm_routes();
  admin_->start();
}

}  // namespace zone
