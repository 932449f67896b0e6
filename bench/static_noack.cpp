// static-noack: N clients join a zone and then never acknowledge anything (no ENet
// acknowledgment, no input), as a hostile client would, to measure what the zone holds
// for them (docs/benchmarks.md, "Static objects and clients that never acknowledge").
//
//   static-noack --server 127.0.0.1:7777 --clients 100 --pid <zone-server pid> --hold 4
//
// Connects every client (one ENet host each, so one stalled peer holds up no other),
// sends each a Hello, then stops servicing the hosts: nothing more is read or
// acknowledged. Prints the zone process's resident memory (VmRSS) before the joins and
// its peak (VmHWM is the process's lifetime peak, so the peak is sampled every 50 ms)
// over the next --hold seconds.
#include <enet/enet.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "net/connect_cookie.hpp"
#include "protocol/codec.hpp"

namespace {

long rss_kib(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"static-noack: clients that join and never acknowledge"};
  std::string server = "127.0.0.1:7777";
  int clients = 100, pid = 0;
  double hold = 4.0;
  app.add_option("--server", server, "HOST:PORT of the zone's game port");
  app.add_option("--clients", clients, "how many clients join");
  app.add_option("--pid", pid, "the zone-server process, for its memory")->required();
  app.add_option("--hold", hold, "seconds to watch after the joins");
  CLI11_PARSE(app, argc, argv);
  if (enet_initialize() != 0) return 1;
  ENetAddress address{};
  const auto colon = server.rfind(':');
  enet_address_set_host(&address, server.substr(0, colon).c_str());
  address.port = static_cast<enet_uint16>(std::stoi(server.substr(colon + 1)));

  const long before = rss_kib(pid);
  std::vector<ENetHost*> hosts;
  std::vector<ENetPeer*> peers;
  for (int i = 0; i < clients; ++i) {
    hosts.push_back(enet_host_create(nullptr, 1, 2, 0, 0));
    // The zone's cookie for this host's address first (docs/protocol.md, "Connecting").
    const auto cookie = zone::net::fetch_cookie(hosts.back(), address, std::chrono::seconds(3));
    peers.push_back(enet_host_connect(hosts.back(), &address, 2, cookie.value_or(0)));
  }
  // Service until every client is connected and has sent its Hello (then no more).
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<bool> hello(clients, false);
  int said = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (said < clients && std::chrono::steady_clock::now() < deadline) {
    for (int i = 0; i < clients; ++i) {
      ENetEvent ev;
      while (enet_host_service(hosts[i], &ev, 0) > 0) {
        if (ev.type == ENET_EVENT_TYPE_CONNECT && !hello[i]) {
          zone::protocol::build_hello(fbb, zone::protocol::kProtocolVersion,
                                      "noack-" + std::to_string(i));
          ENetPacket* p =
              enet_packet_create(fbb.GetBufferPointer(), fbb.GetSize(), ENET_PACKET_FLAG_RELIABLE);
          enet_peer_send(peers[i], 0, p);
          enet_host_flush(hosts[i]);
          hello[i] = true;
          ++said;
        } else if (ev.type == ENET_EVENT_TYPE_RECEIVE) {
          enet_packet_destroy(ev.packet);
        }
      }
    }
  }
  // From now on nothing is serviced: the zone's packets are never acknowledged.
  long peak = before;
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(hold);
  while (std::chrono::steady_clock::now() < until) {
    peak = std::max(peak, rss_kib(pid));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::printf(
      "{\"clients\": %d, \"hellos\": %d, \"rss_before_kib\": %ld, \"rss_peak_kib\": %ld, "
      "\"rss_added_kib\": %ld, \"rss_added_per_client_kib\": %.1f}\n",
      clients, said, before, peak, peak - before,
      clients > 0 ? static_cast<double>(peak - before) / clients : 0.0);
  for (ENetHost* h : hosts) enet_host_destroy(h);
  enet_deinitialize();
  return said == clients ? 0 : 1;
}
