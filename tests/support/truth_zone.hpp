// A zone-server child process for the end-to-end tests that check client-sim against the
// server's ground truth: ephemeral loopback ports, debug.truth on, and the admin token
// that /debug/truth needs taken from ZONE_ADMIN_TOKEN, which client-sim reads too.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "process.hpp"

namespace zone::test {

// The token both sides inherit from the test process's environment.
inline constexpr const char* kTruthAdminToken = "e2e-test-admin-token-0123456789";

struct TruthZone {
  std::unique_ptr<Process> process;
  std::uint16_t port = 0;        // UDP game port; 0: the zone did not start (see the log)
  std::uint16_t admin_port = 0;  // admin HTTP port; 0 likewise
};

// Exports ZONE_ADMIN_TOKEN and starts `server_bin --config CONFIG` with the settings
// above and then `args`, its output in `log_path`; waits up to `timeout` for both ports.
TruthZone start_truth_zone(const std::string& server_bin, const std::string& config,
                           const std::vector<std::string>& args, const std::string& log_path,
                           std::chrono::milliseconds timeout = std::chrono::seconds(10));

}  // namespace zone::test
