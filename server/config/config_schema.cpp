#include "config/config_schema.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <type_traits>
#include <utility>

#include <fmt/format.h>

#include "auth/keys.hpp"
#include "config/capacity.hpp"
#include "config/config_enums.hpp"
#include "net/enet_limits.hpp"
#include "protocol/limits.hpp"
#include "protocol/quantize.hpp"
#include "util/chunk_grid.hpp"

namespace zone::config {
namespace {

// ---- Limits shared by several rows and checks (documented in configs/zone.yaml). --------

// World coordinates: +-1000 km. The AOI grid refuses anything beyond +-1e7 m; a zone is
// a few km across, so this is generous while keeping float precision sane.
constexpr double kMaxCoordinate = 1.0e6;
// The AOI grid has ceil(W / cell) * ceil(H / cell) cells. It is sparse (no memory or work
// per empty cell), but cell indices are 32-bit: same cap as aoi::GridAoi::kMaxCells (16 Mi).
constexpr double kMaxGridCells = 16777216.0;
// Cells of the static grid (static.*): each client keeps a bit per cell (8 KiB at most).
constexpr double kMaxStaticCells = 65536;
// Static cells within static.view_radius of a player: what one check lists and tests.
constexpr std::uint64_t kMaxStaticCellsInView = 1024;
// Chunks one player may hold (chunks.*): a ChunkUpdate of them all is 8 bytes each.
constexpr std::uint64_t kMaxChunksLoaded = 1024;
constexpr std::size_t kMaxZoneNameBytes = 64;
constexpr std::string_view kMaxPacketWhy =
    "ENet's 1400-byte MTU less its 28 header bytes; anything larger is sent as reliable "
    "fragments";
static_assert(net::kEnetDefaultMtu == 1400 && net::kEnetFragmentOverhead == 28,
              "update kMaxPacketWhy");

// ---- Raw value conversion. ------------------------------------------------------------

bool plain_scalar(const RawValue& v) {
  return v.kind == RawValue::Kind::kScalar && !v.quoted;
}

}  // namespace

std::optional<double> to_real(std::string_view text) {
  const bool plus = !text.empty() && text.front() == '+';
  if (plus) text.remove_prefix(1);
  if (text.empty() || (plus && text.front() == '-')) return std::nullopt;
  double out = 0.0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, out);
  if (ec != std::errc{} || ptr != end || !std::isfinite(out)) return std::nullopt;
  return out;
}

namespace {

struct Integer {
  bool negative = false;
  std::uint64_t magnitude = 0;
};

// A YAML decimal integer with optional sign. "1.0", "1e3" and out-of-range digits fail.
std::optional<Integer> to_integer(std::string_view text) {
  Integer out;
  if (!text.empty() && (text.front() == '+' || text.front() == '-')) {
    out.negative = text.front() == '-';
    text.remove_prefix(1);
  }
  if (text.empty() || text.front() < '0' || text.front() > '9') return std::nullopt;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, out.magnitude);
  if (ec != std::errc{} || ptr != end) return std::nullopt;
  return out;
}

std::optional<bool> to_bool(std::string_view text) {
  if (text == "true" || text == "True" || text == "TRUE") return true;
  if (text == "false" || text == "False" || text == "FALSE") return false;
  return std::nullopt;
}

// A string as a double-quoted YAML scalar.
std::string quote(std::string_view s) {
  std::string out = "\"";
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          out += fmt::format("\\x{:02x}", c);
        } else {
          out += ch;
        }
    }
  }
  out += '"';
  return out;
}

// Shortest text that reads back as the same double, with ".0" on whole numbers so that a
// reader sees a real-valued key ("32.0", "0.2", "1e+20").
std::string show_real(double v) {
  std::string out = fmt::format("{}", v);
  if (out.find_first_not_of("-0123456789") == std::string::npos) out += ".0";
  return out;
}

// ---- Member access through a chain of member pointers. ---------------------------------
//   member<&ZoneConfig::aoi, &AoiConfig::cell_size>(config) -> config.aoi.cell_size

template <auto First, auto... Rest, typename C>
constexpr auto& member(C& object) {
  if constexpr (sizeof...(Rest) == 0) {
    return object.*First;
  } else {
    return member<Rest...>(object.*First);
  }
}

template <auto... Members>
using MemberType = std::remove_cvref_t<decltype(member<Members...>(std::declval<ZoneConfig&>()))>;

// ---- Row builders, one per value kind. -------------------------------------------------

struct RealRange {
  double min;
  double max;
  bool min_exclusive;
};
constexpr RealRange closed(double min, double max) {
  return {min, max, false};
}
constexpr RealRange above(double min, double max) {
  return {min, max, true};
}

