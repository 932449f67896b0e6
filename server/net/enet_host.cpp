#include "net/enet_host.hpp"

#include <enet/enet.h>
#include <sys/socket.h>

#include <enet/protocol.h>
#include <cerrno>
#include <cstring>

#include "net/enet_memory.hpp"

#include <algorithm>
#include <random>

#include "net/enet_limits.hpp"

namespace zone::net {

namespace {

// Finds `address`'s port free of every socket, as a socket without SO_REUSEPORT sees it:
// port 0 becomes a port no socket holds (a port-0 bind with SO_REUSEPORT may land on a
// port that another process's SO_REUSEPORT sockets hold, and share its traffic), and a
// given port must not be held at all. False if it is held (or the address is unusable).
bool claim_port(ENetAddress& address) {
  const ENetSocket probe = enet_socket_create(ENET_SOCKET_TYPE_DATAGRAM);
  if (probe == ENET_SOCKET_NULL) return false;
  const bool ok =
      enet_socket_bind(probe, &address) == 0 && enet_socket_get_address(probe, &address) == 0;
  const int err = errno;
  // Closed at once: the caller binds the port next (UDP ports have no TIME_WAIT).
  enet_socket_destroy(probe);
  errno = err;
  return ok;
}

// Binds `socket` with SO_REUSEPORT: joining the group of an earlier host of this process,
// or as the first of a group, on a claimed port. Between the claim and the bind (two
// system calls) another program can still take the port: a claim of a given port then
// fails at the bind; a claim of port 0 tries another port.
bool bind_shared(ENetSocket socket, const ENetAddress& address, bool join) {
  const int one = 1;
  if (setsockopt(socket, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) != 0) return false;
  if (join) return enet_socket_bind(socket, &address) == 0;
  const int attempts = address.port == 0 ? 8 : 1;
  for (int attempt = 0; attempt < attempts; ++attempt) {
    ENetAddress claimed = address;
    if (!claim_port(claimed)) return false;
    if (enet_socket_bind(socket, &claimed) == 0) return true;
  }
  return false;
}

// ENet's intercept callback carries no user data: the host whose service call is running
// on this thread is noted here for the length of that call.
thread_local EnetHost* t_servicing = nullptr;

// How often a host recounts its peers by address and expires unfinished handshakes.
constexpr auto kScanInterval = std::chrono::milliseconds(100);

bool half_open(const ENetPeer& p) {
  return p.state == ENET_PEER_STATE_ACKNOWLEDGING_CONNECT ||
         p.state == ENET_PEER_STATE_CONNECTION_SUCCEEDED;
}

}  // namespace

int intercept_datagram(ENetHost*, ENetEvent*) {
  // 1: ENet skips the datagram; 0: it processes it as usual.
  return t_servicing != nullptr && !t_servicing->admit_datagram() ? 1 : 0;
}

EnetLibrary::EnetLibrary() {
  ENetCallbacks callbacks{};
  callbacks.malloc = &enet_memory::allocate;
  callbacks.free = &enet_memory::release;
  if (enet_initialize_with_callbacks(ENET_VERSION, &callbacks) != 0) {
    throw NetError("enet_initialize failed");
  }
}
EnetLibrary::~EnetLibrary() {
  enet_deinitialize();
}

EnetHost::EnetHost(const HostOptions& options) : options_(options) {
  ENetAddress address{};
  ENetAddress* bind = nullptr;
  if (!options.bind_address.empty()) {
    if (enet_address_set_host_ip(&address, options.bind_address.c_str()) != 0) {
      throw NetError("invalid bind address '" + options.bind_address + "'");
    }
    address.port = options.port;
    bind = &address;
  }
  // Several hosts may share one port (SO_REUSEPORT, the kernel spreads clients over
  // them by address hash). The option must be set before bind(), so such a host is
  // created unbound and bound here.
  errno = 0;
  host_ = enet_host_create(options.reuse_port ? nullptr : bind, options.max_peers, options.channels,
                           0, 0);
  if (host_ != nullptr && options.reuse_port && bind != nullptr &&
      (!bind_shared(host_->socket, address, options.join_group) ||
       enet_socket_get_address(host_->socket, &host_->address) != 0)) {
    const int err = errno;
    enet_host_destroy(host_);
    host_ = nullptr;
    errno = err;
  }
  if (host_ == nullptr) {
    const std::string why = errno != 0 ? std::strerror(errno) : "address not available";
    throw NetError(bind ? "cannot bind UDP " + options.bind_address + ":" +
                              std::to_string(options.port) + " (" + why + ")"
                        : "cannot create ENet client host (" + why + ")");
  }
  if (options.max_packet_bytes != 0) {
    host_->maximumPacketSize = options.max_packet_bytes;
    host_->maximumWaitingData = 16 * options.max_packet_bytes;
  }
  enet_socket_set_option(host_->socket, ENET_SOCKOPT_RCVBUF, options.socket_buffer_bytes);
  enet_socket_set_option(host_->socket, ENET_SOCKOPT_SNDBUF, options.socket_buffer_bytes);
  generation_.assign(options.max_peers, 0);
  outgoing_.assign(options.max_peers, 0);
  half_open_since_.assign(options.max_peers, {});
  half_open_connect_id_.assign(options.max_peers, 0);
  // Every host takes cookie datagrams out of ENet's way: a server answers requests, a
  // client takes the replies to its own.
  host_->intercept = &intercept_datagram;
}

bool EnetHost::admission_enabled() const {
  const AdmissionLimits& a = options_.admission;
  return a.per_address != 0 || a.half_open != 0 || a.half_open_per_address != 0 ||
         a.half_open_timeout_ms != 0 || a.connect_cookies;
}

void EnetHost::on_cookie_datagram() {
  const std::span<const std::uint8_t> datagram{host_->receivedData, host_->receivedDataLength};
  const ENetAddress from = host_->receivedAddress;
  // Answered from what the request carries alone: nothing is kept for the source, which
  // may be forged. The reply is smaller than the request.
  if (auto reply = cookie_reply_to(datagram, from.host, from.port, current_cookie_window())) {
    ENetBuffer out{};
    out.data = reply->data();
    out.dataLength = reply->size();
    enet_socket_send(host_->socket, &from, &out, 1);
    ++stats_.cookie_replies;
    return;
  }
  const auto reply = read_cookie_reply(datagram);
  if (!reply) return;
  for (std::size_t i = 0; i < pending_.size(); ++i) {
    const PendingConnect& p = pending_[i];
    // The nonce and the server's address: a reply from anyone else is ignored.
    if (p.nonce == reply->nonce && p.peer->address.host == from.host &&
        p.peer->address.port == from.port) {
      release_connect(i, reply->cookie);
      return;
    }
  }
}

void EnetHost::advance_cookies(std::chrono::steady_clock::time_point now) {
  for (std::size_t i = 0; i < pending_.size();) {
    PendingConnect& p = pending_[i];
    if (now < p.next_request) {
      ++i;
    } else if (p.requests >= kCookieTries) {
      release_connect(i, 0);  // the last element moved to i
    } else {
      auto request = cookie_request(p.nonce);
      ENetBuffer out{};
      out.data = request.data();
      out.dataLength = request.size();
      enet_socket_send(host_->socket, &p.peer->address, &out, 1);
      ++p.requests;
      p.next_request = now + kCookieResend;
      ++i;
    }
  }
}

void EnetHost::release_connect(std::size_t index, std::uint32_t cookie) {
  const PendingConnect p = pending_[index];
  pending_[index] = pending_.back();
  pending_.pop_back();
  auto* command = static_cast<ENetOutgoingCommand*>(p.command);
  // Only ENet's own misreading of a forged datagram could have reset the peer meanwhile
  // (its queues then no longer expect this command).
  if (p.peer->state != ENET_PEER_STATE_CONNECTING || p.peer->connectID != p.connect_id) {
    enet_free(command);
    return;
  }
  command->command.connect.data = ENET_HOST_TO_NET_32(cookie);
  enet_list_insert(enet_list_end(&p.peer->outgoingCommands), command);
}

bool EnetHost::drop_pending(ENetPeer* peer) {
  for (std::size_t i = 0; i < pending_.size(); ++i) {
    if (pending_[i].peer != peer) continue;
    enet_free(pending_[i].command);
    pending_[i] = pending_.back();
    pending_.pop_back();
    return true;
  }
  return false;
}

bool EnetHost::admit_datagram() {
  if (is_cookie_datagram({host_->receivedData, host_->receivedDataLength})) {
    on_cookie_datagram();
    return false;  // ENet would drop it anyway (it looks compressed); skip its work
  }
  if (!admission_enabled()) return true;
  // Only a datagram that names no peer and carries a CONNECT can create one; everything
  // else belongs to an existing peer (or is dropped by ENet).
  if (host_->receivedDataLength < sizeof(enet_uint16) + sizeof(ENetProtocolConnect)) return true;
  enet_uint16 word;
  std::memcpy(&word, host_->receivedData, sizeof word);
  const enet_uint16 header = ENET_NET_TO_HOST_16(word);
  if ((header & ENET_PROTOCOL_MAXIMUM_PEER_ID) != ENET_PROTOCOL_MAXIMUM_PEER_ID) return true;
  const std::size_t header_size =
      (header & ENET_PROTOCOL_HEADER_FLAG_SENT_TIME) ? sizeof(ENetProtocolHeader) : 2;
  if (host_->receivedDataLength < header_size + sizeof(ENetProtocolConnect)) return true;
  const enet_uint8 command = host_->receivedData[header_size] & ENET_PROTOCOL_COMMAND_MASK;
  if (command != ENET_PROTOCOL_COMMAND_CONNECT) return true;
  ENetProtocolConnect connect;
  std::memcpy(&connect, host_->receivedData + header_size, sizeof connect);

  // A CONNECT that ENet will turn into a peer unless it is a resend of one it already has
  // (same address, port and connect id: ENet answers its own duplicates).
  const enet_uint32 ip = host_->receivedAddress.host;
  const std::uint64_t endpoint = (std::uint64_t{ip} << 16) | host_->receivedAddress.port;
  const auto known = endpoints_.find(endpoint);
  if (known != endpoints_.end() && known->second == connect.connectID) return true;
  const AdmissionLimits& a = options_.admission;
  // A source that never saw our reply (a forged one) has no valid cookie: dropped before
  // it costs anything but this MAC, and before it counts against any other limit.
  if (a.connect_cookies && !cookie_valid(ENET_NET_TO_HOST_32(connect.data), ip,
                                         host_->receivedAddress.port, current_cookie_window())) {
    ++stats_.connects_refused_cookie;
    return false;
  }
  AddressCount& count = by_address_[ip];
  const bool exempt = a.exempt_loopback && reinterpret_cast<const std::uint8_t*>(&ip)[0] == 127;
  if (!exempt && a.per_address != 0 && count.peers >= a.per_address) {
    ++stats_.connects_refused_address;
    return false;
  }
  // An exempt address (this machine) is not held to the per-address allowance, but to half
  // the host's handshakes: a local process gone wrong cannot keep everyone else out.
  const std::uint32_t address_cap =
      exempt ? std::max<std::uint32_t>(1, a.half_open / 2) : a.half_open_per_address;
  if ((a.half_open != 0 && half_open_ >= a.half_open) ||
      ((!exempt || a.half_open != 0) && address_cap != 0 && count.half_open >= address_cap)) {
    ++stats_.connects_refused_half_open;
    return false;
  }
  ++count.peers;
  ++count.half_open;
  ++half_open_;
  endpoints_[endpoint] = connect.connectID;
  return true;
}

void EnetHost::scan_peers() {
  const auto now = std::chrono::steady_clock::now();
  const auto timeout = std::chrono::milliseconds(options_.admission.half_open_timeout_ms);
  by_address_.clear();
  endpoints_.clear();
  half_open_ = 0;
  for (ENetPeer* p = host_->peers; p < host_->peers + host_->peerCount; ++p) {
    const auto slot = static_cast<std::size_t>(p - host_->peers);
    if (p->state == ENET_PEER_STATE_DISCONNECTED) continue;
    if (half_open(*p)) {
      // A handshake is known by its connect id: a slot reused by a new one starts over.
      if (half_open_connect_id_[slot] != p->connectID ||
          half_open_since_[slot] == std::chrono::steady_clock::time_point{}) {
        half_open_connect_id_[slot] = p->connectID;
        half_open_since_[slot] = now;
      }
      if (timeout.count() != 0 && now - half_open_since_[slot] > timeout) {
        // Never connected, so no event was or will be reported for it: free the slot.
        enet_peer_reset(p);
        half_open_since_[slot] = {};
        ++stats_.half_open_expired;
        continue;
      }
      ++half_open_;
      ++by_address_[p->address.host].half_open;
    } else {
      half_open_since_[slot] = {};
    }
    ++by_address_[p->address.host].peers;
    endpoints_[(std::uint64_t{p->address.host} << 16) | p->address.port] = p->connectID;
  }
  stats_.half_open = half_open_;
  last_scan_ = now;
}

SocketBuffers EnetHost::socket_buffers() const {
  // Linux reports twice what was granted (it counts its own bookkeeping); halve it so the
  // figure compares with what was asked for.
  auto read = [&](int option) {
    int value = 0;
    socklen_t len = sizeof value;
    if (getsockopt(host_->socket, SOL_SOCKET, option, &value, &len) != 0) return 0;
    return value / 2;
  };
  return {options_.socket_buffer_bytes, read(SO_RCVBUF), read(SO_SNDBUF)};
}

int EnetHost::socket() const {
  return host_->socket;
}

EnetHost::~EnetHost() {
  for (const PendingConnect& p : pending_) enet_free(p.command);
  if (held_packet_ != nullptr) enet_packet_destroy(held_packet_);
  for (std::size_t i = returned_next_; i < returned_.size(); ++i) {
    if (returned_[i].type == ENET_EVENT_TYPE_RECEIVE && returned_[i].packet != nullptr) {
      enet_packet_destroy(returned_[i].packet);
    }
  }
  if (host_ != nullptr) enet_host_destroy(host_);
}

std::uint16_t EnetHost::port() const {
  ENetAddress a{};
  if (enet_socket_get_address(host_->socket, &a) == 0) return a.port;
  return host_->address.port;
}

PeerId EnetHost::id_of(ENetPeer* peer) const {
  const auto index = static_cast<std::uint32_t>(peer - host_->peers);
  return {index, generation_[index], options_.host_index};
}

ENetPeer* EnetHost::peer_of(PeerId id) const {
  if (!id.valid() || id.host != options_.host_index || id.index >= host_->peerCount ||
      generation_[id.index] != id.generation) {
    return nullptr;
  }
  return &host_->peers[id.index];
}

bool EnetHost::service(std::uint32_t timeout_ms) {
  if (admission_enabled() && std::chrono::steady_clock::now() - last_scan_ >= kScanInterval) {
    scan_peers();
  }
  if (!pending_.empty()) advance_cookies(std::chrono::steady_clock::now());
  // With an event to fill, ENet makes a peer whose handshake completes CONNECTED at once
  // and reports it here (stopping the read early); without one it would only queue the
  // connect, and a client's first reliable packet arriving in the same datagram as its
  // handshake's last acknowledgement would be dropped and resent half a second later.
  ENetEvent ev;
  t_servicing = this;
  const int r = enet_host_service(host_, &ev, timeout_ms);
  t_servicing = nullptr;
  if (r > 0) returned_.push_back(ev);
  stats_.wire_bytes_in = host_->totalReceivedData;
  stats_.wire_bytes_out = host_->totalSentData;
  stats_.datagrams_in = host_->totalReceivedPackets;
  return r > 0;
}

std::size_t EnetHost::drain(std::chrono::steady_clock::time_point deadline) {
  // ENet reads at most 256 datagrams per service call; keep calling while a call comes
  // back with a full batch or stopped early for an event (the socket may hold more), up
  // to the deadline.
  std::size_t total = 0;
  for (;;) {
    const enet_uint32 before = host_->totalReceivedPackets;
    const bool stopped = service(0);
    const enet_uint32 read = host_->totalReceivedPackets - before;
    total += read;
    if ((read < 256 && !stopped) || std::chrono::steady_clock::now() >= deadline) return total;
  }
}

bool EnetHost::next_event(NetEvent& out) {
  if (held_packet_ != nullptr) {
    enet_packet_destroy(held_packet_);
    held_packet_ = nullptr;
  }
  ENetEvent ev;
  if (returned_next_ < returned_.size()) {
    ev = returned_[returned_next_++];
    if (returned_next_ == returned_.size()) {
      returned_.clear();
      returned_next_ = 0;
    }
  } else if (enet_host_check_events(host_, &ev) <= 0) {
    return false;
  }
  switch (ev.type) {
    case ENET_EVENT_TYPE_CONNECT: {
      const auto index = static_cast<std::uint32_t>(ev.peer - host_->peers);
      // Outgoing connections got their id in connect(); incoming ones get one now.
      if (outgoing_[index]) {
        outgoing_[index] = 0;
      } else {
        ++generation_[index];
      }
      enet_peer_timeout(ev.peer, 0, options_.timeout_ms, options_.timeout_ms);
      out = {NetEvent::Type::kConnect, id_of(ev.peer), ev.data, 0, {}};
      return true;
    }
    case ENET_EVENT_TYPE_DISCONNECT: {
      out = {NetEvent::Type::kDisconnect, id_of(ev.peer), ev.data, 0, {}};
      // Retire the id now, so nothing can be sent to whoever reuses the slot.
      ++generation_[static_cast<std::uint32_t>(ev.peer - host_->peers)];
      return true;
    }
    case ENET_EVENT_TYPE_RECEIVE: {
      held_packet_ = ev.packet;
      ++stats_.packets_in;
      stats_.payload_bytes_in += ev.packet->dataLength;
      out = {NetEvent::Type::kReceive,
             id_of(ev.peer),
             0,
             ev.channelID,
             {ev.packet->data, ev.packet->dataLength}};
      return true;
    }
    case ENET_EVENT_TYPE_NONE:
      break;
  }
  return false;
}

PeerId EnetHost::connect(const std::string& host, std::uint16_t port) {
  ENetAddress address{};
  if (enet_address_set_host(&address, host.c_str()) != 0) {
    throw NetError("cannot resolve host '" + host + "'");
  }
  address.port = port;
  ENetPeer* peer = enet_host_connect(host_, &address, options_.channels, 0);
  if (peer == nullptr) throw NetError("no free peer slot for a new connection");
  // The CONNECT is the one command ENet queued; it waits outside the queue for the cookie.
  auto* command = enet_list_empty(&peer->outgoingCommands)
                      ? nullptr
                      : static_cast<ENetOutgoingCommand*>(enet_list_back(&peer->outgoingCommands));
  if (command == nullptr || (command->command.header.command & ENET_PROTOCOL_COMMAND_MASK) !=
                                ENET_PROTOCOL_COMMAND_CONNECT) {
    enet_peer_reset(peer);
    throw NetError("ENet queued no CONNECT for a new connection");
  }
  enet_list_remove(&command->outgoingCommandList);
  std::random_device device;
  pending_.push_back(
      {peer, peer->connectID, command, (std::uint64_t{device()} << 32) | device(), 0, {}});
  advance_cookies(std::chrono::steady_clock::now());  // the first request goes now
  const auto index = static_cast<std::uint32_t>(peer - host_->peers);
  ++generation_[index];
  outgoing_[index] = 1;
  enet_peer_timeout(peer, 0, options_.timeout_ms, options_.timeout_ms);
  return {index, generation_[index], options_.host_index};
}

bool EnetHost::send(PeerId id, std::span<const std::uint8_t> bytes, Delivery delivery,
                    std::uint8_t channel) {
  ENetPeer* peer = peer_of(id);
  // An unreliable packet larger than one datagram would be sent by ENet as reliable
  // fragments; refuse it instead, so that can never happen by accident. Hard cap: what
  // ENet sends unfragmented at this peer's MTU, whatever the options say.
  const std::size_t unreliable_cap =
      peer == nullptr ? 0
                      : std::min<std::size_t>(options_.max_unreliable_bytes,
                                              max_unfragmented_payload(peer->mtu));
  if (peer == nullptr || peer->state != ENET_PEER_STATE_CONNECTED ||
      (delivery == Delivery::kUnreliable && bytes.size() > unreliable_cap)) {
    ++stats_.send_refused;
    return false;
  }
  const enet_uint32 flags = delivery == Delivery::kReliable ? ENET_PACKET_FLAG_RELIABLE : 0;
  ENetPacket* packet = enet_packet_create(bytes.data(), bytes.size(), flags);
  if (packet == nullptr || enet_peer_send(peer, channel, packet) != 0) {
    if (packet != nullptr) enet_packet_destroy(packet);
    ++stats_.send_refused;
    return false;
  }
  ++stats_.packets_out;
  stats_.payload_bytes_out += bytes.size();
  return true;
}

// A connection still waiting for its cookie has sent nothing to the server: it is reset
// without a word, as ENet resets a connecting peer it is asked to disconnect.
void EnetHost::disconnect(PeerId id, std::uint32_t reason) {
  ENetPeer* peer = peer_of(id);
  if (peer == nullptr) return;
  if (drop_pending(peer)) {
    enet_peer_reset(peer);
  } else {
    enet_peer_disconnect_later(peer, reason);
  }
}

void EnetHost::disconnect_at_once(PeerId id, std::uint32_t reason) {
  ENetPeer* peer = peer_of(id);
  if (peer == nullptr) return;
  if (drop_pending(peer)) {
    enet_peer_reset(peer);
  } else {
    enet_peer_disconnect(peer, reason);
  }
}

void EnetHost::disconnect_now(PeerId id, std::uint32_t reason) {
  if (ENetPeer* peer = peer_of(id)) {
    if (drop_pending(peer)) {
      enet_peer_reset(peer);
    } else {
      enet_peer_disconnect_now(peer, reason);
    }
    ++generation_[id.index];
  }
}

void EnetHost::abandon(PeerId id) {
  if (ENetPeer* peer = peer_of(id)) {
    drop_pending(peer);
    enet_peer_reset(peer);
    ++generation_[id.index];
  }
}

void EnetHost::flush() {
  enet_host_flush(host_);
  stats_.wire_bytes_out = host_->totalSentData;
}

bool EnetHost::connected(PeerId id) const {
  const ENetPeer* peer = peer_of(id);
  return peer != nullptr && peer->state == ENET_PEER_STATE_CONNECTED;
}

std::uint32_t EnetHost::round_trip_ms(PeerId id) const {
  const ENetPeer* peer = peer_of(id);
  return peer != nullptr ? peer->roundTripTime : 0;
}

std::size_t EnetHost::connected_peers() const {
  return host_->connectedPeers;
}

}  // namespace zone::net
