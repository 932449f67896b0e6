// The game port against strangers (docs/security.md): forged connection attempts that
// never finish their handshake, and connections that never say hello, cannot keep an
// honest newcomer out. The attacker speaks from 127.0.0.2, the newcomer from 127.0.0.1,
// with the loopback exemption off so that both count as distinct remote addresses.
// Forged CONNECTs carry no cookie (net/connect_cookie.hpp): with limits.connect_cookies on
// (the default) they are refused before any other limit; the tests of the handshake
// limits behind the cookies turn it off.
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <enet/enet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "admin_http.hpp"
#include "harness.hpp"
#include "net/connect_cookie.hpp"
#include "test_util.hpp"

using namespace std::chrono_literals;
using namespace zone;
using protocol::DisconnectReason;

namespace {

bool playing(const client::Bot& b) {
  return b.phase() == client::Bot::Phase::kPlaying && b.replica().frames_completed() > 2;
}

config::ZoneConfig guarded_zone() {
  config::ZoneConfig c = test::tiny_zone();
  c.threads.network = 1;  // one host: every attempt meets the same limits
  c.limits.loopback_exempt = false;
  c.limits.max_handshakes_per_address = 4;
  c.limits.max_handshakes = 64;
  c.limits.handshake_timeout_ms = 500;
  c.limits.max_connections_per_address = 8;
  return c;
}

// A UDP socket on 127.0.0.2 (or another address) that sends forged ENet CONNECT
// commands, each with a new connect id (to ENet, a new connection each time), with the
// given connect data (where the cookie goes), and never answers.
class ForgedConnects {
 public:
  explicit ForgedConnects(std::uint16_t server_port, const char* from = "127.0.0.2") {
    fd_ = ::socket(AF_INET, SOCK_DGRAM, 0);
    REQUIRE(fd_ >= 0);
    sockaddr_in local{};
    local.sin_family = AF_INET;
    local.sin_addr.s_addr = ::inet_addr(from);
    REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&local), sizeof local) == 0);
    socklen_t len = sizeof local;
    REQUIRE(::getsockname(fd_, reinterpret_cast<sockaddr*>(&local), &len) == 0);
    ip_ = local.sin_addr.s_addr;
    port_ = ntohs(local.sin_port);
    to_.sin_family = AF_INET;
    to_.sin_addr.s_addr = ::inet_addr("127.0.0.1");
    to_.sin_port = htons(server_port);
  }
  ~ForgedConnects() { ::close(fd_); }
  ForgedConnects(const ForgedConnects&) = delete;
  ForgedConnects& operator=(const ForgedConnects&) = delete;
  std::uint32_t ip() const { return ip_; }  // network byte order, as ENet holds it
  std::uint16_t port() const { return port_; }

  void send_raw(std::span<const std::uint8_t> bytes) {
    ::sendto(fd_, bytes.data(), bytes.size(), 0, reinterpret_cast<const sockaddr*>(&to_),
             sizeof to_);
  }
  // The next datagram within `ms` (0: only one already there), or nothing.
  std::optional<std::vector<std::uint8_t>> receive(int ms) {
    if (ms > 0) {
      timeval tv{ms / 1000, (ms % 1000) * 1000};
      ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    }
    std::vector<std::uint8_t> buf(2048);
    const ssize_t n = ::recv(fd_, buf.data(), buf.size(), ms > 0 ? 0 : MSG_DONTWAIT);
    if (n < 0) return std::nullopt;
    buf.resize(static_cast<std::size_t>(n));
    return buf;
  }
  // Whether the server answers one CONNECT with `data` (ENet's VERIFY_CONNECT) within
  // `ms`: the server gave it a peer and a handshake place.
  bool answered(std::uint32_t data, int ms = 300) {
    send(1, data);
    std::array<std::uint8_t, 4> id{};
    std::memcpy(id.data(), &last_connect_id_, id.size());  // VERIFY_CONNECT echoes it as is
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (std::chrono::steady_clock::now() < until) {
      const auto got = receive(20);
      // Resends of earlier handshakes' answers may come too: only this one's counts.
      if (got && std::search(got->begin(), got->end(), id.begin(), id.end()) != got->end()) {
        return true;
      }
    }
    return false;
  }
  void send(int count, std::uint32_t data = 0) {
    for (int i = 0; i < count; ++i) {
      std::uint8_t buf[sizeof(ENetProtocolHeader) + sizeof(ENetProtocolConnect)] = {};
      auto* header = reinterpret_cast<ENetProtocolHeader*>(buf);
      header->peerID = ENET_HOST_TO_NET_16(static_cast<enet_uint16>(
          int{ENET_PROTOCOL_MAXIMUM_PEER_ID} | int{ENET_PROTOCOL_HEADER_FLAG_SENT_TIME}));
      header->sentTime = ENET_HOST_TO_NET_16(1);
      ENetProtocolConnect c{};
      c.header.command = static_cast<enet_uint8>(int{ENET_PROTOCOL_COMMAND_CONNECT} |
                                                 int{ENET_PROTOCOL_COMMAND_FLAG_ACKNOWLEDGE});
      c.header.channelID = 0xFF;
      c.header.reliableSequenceNumber = ENET_HOST_TO_NET_16(1);
      c.outgoingPeerID = ENET_HOST_TO_NET_16(static_cast<enet_uint16>(i % 4000));
      c.incomingSessionID = 0xFF;
      c.outgoingSessionID = 0xFF;
      c.mtu = ENET_HOST_TO_NET_32(1400);
      c.windowSize = ENET_HOST_TO_NET_32(32768);
      c.channelCount = ENET_HOST_TO_NET_32(2);
      c.packetThrottleInterval = ENET_HOST_TO_NET_32(5000);
      c.packetThrottleAcceleration = ENET_HOST_TO_NET_32(2);
      c.packetThrottleDeceleration = ENET_HOST_TO_NET_32(2);
      c.connectID = static_cast<enet_uint32>(rng_());
      c.data = ENET_HOST_TO_NET_32(data);
      last_connect_id_ = c.connectID;
      std::memcpy(buf + sizeof(ENetProtocolHeader), &c, sizeof c);
      ::sendto(fd_, buf, sizeof buf, 0, reinterpret_cast<const sockaddr*>(&to_), sizeof to_);
    }
  }

 private:
  int fd_ = -1;
  sockaddr_in to_{};
  std::uint32_t ip_ = 0;
  std::uint16_t port_ = 0;
  enet_uint32 last_connect_id_ = 0;
  std::mt19937 rng_{12345};
};

