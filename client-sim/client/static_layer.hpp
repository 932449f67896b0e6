// The static layer as a bot follows it (StaticObjects, docs/protocol.md "Static layer"):
// the objects it has been sent, kept for the session, and its checks of the server:
// - always: no cell and no object sent twice, every object in a cell the message names;
// - after the last message of a tick, on the bot's frame of that tick: every cell within
//   the view radius of its own position has been sent;
// - with the zone's truth (GET /debug/static): each cell's objects exactly the map's.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "client/layer_check.hpp"
#include "protocol/zone_generated.h"
#include "replica/frame_replica.hpp"
#include "util/chunk_grid.hpp"

namespace zone::client {

// One object as the wire carries it (centimetres).
struct StaticItem {
  std::uint32_t id = 0;
  std::uint8_t kind = 0;
  std::int32_t x = 0, y = 0;
  std::uint32_t radius = 0;
  friend bool operator==(const StaticItem&, const StaticItem&) = default;
};

// The zone's map as /debug/static gives it, filed by cell, each cell's objects by id.
struct StaticTruth {
  std::string zone;  // the zone's name
  double cell_size = 0.0;
  std::map<util::ChunkCoord, std::vector<StaticItem>> cells;
  // Parses the JSON of /debug/static; false (with the reason) if malformed.
  static bool parse(const std::string& json, StaticTruth& out, std::string& error);
};

// Static maps by zone name (a world of zones: each zone has its own).
using ZoneStatics = std::map<std::string, std::shared_ptr<const StaticTruth>>;

struct StaticInfo : LayerCheck {
  std::uint64_t objects_received = 0;
  std::uint64_t truth_cells = 0;  // cells compared with the map's truth
};

class StaticLayer {
 public:
  // The world rectangle (from Welcome) and, if the run has it, the zone's map.
  void reset(const util::ChunkGrid& world, std::shared_ptr<const StaticTruth> truth);
  void on_message(const protocol::StaticObjects& m);
  // Runs the pending radius check once the frame of its tick is complete.
  void check(const replica::FrameReplica& replica);
  const StaticInfo& info() const { return info_; }
  std::size_t objects() const { return objects_.size(); }

 private:
  util::ChunkGrid world_;
  std::shared_ptr<const StaticTruth> truth_;
  StaticInfo info_;
  std::unordered_set<std::uint64_t> cells_;  // (row << 32 | col) of every cell sent
  std::unordered_map<std::uint32_t, StaticItem> objects_;
  struct Pending {
    std::uint32_t tick = 0;  // 0: none
    double cell_size = 0.0, view_radius = 0.0;
  } pending_;
};

}  // namespace zone::client
