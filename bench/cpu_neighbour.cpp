// cpu-neighbour: a fixed share of one core taken from whatever else runs on the machine,
// the neighbour of bench/capacity.sh --neighbour (docs/benchmarks.md, "Capacity"). One
// thread spins until it has had share x period of CPU time in every period, then sleeps
// until the next period, for --seconds (0: until killed); it reports the share it had.
//
// usage: cpu-neighbour --share 0.25 [--period-ms 10] [--seconds 0]
#include <time.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

namespace {

volatile std::sig_atomic_t g_stop = 0;  // SIGTERM / SIGINT: report, then exit
extern "C" void on_stop(int) {
  g_stop = 1;
}

double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

}  // namespace

int main(int argc, char** argv) {
  double share = 0.25;
  double period_ms = 10;
  double seconds = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const double v = std::strtod(argv[i + 1], nullptr);
    if (flag == "--share") {
      share = v;
    } else if (flag == "--period-ms") {
      period_ms = v;
    } else if (flag == "--seconds") {
      seconds = v;
    } else {
      std::fprintf(stderr, "cpu-neighbour: unknown argument '%s'\n", argv[i]);
      return 2;
    }
  }
  if (share < 0 || share > 1 || period_ms <= 0) {
    std::fprintf(stderr, "cpu-neighbour: --share must be in [0, 1], --period-ms above 0\n");
    return 2;
  }
  using clock = std::chrono::steady_clock;
  const auto period = std::chrono::duration_cast<clock::duration>(
      std::chrono::duration<double, std::milli>(period_ms));
  const auto busy = std::chrono::duration_cast<clock::duration>(period * share);
  const auto start = clock::now();
  const auto end = seconds > 0 ? start + std::chrono::duration_cast<clock::duration>(
                                             std::chrono::duration<double>(seconds))
                               : clock::time_point::max();
  volatile std::uint64_t sink = 0;
  std::signal(SIGTERM, on_stop);
  std::signal(SIGINT, on_stop);
  for (auto next = start; next < end && !g_stop; next += period) {
    // Busy until it has had its share of the period in CPU time (a late wake-up or a
    // preemption does not shorten it), or the period is over; then idle until the next.
    const double goal = thread_cpu_seconds() + std::chrono::duration<double>(busy).count();
    while (thread_cpu_seconds() < goal && clock::now() < next + period) {
      for (int i = 0; i < 1000; ++i) sink = sink + 1;
    }
    std::this_thread::sleep_until(next + period);
  }
  // The CPU it actually had (the scheduler's own count, exact where /proc's sampled user
  // time is not for a thread that runs 2.5 ms at a time).
  timespec cpu{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
  const double wall = std::chrono::duration<double>(clock::now() - start).count();
  std::fprintf(
      stderr, "cpu-neighbour: %.1f%% of one core over %.1f s\n",
      100.0 * (static_cast<double>(cpu.tv_sec) + 1e-9 * static_cast<double>(cpu.tv_nsec)) / wall,
      wall);
  return 0;
}
