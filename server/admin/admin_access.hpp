// Who may use the admin endpoint: the bearer token, the Host check against DNS
// rebinding and the same-origin check against cross-site requests. Pure functions of
// header values, so they are tested without a server (docs/security.md explains the
// threat model behind each).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zone::admin {

// Tokens shorter than this are refused: the token is the only secret between a web page
// or a local user and the zone's state.
inline constexpr std::size_t kMinTokenLength = 16;
inline constexpr std::size_t kMaxTokenLength = 1024;

// A fresh random token (64 hex digits, 256 bits from the kernel's CSPRNG). Throws
// std::runtime_error if the kernel has no randomness to give.
std::string generate_token();

// Why a token cannot be used, or nullopt: length bounds, and printable ASCII without
// spaces (it travels in an HTTP header).
std::optional<std::string> token_problem(std::string_view token);

// Reads the token from `path`: the whole file, trailing white space (a final newline)
// removed. Returns the token, or sets `error` to a message naming the file.
std::optional<std::string> read_token_file(const std::string& path, std::string& error);

// The token that admin.token_file or admin.token_env (at most one non-empty) names: ""
// when neither is set; nullopt, with `error` naming the key, when the file or variable
// is missing or holds no usable token.
std::optional<std::string> configured_token(const std::string& token_file,
                                            const std::string& token_env, std::string& error);

// Compares in time that depends only on the expected token's length, never on where the
// first difference is.
bool token_equals(std::string_view given, std::string_view expected);

// The token of an "Authorization: Bearer <token>" header value, or nullopt.
std::optional<std::string_view> bearer_token(std::string_view authorization);

// Host names given in admin.allowed_hosts ("a.example, b.example"; the config loader
// has checked them), lower-cased.
std::vector<std::string> parse_host_list(std::string_view list);

// Whether a request's Host header names this server: an IP literal (v4, or v6 in
// brackets), "localhost", or one of `allowed` (lower case), each with an optional port.
// A DNS-rebinding page reaches us under its own name, which is none of these.
bool host_allowed(std::string_view host, const std::vector<std::string>& allowed);

// Whether a request that changes something may come from where it says it comes from:
// Sec-Fetch-Site (when sent) is "same-origin" or "none", and Origin (when sent) is
// "http://" + the Host header. Browsers send at least one of them on cross-origin
// requests; tools such as curl send neither.
bool same_origin(std::optional<std::string_view> origin,
                 std::optional<std::string_view> sec_fetch_site, std::string_view host);

}  // namespace zone::admin
