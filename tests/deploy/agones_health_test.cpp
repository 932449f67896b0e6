// deploy/agones-health.sh, the sidecar that reports a zone's /healthz to Agones, run for
// real (/bin/sh and curl) against one local HTTP server that plays both the zone's admin
// endpoint (GET /healthz) and the Agones SDK server's REST API (POST /ready, /health).
//
// Needs curl (the sidecar image installs it; so does every Debian machine here). Without
// it the test exits with code 77, which CTest reports as skipped.
#include <doctest/doctest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>

#include "process.hpp"

using namespace std::chrono_literals;
using zone::test::Process;

namespace {

// The zone and the SDK server in one: what the script asked, and what it is answered.
class FakePod {
 public:
  FakePod() {
    server_.Get("/healthz", [this](const httplib::Request&, httplib::Response& res) {
      ++healthz_requests_;
      res.status = zone_healthy_ ? 200 : 503;
    });
    server_.Post("/ready", [this](const httplib::Request& req, httplib::Response& res) {
      record(req);
      if (ready_refusals_ > 0) {
        --ready_refusals_;
        res.status = 503;  // the SDK server is not up yet
        return;
      }
      ready_at_pings_ = pings_.load();
      ++readies_;
      res.set_content("{}", "application/json");
    });
    server_.Post("/health", [this](const httplib::Request& req, httplib::Response& res) {
      record(req);
      ++pings_;
      res.set_content("{}", "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    REQUIRE(port_ > 0);
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~FakePod() {
    server_.stop();
    thread_.join();
  }

  int port() const { return port_; }
  void set_zone_healthy(bool healthy) { zone_healthy_ = healthy; }
  void refuse_ready(int times) { ready_refusals_ = times; }
  int readies() const { return readies_; }
  int pings() const { return pings_; }
  int healthz_requests() const { return healthz_requests_; }
  int pings_before_ready() const { return ready_at_pings_; }
  // Every POST's body and Content-Type, as "BODY|TYPE".
  std::vector<std::string> posts() const {
    std::lock_guard lock(mutex_);
    return posts_;
  }

 private:
  void record(const httplib::Request& req) {
    std::lock_guard lock(mutex_);
    posts_.push_back(req.body + "|" + req.get_header_value("Content-Type"));
  }

  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<bool> zone_healthy_{false};
  std::atomic<int> ready_refusals_{0}, readies_{0}, pings_{0}, healthz_requests_{0};
  std::atomic<int> ready_at_pings_{-1};
  mutable std::mutex mutex_;
  std::vector<std::string> posts_;
};

bool wait_until(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return done();
}

void require_curl_or_skip() {
  for (const char* dir : {"/usr/bin", "/bin", "/usr/local/bin"}) {
    if (::access((std::string(dir) + "/curl").c_str(), X_OK) == 0) return;
  }
  std::fprintf(stderr, "SKIPPED: curl is not installed (Debian package curl)\n");
  std::exit(77);
}

std::string log_path(const char* name) {
  return (std::filesystem::temp_directory_path() /
          (std::string("agones-health-") + name + "-" + std::to_string(::getpid()) + ".log"))
      .string();
}

// The script with the fake pod's port for both the zone and the SDK, checking every 0.1 s.
Process start_script(const FakePod& pod, const std::string& log) {
  const std::string port = std::to_string(pod.port());
  return Process(
      {"/usr/bin/env", "PATH=/usr/bin:/bin:/usr/local/bin", "AGONES_SDK_HTTP_PORT=" + port,
       "ZONE_HEALTH_URL=http://127.0.0.1:" + port + "/healthz", "HEALTH_INTERVAL=0.1", "/bin/sh",
       ZONE_SOURCE_DIR "/deploy/agones-health.sh"},
      log);
}

}  // namespace

TEST_CASE("deploy agones-health: Ready once the zone is healthy then pings only while it is") {
  require_curl_or_skip();
  FakePod pod;
  pod.refuse_ready(2);
  const std::string log = log_path("cycle");
  Process script = start_script(pod, log);

  // The zone is not up yet: the script asks it, and tells Agones nothing.
  REQUIRE(wait_until([&] { return pod.healthz_requests() >= 3; }, 5s));
  CHECK(pod.readies() == 0);
  CHECK(pod.pings() == 0);
  CHECK(pod.posts().empty());

  // Healthy: Ready (retried past the SDK server's two refusals), then pings.
  pod.set_zone_healthy(true);
  REQUIRE_MESSAGE(wait_until([&] { return pod.pings() >= 5; }, 5s), script.log());
  CHECK(pod.readies() == 1);
  CHECK(pod.pings_before_ready() == 0);  // no ping before Ready
  for (const std::string& post : pod.posts()) CHECK(post == "{}|application/json");
  CHECK(pod.posts().size() >= 3 + 5);  // two refused readies, the ready, the pings

  // The tick loop stalls (/healthz 503): the pings stop.
  pod.set_zone_healthy(false);
  std::this_thread::sleep_for(1s);  // a ping already under way may still arrive
  const int stalled = pod.pings();
  std::this_thread::sleep_for(800ms);
  CHECK_MESSAGE(pod.pings() == stalled, "pings went on while /healthz answered 503");

  // Healthy again: the pings resume, Ready is not sent twice.
  pod.set_zone_healthy(true);
  CHECK(wait_until([&] { return pod.pings() >= stalled + 3; }, 5s));
  CHECK(pod.readies() == 1);

  // SIGTERM ends it at once, with exit code 0.
  const auto t0 = std::chrono::steady_clock::now();
  script.signal(SIGTERM);
  const auto code = script.wait(3s);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  REQUIRE_MESSAGE(code.has_value(), "still running 3 s after SIGTERM:\n" << script.log());
  CHECK(*code == 0);
  CHECK_MESSAGE(took < 1.0, "exited " << took << " s after SIGTERM");
  CHECK(script.log().find("pings stopped") != std::string::npos);
  CHECK(script.log().find("pinging again") != std::string::npos);
  std::filesystem::remove(log);
}

TEST_CASE("deploy agones-health: SIGTERM while the zone never came up ends it too") {
  require_curl_or_skip();
  FakePod pod;
  const std::string log = log_path("never");
  Process script = start_script(pod, log);
  REQUIRE(wait_until([&] { return pod.healthz_requests() >= 2; }, 5s));
  script.signal(SIGTERM);
  const auto code = script.wait(3s);
  REQUIRE_MESSAGE(code.has_value(), script.log());
  CHECK(*code == 0);
  CHECK(pod.readies() == 0);
  CHECK(pod.posts().empty());
  std::filesystem::remove(log);
}