// One sample's value in the zone's /metrics (name with its labels, as written there), or
// -1 when it is not there.
double metric(std::uint16_t admin_port, const std::string& sample) {
  const std::string text = test::admin_get(admin_port, "/metrics").body;
  const auto at = text.find("\n" + sample + " ");
  return at == std::string::npos ? -1.0 : std::stod(text.substr(at + sample.size() + 2));
}

// Waits (up to 2 s: /metrics is published a few times a second) until `ok` holds for the
// value of `sample`; returns the last value read.
template <typename Pred>
double metric_when(std::uint16_t admin_port, const std::string& sample, Pred ok) {
  const auto deadline = std::chrono::steady_clock::now() + 2s;
  double v = metric(admin_port, sample);
  while (!ok(v) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(50ms);
    v = metric(admin_port, sample);
  }
  return v;
}

}  // namespace

TEST_CASE("admission: forged connects from one address cannot keep a newcomer out") {
  // The handshake limits, which hold whatever a CONNECT carries: with cookies they meet
  // only CONNECTs whose source got a cookie (an on-path attacker's).
  net::EnetLibrary enet;
  config::ZoneConfig cfg = guarded_zone();
  cfg.limits.connect_cookies = false;
  test::ServerThread server(cfg);
  ForgedConnects attacker(server.port());
  test::Clients clients;
  attacker.send(1000);  // far more than the host's peer slots
  client::Bot& newcomer = clients.add("newcomer", server.port());
  const auto start = std::chrono::steady_clock::now();
  bool joined = false;
  while (!joined && std::chrono::steady_clock::now() - start < 5s) {
    attacker.send(50);  // the attack goes on while the newcomer joins
    joined = clients.pump_until([&] { return playing(newcomer); }, 50ms);
  }
  CHECK(joined);
  clients.pump(800ms);  // past the handshake timeout
  CHECK(playing(newcomer));
  // /metrics tells the operator (docs/security.md): refused attempts by the limit they
  // met, and the expired handshakes.
  const std::uint16_t admin = server.zone().admin_port();
  const std::string refused = "zone_network_connects_refused_total{reason=";
  double refused_address = -1.0;
  const double refused_handshakes =
      metric_when(admin, refused + "\"handshakes\"}", [&](double handshakes) {
        refused_address = metric(admin, refused + "\"address\"}");
        return handshakes + refused_address >= 1000;
      });
  const double expired =
      metric_when(admin, "zone_network_handshakes_expired_total", [](double v) { return v >= 1; });
  ZoneServer& zone = server.stop();
  const net::TrafficStats t = zone.traffic();
  // At most the per-address allowance of handshakes was ever open; the rest were dropped
  // unanswered, and the open ones expired.
  CHECK(t.connects_refused_half_open + t.connects_refused_address >= 1000);
  CHECK(t.half_open_expired >= 1);
  CHECK(t.half_open_expired <= 4 * 20);  // at most 4 at a time, one timeout (0.5 s) each
  CHECK(zone.counters().joins == 1);
  // The published counts lag the live ones by at most a publish period.
  CHECK(refused_handshakes >= 0);
  CHECK(refused_address >= 0);
  CHECK(refused_handshakes + refused_address >= 1000);
  CHECK(refused_handshakes <= static_cast<double>(t.connects_refused_half_open));
  CHECK(refused_address <= static_cast<double>(t.connects_refused_address));
  CHECK(expired >= 1);
  CHECK(expired <= static_cast<double>(t.half_open_expired));
}

