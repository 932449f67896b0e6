// The log: written off the calling thread, bounded, and rate-limited where clients can
// make lines (joins, leaves and refusals under churn).
#include <doctest/doctest.h>

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <regex>
#include <string>
#include <thread>

#include "harness.hpp"
#include "test_util.hpp"
#include "zone/logger.hpp"

using namespace std::chrono_literals;
using namespace zone;

namespace {

std::string read_all(std::FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::string text;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof(buf), f)) > 0;) text.append(buf, n);
  return text;
}

std::size_t count(const std::string& text, const std::regex& line) {
  return static_cast<std::size_t>(
      std::distance(std::sregex_iterator(text.begin(), text.end(), line), std::sregex_iterator()));
}

}  // namespace

TEST_CASE("logger: a blocked output never blocks the caller - lines are dropped and counted") {
  // A pipe nobody reads: writes to it block once its buffer (64 kB) is full, like a
  // paused terminal or a stalled log collector.
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  std::FILE* out = ::fdopen(fds[1], "w");
  REQUIRE(out != nullptr);
  std::string drained;
  {
    Logger log(LogLevel::kInfo, out, 64);
    std::atomic<bool> done{false};
    std::thread caller([&] {
      for (int i = 0; i < 20000; ++i) log.info("line {} {}", i, std::string(100, 'x'));
      done = true;
    });
    // 2 MB of lines against a 64 kB pipe: only a caller that never waits for the output
    // can be done in time.
    const auto deadline = std::chrono::steady_clock::now() + 3s;
    while (!done.load() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(5ms);
    }
    CHECK_MESSAGE(done.load(), "logging blocked on a full output");
    CHECK(log.dropped() > 0);
    // Unblock the output so that everything can finish either way.
    std::thread reader([&] {
      char buf[65536];
      for (ssize_t n; (n = ::read(fds[0], buf, sizeof(buf))) > 0;) {
        drained.append(buf, static_cast<std::size_t>(n));
      }
    });
    caller.join();
    CHECK(log.flush(5s));
    const std::uint64_t dropped = log.dropped();
    log.info("after the storm");  // the queue has room again
    CHECK(log.flush(5s));
    CHECK(log.dropped() == dropped);
    MESSAGE(dropped, " of 20000 lines dropped while the output was blocked");
    std::fclose(out);  // the writer is idle after flush(): the reader sees the end
    reader.join();
    CHECK(drained.find("log queue full: ") != std::string::npos);
    CHECK(drained.find("INFO  after the storm") != std::string::npos);
    CHECK(count(drained, std::regex("INFO  line ")) + dropped == 20000);
  }
  ::close(fds[0]);
}

TEST_CASE("logger: lines keep their order and time stamp, and level changes apply") {
  std::FILE* out = std::tmpfile();
  REQUIRE(out != nullptr);
  {
    Logger log(LogLevel::kInfo, out);
    log.debug("hidden {}", 1);
    log.info("first {}", 1);
    log.warn("second {:.1f}", 2.0);
    log.set_level(LogLevel::kDebug);
    log.debug("third");
    log.error("fourth");
  }  // the destructor writes what is queued
  const std::string text = read_all(out);
  std::fclose(out);
  CHECK(text.find("hidden") == std::string::npos);
  CHECK(std::regex_search(text, std::regex(R"(^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ INFO  first 1\n)"
                                           R"(.*Z WARN  second 2\.0\n)"
                                           R"(.*Z DEBUG third\n)"
                                           R"(.*Z ERROR fourth\n$)")));
}

TEST_CASE("logger: limited() lets a burst through, then says how many it held back") {
  std::FILE* out = std::tmpfile();
  REQUIRE(out != nullptr);
  {
    Logger log(LogLevel::kInfo, out);
    LogRateLimiter limiter(3, 200ms);
    for (int i = 0; i < 10; ++i) log.limited(limiter, LogLevel::kInfo, "event {}", i);
    std::this_thread::sleep_for(250ms);  // a new window
    log.limited(limiter, LogLevel::kInfo, "event {}", 10);
    log.limited(limiter, LogLevel::kDebug, "below the level {}", 11);  // not counted
  }
  const std::string text = read_all(out);
  std::fclose(out);
  CHECK(count(text, std::regex("event ")) == 4);
  CHECK(text.find("event 2\n") != std::string::npos);
  CHECK(text.find("event 3") == std::string::npos);
  CHECK(text.find("event 10 (7 similar lines suppressed)\n") != std::string::npos);
  CHECK(text.find("below the level") == std::string::npos);
}

TEST_CASE("logger: joins, leaves and refusals under churn are rate-limited") {
  net::EnetLibrary enet;
  std::FILE* out = std::tmpfile();
  REQUIRE(out != nullptr);
  const auto start = std::chrono::steady_clock::now();
  std::uint64_t joins = 0, quits = 0, refused = 0;
  {
    config::ZoneConfig cfg = test::small_zone();
    cfg.players.max_players = 100;
    cfg.log.level = config::LogLevel::kInfo;
    Logger log(cfg.log.level, out);
    ZoneServer zone(cfg, log, {.token = "logger-test-token-0123", .config_source = nullptr});
    test::Clients clients(100);
    std::vector<client::Bot*> bots;
    for (int i = 0; i < 60; ++i)
      bots.push_back(&clients.add("bot" + std::to_string(i), zone.port()));
    for (int i = 0; i < 30; ++i) {
      client::Bot& old = clients.add("old" + std::to_string(i), zone.port());
      old.set_protocol_version(protocol::kProtocolVersion + 1);
    }
    // The test drives the zone's ticks itself, between client pumps.
    const auto step = [&] {
      clients.pump(5ms);
      zone.tick();
    };
    const auto all = [&](client::Bot::Phase phase) {
      for (client::Bot* b : bots) {
        if (b->phase() != phase) return false;
      }
      return true;
    };
    for (int i = 0; i < 2000 && !all(client::Bot::Phase::kPlaying); ++i) step();
    REQUIRE(all(client::Bot::Phase::kPlaying));
    for (client::Bot* b : bots) b->quit(clients.host());
    for (int i = 0; i < 400 && zone.players() > 0; ++i) step();
    CHECK(zone.players() == 0);
    joins = zone.counters().joins;
    quits = test::disconnects(zone, protocol::DisconnectReason::ClientQuit);
    refused = test::disconnects(zone, protocol::DisconnectReason::ProtocolMismatch);
    zone.shutdown(0ms);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::string text = read_all(out);
  std::fclose(out);
  const std::size_t lines =
      count(text, std::regex("(joined as entity|left \\(entity|refused peer)"));
  MESSAGE(joins, " joins, ", quits, " leaves, ", refused, " refusals in ", seconds, " s: ", lines,
          " log lines");
  CHECK(joins == 60);
  CHECK(quits == 60);
  CHECK(refused == 30);
  // 50 lines per 10 s window.
  CHECK(lines <= 50 * (1 + static_cast<std::size_t>(seconds / 10.0)));
}
