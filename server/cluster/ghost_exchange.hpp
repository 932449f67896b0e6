// A zone's part in a world of zones: every tick, send each neighbour the entities near
// it, and keep the neighbours' entities near this zone as ghosts (docs/world.md).
//
// Runs on the tick thread (tick()), which owns the world; the NATS link only queues
// what arrives. Subjects: "<prefix>.ghosts.<zone name>" carries the ghost messages for
// that zone, from any of its neighbours (the message names its sender).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bus/nats_link.hpp"
#include "cluster/cluster_stats.hpp"
#include "cluster/ghost_codec.hpp"
#include "world/ghosts.hpp"

namespace zone::cluster {

struct Neighbour {
  std::uint32_t index = 0;  // in the world map
  std::string name;
  aoi::Bounds area;  // its rectangle
};

struct ExchangeParams {
  std::string nats_url;
  std::string subject_prefix;
  std::uint32_t self_index = 0;
  std::string self_name;
  std::vector<Neighbour> neighbours;
  double ghost_distance = 40.0;  // metres
  std::chrono::milliseconds ghost_timeout{1000};
  // Ticks before a restarted neighbour's entities are placed (world::Ghosts).
  std::uint32_t id_reuse_ticks = 33;
};

class GhostExchange {
 public:
  // Connects to the bus (in the background if it is not up yet) and subscribes to this
  // zone's subject. Throws bus::BusError for a URL the client refuses.
  GhostExchange(const ExchangeParams& params, world::World& world);

  // Once per tick, after the world moved and before the AOI update: applies the ghost
  // messages that arrived, removes the ghosts of silent neighbours, moves ghosts towards
  // their owners' reports by at most `max_step` metres, and sends each neighbour this
  // zone's entities near it.
  void tick(std::uint32_t tick, double max_step);

  ClusterStats stats() const;
  const ExchangeParams& params() const { return params_; }

 private:
  void receive(std::chrono::steady_clock::time_point now);
  void publish(std::uint32_t tick);
  bool is_neighbour(std::uint32_t index) const;

  ExchangeParams params_;
  world::World& world_;
  world::Ghosts ghosts_;
  bus::NatsLink link_;
  std::vector<std::string> subjects_out_;  // per neighbour
  std::vector<bus::BusMessage> inbox_;
  GhostMessage message_;             // scratch, decoded and encoded in turn
  std::vector<std::uint8_t> bytes_;  // scratch
  ClusterStats stats_;
  std::uint64_t epoch_ = 0;  // this process's start, sent with every message
};

}  // namespace zone::cluster