// The loopback exemption lifts the per-address allowance for this machine (load tests),
// not the whole defence: one exempt address holds at most half the handshake places, so
// a local process flooding CONNECTs cannot keep a newcomer out either.
TEST_CASE("admission: an exempt loopback address holds at most half of the handshakes") {
  net::EnetLibrary enet;
  config::ZoneConfig cfg = guarded_zone();
  cfg.limits.loopback_exempt = true;   // both 127.0.0.2 and the newcomer's 127.0.0.1
  cfg.limits.connect_cookies = false;  // the limit behind the cookies, as above
  test::ServerThread server(cfg);
  ForgedConnects attacker(server.port());
  test::Clients clients;
  attacker.send(1000);
  client::Bot& newcomer = clients.add("newcomer", server.port());
  const auto start = std::chrono::steady_clock::now();
  bool joined = false;
  while (!joined && std::chrono::steady_clock::now() - start < 5s) {
    attacker.send(50);
    joined = clients.pump_until([&] { return playing(newcomer); }, 50ms);
  }
  CHECK(joined);
  clients.pump(800ms);
  CHECK(playing(newcomer));
  ZoneServer& zone = server.stop();
  const net::TrafficStats t = zone.traffic();
  // The attacker's handshakes past its half (32 of 64) were dropped unanswered.
  CHECK(t.connects_refused_half_open >= 900);
  CHECK(t.connects_refused_address == 0);  // no per-address allowance for it
  CHECK(zone.counters().joins == 1);
}