template <auto... Members>
KeySpec real(std::string_view path, RealRange r) {
  static_assert(std::is_same_v<MemberType<Members...>, double>);
  const auto in_range = [r](double v) {
    return std::isfinite(v) && (r.min_exclusive ? v > r.min : v >= r.min) && v <= r.max;
  };
  return {
      path,
      fmt::format("a number {} {} and <= {}", r.min_exclusive ? ">" : ">=", r.min, r.max),
      [in_range](const RawValue& raw, ZoneConfig& c) {
        const auto v = plain_scalar(raw) ? to_real(raw.text) : std::nullopt;
        if (!v || !in_range(*v)) return false;
        member<Members...>(c) = *v;
        return true;
      },
      [in_range](const ZoneConfig& c) { return in_range(member<Members...>(c)); },
      [](const ZoneConfig& c) { return show_real(member<Members...>(c)); },
  };
}

// `why`, when given, explains the range in the error message: "... <= 255 (why)".
template <auto... Members>
KeySpec integer(std::string_view path, std::uint64_t min, std::uint64_t max,
                std::string_view why = {}) {
  using T = MemberType<Members...>;
  static_assert(std::is_integral_v<T> && std::is_unsigned_v<T> && !std::is_same_v<T, bool>);
  max = std::min<std::uint64_t>(max, std::numeric_limits<T>::max());
  return {
      path,
      fmt::format("an integer >= {} and <= {}{}{}{}", min, max, why.empty() ? "" : " (", why,
                  why.empty() ? "" : ")"),
      [min, max](const RawValue& raw, ZoneConfig& c) {
        const auto v = plain_scalar(raw) ? to_integer(raw.text) : std::nullopt;
        if (!v || (v->negative && v->magnitude != 0)) return false;  // "-0" is zero
        if (v->magnitude < min || v->magnitude > max) return false;
        member<Members...>(c) = static_cast<T>(v->magnitude);
        return true;
      },
      [min, max](const ZoneConfig& c) {
        const std::uint64_t v = member<Members...>(c);
        return v >= min && v <= max;
      },
      [](const ZoneConfig& c) { return fmt::format("{}", member<Members...>(c)); },
  };
}

template <auto... Members>
KeySpec boolean(std::string_view path) {
  static_assert(std::is_same_v<MemberType<Members...>, bool>);
  return {
      path,
      "true or false",
      [](const RawValue& raw, ZoneConfig& c) {
        const auto v = plain_scalar(raw) ? to_bool(raw.text) : std::nullopt;
        if (!v) return false;
        member<Members...>(c) = *v;
        return true;
      },
      [](const ZoneConfig&) { return true; },
      [](const ZoneConfig& c) { return std::string(member<Members...>(c) ? "true" : "false"); },
  };
}

template <auto... Members, typename E, std::size_t N>
KeySpec choice(std::string_view path, const std::array<EnumName<E>, N>& table) {
  static_assert(std::is_same_v<MemberType<Members...>, E>);
  const auto* names = &table;  // a static table: outlives the schema
  return {
      path,
      fmt::format("one of {}", enum_choices(table, ", ")),
      [names](const RawValue& raw, ZoneConfig& c) {
        // Quoted names are accepted too: an enum value is a word either way.
        const auto v =
            raw.kind == RawValue::Kind::kScalar ? enum_from_name(*names, raw.text) : std::nullopt;
        if (!v) return false;
        member<Members...>(c) = *v;
        return true;
      },
      [names](const ZoneConfig& c) { return !enum_name(*names, member<Members...>(c)).empty(); },
      [names](const ZoneConfig& c) {
        const auto name = enum_name(*names, member<Members...>(c));
        return name.empty() ? fmt::format("{}", static_cast<int>(member<Members...>(c)))
                            : std::string(name);
      },
  };
}

template <auto... Members>
KeySpec text(std::string_view path, std::string expected, bool (*acceptable)(std::string_view)) {
  static_assert(std::is_same_v<MemberType<Members...>, std::string>);
  return {
      path,
      std::move(expected),
      [acceptable](const RawValue& raw, ZoneConfig& c) {
        if (raw.kind != RawValue::Kind::kScalar || !acceptable(raw.text)) return false;
        member<Members...>(c) = raw.text;
        return true;
      },
      [acceptable](const ZoneConfig& c) { return acceptable(member<Members...>(c)); },
      [](const ZoneConfig& c) { return quote(member<Members...>(c)); },
  };
}

// ---- String predicates. ----------------------------------------------------------------

bool valid_zone_name(std::string_view s) {
  return !s.empty() && s.size() <= kMaxZoneNameBytes &&
         std::none_of(s.begin(), s.end(), [](char ch) {
           const auto c = static_cast<unsigned char>(ch);
           return c < 0x20 || c == 0x7f;
         });
}

bool valid_ipv4(std::string_view s) {
  if (s.empty() || s.find('\0') != std::string_view::npos) return false;
  const std::string text(s);
  in_addr address{};
  return inet_pton(AF_INET, text.c_str(), &address) == 1;
}

// auth.world: like a zone name, or "" for the zone's name.
bool valid_world_or_empty(std::string_view s) {
  return s.empty() || valid_zone_name(s);
}

