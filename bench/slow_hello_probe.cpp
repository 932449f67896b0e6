// slow-hello-probe: do newcomers whose Hello comes late still join while other addresses
// churn silent connections? (docs/security.md, "Connections that never say hello").
//
//   slow-hello-probe --server 127.0.0.1:7777 --attackers 12 --delays 0,300,1000 --newcomers 12
//
// Attackers: one ENet host per address 127.0.0.2, 127.0.0.3, ... (run the zone with
// limits.loopback_exempt false, so that the per-address limits apply to them), each
// keeping --per-address connections that never say hello, closing its oldest (politely,
// so the zone frees its place at once) and opening a new one as fast as the zone lets it
// (churn). Newcomers, from 127.0.1.1, 127.0.1.2,
// ..., one every 250 ms for each delay in turn: connect, wait the delay, say hello; one
// joined if its Welcome came. Prints, as JSON, the newcomers that joined per delay.
#include <enet/enet.h>

#include <chrono>
#include <cstdio>
#include <deque>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "net/connect_cookie.hpp"
#include "protocol/codec.hpp"
#include "protocol/zone_generated.h"

namespace {

using Clock = std::chrono::steady_clock;

ENetHost* host_at(const std::string& ip, std::size_t peers) {
  ENetAddress a{};
  enet_address_set_host(&a, ip.c_str());
  a.port = 0;
  return enet_host_create(&a, peers, 2, 0, 0);
}

struct Attacker {
  ENetHost* host = nullptr;
  std::deque<ENetPeer*> connected;  // oldest first
  std::vector<ENetPeer*> pending;   // handshakes under way
  Clock::time_point pending_since;
  // The zone's cookie for this host's address and port (docs/protocol.md, "Connecting"):
  // valid at least 16 s, fetched again after 8.
  std::uint32_t cookie = 0;
  Clock::time_point cookie_at{};
};

struct Newcomer {
  ENetHost* host = nullptr;
  ENetPeer* peer = nullptr;
  int delay_ms = 0;
  Clock::time_point connected;
  bool is_connected = false, said = false, joined = false, done = false;
  Clock::time_point give_up;
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"slow-hello-probe: late hellos under silent-connection churn"};
  std::string server = "127.0.0.1:7777", delays_text = "0,300,1000";
  int attackers = 12, per_address = 16, newcomers = 12;
  app.add_option("--server", server, "HOST:PORT of the zone's game port");
  app.add_option("--attackers", attackers, "addresses churning silent connections");
  app.add_option("--per-address", per_address, "connections each keeps");
  app.add_option("--delays", delays_text, "hello delays to try, milliseconds");
  app.add_option("--newcomers", newcomers, "newcomers per delay");
  CLI11_PARSE(app, argc, argv);
  if (enet_initialize() != 0) return 1;
  ENetAddress zone{};
  const auto colon = server.rfind(':');
  enet_address_set_host(&zone, server.substr(0, colon).c_str());
  zone.port = static_cast<enet_uint16>(std::stoi(server.substr(colon + 1)));
  std::vector<int> delays;
  std::stringstream in(delays_text);
  for (std::string d; std::getline(in, d, ',');) delays.push_back(std::stoi(d));

