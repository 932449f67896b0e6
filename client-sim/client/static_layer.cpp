#include "client/static_layer.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "protocol/quantize.hpp"

namespace zone::client {

namespace {

std::uint64_t key_of(util::ChunkCoord c) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(c.row)) << 32) |
         static_cast<std::uint32_t>(c.col);
}

}  // namespace

bool StaticTruth::parse(const std::string& json, StaticTruth& out, std::string& error) {
  try {
    const auto j = nlohmann::json::parse(json);
    out.zone = j.value("zone", std::string());
    out.cell_size = j.at("cell_size").get<double>();
    out.cells.clear();
    const auto& w = j.at("world");
    const util::ChunkGrid grid{w.at(0).get<double>(), w.at(1).get<double>(), w.at(2).get<double>(),
                               w.at(3).get<double>(), out.cell_size};
    for (const auto& o : j.at("objects")) {
      StaticItem item;
      item.id = o.at(0).get<std::uint32_t>();
      item.kind = o.at(1).get<std::uint8_t>();
      item.x = protocol::quantize_position(o.at(2).get<double>());
      item.y = protocol::quantize_position(o.at(3).get<double>());
      item.radius = static_cast<std::uint32_t>(protocol::quantize_position(o.at(4).get<double>()));
      const util::ChunkCoord cell = grid.cell_of(protocol::dequantize_position(item.x),
                                                 protocol::dequantize_position(item.y));
      out.cells[cell].push_back(item);
    }
    for (auto& [cell, items] : out.cells) {
      std::sort(items.begin(), items.end(),
                [](const StaticItem& a, const StaticItem& b) { return a.id < b.id; });
    }
    return true;
  } catch (const std::exception& e) {
    error = e.what();
    return false;
  }
}

void StaticLayer::reset(const util::ChunkGrid& world, std::shared_ptr<const StaticTruth> truth) {
  world_ = world;
  truth_ = std::move(truth);
  cells_.clear();
  objects_.clear();
  pending_ = {};
}

void StaticLayer::on_message(const protocol::StaticObjects& m) {
  ++info_.updates;
  const std::uint32_t tick = m.server_tick();
  util::ChunkGrid grid = world_;
  grid.size = m.cell_size();
  // This message's cells, and its objects by cell, in id order.
  std::map<util::ChunkCoord, std::vector<StaticItem>> sent;
  if (m.cells() != nullptr) {
    for (const protocol::StaticCell* c : *m.cells()) {
      const util::ChunkCoord cell{c->col(), c->row()};
      if (!cells_.insert(key_of(cell)).second || sent.count(cell) != 0) {
        info_.fail(
            fmt::format("tick {}: static cell ({}, {}) sent twice", tick, cell.col, cell.row));
      }
      sent[cell];
    }
  }
  if (m.objects() != nullptr) {
    for (const protocol::StaticObject* o : *m.objects()) {
      const StaticItem item{o->id(), static_cast<std::uint8_t>(o->kind()), o->x(), o->y(),
                            o->radius()};
      ++info_.objects_received;
      if (!objects_.emplace(item.id, item).second) {
        info_.fail(fmt::format("tick {}: static object {} sent twice", tick, item.id));
      }
      const util::ChunkCoord cell = grid.cell_of(protocol::dequantize_position(item.x),
                                                 protocol::dequantize_position(item.y));
      const auto it = sent.find(cell);
      if (it == sent.end()) {
        info_.fail(
            fmt::format("tick {}: static object {} lies in cell ({}, {}), not one of the "
                        "message's cells",
                        tick, item.id, cell.col, cell.row));
        continue;
      }
      it->second.push_back(item);
    }
  }
  if (truth_ && truth_->cell_size == grid.size) {
    static const std::vector<StaticItem> kNone;
    for (auto& [cell, items] : sent) {
      std::sort(items.begin(), items.end(),
                [](const StaticItem& a, const StaticItem& b) { return a.id < b.id; });
      const auto t = truth_->cells.find(cell);
      const std::vector<StaticItem>& want = t == truth_->cells.end() ? kNone : t->second;
      ++info_.truth_cells;
      if (items != want) {
        info_.fail(
            fmt::format("tick {}: static cell ({}, {}) sent with {} objects, the map has {} "
                        "there (or they differ)",
                        tick, cell.col, cell.row, items.size(), want.size()));
      }
    }
  } else if (truth_) {
    info_.fail(fmt::format("tick {}: static cell size {} m, the map's truth says {} m", tick,
                           grid.size, truth_->cell_size));
  }
  if (m.more()) return;                     // the radius check waits for the tick's last message
  if (pending_.tick != 0) ++info_.skipped;  // the previous one was never checked
  pending_ = {tick, grid.size, m.view_radius()};
}

void StaticLayer::check(const replica::FrameReplica& replica) {
  if (pending_.tick == 0) return;
  const auto at = info_.position_at(replica, pending_.tick);
  if (!at) return;
  const double x = at->x, y = at->y, slack = at->slack;
  util::ChunkGrid grid = world_;
  grid.size = pending_.cell_size;
  std::vector<util::ChunkCoord> near;
  grid.within(x, y, std::max(0.0, pending_.view_radius - slack), near);
  for (const util::ChunkCoord c : near) {
    if (cells_.count(key_of(c)) == 0) {
      info_.fail(
          fmt::format("tick {}: static cell ({}, {}) at {:.2f} m (view radius {:.1f} m) "
                      "never sent",
                      pending_.tick, c.col, c.row, grid.distance(c, x, y), pending_.view_radius));
      break;
    }
  }
  pending_.tick = 0;
}

}  // namespace zone::client