// auth.public_key: an Ed25519 public key in hex (a valid curve point), or "" for none.
bool valid_public_key_or_empty(std::string_view s) {
  return s.empty() || auth::parse_public_key(s).has_value();
}

// admin.token_file: a path, or "" for none.
bool valid_path_or_empty(std::string_view s) {
  return s.size() <= 4096 && std::none_of(s.begin(), s.end(), [](char ch) {
           const auto c = static_cast<unsigned char>(ch);
           return c < 0x20 || c == 0x7f;
         });
}

// persist.path: a path, not empty.
bool valid_path(std::string_view s) {
  return !s.empty() && valid_path_or_empty(s);
}

// admin.token_env: an environment variable name, or "" for none.
bool valid_env_name_or_empty(std::string_view s) {
  if (s.empty()) return true;
  if (s.size() > 255 || (s.front() >= '0' && s.front() <= '9')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

// admin.allowed_hosts: "" or host names separated by commas ("a.example, b.example").
bool valid_host_names(std::string_view s) {
  if (s.size() > 4096) return false;
  std::size_t start = 0;
  while (start <= s.size() && !s.empty()) {
    const std::size_t comma = std::min(s.find(',', start), s.size());
    std::string_view name = s.substr(start, comma - start);
    while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
    while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
    if (name.empty() || name.size() > 253 || name.front() == '-' || name.front() == '.')
      return false;
    for (const char c : name) {
      if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            c == '-' || c == '.')) {
        return false;
      }
    }
    start = comma + 1;
  }
  return true;
}

// ---- Cross-field checks. ---------------------------------------------------------------

std::optional<std::string> check_axis(double min, double max, std::string_view min_key) {
  if (min < max) return std::nullopt;
  return fmt::format("must be greater than {} ({}), got {}", min_key, min, max);
}

double grid_cells(const WorldConfig& w, double cell) {
  return std::ceil((w.max_x - w.min_x) / cell) * std::ceil((w.max_y - w.min_y) / cell);
}

std::optional<std::string> check_grid(const ZoneConfig& c) {
  const WorldConfig& w = c.world;
  if (!(w.min_x < w.max_x && w.min_y < w.max_y && c.aoi.cell_size > 0.0)) return std::nullopt;
  const double cells = grid_cells(w, c.aoi.cell_size);
  if (cells <= kMaxGridCells) return std::nullopt;
  // The smallest workable cell size, for the hint: start from the area bound, nudge up.
  double hint = std::sqrt((w.max_x - w.min_x) * (w.max_y - w.min_y) / kMaxGridCells);
  while (grid_cells(w, hint) > kMaxGridCells) hint *= 1.001;
  return fmt::format(
      "the AOI grid would have {:.0f} cells for a {} x {} m world, more than {:.0f}; expected a "
      "cell size of at least {:.3f}, got {}",
      cells, w.max_x - w.min_x, w.max_y - w.min_y, kMaxGridCells, std::ceil(hint * 1000) / 1000,
      c.aoi.cell_size);
}

}  // namespace

std::string describe_found(const RawValue& value) {
  switch (value.kind) {
    case RawValue::Kind::kNull:
      return "an empty value";
    case RawValue::Kind::kSequence:
      return "a list";
    case RawValue::Kind::kMap:
      return "a map";
    case RawValue::Kind::kScalar:
      break;
  }
  constexpr std::size_t kMaxShown = 60;
  std::string shown;
  for (const char ch : value.text) {
    if (shown.size() >= kMaxShown) {
      shown += "...";
      break;
    }
    const auto c = static_cast<unsigned char>(ch);
    shown += c < 0x20 || c == 0x7f ? fmt::format("\\x{:02x}", c) : std::string(1, ch);
  }
  const bool looks_typed = to_real(value.text) || to_bool(value.text);
  if (value.quoted && looks_typed) return fmt::format("\"{}\" (a quoted string)", shown);
  if (!value.quoted && looks_typed) return shown;
  return fmt::format("'{}'", shown);
}