  std::vector<Attacker> attack(attackers);
  for (int a = 0; a < attackers; ++a) {
    attack[a].host =
        host_at("127.0." + std::to_string(2 + a / 250) + "." + std::to_string(2 + a % 250),
                static_cast<std::size_t>(per_address) + 4);
  }
  std::vector<Newcomer> comers;
  const auto t0 = Clock::now() + std::chrono::seconds(3);  // let the churn start first
  for (std::size_t d = 0; d < delays.size(); ++d) {
    for (int k = 0; k < newcomers; ++k) {
      Newcomer n;
      n.delay_ms = delays[d];
      n.give_up = t0 + std::chrono::milliseconds(250 * (d * newcomers + k));
      comers.push_back(n);
    }
  }
  flatbuffers::FlatBufferBuilder fbb;
  std::uint64_t attack_connects = 0;
  int next = 0, done = 0;
  const int total = static_cast<int>(comers.size());
  while (done < total) {
    const auto now = Clock::now();
    // Churn: keep per_address connections open (at most 4 handshakes at a time, the
    // zone's per-address limit), replacing the oldest with a new one.
    for (Attacker& a : attack) {
      ENetEvent ev;
      while (enet_host_service(a.host, &ev, 0) > 0) {
        if (ev.type == ENET_EVENT_TYPE_CONNECT) {
          std::erase(a.pending, ev.peer);
          a.connected.push_back(ev.peer);
        } else if (ev.type == ENET_EVENT_TYPE_DISCONNECT) {
          std::erase(a.pending, ev.peer);
          std::erase(a.connected, ev.peer);
        } else if (ev.type == ENET_EVENT_TYPE_RECEIVE) {
          enet_packet_destroy(ev.packet);
        }
      }
      // A handshake the zone dropped unanswered: give it up after a second.
      if (!a.pending.empty() && now - a.pending_since > std::chrono::seconds(1)) {
        for (ENetPeer* p : a.pending) enet_peer_reset(p);
        a.pending.clear();
      }
      if (static_cast<int>(a.connected.size()) >= per_address) {
        // Closed politely, so that the zone frees its place at once.
        enet_peer_disconnect_now(a.connected.front(), 0);
        a.connected.pop_front();
      }
      if (now - a.cookie_at > std::chrono::seconds(8)) {
        // Reads the host's socket for the reply: what else arrives meanwhile ENet resends.
        a.cookie = zone::net::fetch_cookie(a.host, zone, std::chrono::seconds(2)).value_or(0);
        a.cookie_at = now;
      }
      while (a.pending.size() < 4 &&
             static_cast<int>(a.connected.size() + a.pending.size()) < per_address) {
        ENetPeer* p = enet_host_connect(a.host, &zone, 2, a.cookie);
        if (p == nullptr) break;
        if (a.pending.empty()) a.pending_since = now;
        a.pending.push_back(p);
        ++attack_connects;
      }
    }
    // Newcomers, one every 250 ms (give_up holds the start time until they start).
    while (next < total && now >= comers[next].give_up) {
      Newcomer& n = comers[next];
      n.host = host_at("127.0.1." + std::to_string(1 + next % 250), 1);
      const auto cookie = zone::net::fetch_cookie(n.host, zone, std::chrono::seconds(2));
      n.peer = enet_host_connect(n.host, &zone, 2, cookie.value_or(0));
      n.give_up = now + std::chrono::milliseconds(n.delay_ms) + std::chrono::seconds(5);
      ++next;
    }
    for (int i = 0; i < next; ++i) {
      Newcomer& n = comers[i];
      if (n.done) continue;
      ENetEvent ev;
      while (enet_host_service(n.host, &ev, 0) > 0) {
        if (ev.type == ENET_EVENT_TYPE_CONNECT) {
          n.connected = Clock::now();
          n.is_connected = true;
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
      if (n.is_connected && !n.said &&
          Clock::now() - n.connected >= std::chrono::milliseconds(n.delay_ms)) {
        zone::protocol::build_hello(fbb, zone::protocol::kProtocolVersion, "late");
        enet_peer_send(
            n.peer, 0,
            enet_packet_create(fbb.GetBufferPointer(), fbb.GetSize(), ENET_PACKET_FLAG_RELIABLE));
        n.said = true;
      }
      if (n.joined || Clock::now() >= n.give_up) {
        if (n.joined) enet_peer_disconnect_now(n.peer, 0);
        n.done = true;
      }
      if (n.done) ++done;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  std::map<int, int> joined;
  for (const Newcomer& n : comers) joined[n.delay_ms] += n.joined ? 1 : 0;
  std::printf("{\"attackers\": %d, \"per_address\": %d, \"attack_connects\": %llu, \"joined\": {",
              attackers, per_address, static_cast<unsigned long long>(attack_connects));
  bool first = true;
  for (const auto& [d, j] : joined) {
    std::printf("%s\"%d ms\": \"%d of %d\"", first ? "" : ", ", d, j, newcomers);
    first = false;
  }
  std::printf("}}\n");
  enet_deinitialize();
  return 0;
}
