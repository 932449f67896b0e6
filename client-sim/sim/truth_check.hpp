// The end-to-end truth check: compares each bot's replica, frame by frame, with the
// server's ground truth for the same server tick.
//
// The server (with debug.truth on) serves GET /debug/truth?tick=T on its admin port:
// every entity's exact position at tick T, the view radius and hysteresis, and for each
// player the entities whose records the bandwidth budget deferred in that tick's frame.
// For a bot holding a complete frame T the check is:
//   - every entity within view_radius of the bot is in the frame (unless deferred),
//   - nothing beyond view_radius + hysteresis is,
//   - every entity in the frame exists, and its position equals the truth quantised to
//     the protocol's step (unless its update was deferred).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "client/bot.hpp"

namespace zone::sim {

struct TruthEntity {
  std::uint32_t id;
  double x;
  double y;
};

struct Truth {
  std::uint32_t tick = 0;
  double view_radius = 0.0;
  double hysteresis = 0.0;
  std::vector<TruthEntity> entities;                                              // sorted by id
  std::unordered_map<std::uint32_t, std::unordered_set<std::uint32_t>> deferred;  // per player
};

// Parses the endpoint's JSON; returns false with `error` set if it is not as expected.
bool parse_truth(const std::string& json, Truth& out, std::string& error);

struct TruthReport {
  std::uint64_t checks = 0;  // bot frames compared
  std::uint64_t entity_checks = 0;
  std::uint64_t mismatches = 0;
  std::uint64_t skipped = 0;         // bots without a complete frame for the tick
  std::vector<std::string> details;  // first few mismatches, readable
};

// Compares one bot's frame for truth.tick (if it has one) and adds to the report.
void check_bot(const client::Bot& bot, const Truth& truth, TruthReport& report,
               std::size_t max_details = 20);

}  // namespace zone::sim
