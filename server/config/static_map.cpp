#include "config/static_map.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numbers>

#include <fmt/format.h>

#include "config/config_text.hpp"
#include "protocol/quantize.hpp"
#include "util/chunk_grid.hpp"

namespace zone::config {

namespace {

constexpr std::string_view kShape = "[kind, x, y, radius] with kind tree, rock or resource";

std::optional<StaticKind> kind_of(const RawValue& v) {
  if (v.kind != RawValue::Kind::kScalar) return std::nullopt;
  if (v.text == "tree") return StaticKind::kTree;
  if (v.text == "rock") return StaticKind::kRock;
  if (v.text == "resource") return StaticKind::kResource;
  return std::nullopt;
}

std::optional<double> number_of(const RawValue& v) {
  if (v.kind != RawValue::Kind::kScalar || v.quoted) return std::nullopt;
  return to_real(v.text);
}

class StaticMapLoader {
 public:
  StaticMapLoader(StaticMapResult& out, const ZoneConfig& config) : out_(out), config_(config) {}

  void load(const YAML::Node& root) {
    if (!root.IsMap()) {
      error(
          "", line_of(root),
          fmt::format("expected a map with the key objects, got {}", describe_found(to_raw(root))));
      return;
    }
    // yaml-cpp keeps a duplicate key and a lookup finds the first: refuse it, as the
    // config loader does, rather than ignore the second list.
    int first_objects = 0;
    for (const auto& item : root) {
      const std::string key = item.first.Scalar();
      if (key != "objects") {
        error(key, line_of(item.first), "unknown key; expected objects");
      } else if (first_objects != 0) {
        error(key, line_of(item.first),
              fmt::format("duplicate key (first given on line {})", first_objects));
      } else {
        first_objects = line_of(item.first);
      }
    }
    const YAML::Node objects = root["objects"];
    if (!objects) {
      error("objects", line_of(root), "missing; expected a list of " + std::string(kShape));
      return;
    }
    if (!objects.IsSequence()) {
      error("objects", line_of(objects),
            fmt::format("expected a list, got {}", describe_found(to_raw(objects))));
      return;
    }
    if (objects.size() > kMaxStaticObjects) {
      error("objects", line_of(objects),
            fmt::format("expected at most {} objects, got {}", kMaxStaticObjects, objects.size()));
      return;
    }
    std::size_t index = 0;
    for (const YAML::Node& node : objects) {
      if (out_.errors.size() == kMaxStaticMapErrors) {
        error("objects", line_of(node),
              fmt::format("stopped after {} refused objects", kMaxStaticMapErrors));
        return;
      }
      object(node, index++);
    }
    if (out_.errors.empty()) totals(line_of(objects));
  }

 private:
  void error(std::string key, int line, std::string message) {
    out_.errors.push_back({std::move(key), line, std::move(message)});
  }

  void object(const YAML::Node& node, std::size_t index) {
    const std::string key = fmt::format("objects[{}]", index);
    const int line = line_of(node);
    if (!node.IsSequence() || node.size() != 4) {
      error(key, line, fmt::format("expected {}, got {}", kShape, describe_found(to_raw(node))));
      return;
    }
    const auto kind = kind_of(to_raw(node[0]));
    auto x = number_of(to_raw(node[1]));
    auto y = number_of(to_raw(node[2]));
    auto r = number_of(to_raw(node[3]));
    if (!kind) {
      error(key, line,
            fmt::format("expected the kind tree, rock or resource, got {}",
                        describe_found(to_raw(node[0]))));
      return;
    }
    if (!x || !y || !r) {
      error(key, line,
            fmt::format("expected x, y and radius as numbers (metres), got {}, {}, {}",
                        describe_found(to_raw(node[1])), describe_found(to_raw(node[2])),
                        describe_found(to_raw(node[3]))));
      return;
    }
    // Whole centimetres, the way clients receive them (protocol/quantize.hpp), before any
    // check: the server and its clients then file an object in the same cell.
    const auto cm = [](double metres) {
      return std::abs(metres) < 1e7
                 ? protocol::dequantize_position(protocol::quantize_position(metres))
                 : metres;  // far out: refused below, never rounded
    };
    x = cm(*x);
    y = cm(*y);
    r = cm(*r);
    const WorldConfig& w = config_.world;
    if (*x < w.min_x || *x > w.max_x || *y < w.min_y || *y > w.max_y) {
      error(
          key, line,
          fmt::format("expected the centre inside the world (x {} .. {}, y {} .. {}), got ({}, {})",
                      w.min_x, w.max_x, w.min_y, w.max_y, *x, *y));
      return;
    }
    if (!(*r >= 0.01 && *r <= kMaxStaticRadius)) {
      error(
          key, line,
          fmt::format("expected a radius >= 0.01 and <= {} metres, got {}", kMaxStaticRadius, *r));
      return;
    }
    out_.objects.push_back({*kind, *x, *y, *r});
  }

