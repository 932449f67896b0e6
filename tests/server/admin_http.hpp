// Requests to a test zone's admin endpoint, in one place, with the bearer token the test
// zones are given (AdminSetup::token in process, admin.token_env for the real binary).
#pragma once

#include <httplib.h>

#include <cstdint>
#include <string>

namespace zone::test {

inline const std::string kTestAdminToken = "test-admin-token-0123456789abcdef";
// The environment variable a test zone-server binary reads it from (admin.token_env).
inline constexpr const char* kTestAdminTokenEnv = "ZONE_TEST_ADMIN_TOKEN";

struct HttpAnswer {
  int status = -1;  // -1: no answer at all (connection refused, timeout)
  std::string body;
};

inline HttpAnswer admin_get(std::uint16_t admin_port, const std::string& path) {
  httplib::Client http("127.0.0.1", admin_port);
  http.set_connection_timeout(2, 0);
  http.set_read_timeout(5, 0);
  http.set_bearer_token_auth(kTestAdminToken);
  const auto res = http.Get(path);
  if (!res) return {};
  return {res->status, res->body};
}

inline HttpAnswer admin_post(std::uint16_t admin_port, const std::string& path) {
  httplib::Client http("127.0.0.1", admin_port);
  http.set_connection_timeout(2, 0);
  http.set_read_timeout(10, 0);
  http.set_bearer_token_auth(kTestAdminToken);
  const auto res = http.Post(path, "", "text/plain");
  if (!res) return {};
  return {res->status, res->body};
}

// The live map's data for the whole of a world, optionally with one entity selected.
inline HttpAnswer admin_map(std::uint16_t admin_port, double max_x, double max_y,
                            std::uint32_t select = 0) {
  std::string path =
      "/api/map?x0=0&y0=0&x1=" + std::to_string(max_x) + "&y1=" + std::to_string(max_y);
  if (select != 0) path += "&select=" + std::to_string(select);
  return admin_get(admin_port, path);
}

}  // namespace zone::test
