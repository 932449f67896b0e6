#include "truth_zone.hpp"

#include <stdlib.h>

#include <regex>

namespace zone::test {

TruthZone start_truth_zone(const std::string& server_bin, const std::string& config,
                           const std::vector<std::string>& args, const std::string& log_path,
                           std::chrono::milliseconds timeout) {
  ::setenv("ZONE_ADMIN_TOKEN", kTruthAdminToken, 1);
  std::vector<std::string> argv = {server_bin,
                                   "--config",
                                   config,
                                   "--bind",
                                   "127.0.0.1",
                                   "--port",
                                   "0",
                                   "--admin-port",
                                   "0",
                                   "--set",
                                   "debug.truth=true",
                                   "--set",
                                   "admin.token_env=ZONE_ADMIN_TOKEN"};
  argv.insert(argv.end(), args.begin(), args.end());
  TruthZone z;
  z.process = std::make_unique<Process>(std::move(argv), log_path);
  const auto port =
      z.process->wait_for_log(std::regex("listening on udp 127\\.0\\.0\\.1:(\\d+)"), timeout);
  const auto admin = z.process->wait_for_log(
      std::regex("admin endpoint on http://127\\.0\\.0\\.1:(\\d+)/"), timeout);
  if (port && admin) {
    z.port = static_cast<std::uint16_t>(std::stoi(*port));
    z.admin_port = static_cast<std::uint16_t>(std::stoi(*admin));
  }
  return z;
}

}  // namespace zone::test