TEST_CASE("admission: connections that never say hello cannot hold the newcomers' slots") {
  net::EnetLibrary enet;
  config::ZoneConfig cfg = guarded_zone();
  cfg.limits.max_awaiting_hello = 6;
  cfg.limits.max_connections_per_address = 32;
  test::ServerThread server(cfg);
  // The stranger: real ENet connections from 127.0.0.2 that complete the handshake and
  // then say nothing.
  net::EnetHost stranger({.bind_address = "127.0.0.2",
                          .port = 0,
                          .max_peers = 64,
                          .channels = 2,
                          .max_unreliable_bytes = 1200,
                          .timeout_ms = 5000});
  std::vector<net::PeerId> silent;
  for (int i = 0; i < 20; ++i) silent.push_back(stranger.connect("127.0.0.1", server.port()));
  std::size_t connected = 0;
  const auto pump_stranger = [&] {
    stranger.service(0);
    net::NetEvent ev;
    while (stranger.next_event(ev)) {
      if (ev.type == net::NetEvent::Type::kConnect) ++connected;
    }
  };
  const auto until = std::chrono::steady_clock::now() + 2s;
  while (std::chrono::steady_clock::now() < until) {
    pump_stranger();
    std::this_thread::sleep_for(2ms);
  }
  CHECK(connected > 6);

  test::Clients clients;
  client::Bot& newcomer = clients.add("newcomer", server.port());
  CHECK(clients.pump_until(
      [&] {
        pump_stranger();
        return playing(newcomer);
      },
      5s));
  clients.pump(200ms);
  pump_stranger();
  const double evicted =
      metric_when(server.zone().admin_port(), "zone_sessions_evicted_silent_total",
                  [](double v) { return v >= 1; });
  ZoneServer& zone = server.stop();
  // Every connection beyond the allowance of 6 silent ones closed one of them, longest
  // silent first: never the newcomer, who said hello.
  CHECK(zone.counters().evicted_silent >= connected - 6);
  CHECK(zone.counters().evicted_silent > 0);
  CHECK(test::disconnects(zone, DisconnectReason::BadHello) == zone.counters().evicted_silent);
  CHECK(zone.counters().joins == 1);
  // /metrics has them too (published a few times a second: at most the final count).
  CHECK(evicted >= 1);
  CHECK(evicted <= static_cast<double>(zone.counters().evicted_silent));
}

// The cookie's MAC is SipHash-2-4: the reference implementation's test vectors (key 00..0f,
// messages 00, 01, ... of each length).
TEST_CASE("admission: the cookie MAC is SipHash-2-4") {
  std::array<std::uint8_t, 16> key{};
  for (std::size_t i = 0; i < key.size(); ++i) key[i] = static_cast<std::uint8_t>(i);
  std::array<std::uint8_t, 64> message{};
  for (std::size_t i = 0; i < message.size(); ++i) message[i] = static_cast<std::uint8_t>(i);
  CHECK(net::siphash24(key, {message.data(), 0}) == 0x726fdb47dd0e0e31ULL);
  CHECK(net::siphash24(key, {message.data(), 1}) == 0x74f839c593dc67fdULL);
  CHECK(net::siphash24(key, {message.data(), 8}) == 0x93f5f5799a932462ULL);
  CHECK(net::siphash24(key, {message.data(), 15}) == 0xa129ca6149be45e5ULL);
  CHECK(net::siphash24(key, {message.data(), 63}) == 0x958a324ceb064572ULL);
}

