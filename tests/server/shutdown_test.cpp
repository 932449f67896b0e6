// Ends of connections and of the process: silent clients time out, the real zone-server
// binary shuts down cleanly on SIGTERM, and its command line validates configuration.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "harness.hpp"
#include "test_util.hpp"
#include "udp_relay.hpp"  // tests/support

extern char** environ;

using namespace std::chrono_literals;
using namespace zone;
using protocol::DisconnectReason;

namespace {

// The real zone-server as a child process, its stdout and stderr read through pipes.
class ServerProcess {
 public:
  explicit ServerProcess(const std::vector<std::string>& args) {
    int out[2], err[2];
    REQUIRE(::pipe2(out, O_CLOEXEC) == 0);
    REQUIRE(::pipe2(err, O_CLOEXEC) == 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&fa, err[1], STDERR_FILENO);
    std::vector<std::string> full{ZONE_SERVER_BIN};
    full.insert(full.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& a : full) argv.push_back(a.data());
    argv.push_back(nullptr);
    const int rc = ::posix_spawn(&pid_, ZONE_SERVER_BIN, &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    ::close(out[1]);
    ::close(err[1]);
    out_fd_ = out[0];
    err_fd_ = err[0];
    ::fcntl(out_fd_, F_SETFL, O_NONBLOCK);
    ::fcntl(err_fd_, F_SETFL, O_NONBLOCK);
    REQUIRE_MESSAGE(rc == 0, "posix_spawn ", ZONE_SERVER_BIN, ": ", rc);
  }
  ~ServerProcess() {
    if (pid_ > 0 && !status_) {
      ::kill(pid_, SIGKILL);
      int st = 0;
      ::waitpid(pid_, &st, 0);
    }
    if (out_fd_ >= 0) ::close(out_fd_);
    if (err_fd_ >= 0) ::close(err_fd_);
  }
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  pid_t pid() const { return pid_; }
  const std::string& out() const { return out_; }
  const std::string& err() const { return err_; }

  // Reads whatever the pipes hold, waiting up to `wait` for something to arrive.
  void drain(std::chrono::milliseconds wait = 0ms) {
    pollfd fds[2] = {{out_fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}};
    ::poll(fds, 2, static_cast<int>(wait.count()));
    read_all(out_fd_, out_);
    read_all(err_fd_, err_);
  }
  // Waits for stderr to match `re`; returns the match.
  std::optional<std::smatch> wait_for_err(const std::regex& re, std::chrono::milliseconds timeout) {
    const auto end = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < end) {
      drain(10ms);
      std::smatch m;
      if (std::regex_search(err_, m, re)) return m;
      if (exited()) break;
    }
    return std::nullopt;
  }
  // True once the process has exited (reaped); status() then holds its wait status.
  bool exited() {
    if (status_) return true;
    int st = 0;
    const pid_t r = ::waitpid(pid_, &st, WNOHANG);
    if (r == pid_) status_ = st;
    return status_.has_value();
  }
  // Waits for the exit; returns the exit code, or nullopt on a timeout or a signal death.
  std::optional<int> wait_exit(std::chrono::milliseconds timeout,
                               const std::function<void()>& meanwhile = nullptr) {
    const auto end = std::chrono::steady_clock::now() + timeout;
    while (!exited() && std::chrono::steady_clock::now() < end) {
      if (meanwhile) meanwhile();
      drain(5ms);
    }
    drain();
    if (!status_ || !WIFEXITED(*status_)) return std::nullopt;
    return WEXITSTATUS(*status_);
  }