  // Checks over the whole map: room to spawn, and no cell too full for one message.
  void totals(int line) {
    const WorldConfig& w = config_.world;
    const double area = (w.max_x - w.min_x) * (w.max_y - w.min_y);
    double covered = 0.0;
    for (const StaticObjectSpec& o : out_.objects)
      covered += std::numbers::pi * o.radius * o.radius;
    if (covered > kMaxStaticCover * area) {
      error(
          "objects", line,
          fmt::format("the objects cover {:.0f} m^2, more than {:.0f}% of the world ({:.0f} m^2): "
                      "players and NPCs need room to spawn; expected fewer or smaller objects",
                      covered, kMaxStaticCover * 100, area));
    }
    // The cell of each centre as the static grid files it: clamped into the grid, so an
    // object on the world's far edge counts in the last column or row.
    const double size = config_.statics.cell_size;
    const util::ChunkGrid cells{w.min_x, w.min_y, w.max_x, w.max_y, size};
    std::uint64_t entries = 0;
    for (const StaticObjectSpec& o : out_.objects) entries += cells.touched(o.x, o.y, o.radius);
    if (entries > kMaxStaticCellEntries) {
      error("objects", line,
            fmt::format("the objects reach into {} static cells in all (each counted for every "
                        "cell its square touches), more than {}: expected fewer or smaller "
                        "objects, or a larger static.cell_size",
                        entries, kMaxStaticCellEntries));
    }
    std::map<util::ChunkCoord, std::size_t> per_cell;
    for (const StaticObjectSpec& o : out_.objects) {
      const util::ChunkCoord cell = cells.cell_of(o.x, o.y);
      if (++per_cell[cell] == kMaxStaticObjectsPerCell + 1) {
        error("objects", line,
              fmt::format(
                  "more than {} objects have their centre in one static cell (column {}, row {} "
                  "of {} m): expected fewer, or a smaller static.cell_size",
                  kMaxStaticObjectsPerCell, cell.col, cell.row, size));
      }
    }
  }

  StaticMapResult& out_;
  const ZoneConfig& config_;
};

}  // namespace

std::string StaticMapResult::error_report() const {
  return format_errors(errors, source);
}

StaticMapResult load_static_map_string(std::string_view yaml, std::string source_name,
                                       const ZoneConfig& config) {
  StaticMapResult result;
  result.source = std::move(source_name);
  YAML::Node root;
  if (auto error = parse_one_document(yaml, root)) {
    result.errors.push_back(std::move(*error));
    return result;
  }
  StaticMapLoader(result, config).load(root);
  if (!result.ok()) result.objects.clear();
  return result;
}

StaticMapResult load_static_map_file(const std::string& path, const ZoneConfig& config) {
  std::string text;
  if (auto message = read_config_text(path, text, kMaxStaticMapBytes)) {
    StaticMapResult result;
    result.source = path;
    result.errors.push_back({"", 0, std::move(*message)});
    return result;
  }
  return load_static_map_string(text, path, config);
}

}  // namespace zone::config
