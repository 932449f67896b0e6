// Child processes for tests: spawn a program with its stderr in a file, wait for a line
// in it, signal it, and collect its exit status.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include <sys/types.h>

namespace zone::test {

class Process {
 public:
  // Starts `argv[0]` with the given arguments; stdout and stderr go to `log_path`.
  Process(std::vector<std::string> argv, std::string log_path);
  ~Process();  // kills the child if it is still running
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  // Waits until the log contains a match of `pattern`; returns its first capture group.
  std::optional<std::string> wait_for_log(const std::regex& pattern,
                                          std::chrono::milliseconds timeout) const;
  std::string log() const;
  void signal(int sig) const;
  // Waits for exit, calling meanwhile() (if given) while it waits; returns the exit code,
  // or nullopt on timeout or death by signal.
  std::optional<int> wait(std::chrono::milliseconds timeout,
                          const std::function<void()>& meanwhile = nullptr);
  bool running() const { return pid_ > 0 && !exited_; }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  bool exited_ = false;
  int status_ = 0;
  std::string log_path_;
};

}  // namespace zone::test
