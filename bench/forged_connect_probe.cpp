// forged-connect-probe: do newcomers still join while many addresses drip forged ENet
// CONNECTs that never finish their handshake? (docs/security.md, "Connection attempts").
//
//   forged-connect-probe --server 127.0.0.1:7777 --attackers 80 --rate 64 --newcomers 40
//                        --head-start 10
//
// Attackers: one UDP socket per address 127.0.0.2, 127.0.0.3, ... (run the zone with
// limits.loopback_exempt false, so that the per-address limits apply to them), together
// sending --rate forged CONNECTs a second, round robin, each with a new connect id and no
// cookie (an attacker forging its source address never sees one), never answering.
// Newcomers, from 127.0.1.1, 127.0.1.2, ..., one every 250 ms after --head-start seconds
// of attack: ask for a cookie, connect with it, say hello; one joined if its Welcome came
// within 5 s. Prints, as JSON, the newcomers that joined and the CONNECTs forged.
#include <arpa/inet.h>
#include <enet/enet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "net/connect_cookie.hpp"
#include "protocol/codec.hpp"
#include "protocol/zone_generated.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Newcomer {
  ENetHost* host = nullptr;
  ENetPeer* peer = nullptr;
  Clock::time_point start, give_up;
  bool cookie = false, said = false, joined = false, done = false;
};

