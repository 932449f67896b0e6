// A thin, allocation-aware wrapper over one ENet host (server or client side).
//
// Peers are named by PeerId (slot index + connection generation) rather than raw
// ENetPeer pointers, so a stale id from a closed connection can never reach the next
// client that ENet puts in the same slot. Events are pulled one at a time; a received
// packet stays valid until the next call to next_event().
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "net/connect_cookie.hpp"

struct _ENetHost;
struct _ENetPeer;
struct _ENetPacket;
struct _ENetEvent;

namespace zone::net {

struct PeerId {
  std::uint32_t index = 0xFFFFFFFFu;  // peer slot in its host
  std::uint32_t generation = 0;
  std::uint32_t host = 0;  // which host of the process (HostOptions::host_index)
  bool valid() const { return index != 0xFFFFFFFFu; }
  friend bool operator==(PeerId, PeerId) = default;
};

enum class Delivery : std::uint8_t {
  kReliable,    // retransmitted until acknowledged, ordered
  kUnreliable,  // sent once; must fit one datagram (never fragmented)
};

struct NetEvent {
  enum class Type : std::uint8_t { kConnect, kDisconnect, kReceive };
  Type type = Type::kReceive;
  PeerId peer;
  std::uint32_t data = 0;  // connect/disconnect data (a reason code)
  std::uint8_t channel = 0;
  std::span<const std::uint8_t> bytes;  // kReceive only
};

struct TrafficStats {
  std::uint64_t packets_in = 0;
  std::uint64_t packets_out = 0;
  std::uint64_t payload_bytes_in = 0;
  std::uint64_t payload_bytes_out = 0;
  std::uint64_t wire_bytes_in = 0;  // UDP payload including ENet's own headers
  std::uint64_t wire_bytes_out = 0;
  std::uint64_t send_refused = 0;  // oversize unreliable packets, dead peers
  std::uint64_t datagrams_in = 0;  // UDP datagrams read from the socket
  // Admission control (AdmissionLimits): connection attempts refused before ENet gave
  // them a peer, and handshakes that were never finished.
  std::uint64_t connects_refused_address = 0;    // too many connections from one address
  std::uint64_t connects_refused_half_open = 0;  // too many unfinished handshakes
  std::uint64_t connects_refused_cookie = 0;     // no valid cookie (AdmissionLimits::cookies)
  std::uint64_t cookie_replies = 0;              // cookie requests answered
  std::uint64_t half_open_expired = 0;           // handshakes dropped after the timeout
  std::uint64_t half_open = 0;                   // handshakes in progress (last scan)
};

// Limits on connections a server host takes, enforced on each CONNECT datagram before
// ENet allocates a peer for it, so that forged or abandoned handshakes cannot fill the
// host's peer slots. 0 disables a limit.
struct AdmissionLimits {
  std::uint32_t per_address = 0;            // peers of one IP address, in any state
  std::uint32_t half_open = 0;              // handshakes in progress on the host
  std::uint32_t half_open_per_address = 0;  // handshakes in progress from one IP address
  std::uint32_t half_open_timeout_ms = 0;   // an unfinished handshake is dropped after this
  // The per-address limits skip 127.0.0.0/8: this machine, which the network cannot forge.
  // Such an address may still hold at most half of `half_open`.
  bool exempt_loopback = false;
  // A CONNECT must carry a cookie this process gave its source address and port
  // (net/connect_cookie.hpp); one without is dropped before any other limit is counted.
  bool connect_cookies = false;
};

// Kernel socket buffers: what was asked for and what the kernel granted (it caps them at
// net.core.rmem_max / wmem_max).
struct SocketBuffers {
  int requested = 0;
  int receive = 0;
  int send = 0;
};

struct HostOptions {
  std::string bind_address;  // empty: client host, not bound to a known port
  std::uint16_t port = 0;    // 0 with a bind address: ephemeral port
  std::size_t max_peers = 64;
  std::size_t channels = 2;
  std::size_t max_unreliable_bytes = 1200;
  std::uint32_t timeout_ms = 5000;  // a peer silent this long is disconnected
  // Kernel socket buffers. A busy zone reads its socket once per tick; the receive
  // buffer must hold a tick's worth of datagrams from every client or the kernel drops
  // them. The kernel caps this at net.core.rmem_max / wmem_max.
  int socket_buffer_bytes = 4 * 1024 * 1024;
  // Largest packet ENet will reassemble or send; 0 keeps ENet's default (32 MiB). A server
  // sets it near its own limits so a peer cannot make it buffer huge fragmented packets.
  std::size_t max_packet_bytes = 0;
  // Share the port with other hosts of this process (SO_REUSEPORT); server side only.
  // The first host of such a group claims the port (join_group false): it must be free of
  // every other socket, shared or not, so that no other process's sockets are in the group
  // (the kernel would spread clients over them too). The others join it (join_group true).
  bool reuse_port = false;
  bool join_group = false;
  AdmissionLimits admission{};   // server side
  std::uint32_t host_index = 0;  // stamped on this host's PeerIds
};

class NetError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// ENet's process-wide setup (enet_initialize / enet_deinitialize), owned by main().
class EnetLibrary {
 public:
  EnetLibrary();
  ~EnetLibrary();
  EnetLibrary(const EnetLibrary&) = delete;
  EnetLibrary& operator=(const EnetLibrary&) = delete;
};

class EnetHost {
 public:
  // Throws NetError with a readable message (address in use, bad address, ...).
  explicit EnetHost(const HostOptions& options);
  ~EnetHost();
  EnetHost(const EnetHost&) = delete;
  EnetHost& operator=(const EnetHost&) = delete;

