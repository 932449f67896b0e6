#include "net/connect_cookie.hpp"

#include <enet/enet.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <random>

namespace zone::net {

namespace {

std::uint64_t load_le64(const std::uint8_t* p) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

void store_le(std::uint8_t* p, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

std::uint64_t rotl(std::uint64_t x, int b) {
  return (x << b) | (x >> (64 - b));
}

// Drawn once per process (the first use initialises it, thread-safely) and only read
// after: every host of the process, on whichever network thread, makes and checks the
// same cookies, so it does not matter which host of a SO_REUSEPORT group gets a source's
// request and which its CONNECT. Cookies from before a restart are worthless after it,
// which costs a client at most one refused CONNECT (it asks again when it reconnects).
const std::array<std::uint8_t, 16>& process_key() {
  static const std::array<std::uint8_t, 16> key = [] {
    std::array<std::uint8_t, 16> k{};
    std::random_device device;
    for (std::size_t i = 0; i < k.size(); i += 4) store_le(&k[i], device(), 4);
    return k;
  }();
  return key;
}

// All ones: no fixed window (the clock's).
std::atomic<std::uint64_t> g_fixed_window{~std::uint64_t{0}};

bool has_header(std::span<const std::uint8_t> d, std::uint8_t kind) {
  return d.size() >= 8 && std::equal(kCookieMagic.begin(), kCookieMagic.end(), d.begin()) &&
         d[4] == kCookieVersion && d[5] == kind;
}

}  // namespace

std::uint64_t siphash24(const std::array<std::uint8_t, 16>& key,
                        std::span<const std::uint8_t> message) {
  const std::uint64_t k0 = load_le64(key.data());
  const std::uint64_t k1 = load_le64(key.data() + 8);
  std::uint64_t v0 = 0x736f6d6570736575ULL ^ k0;
  std::uint64_t v1 = 0x646f72616e646f6dULL ^ k1;
  std::uint64_t v2 = 0x6c7967656e657261ULL ^ k0;
  std::uint64_t v3 = 0x7465646279746573ULL ^ k1;
  const auto round = [&] {
    v0 += v1;
    v1 = rotl(v1, 13);
    v1 ^= v0;
    v0 = rotl(v0, 32);
    v2 += v3;
    v3 = rotl(v3, 16);
    v3 ^= v2;
    v0 += v3;
    v3 = rotl(v3, 21);
    v3 ^= v0;
    v2 += v1;
    v1 = rotl(v1, 17);
    v1 ^= v2;
    v2 = rotl(v2, 32);
  };
  const std::size_t n = message.size();
  const std::size_t whole = n - n % 8;
  for (std::size_t i = 0; i < whole; i += 8) {
    const std::uint64_t m = load_le64(message.data() + i);
    v3 ^= m;
    round();
    round();
    v0 ^= m;
  }
  std::uint64_t last = static_cast<std::uint64_t>(n) << 56;
  for (std::size_t j = 0; j < n % 8; ++j) {
    last |= static_cast<std::uint64_t>(message[whole + j]) << (8 * j);
  }
  v3 ^= last;
  round();
  round();
  v0 ^= last;
  v2 ^= 0xff;
  for (int i = 0; i < 4; ++i) round();
  return v0 ^ v1 ^ v2 ^ v3;
}

std::uint64_t cookie_window(std::chrono::steady_clock::time_point t) {
  return static_cast<std::uint64_t>(t.time_since_epoch() / kCookieWindow);
}

std::uint64_t current_cookie_window() {
  const std::uint64_t fixed = g_fixed_window.load(std::memory_order_relaxed);
  return fixed != ~std::uint64_t{0} ? fixed : cookie_window(std::chrono::steady_clock::now());
}

void fix_cookie_window(std::optional<std::uint64_t> window) {
  g_fixed_window.store(window.value_or(~std::uint64_t{0}), std::memory_order_relaxed);
}

std::uint32_t make_cookie(std::uint32_t ip, std::uint16_t port, std::uint64_t window) {
  std::array<std::uint8_t, 14> message{};
  std::memcpy(message.data(), &ip, sizeof ip);
  store_le(message.data() + 4, port, 2);
  store_le(message.data() + 6, window, 8);
  return static_cast<std::uint32_t>(siphash24(process_key(), message));
}

bool cookie_valid(std::uint32_t cookie, std::uint32_t ip, std::uint16_t port,
                  std::uint64_t window) {
  return cookie == make_cookie(ip, port, window) ||
         (window > 0 && cookie == make_cookie(ip, port, window - 1));
}

bool is_cookie_datagram(std::span<const std::uint8_t> datagram) {
  return datagram.size() >= kCookieMagic.size() &&
         std::equal(kCookieMagic.begin(), kCookieMagic.end(), datagram.begin());
}

std::array<std::uint8_t, kCookieRequestBytes> cookie_request(std::uint64_t nonce) {
  std::array<std::uint8_t, kCookieRequestBytes> d{};
  std::copy(kCookieMagic.begin(), kCookieMagic.end(), d.begin());
  d[4] = kCookieVersion;
  d[5] = kCookieRequestKind;
  store_le(&d[8], nonce, 8);
  return d;
}

std::optional<std::array<std::uint8_t, kCookieReplyBytes>> cookie_reply_to(
    std::span<const std::uint8_t> request, std::uint32_t ip, std::uint16_t port,
    std::uint64_t window) {
  if (request.size() != kCookieRequestBytes || !has_header(request, kCookieRequestKind)) {
    return std::nullopt;
  }
  std::array<std::uint8_t, kCookieReplyBytes> d{};
  std::copy(request.begin(), request.begin() + 16, d.begin());  // header and nonce
  d[5] = kCookieReplyKind;
  d[6] = d[7] = 0;
  store_le(&d[16], make_cookie(ip, port, window), 4);
  return d;
}

std::optional<CookieReply> read_cookie_reply(std::span<const std::uint8_t> datagram) {
  if (datagram.size() != kCookieReplyBytes || !has_header(datagram, kCookieReplyKind)) {
    return std::nullopt;
  }
  std::uint32_t cookie = 0;
  for (int i = 3; i >= 0; --i) cookie = (cookie << 8) | datagram[16 + i];
  return CookieReply{load_le64(&datagram[8]), cookie};
}

std::optional<std::uint32_t> fetch_cookie(ENetHost* host, const ENetAddress& server,
                                          std::chrono::milliseconds timeout) {
  std::random_device device;
  const std::uint64_t nonce = (std::uint64_t{device()} << 32) | device();
  const auto request = cookie_request(nonce);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto next_send = std::chrono::steady_clock::now();
  for (;;) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return std::nullopt;
    if (now >= next_send) {
      ENetBuffer out{};
      out.data = const_cast<std::uint8_t*>(request.data());
      out.dataLength = request.size();
      enet_socket_send(host->socket, &server, &out, 1);
      next_send = now + std::chrono::milliseconds(250);
    }
    const auto wait =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::min(next_send, deadline) - now);
    enet_uint32 condition = ENET_SOCKET_WAIT_RECEIVE;
    if (enet_socket_wait(host->socket, &condition, static_cast<enet_uint32>(wait.count() + 1)) !=
            0 ||
        (condition & ENET_SOCKET_WAIT_RECEIVE) == 0) {
      continue;
    }
    std::array<std::uint8_t, 1500> in{};
    ENetBuffer buffer{};
    buffer.data = in.data();
    buffer.dataLength = in.size();
    ENetAddress from{};
    const int got = enet_socket_receive(host->socket, &from, &buffer, 1);
    if (got <= 0 || from.host != server.host || from.port != server.port) continue;
    const auto reply = read_cookie_reply({in.data(), static_cast<std::size_t>(got)});
    if (reply && reply->nonce == nonce) return reply->cookie;
  }
}

}  // namespace zone::net