// clang-format off
const std::vector<KeySpec>& schema() {
  static const std::vector<KeySpec> table = {
    text<&ZoneConfig::name>("zone.name", "a non-empty string of at most 64 bytes, no control characters", valid_zone_name),

    real<&ZoneConfig::world, &WorldConfig::min_x>("world.min_x", closed(-kMaxCoordinate, kMaxCoordinate)),
    real<&ZoneConfig::world, &WorldConfig::min_y>("world.min_y", closed(-kMaxCoordinate, kMaxCoordinate)),
    real<&ZoneConfig::world, &WorldConfig::max_x>("world.max_x", closed(-kMaxCoordinate, kMaxCoordinate)),
    real<&ZoneConfig::world, &WorldConfig::max_y>("world.max_y", closed(-kMaxCoordinate, kMaxCoordinate)),

    integer<&ZoneConfig::tick, &TickConfig::rate_hz>("tick.rate_hz", 1, 1000),

    boolean<&ZoneConfig::aoi, &AoiConfig::enabled>("aoi.enabled"),
    real<&ZoneConfig::aoi, &AoiConfig::cell_size>("aoi.cell_size", above(0, 10000)),
    real<&ZoneConfig::aoi, &AoiConfig::view_radius>("aoi.view_radius", above(0, 10000)),
    real<&ZoneConfig::aoi, &AoiConfig::hysteresis>("aoi.hysteresis", closed(0, 1000)),
    integer<&ZoneConfig::aoi, &AoiConfig::crowd_min_in_view>("aoi.crowd_min_in_view", 0, 1000000),

    integer<&ZoneConfig::players, &PlayerConfig::max_players>("players.max_players", 1, kMaxNetworkHosts * kPlayersPerHost),
    real<&ZoneConfig::players, &PlayerConfig::max_speed>("players.max_speed", above(0, 100)),
    integer<&ZoneConfig::players, &PlayerConfig::max_name_length>("players.max_name_length", 1, 255),
    integer<&ZoneConfig::players, &PlayerConfig::resume_grace_ms>("players.resume_grace_ms", 0, 600000),

    integer<&ZoneConfig::npcs, &NpcConfig::count>("npcs.count", 0, 1000000),
    integer<&ZoneConfig::npcs, &NpcConfig::seed>("npcs.seed", 0, std::numeric_limits<std::uint64_t>::max()),
    choice<&ZoneConfig::npcs, &NpcConfig::behaviour>("npcs.behaviour", kNpcBehaviourNames),
    real<&ZoneConfig::npcs, &NpcConfig::speed>("npcs.speed", closed(0, 100)),
    real<&ZoneConfig::npcs, &NpcConfig::turn_rate>("npcs.turn_rate", closed(0, 100)),
    real<&ZoneConfig::npcs, &NpcConfig::patrol_length>("npcs.patrol_length", above(0, 100000)),
    real<&ZoneConfig::npcs, &NpcConfig::idle_fraction>("npcs.idle_fraction", closed(0, 1)),

    text<&ZoneConfig::network, &NetworkConfig::bind_address>("network.bind_address", "an IPv4 address in dotted-quad form, e.g. 0.0.0.0 (all interfaces) or 127.0.0.1", valid_ipv4),
    integer<&ZoneConfig::network, &NetworkConfig::port>("network.port", 0, 65535),
    integer<&ZoneConfig::network, &NetworkConfig::channel_limit>("network.channel_limit", 2, 255, "the protocol uses channels 0 and 1"),
    integer<&ZoneConfig::network, &NetworkConfig::max_packet_bytes>("network.max_packet_bytes", 576, net::kMaxUnfragmentedPayload, kMaxPacketWhy),
    integer<&ZoneConfig::network, &NetworkConfig::client_bandwidth>("network.client_bandwidth", 1000, 100000000),
    integer<&ZoneConfig::network, &NetworkConfig::snapshot_interval_ticks>("network.snapshot_interval_ticks", 1, 1000),
    integer<&ZoneConfig::network, &NetworkConfig::history_ticks>("network.history_ticks", 2, protocol::kClientFrameHistory),
    integer<&ZoneConfig::network, &NetworkConfig::timeout_ms>("network.timeout_ms", 100, 600000),
    integer<&ZoneConfig::network, &NetworkConfig::max_deferral_ms>("network.max_deferral_ms", 1, 60000),

    boolean<&ZoneConfig::interest, &InterestConfig::tiers>("interest.tiers"),
    real<&ZoneConfig::interest, &InterestConfig::near_fraction>("interest.near_fraction", closed(0, 1)),
    real<&ZoneConfig::interest, &InterestConfig::far_fraction>("interest.far_fraction", closed(0, 1)),
    integer<&ZoneConfig::interest, &InterestConfig::middle_divisor>("interest.middle_divisor", 1, 64),
    integer<&ZoneConfig::interest, &InterestConfig::far_divisor>("interest.far_divisor", 1, 64),
    integer<&ZoneConfig::interest, &InterestConfig::crowd_threshold>("interest.crowd_threshold", 0, 100000),
    boolean<&ZoneConfig::interest, &InterestConfig::cone>("interest.cone"),
    real<&ZoneConfig::interest, &InterestConfig::cone_fov_degrees>("interest.cone_fov_degrees", above(0, 360)),
    real<&ZoneConfig::interest, &InterestConfig::cone_radius>("interest.cone_radius", closed(0, 10000)),
    boolean<&ZoneConfig::interest, &InterestConfig::load_adaptive>("interest.load_adaptive"),
    real<&ZoneConfig::interest, &InterestConfig::load_budget_ms>("interest.load_budget_ms", closed(0, 10000)),
    real<&ZoneConfig::interest, &InterestConfig::load_raise_share>("interest.load_raise_share", above(0, 10)),
    real<&ZoneConfig::interest, &InterestConfig::load_lower_share>("interest.load_lower_share", above(0, 10)),
    integer<&ZoneConfig::interest, &InterestConfig::load_smoothing_ticks>("interest.load_smoothing_ticks", 1, 10000),
    integer<&ZoneConfig::interest, &InterestConfig::load_hold_ticks>("interest.load_hold_ticks", 1, 100000),
    integer<&ZoneConfig::interest, &InterestConfig::load_far_slowdown>("interest.load_far_slowdown", 1, 8),
    integer<&ZoneConfig::interest, &InterestConfig::load_radius_steps>("interest.load_radius_steps", 0, 8),
    real<&ZoneConfig::interest, &InterestConfig::load_radius_step>("interest.load_radius_step", closed(0, 0.5)),

    integer<&ZoneConfig::precision, &PrecisionConfig::player_position_cm>("precision.player_position_cm", 1, protocol::kMaxPositionUnitCm),
    integer<&ZoneConfig::precision, &PrecisionConfig::player_heading_bits>("precision.player_heading_bits", 16 - protocol::kMaxHeadingShift, 16),
    integer<&ZoneConfig::precision, &PrecisionConfig::npc_position_cm>("precision.npc_position_cm", 1, protocol::kMaxPositionUnitCm),
    integer<&ZoneConfig::precision, &PrecisionConfig::npc_heading_bits>("precision.npc_heading_bits", 16 - protocol::kMaxHeadingShift, 16),
    real<&ZoneConfig::precision, &PrecisionConfig::engage_radius>("precision.engage_radius", closed(0, 100)),


    boolean<&ZoneConfig::party, &GroupConfig::enabled>("party.enabled"),
    integer<&ZoneConfig::party, &GroupConfig::max_size>("party.max_size", 2, 64),
    boolean<&ZoneConfig::party, &GroupConfig::full_range>("party.full_range"),
    integer<&ZoneConfig::party, &GroupConfig::min_request_interval_ms>("party.min_request_interval_ms", 100, 60000),

    boolean<&ZoneConfig::guild, &GroupConfig::enabled>("guild.enabled"),
    integer<&ZoneConfig::guild, &GroupConfig::max_size>("guild.max_size", 2, 256),
    boolean<&ZoneConfig::guild, &GroupConfig::full_range>("guild.full_range"),
    integer<&ZoneConfig::guild, &GroupConfig::min_request_interval_ms>("guild.min_request_interval_ms", 100, 60000),

    boolean<&ZoneConfig::chunks, &ChunkConfig::enabled>("chunks.enabled"),
    real<&ZoneConfig::chunks, &ChunkConfig::size>("chunks.size", closed(16, 1000000)),
    real<&ZoneConfig::chunks, &ChunkConfig::load_radius>("chunks.load_radius", closed(0, 1000000)),
    real<&ZoneConfig::chunks, &ChunkConfig::hysteresis>("chunks.hysteresis", closed(0, 1000000)),
    integer<&ZoneConfig::chunks, &ChunkConfig::interval_ticks>("chunks.interval_ticks", 1, 1000),

    text<&ZoneConfig::statics, &StaticConfig::map_file>("static.map_file", "a path to a static map file (configs/maps/README.md), or \"\" for none", valid_path_or_empty),
    real<&ZoneConfig::statics, &StaticConfig::cell_size>("static.cell_size", closed(8, 100000)),
    real<&ZoneConfig::statics, &StaticConfig::view_radius>("static.view_radius", closed(0, 100000)),
    integer<&ZoneConfig::statics, &StaticConfig::interval_ticks>("static.interval_ticks", 1, 1000),

    text<&ZoneConfig::game, &GameConfig::data_file>("game.data_file", "a path to a game data file (configs/game/README.md), or \"\" for the built-in game", valid_path_or_empty),
    text<&ZoneConfig::game, &GameConfig::scripts_dir>("game.scripts_dir", "a path to a directory of Lua scripts (docs/scripting.md), or \"\" for no rules", valid_path_or_empty),
    real<&ZoneConfig::game, &GameConfig::tick_hz>("game.tick_hz", closed(0.1, 1000)),
    integer<&ZoneConfig::game, &GameConfig::actions_per_second>("game.actions_per_second", 1, 1000),
    integer<&ZoneConfig::game, &GameConfig::max_events_per_tick>("game.max_events_per_tick", 1, 1000000),
    integer<&ZoneConfig::game, &GameConfig::max_events_per_client>("game.max_events_per_client", 1, 100000),

    integer<&ZoneConfig::script, &ScriptConfig::memory_mb>("script.memory_mb", 1, 4096),
    integer<&ZoneConfig::script, &ScriptConfig::instructions_per_call>("script.instructions_per_call", 1000, 1000000000),
    integer<&ZoneConfig::script, &ScriptConfig::instructions_per_tick>("script.instructions_per_tick", 1000, 10000000000),

    boolean<&ZoneConfig::chat, &ChatConfig::enabled>("chat.enabled"),
    integer<&ZoneConfig::chat, &ChatConfig::max_length>("chat.max_length", 1, protocol::kMaxEventText),
    integer<&ZoneConfig::chat, &ChatConfig::lines_per_second>("chat.lines_per_second", 1, 100),
    integer<&ZoneConfig::chat, &ChatConfig::burst>("chat.burst", 1, 100),
    boolean<&ZoneConfig::chat, &ChatConfig::zone_channel>("chat.zone_channel"),

    integer<&ZoneConfig::threads, &ThreadsConfig::workers>("threads.workers", 0, 64),
    integer<&ZoneConfig::threads, &ThreadsConfig::network>("threads.network", 0, kMaxNetworkHosts),

    integer<&ZoneConfig::limits, &LimitsConfig::max_client_packet_bytes>("limits.max_client_packet_bytes", 64, 65536),
    integer<&ZoneConfig::limits, &LimitsConfig::max_inputs_per_second>("limits.max_inputs_per_second", 1, 10000),
    integer<&ZoneConfig::limits, &LimitsConfig::max_bad_packets>("limits.max_bad_packets", 0, 1000000),
    integer<&ZoneConfig::limits, &LimitsConfig::hello_timeout_ms>("limits.hello_timeout_ms", 100, 600000),
    integer<&ZoneConfig::limits, &LimitsConfig::max_awaiting_hello>("limits.max_awaiting_hello", 1, 100000),
    integer<&ZoneConfig::limits, &LimitsConfig::max_connections_per_address>("limits.max_connections_per_address", 0, 4095),
    integer<&ZoneConfig::limits, &LimitsConfig::max_handshakes>("limits.max_handshakes", 1, 4095),
    integer<&ZoneConfig::limits, &LimitsConfig::max_handshakes_per_address>("limits.max_handshakes_per_address", 1, 4095),
    integer<&ZoneConfig::limits, &LimitsConfig::handshake_timeout_ms>("limits.handshake_timeout_ms", 100, 60000),
    boolean<&ZoneConfig::limits, &LimitsConfig::loopback_exempt>("limits.loopback_exempt"),
    boolean<&ZoneConfig::limits, &LimitsConfig::connect_cookies>("limits.connect_cookies"),

    choice<&ZoneConfig::auth, &AuthConfig::mode>("auth.mode", kAuthModeNames),
    text<&ZoneConfig::auth, &AuthConfig::public_key>("auth.public_key", "an Ed25519 public key as 64 hexadecimal digits (zone-ticket keygen writes it to ticket.pub), or \"\" for none", valid_public_key_or_empty),
    text<&ZoneConfig::auth, &AuthConfig::world>("auth.world", "a string of at most 64 bytes, no control characters, or \"\" for zone.name", valid_world_or_empty),

    boolean<&ZoneConfig::persist, &PersistConfig::enabled>("persist.enabled"),
    choice<&ZoneConfig::persist, &PersistConfig::backend>("persist.backend", kPersistBackendNames),
    text<&ZoneConfig::persist, &PersistConfig::path>("persist.path", "a path to the SQLite file (created with its directory), not empty", valid_path),
    text<&ZoneConfig::persist, &PersistConfig::conninfo_file>("persist.conninfo_file", "a file path, or \"\" for none", valid_path_or_empty),
    integer<&ZoneConfig::persist, &PersistConfig::checkpoint_seconds>("persist.checkpoint_seconds", 1, 86400),
    integer<&ZoneConfig::persist, &PersistConfig::max_queue>("persist.max_queue", 1, 10000000),
    integer<&ZoneConfig::persist, &PersistConfig::load_timeout_ms>("persist.load_timeout_ms", 100, 600000),

    choice<&ZoneConfig::log, &LogConfig::level>("log.level", kLogLevelNames),
    integer<&ZoneConfig::log, &LogConfig::status_interval_s>("log.status_interval_s", 1, 86400),

    boolean<&ZoneConfig::admin, &AdminConfig::enabled>("admin.enabled"),
    text<&ZoneConfig::admin, &AdminConfig::bind_address>("admin.bind_address", "an IPv4 address in dotted-quad form, e.g. 127.0.0.1 (this machine only) or 0.0.0.0", valid_ipv4),
    integer<&ZoneConfig::admin, &AdminConfig::port>("admin.port", 0, 65535),
    text<&ZoneConfig::admin, &AdminConfig::token_file>("admin.token_file", "a file path, or \"\" for none", valid_path_or_empty),
    text<&ZoneConfig::admin, &AdminConfig::token_env>("admin.token_env", "an environment variable name (letters, digits, _), or \"\" for none", valid_env_name_or_empty),
    text<&ZoneConfig::admin, &AdminConfig::allowed_hosts>("admin.allowed_hosts", "host names separated by commas (letters, digits, '-', '.'), or \"\" for none", valid_host_names),
    text<&ZoneConfig::admin, &AdminConfig::bans_file>("admin.bans_file", "a file path, or \"\" for none", valid_path_or_empty),

    boolean<&ZoneConfig::debug, &DebugConfig::truth>("debug.truth"),
    integer<&ZoneConfig::debug, &DebugConfig::truth_history_ticks>("debug.truth_history_ticks", 2, 1024),
    integer<&ZoneConfig::debug, &DebugConfig::simulated_load_ns_per_record>("debug.simulated_load_ns_per_record", 0, 1000000),
  };
  return table;
}