 private:
  static void read_all(int fd, std::string& into) {
    char buf[4096];
    for (;;) {
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n > 0) {
        into.append(buf, static_cast<std::size_t>(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      break;
    }
  }

  pid_t pid_ = -1;
  int out_fd_ = -1;
  int err_fd_ = -1;
  std::string out_, err_;
  std::optional<int> status_;
};

const std::string kConfig = std::string(ZONE_SOURCE_DIR) + "/configs/zone.yaml";

// Extra arguments that keep the binary off fixed ports besides the game port: the admin
// endpoint, when this build has one, gets an ephemeral port too.
std::vector<std::string> isolation_args() {
  ServerProcess probe({"--config", kConfig, "--check-config"});
  const auto code = probe.wait_exit(10s);
  if (code && *code == 0 && probe.out().find("admin") != std::string::npos) {
    return {"--set", "admin.port=0"};
  }
  return {};
}

}  // namespace

TEST_CASE("shutdown: a client that stops answering times out and is despawned") {
  net::EnetLibrary enet;
  config::ZoneConfig cfg = test::tiny_zone();
  cfg.network.timeout_ms = 500;
  test::ServerThread server(cfg);
  test::Clients alive;
  test::Clients frozen;
  client::Bot& alice = alive.add("alice", server.port());
  client::Bot& bob = frozen.add("bob", server.port());
  // Both hosts must be serviced while connecting.
  const auto both_joined = [&] {
    return bob.welcome().entity_id != 0 && alice.replica().find(bob.welcome().entity_id) != nullptr;
  };
  for (int i = 0; i < 250 && !both_joined(); ++i) {
    alive.pump(10ms);
    frozen.pump(10ms);
  }
  REQUIRE(both_joined());
  const std::uint32_t bob_id = bob.welcome().entity_id;

  // From now on bob's host is never serviced again: no acknowledgments, no inputs.
  const auto t0 = std::chrono::steady_clock::now();
  CHECK(alive.pump_until([&] { return alice.replica().find(bob_id) == nullptr; }, 5s));
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  MESSAGE("silent client removed after ", took, " s (timeout 0.5 s)");
  CHECK(alice.phase() == client::Bot::Phase::kPlaying);
  CHECK(alice.replica().violations().empty());
  const std::uint64_t frames = alice.replica().frames_completed();
  alive.pump(300ms);
  CHECK(alice.replica().frames_completed() > frames);

  ZoneServer& zone = server.stop();
  CHECK(test::disconnects(zone, DisconnectReason::Timeout) == 1);
  CHECK(zone.players() == 1);
  CHECK(zone.world().find(bob_id) == nullptr);
}

TEST_CASE("shutdown: the goodbye reaches a client even if its first datagram is lost") {
  // ZoneServer::shutdown(grace) promises to let ENet deliver the goodbyes and see them
  // acknowledged within the grace time; a lost datagram must therefore be resent.
  net::EnetLibrary enet;
  test::ServerThread server(test::tiny_zone());
  test::UdpRelay relay(server.port());
  test::Clients clients;
  client::Bot& bot = clients.add("alice", relay.port());
  REQUIRE(clients.pump_until([&] { return bot.replica().frames_completed() > 10; }, 5s));

  ZoneServer& zone = server.stop();  // the loop is stopped; this thread owns the zone now
  relay.drop_next_from_server(1);
  const auto t0 = std::chrono::steady_clock::now();
  std::atomic<bool> done{false};
  double took = 0.0;
  std::thread stopper([&] {
    zone.shutdown(2000ms);
    took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    done = true;
  });
  const bool told =
      clients.pump_until([&] { return bot.phase() == client::Bot::Phase::kClosed; }, 3s);
  stopper.join();
  MESSAGE("shutdown(2000 ms) returned after ", took, " s; relay dropped ", relay.dropped(),
          " datagram(s) from the server");
  CHECK(relay.dropped() == 1);
  CHECK(told);
  CHECK(test::reason_of(bot) == test::reason_of(DisconnectReason::ServerShutdown));
  CHECK(test::disconnects(zone, DisconnectReason::ServerShutdown) == 1);
}

TEST_CASE("shutdown: SIGTERM tells clients the server is shutting down and exits 0 promptly") {
  std::vector<std::string> args{"--config", kConfig,     "--port", "0",
                                "--bind",   "127.0.0.1", "--npcs", "10"};
  for (const std::string& a : isolation_args()) args.push_back(a);
  ServerProcess proc(args);
  const auto m = proc.wait_for_err(std::regex(R"(listening on udp 127\.0\.0\.1:(\d+))"), 10s);
  REQUIRE_MESSAGE(m.has_value(), "no listening line; stderr:\n", proc.err());
  const int port = std::stoi((*m)[1].str());
  REQUIRE(port > 0);
  REQUIRE(port < 65536);

  net::EnetLibrary enet;
  test::Clients clients;
  client::Bot& bot = clients.add("alice", static_cast<std::uint16_t>(port));
  REQUIRE_MESSAGE(clients.pump_until([&] { return bot.replica().frames_completed() > 5; }, 5s),
                  "stderr:\n", proc.err());
  CHECK(bot.welcome().tick_rate == 20);  // the shipped config's rate

  REQUIRE(::kill(proc.pid(), SIGTERM) == 0);
  const auto signalled = std::chrono::steady_clock::now();
  const auto code = proc.wait_exit(3s, [&] { clients.pump(2ms); });
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - signalled).count();
  REQUIRE_MESSAGE(code.has_value(), "did not exit; stderr:\n", proc.err());
  CHECK(*code == 0);
  CHECK_MESSAGE(took < 1.0, "exited ", took, " s after SIGTERM");
  MESSAGE("zone-server exited ", took, " s after SIGTERM");
  // The goodbye was sent before the exit; give the client a moment to read it.
  CHECK(clients.pump_until([&] { return bot.phase() == client::Bot::Phase::kClosed; }, 2s));
  CHECK(test::reason_of(bot) == test::reason_of(DisconnectReason::ServerShutdown));
  CHECK(proc.err().find("SIGTERM") != std::string::npos);
}

TEST_CASE("shutdown: --check-config prints the effective config and exits 0") {
  ServerProcess proc({"--config", kConfig, "--check-config", "--set", "aoi.view_radius=42"});
  const auto code = proc.wait_exit(10s);
  REQUIRE(code.has_value());
  CHECK(*code == 0);
  CHECK(proc.out().find("OK") != std::string::npos);
  CHECK(proc.out().find("view_radius") != std::string::npos);
  CHECK(proc.out().find("42") != std::string::npos);
  CHECK(proc.err().find("listening") == std::string::npos);  // it did not start a zone
}

TEST_CASE("shutdown: a bad override exits 2 naming the key") {
  ServerProcess proc({"--config", kConfig, "--port", "0", "--set", "aoi.cel_size=3"});
  const auto code = proc.wait_exit(10s);
  REQUIRE(code.has_value());
  CHECK(*code == 2);
  CHECK_MESSAGE(proc.err().find("aoi.cel_size") != std::string::npos, "stderr:\n", proc.err());
  CHECK(proc.err().find("listening") == std::string::npos);
}
