// What ENet (1.3) sends in one datagram: the transport's own figures, used by the hosts to
// refuse an unreliable packet ENet would fragment, and by the config to bound
// network.max_packet_bytes. Header-only and dependency-free (not even <enet/enet.h>), so
// the config can use them without the transport's headers.
#pragma once

#include <cstdint>

namespace zone::net {

// enet_peer_send() fragments any packet longer than
//     peer->mtu - sizeof(ENetProtocolHeader) - sizeof(ENetProtocolSendFragment)
// (minus 4 more when the host has a checksum callback; ours have none), and unless the
// packet carries ENET_PACKET_FLAG_UNRELIABLE_FRAGMENT, those fragments are sent
// *reliably*. It decides by the fragment header (24 bytes), the largest of its data
// headers, so this is the payload that always goes out as one unfragmented command.
// A peer's MTU starts at the host's (ENET_HOST_DEFAULT_MTU, 1400) and is lowered to
// what the other side asks for in its CONNECT (never below ENET_PROTOCOL_MINIMUM_MTU,
// 576). tests/server/transport_limits_test.cpp checks these figures against
// <enet/protocol.h> and <enet/enet.h> and on the wire.
inline constexpr std::uint32_t kEnetDefaultMtu = 1400;      // ENET_HOST_DEFAULT_MTU
inline constexpr std::uint32_t kEnetMinimumMtu = 576;       // ENET_PROTOCOL_MINIMUM_MTU
inline constexpr std::uint32_t kEnetFragmentOverhead = 28;  // protocol header 4 + fragment 24

// The largest payload ENet sends unfragmented to a peer with this MTU.
constexpr std::uint32_t max_unfragmented_payload(std::uint32_t mtu) {
  return mtu > kEnetFragmentOverhead ? mtu - kEnetFragmentOverhead : 0;
}
// With the default MTU: 1372 bytes. network.max_packet_bytes may not exceed it, and the
// transport refuses any unreliable packet above it.
inline constexpr std::uint32_t kMaxUnfragmentedPayload = max_unfragmented_payload(kEnetDefaultMtu);

}  // namespace zone::net