  std::uint16_t port() const;  // the bound port, resolved when 0 was asked

  // Sends what is queued and receives what has arrived, for up to timeout_ms (0: one
  // pass). Received events are queued for next_event(); nothing is dispatched here.
  // Returns true when ENet stopped reading early to report an event (more may wait).
  bool service(std::uint32_t timeout_ms);
  // Services until the socket is empty (a service call reads fewer than ENet's 256
  // datagrams) or the deadline passes. Returns the datagrams read.
  std::size_t drain(std::chrono::steady_clock::time_point deadline);
  // Pops the next queued event without touching the socket, so a flood of datagrams can
  // only ever be drained up to what the service calls read.
  bool next_event(NetEvent& out);

  // Client side: starts a connection; the kConnect event arrives later. The host first
  // asks the server for a cookie (net/connect_cookie.hpp), resending the request from
  // service() while no answer comes, and holds ENet's CONNECT back until it has one; the
  // cookie goes as the CONNECT's data. After kCookieTries unanswered requests it connects
  // without one (a server that does not ask for cookies still lets it in).
  PeerId connect(const std::string& host, std::uint16_t port);

  bool send(PeerId peer, std::span<const std::uint8_t> bytes, Delivery delivery,
            std::uint8_t channel = 0);
  // Graceful: queued packets go first, then the peer gets a disconnect with `reason`.
  void disconnect(PeerId peer, std::uint32_t reason);
  // The disconnect goes at once, resent until acknowledged; packets still queued are
  // dropped. For a peer that has nothing left to deliver (a client that quits): waiting for
  // the queues, as disconnect() does, can hold the goodbye back for seconds on a lossy link.
  void disconnect_at_once(PeerId peer, std::uint32_t reason);
  // Immediate: the peer is dropped now (it is told once, unreliably).
  void disconnect_now(PeerId peer, std::uint32_t reason);
  // Forgets the peer without a word to it, as a lost network does (the other side times
  // out): how a client simulates a dropped connection.
  void abandon(PeerId peer);
  void flush();

  bool connected(PeerId peer) const;
  std::uint32_t round_trip_ms(PeerId peer) const;
  std::size_t connected_peers() const;
  std::size_t max_peers() const { return options_.max_peers; }
  const TrafficStats& stats() const { return stats_; }
  SocketBuffers socket_buffers() const;
  int socket() const;  // the UDP socket's descriptor, for poll()

 private:
  _ENetPeer* peer_of(PeerId id) const;
  PeerId id_of(_ENetPeer* peer) const;
  // Admission control: whether the datagram ENet just read may go on (false: dropped).
  friend int intercept_datagram(_ENetHost* host, struct _ENetEvent* event);
  bool admit_datagram();
  // A cookie request (answered) or reply (taken by the connection waiting for it).
  void on_cookie_datagram();
  // Sends due cookie requests, and lets a CONNECT go whose requests were all unanswered.
  void advance_cookies(std::chrono::steady_clock::time_point now);
  void release_connect(std::size_t pending, std::uint32_t cookie);
  // Forgets a connection still waiting for its cookie (before ENet resets its peer).
  bool drop_pending(_ENetPeer* peer);
  // Counts peers per address and drops handshakes older than the timeout.
  void scan_peers();
  bool admission_enabled() const;
  struct AddressCount {
    std::uint32_t peers = 0;
    std::uint32_t half_open = 0;
  };

  HostOptions options_;
  // Connections waiting for their cookie: their peer holds ENet's CONNECT command, taken
  // out of its queue so that ENet does not send it yet.
  struct PendingConnect {
    _ENetPeer* peer = nullptr;
    std::uint32_t connect_id = 0;  // ENet's id of this connection attempt
    void* command = nullptr;       // the ENetOutgoingCommand of the CONNECT
    std::uint64_t nonce = 0;
    int requests = 0;
    std::chrono::steady_clock::time_point next_request{};
  };
  std::vector<PendingConnect> pending_;
  _ENetHost* host_ = nullptr;
  _ENetPacket* held_packet_ = nullptr;  // the packet behind the last kReceive event
  // Events service() got back from ENet, handed out by next_event() before ENet's queue.
  std::vector<_ENetEvent> returned_;
  std::size_t returned_next_ = 0;
  std::vector<std::uint32_t> generation_;  // per peer slot, bumped on each connect
  std::vector<std::uint8_t> outgoing_;     // per peer slot: connect() awaiting its event
  TrafficStats stats_;
  // Admission control state, refreshed by scan_peers() and counted up between scans.
  std::unordered_map<std::uint32_t, AddressCount> by_address_;
  // Address and port of every peer, with the connect id of its handshake.
  std::unordered_map<std::uint64_t, std::uint32_t> endpoints_;
  std::uint32_t half_open_ = 0;
  std::vector<std::chrono::steady_clock::time_point> half_open_since_;  // per peer slot
  std::vector<std::uint32_t> half_open_connect_id_;                     // which handshake
  std::chrono::steady_clock::time_point last_scan_{};
};

}  // namespace zone::net