const std::vector<CrossCheck>& cross_checks() {
  static const std::vector<CrossCheck> checks = {
    {{"world.max_x", "world.min_x"}, [](const ZoneConfig& c) { return check_axis(c.world.min_x, c.world.max_x, "world.min_x"); }},
    {{"world.max_y", "world.min_y"}, [](const ZoneConfig& c) { return check_axis(c.world.min_y, c.world.max_y, "world.min_y"); }},
    {{"aoi.cell_size", "world.min_x", "world.max_x", "world.min_y", "world.max_y"}, check_grid},
    {{"script.instructions_per_tick", "script.instructions_per_call"}, [](const ZoneConfig& c) -> std::optional<std::string> {
      if (c.script.instructions_per_tick >= c.script.instructions_per_call) return std::nullopt;
      return fmt::format("expected at least script.instructions_per_call ({}), got {}", c.script.instructions_per_call, c.script.instructions_per_tick);
    }},
    {{"chunks.size"}, [](const ZoneConfig& c) -> std::optional<std::string> {
      // Clients get it as a 32-bit float: whole metres stay exact at any chunk number.
      if (c.chunks.size == std::floor(c.chunks.size)) return std::nullopt;
      return fmt::format("expected a whole number of metres, got {}", c.chunks.size);
    }},
    {{"chunks.load_radius", "chunks.hysteresis", "chunks.size"}, [](const ZoneConfig& c) -> std::optional<std::string> {
      // A ChunkUpdate lists every chunk a player gains or drops at once: bounded.
      const std::uint64_t most = util::ChunkGrid::max_loaded(c.chunks.size, c.chunks.load_radius + c.chunks.hysteresis);
      if (most <= kMaxChunksLoaded) return std::nullopt;
      return fmt::format("with chunks.hysteresis ({}) and chunks.size ({}) a player could hold {} chunks at once, more than {}; "
                         "expected a smaller radius or larger chunks, got {}",
                         c.chunks.hysteresis, c.chunks.size, most, kMaxChunksLoaded, c.chunks.load_radius);
    }},
    {{"static.cell_size"}, [](const ZoneConfig& c) -> std::optional<std::string> {
      // Clients receive the cell size as a float and place objects in cells themselves.
      if (c.statics.cell_size == std::floor(c.statics.cell_size)) return std::nullopt;
      return fmt::format("expected a whole number of metres, got {}", c.statics.cell_size);
    }},
    {{"world.min_x", "world.min_y", "world.max_x", "world.max_y", "static.map_file"}, [](const ZoneConfig& c) -> std::optional<std::string> {
      // Clients place static objects in cells from the Welcome's float world bounds.
      if (c.statics.map_file.empty()) return std::nullopt;
      const WorldConfig& w = c.world;
      for (const double v : {w.min_x, w.min_y, w.max_x, w.max_y}) {
        if (v != std::floor(v)) {
          return fmt::format("with a static map (static.map_file) the world's edges must be whole numbers of metres "
                             "(clients file objects in cells from them), got {}", v);
        }
      }
      return std::nullopt;
    }},
    {{"static.view_radius", "static.cell_size"}, [](const ZoneConfig& c) -> std::optional<std::string> {
      // A check lists every cell within the radius: bounded, like a player's chunks.
      if (c.statics.map_file.empty()) return std::nullopt;
      const std::uint64_t most = util::ChunkGrid::max_loaded(c.statics.cell_size, c.statics.view_radius);
      if (most <= kMaxStaticCellsInView) return std::nullopt;
      return fmt::format("with static.cell_size ({}) a player could have {} static cells in view, more than {}; "
                         "expected a smaller radius or larger cells, got {}",
                         c.statics.cell_size, most, kMaxStaticCellsInView, c.statics.view_radius);
    }},
    {{"static.cell_size", "world.min_x", "world.min_y", "world.max_x", "world.max_y"}, [](const ZoneConfig& c) -> std::optional<std::string> {
      // Each client remembers which static cells it was sent: one bit a cell.
      if (c.statics.map_file.empty()) return std::nullopt;
      const double cells = std::ceil((c.world.max_x - c.world.min_x) / c.statics.cell_size) *
                           std::ceil((c.world.max_y - c.world.min_y) / c.statics.cell_size);
      if (cells <= kMaxStaticCells) return std::nullopt;
      return fmt::format("the static grid would have {} cells over the world, more than {}; expected larger cells, got {}",
                         cells, kMaxStaticCells, c.statics.cell_size);
    }},
    {{"network.client_bandwidth", "network.max_packet_bytes"}, [](const ZoneConfig& c) -> std::optional<std::string> {
      if (c.network.client_bandwidth >= c.network.max_packet_bytes) return std::nullopt;
      return fmt::format("must be at least network.max_packet_bytes ({}) so that a client can receive one full packet per second, got {}",
                         c.network.max_packet_bytes, c.network.client_bandwidth);
    }},
    {{"players.max_players", "threads.network"}, [](const ZoneConfig& c) -> std::optional<std::string> {
      const std::uint32_t hosts = network_hosts(c);
      if (c.players.max_players <= max_players_for(hosts)) return std::nullopt;
      return fmt::format("must be at most {} with threads.network resolved to {} host(s): an ENet host holds {} "
                         "connections and clients spread over hosts unevenly, so the zone plans {} players per host; "
                         "raise threads.network (at most {}), got {}",
                         max_players_for(hosts), hosts, kPeersPerHost, kPlayersPerHost, kMaxNetworkHosts,
                         c.players.max_players);
    }},
    {{"network.max_deferral_ms", "tick.rate_hz"}, [](const ZoneConfig& c) -> std::optional<std::string> {
      if (c.network.max_deferral_ms * c.tick.rate_hz >= 1000) return std::nullopt;
      return fmt::format("must be at least one tick ({} ms at tick.rate_hz {}), got {}",
                         (1000 + c.tick.rate_hz - 1) / c.tick.rate_hz, c.tick.rate_hz, c.network.max_deferral_ms);
    }},
    {{"auth.public_key", "auth.mode"}, [](const ZoneConfig& c) -> std::optional<std::string> {
      if (c.auth.mode != AuthMode::kTicket || !c.auth.public_key.empty()) return std::nullopt;
      return std::string("auth.mode is ticket: expected the login service's public key (zone-ticket keygen "
                         "writes it to ticket.pub), got \"\"");
    }},
    {{"persist.conninfo_file", "persist.backend"}, [](const ZoneConfig& c) -> std::optional<std::string> {
      if (!c.persist.enabled || c.persist.backend != PersistBackend::kPostgres || !c.persist.conninfo_file.empty()) {
        return std::nullopt;
      }
      return std::string("persist.backend is postgres: expected the file holding the libpq connection string "
                         "(e.g. host=db.internal dbname=world user=zone password=...), got \"\"");
    }},
    {{"admin.token_env", "admin.token_file"}, [](const ZoneConfig& c) -> std::optional<std::string> {
      if (c.admin.token_file.empty() || c.admin.token_env.empty()) return std::nullopt;
      return fmt::format("set at most one of admin.token_file and admin.token_env, got both (\"{}\" and \"{}\")",
                         c.admin.token_file, c.admin.token_env);
    }},
    {{"interest.far_fraction", "interest.near_fraction"}, [](const ZoneConfig& c) -> std::optional<std::string> {
      if (c.interest.far_fraction >= c.interest.near_fraction) return std::nullopt;
      return fmt::format("must be at least interest.near_fraction ({}), got {}", c.interest.near_fraction,
                         c.interest.far_fraction);
    }},
    {{"interest.load_lower_share", "interest.load_raise_share"}, [](const ZoneConfig& c) -> std::optional<std::string> {
      if (c.interest.load_lower_share < c.interest.load_raise_share) return std::nullopt;
      return fmt::format("must be less than interest.load_raise_share ({}) so that the level cannot flap, got {}",
                         c.interest.load_raise_share, c.interest.load_lower_share);
    }},
    {{"interest.load_radius_step", "interest.load_radius_steps"}, [](const ZoneConfig& c) -> std::optional<std::string> {
      if (c.interest.load_radius_step * c.interest.load_radius_steps <= 0.5 + 1e-9) return std::nullopt;
      return fmt::format("times interest.load_radius_steps ({}) must be at most 0.5 (the view radius never shrinks below "
                         "half), got {}",
                         c.interest.load_radius_steps, c.interest.load_radius_step);
    }},
    {{"network.snapshot_interval_ticks", "tick.rate_hz"}, [](const ZoneConfig& c) -> std::optional<std::string> {
      if (c.network.snapshot_interval_ticks <= c.tick.rate_hz) return std::nullopt;
      return fmt::format("must be at most tick.rate_hz ({}) so that clients get at least one snapshot per second, got {}",
                         c.tick.rate_hz, c.network.snapshot_interval_ticks);
    }},
  };
  return checks;
}
// clang-format on

const KeySpec* find_key(std::string_view path) {
  for (const KeySpec& k : schema()) {
    if (k.path == path) return &k;
  }
  return nullptr;
}

const std::vector<std::string_view>& sections() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> out;
    for (const KeySpec& k : schema()) {
      if (std::find(out.begin(), out.end(), k.section()) == out.end()) out.push_back(k.section());
    }
    return out;
  }();
  return names;
}

}  // namespace zone::config
