// The stateless handshake on the game port (docs/protocol.md, "Connecting";
// docs/security.md, "Connection attempts"). Before ENet's CONNECT, a client asks the
// server's port for a cookie with a small datagram; the server answers it without keeping
// anything, with a MAC over the client's address, port and a coarse time window, and the
// client puts the cookie in its CONNECT's data. A CONNECT from a forged source address
// never sees the answer, so it carries no valid cookie and is dropped before ENet gives it
// a peer: it holds no handshake place.
//
// The datagrams start with a byte that has ENet's "compressed" header flag set: the hosts
// of this project have no compressor, so ENet drops any such datagram, and none of ENet's
// own can be mistaken for these.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

struct _ENetHost;
struct _ENetAddress;

namespace zone::net {

inline constexpr std::array<std::uint8_t, 4> kCookieMagic = {0x5A, 0x4F, 0x4E, 0x43};  // "ZONC"
inline constexpr std::uint8_t kCookieVersion = 1;
inline constexpr std::uint8_t kCookieRequestKind = 1;
inline constexpr std::uint8_t kCookieReplyKind = 2;
// The request is padded to more than the reply, so the port never amplifies.
inline constexpr std::size_t kCookieRequestBytes = 32;
inline constexpr std::size_t kCookieReplyBytes = 20;
static_assert(kCookieReplyBytes <= kCookieRequestBytes);
// A cookie is valid in the window it was made in and the next: 16 to 32 s, longer than
// ENet's CONNECT retries (0, 0.5, 1.5, 3.5, 7.5 s) and a client's connect timeout.
inline constexpr std::chrono::seconds kCookieWindow{16};

// A client resends an unanswered request every kCookieResend, kCookieTries requests in
// all; kCookieResend after the last it connects without a cookie.
inline constexpr std::chrono::milliseconds kCookieResend{500};
inline constexpr int kCookieTries = 6;

// SipHash-2-4 (Aumasson and Bernstein), the keyed hash behind the cookies.
std::uint64_t siphash24(const std::array<std::uint8_t, 16>& key,
                        std::span<const std::uint8_t> message);

// The time window a cookie made at `t` belongs to.
std::uint64_t cookie_window(std::chrono::steady_clock::time_point t);
// The window the hosts make and check cookies in: now's, unless a test has fixed it.
std::uint64_t current_cookie_window();
// Fixes the hosts' window (tests: a cookie's age without waiting for it); nullopt: the clock.
void fix_cookie_window(std::optional<std::uint64_t> window);
// The cookie for a source address (IPv4, in network byte order as ENet holds it) and port
// in a window, under this process's key (random, drawn on first use).
std::uint32_t make_cookie(std::uint32_t ip, std::uint16_t port, std::uint64_t window);
// Whether `cookie` was made for this address and port in `window` or the one before.
bool cookie_valid(std::uint32_t cookie, std::uint32_t ip, std::uint16_t port, std::uint64_t window);

// Whether a datagram starts with the cookie magic (a request or a reply, of any version).
bool is_cookie_datagram(std::span<const std::uint8_t> datagram);
std::array<std::uint8_t, kCookieRequestBytes> cookie_request(std::uint64_t nonce);
// The reply to a well-formed request from this address and port, or nothing.
std::optional<std::array<std::uint8_t, kCookieReplyBytes>> cookie_reply_to(
    std::span<const std::uint8_t> request, std::uint32_t ip, std::uint16_t port,
    std::uint64_t window);
struct CookieReply {
  std::uint64_t nonce = 0;
  std::uint32_t cookie = 0;
};
std::optional<CookieReply> read_cookie_reply(std::span<const std::uint8_t> datagram);

// For raw ENet hosts (benches, tests) that connect without EnetHost: asks `server` for a
// cookie from `host`'s socket and waits up to `timeout` for the reply, resending every
// 250 ms. It reads the socket itself, so any other datagram arriving meanwhile is lost:
// use it before the host has connections, or accept that ENet resends what was lost.
std::optional<std::uint32_t> fetch_cookie(_ENetHost* host, const _ENetAddress& server,
                                          std::chrono::milliseconds timeout);

}  // namespace zone::net
