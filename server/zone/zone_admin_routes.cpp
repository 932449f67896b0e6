// ZoneServer: the admin HTTP routes (health, metrics, map, truth, reload).
#include "zone/zone_server.hpp"

#include <cmath>

#include <httplib.h>

#include "admin/map_page.hpp"

namespace zone {

using protocol::DisconnectReason;

namespace {

// Admin JSON is sent uncompressed: see the /api/map handler.
constexpr const char* kJsonUncompressed = "application/json; charset=utf-8";

}  // namespace

void ZoneServer::start_admin() {
  admin_ = std::make_unique<admin::AdminServer>(config_.admin.bind_address, config_.admin.port);
  admin_->get("/healthz", [this](const httplib::Request&, httplib::Response& res) {
    // Healthy while the loop completes ticks: a stall of a second or ten periods fails it.
    const auto now = std::chrono::steady_clock::now().time_since_epoch();
    const auto age = std::chrono::nanoseconds(
        std::chrono::duration_cast<std::chrono::nanoseconds>(now).count() - last_tick_ns_.load());
    const auto limit = std::max<std::chrono::nanoseconds>(std::chrono::seconds(1), period_ * 10);
    const bool ok = last_tick_ns_.load() != 0 && age <= limit;
    res.status = ok ? 200 : 503;
    res.set_content(ok ? "ok\n" : "tick loop stalled\n", "text/plain");
  });
  admin_->get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(render_prometheus(metrics_board_.latest(), config_.name),
                    "text/plain; version=0.0.4; charset=utf-8");
  });
  admin_->get("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(std::string(admin::kMapPage), "text/html; charset=utf-8");
  });
  admin_->get("/api/map", [this](const httplib::Request& req, httplib::Response& res) {
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
    if (!number("x0", w.x0) || !number("y0", w.y0) || !number("x1", w.x1) || !number("y1", w.y1) ||
        !number("max", max) || max < 0) {
      res.status = 400;
      res.set_content("x0, y0, x1, y1 and max must be finite numbers (max >= 0)\n", "text/plain");
      return;
    }
    w.max_entities = static_cast<std::size_t>(std::min(max, 1e6));
    if (req.has_param("select")) {
      try {
        map_.select(static_cast<std::uint32_t>(std::stoul(req.get_param_value("select"))));
      } catch (const std::exception&) {
        res.status = 400;
        res.set_content("select must be an entity id\n", "text/plain");
        return;
      }
    }
    // Not exactly "application/json": cpp-httplib compresses that type with brotli at
    // its top quality, ~0.8 s for a 450 KB whole-world answer; plain it takes ~10 ms.
    res.set_content(map_.frame_json(w), kJsonUncompressed);
  });
  admin_->post("/admin/reload", [this](const httplib::Request&, httplib::Response& res) {
    if (!config_source_) {
      res.status = 501;
      res.set_content("this server has no config file to reload\n", "text/plain");
      return;
    }
    config::LoadResult loaded = config_source_();
    const bool ok = loaded.ok();
    auto done = request_reload(std::move(loaded));
    if (done.wait_for(std::chrono::seconds(5)) != std::future_status::ready) {
      res.status = 504;
      res.set_content("reload scheduled, but the tick loop did not apply it within 5 s\n",
                      "text/plain");
      return;
    }
    const std::string report = done.get();
    // Refused at the tick too (a file that lost keys the running zone has set).
    res.status = ok && report.rfind("reload failed", 0) != 0 ? 200 : 400;
    res.set_content(report + "\n", "text/plain");
  });
  admin_->get("/readyz", [this](const httplib::Request&, httplib::Response& res) {
    const bool ok = accepting_.load() && last_tick_ns_.load() != 0;
    res.status = ok ? 200 : 503;
    res.set_content(ok ? "ready\n" : "not accepting players\n", "text/plain");
  });
  if (truth_) {
    admin_->get("/debug/truth", [this](const httplib::Request& req, httplib::Response& res) {
      std::uint32_t tick = truth_->newest_tick();
      if (req.has_param("tick")) {
        try {
          tick = static_cast<std::uint32_t>(std::stoul(req.get_param_value("tick")));
        } catch (const std::exception&) {
          res.status = 400;
          res.set_content("tick must be a non-negative integer\n", "text/plain");
          return;
        }
      }
      if (auto json = truth_->json_for(tick)) {
        res.set_content(*json, kJsonUncompressed);
      } else {
        res.status = 404;
        res.set_content(
            fmt::format("tick {} is not recorded (newest {})\n", tick, truth_->newest_tick()),
            "text/plain");
      }
    });
  }
  admin_->start();
}

}  // namespace zone
