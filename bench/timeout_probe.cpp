// timeout-probe: how long after its time-out a silent connection is closed
// (docs/security.md, "Connections that never say hello"; docs/benchmarks.md).
//
//   timeout-probe --server 127.0.0.1:7777 --clients 40
//
// Starts --clients connections 53 ms apart (so they fall on every phase of the zone's
// once-a-second check), each on its own ENet host, serviced every millisecond so that
// ENet itself never times out: the even ones never say hello; the odd ones say hello and
// then send no input. Prints, as JSON, for each kind the time from the connection (no
// hello) or from the Welcome (no input) to the disconnect the zone sends, in seconds:
// min, max and mean, and the reasons.
#include <enet/enet.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "net/connect_cookie.hpp"
#include "protocol/codec.hpp"
#include "protocol/zone_generated.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Probe {
  ENetHost* host = nullptr;
  ENetPeer* peer = nullptr;
  bool hello = false;  // says hello (then sends no input)
  Clock::time_point start, connected, welcomed, closed;
  bool is_connected = false, is_welcomed = false, is_closed = false;
  std::uint32_t reason = 0;
};

struct Stats {
  double min = 1e9, max = 0, sum = 0;
  int n = 0;
  void add(double v) {
    min = std::min(min, v);
    max = std::max(max, v);
    sum += v;
    ++n;
  }
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"timeout-probe: when silent connections are closed"};
  std::string server = "127.0.0.1:7777";
  int clients = 40;
  app.add_option("--server", server, "HOST:PORT of the zone's game port");
  app.add_option("--clients", clients, "connections, half without hello, half without input");
  CLI11_PARSE(app, argc, argv);
  if (enet_initialize() != 0) return 1;
  ENetAddress address{};
  const auto colon = server.rfind(':');
  enet_address_set_host(&address, server.substr(0, colon).c_str());
  address.port = static_cast<enet_uint16>(std::stoi(server.substr(colon + 1)));

  std::vector<Probe> probes(clients);
  const auto t0 = Clock::now();
  for (int i = 0; i < clients; ++i) {
    probes[i].hello = i % 2 == 1;
    probes[i].start = t0 + std::chrono::milliseconds(53 * i);
  }
  flatbuffers::FlatBufferBuilder fbb;
  const auto deadline = t0 + std::chrono::milliseconds(53 * clients) + std::chrono::seconds(60);
  int closed = 0;
  while (closed < clients && Clock::now() < deadline) {
    const auto now = Clock::now();
    for (Probe& p : probes) {
      if (p.host == nullptr && now >= p.start) {
        p.host = enet_host_create(nullptr, 1, 2, 0, 0);
        // The zone's cookie first (docs/protocol.md, "Connecting"); a round trip on loopback.
        const auto cookie = zone::net::fetch_cookie(p.host, address, std::chrono::seconds(3));
        p.peer = enet_host_connect(p.host, &address, 2, cookie.value_or(0));
      }
      if (p.host == nullptr || p.is_closed) continue;
      ENetEvent ev;
      while (enet_host_service(p.host, &ev, 0) > 0) {
        if (ev.type == ENET_EVENT_TYPE_CONNECT) {
          p.connected = Clock::now();
          p.is_connected = true;
          if (p.hello) {
            zone::protocol::build_hello(fbb, zone::protocol::kProtocolVersion, "probe");
            enet_peer_send(p.peer, 0,
                           enet_packet_create(fbb.GetBufferPointer(), fbb.GetSize(),
                                              ENET_PACKET_FLAG_RELIABLE));
          }
        } else if (ev.type == ENET_EVENT_TYPE_RECEIVE) {
          if (!p.is_welcomed && ev.channelID == 0) {
            const auto* packet = zone::protocol::GetServerPacket(ev.packet->data);
            if (packet->message_type() == zone::protocol::ServerMessage::Welcome) {
              p.welcomed = Clock::now();
              p.is_welcomed = true;
            }
          }
          enet_packet_destroy(ev.packet);
        } else if (ev.type == ENET_EVENT_TYPE_DISCONNECT) {
          p.closed = Clock::now();
          p.is_closed = true;
          p.reason = ev.data;
          ++closed;
        }
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  Stats no_hello, no_input;
  std::string reasons;
  for (const Probe& p : probes) {
    if (!p.is_closed) continue;
    const auto from = p.hello ? p.welcomed : p.connected;
    if (p.hello && !p.is_welcomed) continue;
    const double s = std::chrono::duration<double>(p.closed - from).count();
    (p.hello ? no_input : no_hello).add(s);
    reasons += (reasons.empty() ? "" : ",") + std::to_string(p.reason);
  }
  const auto print = [](const char* name, const Stats& s) {
    std::printf("\"%s\": {\"n\": %d, \"min_s\": %.3f, \"max_s\": %.3f, \"mean_s\": %.3f}", name,
                s.n, s.min, s.max, s.n ? s.sum / s.n : 0.0);
  };
  std::printf("{");
  print("no_hello", no_hello);
  std::printf(", ");
  print("no_input", no_input);
  std::printf(", \"reasons\": [%s]}\n", reasons.c_str());
  for (Probe& p : probes) {
    if (p.host != nullptr) enet_host_destroy(p.host);
  }
  enet_deinitialize();
  return closed == clients ? 0 : 1;
}
