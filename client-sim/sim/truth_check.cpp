#include "sim/truth_check.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "protocol/quantize.hpp"

namespace zone::sim {

bool parse_truth(const std::string& json, Truth& out, std::string& error) {
  try {
    const auto j = nlohmann::json::parse(json);
    out.tick = j.at("tick").get<std::uint32_t>();
    out.view_radius = j.at("view_radius").get<double>();
    out.hysteresis = j.at("hysteresis").get<double>();
    out.entities.clear();
    for (const auto& e : j.at("entities")) {
      out.entities.push_back(
          {e.at(0).get<std::uint32_t>(), e.at(1).get<double>(), e.at(2).get<double>()});
    }
    std::sort(out.entities.begin(), out.entities.end(),
              [](const TruthEntity& a, const TruthEntity& b) { return a.id < b.id; });
    out.deferred.clear();
    for (const auto& [player, ids] : j.at("deferred").items()) {
      auto& set = out.deferred[static_cast<std::uint32_t>(std::stoul(player))];
      for (const auto& id : ids) set.insert(id.get<std::uint32_t>());
    }
    return true;
  } catch (const std::exception& e) {
    error = e.what();
    return false;
  }
}

void check_bot(const client::Bot& bot, const Truth& truth, TruthReport& report,
               std::size_t max_details) {
  if (bot.phase() != client::Bot::Phase::kPlaying) return;
  const replica::Frame* frame = bot.replica().frame_at(truth.tick);
  const std::uint32_t self_id = bot.welcome().entity_id;
  auto self_it = std::lower_bound(truth.entities.begin(), truth.entities.end(), self_id,
                                  [](const TruthEntity& e, std::uint32_t id) { return e.id < id; });
  if (frame == nullptr || self_it == truth.entities.end() || self_it->id != self_id) {
    ++report.skipped;
    return;
  }
  ++report.checks;
  static const std::unordered_set<std::uint32_t> kNone;
  const auto d_it = truth.deferred.find(self_id);
  const auto& deferred = d_it == truth.deferred.end() ? kNone : d_it->second;

  auto fail = [&](std::string what) {
    ++report.mismatches;
    if (report.details.size() < max_details) {
      report.details.push_back(
          fmt::format("{} (entity {}) tick {}: {}", bot.name(), self_id, truth.tick, what));
    }
  };

  const double r = truth.view_radius;
  const double outer = r + truth.hysteresis;
  const auto& seen = frame->entities;  // sorted by id
  auto s = seen.begin();
  for (const TruthEntity& e : truth.entities) {
    if (e.id == self_id) continue;
    while (s != seen.end() && s->id < e.id) {
      fail(fmt::format("entity {} is in the replica but not in the world", s->id));
      ++s;
    }
    const bool present = s != seen.end() && s->id == e.id;
    // Same arithmetic as the AOI's decision: squared distances in double.
    const double dx = e.x - self_it->x;
    const double dy = e.y - self_it->y;
    const double d2 = dx * dx + dy * dy;
    const double dist = std::sqrt(d2);
    ++report.entity_checks;
    if (!present) {
      if (d2 <= r * r && !deferred.count(e.id)) {
        fail(fmt::format("entity {} at {:.2f} m (view radius {:.2f} m) missing from the replica",
                         e.id, dist, r));
      }
      continue;
    }
    if (d2 > outer * outer) {
      fail(fmt::format("entity {} at {:.2f} m (beyond radius + hysteresis {:.2f} m) in the replica",
                       e.id, dist, outer));
    } else if (!deferred.count(e.id)) {
      const std::int32_t qx = protocol::quantize_position(e.x);
      const std::int32_t qy = protocol::quantize_position(e.y);
      if (std::abs(s->x() - qx) > 1 || std::abs(s->y() - qy) > 1) {
        fail(fmt::format("entity {} seen at ({:.2f}, {:.2f}), truth ({:.2f}, {:.2f})", e.id,
                         protocol::dequantize_position(s->x()),
                         protocol::dequantize_position(s->y()), e.x, e.y));
      }
    }
    ++s;
  }
  for (; s != seen.end(); ++s)
    fail(fmt::format("entity {} is in the replica but not in the world", s->id));
}

}  // namespace zone::sim
