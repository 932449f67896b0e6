// What a bot counts about one of the map layers it follows (the chunk layer, the static
// layer): the server's messages, how many of its decisions the bot could check against
// its own position, and the mismatches (the first one in words).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/quantize.hpp"
#include "replica/frame_replica.hpp"

namespace zone::client {

struct LayerCheck {
  std::uint64_t updates = 0;     // messages received
  std::uint64_t checks = 0;      // messages checked
  std::uint64_t skipped = 0;     // could not be checked (the frame of their tick never completed)
  std::uint64_t mismatches = 0;  // wrong decisions
  std::string first_mismatch;

  void fail(std::string what) {
    if (mismatches++ == 0) first_mismatch = std::move(what);
  }

  // The bot's own position in its frame of `tick` (a message waiting for its check), in
  // metres, with the slack its rounding needs: the server decided on the exact position,
  // the frame holds it to half its unit. Nothing while that frame is incomplete; once the
  // bot holds only newer frames it never will be, and the check is skipped (tick = 0).
  struct Position {
    double x, y, slack;
  };
  std::optional<Position> position_at(const replica::FrameReplica& replica, std::uint32_t& tick) {
    const replica::Frame* frame = replica.frame_at(tick);
    if (frame == nullptr) {
      if (replica.ack_tick() > tick + 64) {
        ++skipped;
        tick = 0;
      }
      return std::nullopt;
    }
    ++checks;
    return Position{protocol::position_metres(frame->self, protocol::kX),
                    protocol::position_metres(frame->self, protocol::kY),
                    0.02 + protocol::position_unit_cm(frame->self) * protocol::kPositionStep};
  }
};

// The same, summed over bots, with the first few mismatches, each named by its bot.
struct LayerTotals {
  std::uint64_t updates = 0, checks = 0, skipped = 0, mismatches = 0;
  std::vector<std::string> details;
  static constexpr std::size_t kMaxDetails = 20;

  void add(const LayerCheck& c, const std::string& bot) {
    updates += c.updates;
    checks += c.checks;
    skipped += c.skipped;
    mismatches += c.mismatches;
    if (c.mismatches > 0 && details.size() < kMaxDetails) {
      details.push_back(bot + ": " + c.first_mismatch);
    }
  }
  void add(const LayerTotals& o) {
    updates += o.updates;
    checks += o.checks;
    skipped += o.skipped;
    mismatches += o.mismatches;
    for (const std::string& d : o.details) {
      if (details.size() < kMaxDetails) details.push_back(d);
    }
  }
};

}  // namespace zone::client
