#include "admin/admin_access.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "util/read_file.hpp"

namespace zone::admin {

namespace {

char lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

std::string lowered(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), lower);
  return out;
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(),
                                            [](char x, char y) { return lower(x) == lower(y); });
}

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

bool valid_port(std::string_view port) {
  return !port.empty() && port.size() <= 5 &&
         std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool ip_literal(int family, std::string_view text) {
  if (text.empty() || text.size() >= INET6_ADDRSTRLEN) return false;
  const std::string s(text);
  std::array<unsigned char, sizeof(in6_addr)> address{};
  return inet_pton(family, s.c_str(), address.data()) == 1;
}

}  // namespace

std::string generate_token() {
  std::array<unsigned char, 32> bytes{};
  std::size_t got = 0;
  while (got < bytes.size()) {
    const ssize_t n = getrandom(bytes.data() + got, bytes.size() - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(
          fmt::format("cannot generate an admin token: getrandom: {}", std::strerror(errno)));
    }
    got += static_cast<std::size_t>(n);
  }
  std::string token;
  for (const unsigned char b : bytes) token += fmt::format("{:02x}", b);
  return token;
}

std::optional<std::string> token_problem(std::string_view token) {
  if (token.size() < kMinTokenLength) {
    return fmt::format("the token must be at least {} characters long, got {}", kMinTokenLength,
                       token.size());
  }
  if (token.size() > kMaxTokenLength) {
    return fmt::format("the token must be at most {} characters long, got {}", kMaxTokenLength,
                       token.size());
  }
  for (const char ch : token) {
    const auto c = static_cast<unsigned char>(ch);
    if (c <= 0x20 || c >= 0x7f) {
      return std::string(
          "the token must be printable ASCII without spaces (it is sent in an HTTP header)");
    }
  }
  return std::nullopt;
}

std::optional<std::string> read_token_file(const std::string& path, std::string& error) {
  std::string text;
  if (auto problem = util::read_small_file(path, false, kMaxTokenLength + 64, text)) {
    error = std::move(*problem);
    return std::nullopt;
  }
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ' ||
                           text.back() == '\t')) {
    text.pop_back();
  }
  if (auto problem = token_problem(text)) {
    error = fmt::format("{}: {}", path, *problem);
    return std::nullopt;
  }
  return text;
}

std::optional<std::string> configured_token(const std::string& token_file,
                                            const std::string& token_env, std::string& error) {
  if (!token_file.empty()) {
    std::string why;
    auto token = read_token_file(token_file, why);
    if (!token) error = "admin.token_file: " + why;
    return token;
  }
  if (token_env.empty()) return std::string();
  const char* value = std::getenv(token_env.c_str());
  if (value == nullptr || *value == '\0') {
    error = fmt::format("admin.token_env: the environment variable {} is not set", token_env);
    return std::nullopt;
  }
  if (auto problem = token_problem(value)) {
    error = fmt::format("admin.token_env: {}: {}", token_env, *problem);
    return std::nullopt;
  }
  return std::string(value);
}

bool token_equals(std::string_view given, std::string_view expected) {
  // Every byte of the expected token is visited whatever the input; the length of the
  // expected token is the only thing the timing can tell.
  volatile unsigned char diff = given.size() == expected.size() ? 0 : 1;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const unsigned char g = i < given.size() ? static_cast<unsigned char>(given[i]) : 0;
    diff = diff | static_cast<unsigned char>(g ^ static_cast<unsigned char>(expected[i]));
  }
  return diff == 0;
}

std::optional<std::string_view> bearer_token(std::string_view authorization) {
  authorization = trim(authorization);
  constexpr std::string_view kScheme = "bearer";
  if (authorization.size() <= kScheme.size() ||
      !iequals(authorization.substr(0, kScheme.size()), kScheme) ||
      authorization[kScheme.size()] != ' ') {
    return std::nullopt;
  }
  const std::string_view token = trim(authorization.substr(kScheme.size() + 1));
  if (token.empty()) return std::nullopt;
  return token;
}

std::vector<std::string> parse_host_list(std::string_view list) {
  std::vector<std::string> out;
  while (!list.empty()) {
    const auto comma = list.find(',');
    const std::string_view item = trim(list.substr(0, comma));
    if (!item.empty()) out.push_back(lowered(item));
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return out;
}

bool host_allowed(std::string_view host, const std::vector<std::string>& allowed) {
  host = trim(host);
  if (host.empty()) return false;
  if (host.front() == '[') {
    const auto close = host.find(']');
    if (close == std::string_view::npos) return false;
    const std::string_view rest = host.substr(close + 1);
    if (!rest.empty() && (rest.front() != ':' || !valid_port(rest.substr(1)))) return false;
    return ip_literal(AF_INET6, host.substr(1, close - 1));
  }
  std::string_view name = host;
  const auto colon = host.find(':');
  if (colon != std::string_view::npos) {
    if (!valid_port(host.substr(colon + 1))) return false;
    name = host.substr(0, colon);
  }
  if (!name.empty() && name.back() == '.') name.remove_suffix(1);  // "localhost." is localhost
  if (name.empty()) return false;
  if (ip_literal(AF_INET, name) || iequals(name, "localhost")) return true;
  return std::any_of(allowed.begin(), allowed.end(),
                     [&](const std::string& a) { return iequals(name, a); });
}

bool same_origin(std::optional<std::string_view> origin,
                 std::optional<std::string_view> sec_fetch_site, std::string_view host) {
  if (sec_fetch_site) {
    const std::string site = lowered(trim(*sec_fetch_site));
    if (site != "same-origin" && site != "none") return false;
  }
  if (origin) {
    const std::string_view o = trim(*origin);
    constexpr std::string_view kScheme = "http://";
    const std::string_view h = trim(host);
    if (h.empty() || o.size() != kScheme.size() + h.size() ||
        !iequals(o.substr(0, kScheme.size()), kScheme) || !iequals(o.substr(kScheme.size()), h)) {
      return false;
    }
  }
  return true;
}

}  // namespace zone::admin