// One forged CONNECT (ENet 1.3's layout), as a client's first datagram would be.
std::vector<std::uint8_t> forged_connect(std::uint32_t connect_id) {
  std::vector<std::uint8_t> buf(sizeof(ENetProtocolHeader) + sizeof(ENetProtocolConnect));
  ENetProtocolHeader header{};
  header.peerID = ENET_HOST_TO_NET_16(static_cast<enet_uint16>(
      int{ENET_PROTOCOL_MAXIMUM_PEER_ID} | int{ENET_PROTOCOL_HEADER_FLAG_SENT_TIME}));
  header.sentTime = ENET_HOST_TO_NET_16(1);
  ENetProtocolConnect c{};
  c.header.command = static_cast<enet_uint8>(int{ENET_PROTOCOL_COMMAND_CONNECT} |
                                             int{ENET_PROTOCOL_COMMAND_FLAG_ACKNOWLEDGE});
  c.header.channelID = 0xFF;
  c.header.reliableSequenceNumber = ENET_HOST_TO_NET_16(1);
  c.outgoingPeerID = 0;
  c.incomingSessionID = 0xFF;
  c.outgoingSessionID = 0xFF;
  c.mtu = ENET_HOST_TO_NET_32(1400);
  c.windowSize = ENET_HOST_TO_NET_32(32768);
  c.channelCount = ENET_HOST_TO_NET_32(2);
  c.packetThrottleInterval = ENET_HOST_TO_NET_32(5000);
  c.packetThrottleAcceleration = ENET_HOST_TO_NET_32(2);
  c.packetThrottleDeceleration = ENET_HOST_TO_NET_32(2);
  c.connectID = connect_id;
  c.data = 0;
  std::memcpy(buf.data(), &header, sizeof header);
  std::memcpy(buf.data() + sizeof header, &c, sizeof c);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"forged-connect-probe: newcomers against forged CONNECTs"};
  std::string server = "127.0.0.1:7777";
  int attackers = 80, newcomers = 40;
  double rate = 64, head_start = 10;
  app.add_option("--server", server, "HOST:PORT of the zone's game port");
  app.add_option("--attackers", attackers, "source addresses of the forged CONNECTs");
  app.add_option("--rate", rate, "forged CONNECTs a second, all addresses together");
  app.add_option("--newcomers", newcomers, "newcomers, one every 250 ms");
  app.add_option("--head-start", head_start, "seconds of attack before the first newcomer");
  CLI11_PARSE(app, argc, argv);
  if (enet_initialize() != 0) return 1;
  ENetAddress zone{};
  const auto colon = server.rfind(':');
  enet_address_set_host(&zone, server.substr(0, colon).c_str());
  zone.port = static_cast<enet_uint16>(std::stoi(server.substr(colon + 1)));
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_addr.s_addr = zone.host;
  to.sin_port = htons(zone.port);

  std::vector<int> sockets;
  for (int a = 0; a < attackers; ++a) {
    const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
    sockaddr_in local{};
    local.sin_family = AF_INET;
    const std::string ip =
        "127.0." + std::to_string(2 + a / 250) + "." + std::to_string(2 + a % 250);
    local.sin_addr.s_addr = ::inet_addr(ip.c_str());
    if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0) {
      std::fprintf(stderr, "cannot bind %s\n", ip.c_str());
      return 1;
    }
    sockets.push_back(fd);
  }
  std::mt19937 rng{12345};
  std::vector<Newcomer> comers(newcomers);
  const auto t0 = Clock::now();
  for (int k = 0; k < newcomers; ++k) {
    comers[k].start =
        t0 +
        std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(head_start)) +
        std::chrono::milliseconds(250 * k);
  }
  flatbuffers::FlatBufferBuilder fbb;
  std::uint64_t forged = 0;
  int done = 0, cookies = 0;
  const auto interval = std::chrono::duration<double>(1.0 / rate);
  auto next_forged = t0;
  while (done < newcomers) {
    const auto now = Clock::now();
    while (next_forged <= now) {
      const auto datagram = forged_connect(static_cast<std::uint32_t>(rng()));
      ::sendto(sockets[forged % sockets.size()], datagram.data(), datagram.size(), 0,
               reinterpret_cast<const sockaddr*>(&to), sizeof to);
      ++forged;
      next_forged += std::chrono::duration_cast<Clock::duration>(interval);
    }
    for (int i = 0; i < newcomers; ++i) {
      Newcomer& n = comers[i];
      if (n.done || now < n.start) continue;
      if (n.host == nullptr) {
        ENetAddress a{};
        enet_address_set_host(&a, ("127.0.1." + std::to_string(1 + i % 250)).c_str());
        n.host = enet_host_create(&a, 1, 2, 0, 0);
        const auto cookie = zone::net::fetch_cookie(n.host, zone, std::chrono::seconds(2));
        n.cookie = cookie.has_value();
        cookies += n.cookie ? 1 : 0;
        n.peer = enet_host_connect(n.host, &zone, 2, cookie.value_or(0));
        n.give_up = Clock::now() + std::chrono::seconds(5);
      }
      ENetEvent ev;
      while (enet_host_service(n.host, &ev, 0) > 0) {
        if (ev.type == ENET_EVENT_TYPE_CONNECT && !n.said) {
          zone::protocol::build_hello(fbb, zone::protocol::kProtocolVersion,
                                      "newcomer-" + std::to_string(i));
          enet_peer_send(
              n.peer, 0,
              enet_packet_create(fbb.GetBufferPointer(), fbb.GetSize(), ENET_PACKET_FLAG_RELIABLE));
          n.said = true;
        } else if (ev.type == ENET_EVENT_TYPE_RECEIVE) {
          const auto* packet = zone::protocol::GetServerPacket(ev.packet->data);
          if (ev.channelID == 0 &&
              packet->message_type() == zone::protocol::ServerMessage::Welcome) {
            n.joined = true;
          }
          enet_packet_destroy(ev.packet);
        } else if (ev.type == ENET_EVENT_TYPE_DISCONNECT) {
          n.done = true;
        }
      }
      if (n.joined || Clock::now() >= n.give_up) {
        if (n.joined) enet_peer_disconnect_now(n.peer, 8);
        enet_host_flush(n.host);
        n.done = true;
      }
      if (n.done) ++done;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  int joined = 0;
  for (const Newcomer& n : comers) joined += n.joined ? 1 : 0;
  std::printf(
      "{\"attackers\": %d, \"rate\": %.0f, \"forged_connects\": %llu, \"newcomers\": %d, "
      "\"cookies\": %d, \"joined\": %d}\n",
      attackers, rate, static_cast<unsigned long long>(forged), newcomers, cookies, joined);
  for (const Newcomer& n : comers) {
    if (n.host != nullptr) enet_host_destroy(n.host);
  }
  for (const int fd : sockets) ::close(fd);
  enet_deinitialize();
  return 0;
}
