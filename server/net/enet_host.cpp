#include "net/enet_host.hpp"

#include <enet/enet.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "net/enet_memory.hpp"

#include <algorithm>

#include "protocol/limits.hpp"

namespace zone::net {

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
  host_ = enet_host_create(options.reuse_port ? nullptr : bind, options.max_peers, options.channels,
                           0, 0);
  if (host_ != nullptr && options.reuse_port && bind != nullptr) {
    const int one = 1;
    if (setsockopt(host_->socket, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) != 0 ||
        enet_socket_bind(host_->socket, bind) != 0 ||
        enet_socket_get_address(host_->socket, &host_->address) != 0) {
      enet_host_destroy(host_);
      host_ = nullptr;
    }
  }
  if (host_ == nullptr) {
    throw NetError(bind ? "cannot bind UDP " + options.bind_address + ":" +
                              std::to_string(options.port) + " (address in use or not available)"
                        : std::string("cannot create ENet client host"));
  }
  if (options.max_packet_bytes != 0) {
    host_->maximumPacketSize = options.max_packet_bytes;
    host_->maximumWaitingData = 16 * options.max_packet_bytes;
  }
  enet_socket_set_option(host_->socket, ENET_SOCKOPT_RCVBUF, options.socket_buffer_bytes);
  enet_socket_set_option(host_->socket, ENET_SOCKOPT_SNDBUF, options.socket_buffer_bytes);
  generation_.assign(options.max_peers, 0);
  outgoing_.assign(options.max_peers, 0);
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
  if (held_packet_ != nullptr) enet_packet_destroy(held_packet_);
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

void EnetHost::service(std::uint32_t timeout_ms) {
  enet_host_service(host_, nullptr, timeout_ms);
  stats_.wire_bytes_in = host_->totalReceivedData;
  stats_.wire_bytes_out = host_->totalSentData;
  stats_.datagrams_in = host_->totalReceivedPackets;
}

std::size_t EnetHost::drain(std::chrono::steady_clock::time_point deadline) {
  // ENet reads at most 256 datagrams per service call; keep calling while a call comes
  // back with a full batch (the socket may hold more), up to the deadline.
  std::size_t total = 0;
  for (;;) {
    const enet_uint32 before = host_->totalReceivedPackets;
    service(0);
    const enet_uint32 read = host_->totalReceivedPackets - before;
    total += read;
    if (read < 256 || std::chrono::steady_clock::now() >= deadline) return total;
  }
}

bool EnetHost::next_event(NetEvent& out) {
  if (held_packet_ != nullptr) {
    enet_packet_destroy(held_packet_);
    held_packet_ = nullptr;
  }
  ENetEvent ev;
  if (enet_host_check_events(host_, &ev) <= 0) return false;
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

PeerId EnetHost::connect(const std::string& host, std::uint16_t port, std::uint32_t data) {
  ENetAddress address{};
  if (enet_address_set_host(&address, host.c_str()) != 0) {
    throw NetError("cannot resolve host '" + host + "'");
  }
  address.port = port;
  ENetPeer* peer = enet_host_connect(host_, &address, options_.channels, data);
  if (peer == nullptr) throw NetError("no free peer slot for a new connection");
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
                                              protocol::max_unfragmented_payload(peer->mtu));
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

void EnetHost::disconnect(PeerId id, std::uint32_t reason) {
  if (ENetPeer* peer = peer_of(id)) enet_peer_disconnect_later(peer, reason);
}

void EnetHost::disconnect_now(PeerId id, std::uint32_t reason) {
  if (ENetPeer* peer = peer_of(id)) {
    enet_peer_disconnect_now(peer, reason);
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