TEST_CASE("admission: forged connects without a cookie hold no handshake place") {
  net::EnetLibrary enet;
  const config::ZoneConfig cfg = guarded_zone();  // cookies on: the default
  REQUIRE(cfg.limits.connect_cookies);
  test::ServerThread server(cfg);
  const std::uint16_t admin = server.zone().admin_port();
  ForgedConnects attacker(server.port());
  ForgedConnects guesser(server.port(), "127.0.0.3");
  test::Clients clients;
  attacker.send(1000);         // no cookie at all
  guesser.send(1000, 0x1234);  // a guessed one
  client::Bot& newcomer = clients.add("newcomer", server.port());
  const auto start = std::chrono::steady_clock::now();
  bool joined = false;
  double most_in_progress = 0;
  while (!joined && std::chrono::steady_clock::now() - start < 5s) {
    attacker.send(50);
    guesser.send(50, 0x1234);
    joined = clients.pump_until([&] { return playing(newcomer); }, 50ms);
    most_in_progress =
        std::max(most_in_progress, metric(admin, "zone_network_handshakes_in_progress"));
  }
  CHECK(joined);
  // Under way: none of the forged CONNECTs ever held a place (the newcomer's own handshake
  // may have been counted once, between its CONNECT and its acknowledgement).
  CHECK(most_in_progress <= 1);
  clients.pump(200ms);
  CHECK(metric_when(admin, "zone_network_handshakes_in_progress",
                    [](double v) { return v == 0; }) == 0);
  const double refused =
      metric_when(admin, "zone_network_connects_refused_total{reason=\"cookie\"}",
                  [](double v) { return v >= 2000; });
  CHECK(refused >= 2000);
  ZoneServer& zone = server.stop();
  const net::TrafficStats t = zone.traffic();
  CHECK(t.connects_refused_cookie >= 2000);
  CHECK(refused <= static_cast<double>(t.connects_refused_cookie));
  // Nothing reached the limits behind the cookies, and nothing had to expire.
  CHECK(t.connects_refused_half_open == 0);
  CHECK(t.connects_refused_address == 0);
  CHECK(t.half_open_expired == 0);
  CHECK(zone.counters().joins == 1);
}

TEST_CASE("admission: a cookie request gets a reply no larger than itself") {
  net::EnetLibrary enet;
  test::ServerThread server(guarded_zone());
  ForgedConnects asker(server.port());
  const auto request = net::cookie_request(0x0102030405060708ULL);
  REQUIRE(request.size() == 32);
  CHECK((request[0] & 0x40) != 0);  // ENet's "compressed" flag: no ENet datagram of ours
  asker.send_raw(request);
  const auto reply = asker.receive(1000);
  REQUIRE(reply.has_value());
  CHECK(reply->size() == net::kCookieReplyBytes);
  CHECK(reply->size() <= request.size());
  const auto read = net::read_cookie_reply(*reply);
  REQUIRE(read.has_value());
  CHECK(read->nonce == 0x0102030405060708ULL);
  CHECK(net::cookie_valid(read->cookie, asker.ip(), asker.port(),
                          net::cookie_window(std::chrono::steady_clock::now())));
  // The byte layout of docs/protocol.md ("Connecting").
  CHECK(std::vector<std::uint8_t>(reply->begin(), reply->begin() + 16) ==
        std::vector<std::uint8_t>{0x5A, 0x4F, 0x4E, 0x43, 1, 2, 0, 0, 8, 7, 6, 5, 4, 3, 2, 1});
  // Malformed requests get nothing: short (the padding is what keeps the reply smaller),
  // long, or of another version.
  asker.send_raw(std::span(request).first(16));
  auto longer = std::vector<std::uint8_t>(request.begin(), request.end());
  longer.push_back(0);
  asker.send_raw(longer);
  auto other = request;
  other[4] = 2;
  asker.send_raw(other);
  CHECK_FALSE(asker.receive(300).has_value());
  ZoneServer& zone = server.stop();
  CHECK(zone.traffic().cookie_replies == 1);
}

TEST_CASE("admission: a cookie admits its own source address and port only") {
  net::EnetLibrary enet;
  test::ServerThread server(guarded_zone());
  ForgedConnects owner(server.port());
  ForgedConnects same_address(server.port());  // 127.0.0.2 too, another port
  ForgedConnects other_address(server.port(), "127.0.0.3");
  owner.send_raw(net::cookie_request(42));
  const auto reply = owner.receive(1000);
  REQUIRE(reply.has_value());
  const auto read = net::read_cookie_reply(*reply);
  REQUIRE(read.has_value());
  CHECK_FALSE(other_address.answered(read->cookie));
  CHECK_FALSE(same_address.answered(read->cookie));
  CHECK_FALSE(owner.answered(read->cookie + 1));
  CHECK(owner.answered(read->cookie));
  ZoneServer& zone = server.stop();
  CHECK(zone.traffic().connects_refused_cookie == 3);
}

