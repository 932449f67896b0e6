#include <doctest/doctest.h>

#include <httplib.h>

#include <thread>

#include "harness.hpp"

using namespace std::chrono_literals;
using namespace zone;

TEST_CASE("admin: healthz and readyz follow the tick loop - healthz fails once it stalls") {
  net::EnetLibrary enet;
  config::ZoneConfig cfg = test::small_zone();
  test::ServerThread server(cfg);
  REQUIRE(server.zone().admin_port() != 0);
  httplib::Client http("127.0.0.1", server.zone().admin_port());
  http.set_read_timeout(5, 0);
  auto status = [&](const char* path) {
    const auto res = http.Get(path);
    return res ? res->status : -1;
  };
  // The loop is running: both are fine (give it a first tick).
  const auto deadline = std::chrono::steady_clock::now() + 3s;
  while (status("/healthz") != 200 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(20ms);
  }
  CHECK(status("/healthz") == 200);
  CHECK(status("/readyz") == 200);
  CHECK(status("/") == 200);
  const auto map = http.Get("/api/map?x0=0&y0=0&x1=200&y1=200");
  REQUIRE(map);
  CHECK(map->status == 200);
  CHECK(map->body.find("\"entities\":[") != std::string::npos);
  CHECK(status("/api/map?x0=nan") == 400);

  // The loop stops (as if it hung); the admin thread still answers, and says so.
  ZoneServer& zone = server.stop();
  std::this_thread::sleep_for(1200ms);
  CHECK(status("/healthz") == 503);
  CHECK(status("/readyz") == 200);  // still listening: readiness is about accepting players
  zone.shutdown(0ms);
  CHECK(status("/readyz") == 503);
}
