#include "process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <thread>

extern char** environ;

namespace zone::test {

namespace {

// A zone-server a test starts keeps no characters unless the test names a persist.* key:
// tests run side by side, and a shared data/zone.sqlite3 would carry one test's players
// into another's.
void without_store_unless_asked(std::vector<std::string>& argv) {
  const std::string_view program = argv.empty() ? std::string_view() : argv[0];
  if (!program.ends_with("zone-server")) return;
  for (const std::string& a : argv) {
    if (a.starts_with("persist.")) return;
  }
  argv.insert(argv.end(), {"--set", "persist.enabled=false"});
}

}  // namespace

Process::Process(std::vector<std::string> argv, std::string log_path)
    : log_path_(std::move(log_path)) {
  without_store_unless_asked(argv);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  const int rc = posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot start " + argv[0]);
}

Process::~Process() {
  if (running()) {
    kill(pid_, SIGKILL);
    waitpid(pid_, &status_, 0);
  }
}

std::string Process::log() const {
  std::ifstream in(log_path_);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::optional<std::string> Process::wait_for_log(const std::regex& pattern,
                                                 std::chrono::milliseconds timeout) const {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < end) {
    std::smatch m;
    const std::string text = log();
    if (std::regex_search(text, m, pattern)) return m.size() > 1 ? m[1].str() : m[0].str();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return std::nullopt;
}

void Process::signal(int sig) const {
  if (running()) kill(pid_, sig);
}

std::optional<int> Process::wait(std::chrono::milliseconds timeout,
                                 const std::function<void()>& meanwhile) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (!exited_) {
    const pid_t r = waitpid(pid_, &status_, WNOHANG);
    if (r == pid_) {
      exited_ = true;
      break;
    }
    if (std::chrono::steady_clock::now() >= end) return std::nullopt;
    if (meanwhile) {
      meanwhile();
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  if (WIFEXITED(status_)) return WEXITSTATUS(status_);
  return std::nullopt;
}

}  // namespace zone::test