TEST_CASE("admission: a cookie of an earlier time window is refused") {
  net::EnetLibrary enet;
  // The zone's clock is set rather than waited for (windows of 16 s).
  struct FixedWindow {
    explicit FixedWindow(std::uint64_t w) { net::fix_cookie_window(w); }
    ~FixedWindow() { net::fix_cookie_window(std::nullopt); }
  } fixed(1000);
  test::ServerThread server(guarded_zone());
  ForgedConnects owner(server.port());
  owner.send_raw(net::cookie_request(1));
  const auto reply = owner.receive(1000);
  REQUIRE(reply.has_value());
  const auto read = net::read_cookie_reply(*reply);
  REQUIRE(read.has_value());
  CHECK(read->cookie == net::make_cookie(owner.ip(), owner.port(), 1000));
  net::fix_cookie_window(1002);  // two windows on: stale
  CHECK_FALSE(owner.answered(read->cookie));
  net::fix_cookie_window(999);  // a window the cookie was not made in
  CHECK_FALSE(owner.answered(read->cookie));
  net::fix_cookie_window(1001);  // the next window: still valid
  CHECK(owner.answered(read->cookie));
  net::fix_cookie_window(1000);
  CHECK(owner.answered(read->cookie));
  ZoneServer& zone = server.stop();
  CHECK(zone.traffic().connects_refused_cookie == 2);
}

TEST_CASE("admission: with limits.connect_cookies false a CONNECT without a cookie is admitted") {
  net::EnetLibrary enet;
  config::ZoneConfig cfg = guarded_zone();
  cfg.limits.connect_cookies = false;
  test::ServerThread server(cfg);
  ForgedConnects plain(server.port());
  CHECK(plain.answered(0));
  // Cookie requests are still answered: clients always ask first.
  plain.send_raw(net::cookie_request(7));
  std::optional<net::CookieReply> read;
  const auto until = std::chrono::steady_clock::now() + 1s;
  while (!read && std::chrono::steady_clock::now() < until) {
    if (const auto got = plain.receive(50)) read = net::read_cookie_reply(*got);
  }
  CHECK(read.has_value());
  test::Clients clients;
  client::Bot& newcomer = clients.add("newcomer", server.port());
  CHECK(clients.pump_until([&] { return playing(newcomer); }, 5s));
  ZoneServer& zone = server.stop();
  CHECK(zone.traffic().connects_refused_cookie == 0);
  CHECK(zone.counters().joins == 1);
}

namespace {

// A stand-in server: a UDP socket on 127.0.0.1 that sees what a client host sends.
class FakeServer {
 public:
  FakeServer() {
    fd_ = ::socket(AF_INET, SOCK_DGRAM, 0);
    REQUIRE(fd_ >= 0);
    sockaddr_in local{};
    local.sin_family = AF_INET;
    local.sin_addr.s_addr = ::inet_addr("127.0.0.1");
    REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&local), sizeof local) == 0);
    socklen_t len = sizeof local;
    REQUIRE(::getsockname(fd_, reinterpret_cast<sockaddr*>(&local), &len) == 0);
    port_ = ntohs(local.sin_port);
  }
  ~FakeServer() { ::close(fd_); }
  FakeServer(const FakeServer&) = delete;
  FakeServer& operator=(const FakeServer&) = delete;
  std::uint16_t port() const { return port_; }
  // A datagram already there, with its source; nothing if none.
  std::optional<std::vector<std::uint8_t>> poll() {
    std::vector<std::uint8_t> buf(2048);
    socklen_t len = sizeof from_;
    const ssize_t n = ::recvfrom(fd_, buf.data(), buf.size(), MSG_DONTWAIT,
                                 reinterpret_cast<sockaddr*>(&from_), &len);
    if (n < 0) return std::nullopt;
    buf.resize(static_cast<std::size_t>(n));
    return buf;
  }
  // Answers the last datagram's source.
  void reply(std::span<const std::uint8_t> bytes) {
    ::sendto(fd_, bytes.data(), bytes.size(), 0, reinterpret_cast<const sockaddr*>(&from_),
             sizeof from_);
  }
  std::uint32_t from_ip() const { return from_.sin_addr.s_addr; }
  std::uint16_t from_port() const { return ntohs(from_.sin_port); }

 private:
  int fd_ = -1;
  std::uint16_t port_ = 0;
  sockaddr_in from_{};
};

