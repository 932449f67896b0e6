#pragma once
// Signals collected synchronously instead of by a handler: the watched signals are blocked
// in the constructing thread, and every thread started after it inherits the mask, so no
// handler runs and no global flag is needed; the owner polls for them in its own loop.
#include <csignal>
#include <initializer_list>

#include <pthread.h>

namespace zone::util {

class SignalWatch {
 public:
  // Construct before starting any thread, so that none of them receives these signals.
  explicit SignalWatch(std::initializer_list<int> signals) {
    sigemptyset(&set_);
    for (const int sig : signals) sigaddset(&set_, sig);
    pthread_sigmask(SIG_BLOCK, &set_, nullptr);
  }
  SignalWatch(const SignalWatch&) = delete;
  SignalWatch& operator=(const SignalWatch&) = delete;

  // Returns a pending signal of the set, or 0; never blocks.
  int poll() const {
    timespec zero{0, 0};
    const int sig = sigtimedwait(&set_, nullptr, &zero);
    return sig > 0 ? sig : 0;
  }

 private:
  sigset_t set_;
};

}  // namespace zone::util