// The connect data of an ENet CONNECT datagram, or nothing if it is not one.
std::optional<std::uint32_t> connect_data(const std::vector<std::uint8_t>& d) {
  if (d.size() < sizeof(ENetProtocolHeader) + sizeof(ENetProtocolConnect)) return std::nullopt;
  ENetProtocolConnect c;
  std::memcpy(&c, d.data() + sizeof(ENetProtocolHeader), sizeof c);
  if ((c.header.command & ENET_PROTOCOL_COMMAND_MASK) != ENET_PROTOCOL_COMMAND_CONNECT) {
    return std::nullopt;
  }
  return ENET_NET_TO_HOST_32(c.data);
}

struct ClientSaw {
  int requests = 0;
  std::uint32_t cookie = 0;  // the one the stand-in sent
  std::optional<std::uint32_t> connect_data;
  std::chrono::steady_clock::duration connect_after{};
};

// Runs a client host connecting to `server` until its CONNECT arrives (or 6 s); the
// server answers the request numbered `answer` (1 for the first; 0: never).
ClientSaw client_against(FakeServer& server, int answer) {
  net::EnetHost client(net::HostOptions{});
  const auto start = std::chrono::steady_clock::now();
  client.connect("127.0.0.1", server.port());
  ClientSaw saw;
  while (!saw.connect_data && std::chrono::steady_clock::now() - start < 6s) {
    client.service(2);
    while (auto d = server.poll()) {
      if (net::is_cookie_datagram(*d)) {
        if (++saw.requests == answer) {
          const auto reply = net::cookie_reply_to(*d, server.from_ip(), server.from_port(), 1234);
          REQUIRE(reply.has_value());
          saw.cookie = net::read_cookie_reply(*reply)->cookie;
          server.reply(*reply);
        }
      } else if (auto data = connect_data(*d)) {
        saw.connect_data = data;
        saw.connect_after = std::chrono::steady_clock::now() - start;
        break;
      }
    }
  }
  return saw;
}

}  // namespace

TEST_CASE("admission: a client resends an unanswered cookie request, then connects with it") {
  net::EnetLibrary enet;
  FakeServer server;
  const ClientSaw saw = client_against(server, 3);  // the first two are lost
  CHECK(saw.requests == 3);
  REQUIRE(saw.connect_data.has_value());
  CHECK(*saw.connect_data == saw.cookie);  // what the stand-in answered
  CHECK(saw.connect_after >= 900ms);       // two resends, 0.5 s apart
  CHECK(saw.connect_after < 3s);
}

TEST_CASE("admission: a client whose cookie requests all go unanswered connects without one") {
  net::EnetLibrary enet;
  FakeServer server;
  const ClientSaw saw = client_against(server, 0);
  CHECK(saw.requests == net::kCookieTries);
  REQUIRE(saw.connect_data.has_value());
  CHECK(*saw.connect_data == 0);
  CHECK(saw.connect_after >= 2900ms);  // six requests 0.5 s apart, then 0.5 s more
}
