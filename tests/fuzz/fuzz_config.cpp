// libFuzzer target: YAML text -> the config loader -> validation, as `zone-server
// --config FILE` and every reload do it.
//
// Besides "no crash, no hang, no sanitizer report", it checks properties of the loader:
//   - a result is either valid or carries errors, each formatted with a message;
//   - a config the loader accepts passes validate() (the loader and validate() agree);
//   - describe() of it loads back to the same config (diff() finds nothing), and
//     set_value() accepts every key's value as describe() prints it;
//   - reloading the same text over itself never loses a key (refuse_dropped_keys);
//   - read as a static map (static.map_file) for the default zone, the text either loads
//     objects that keep every promise of the loader (inside the world, a sane radius) or
//     is refused with messages, and nothing loads with errors.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "config/config_loader.hpp"
#include "config/static_map.hpp"

namespace {

void require(bool condition, const char* what, const std::string& detail = {}) {
  if (!condition) {
    std::fprintf(stderr, "fuzz_config: property violated: %s\n%s\n", what, detail.c_str());
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace zone::config;
  if (size > kMaxConfigFileBytes) return -1;  // load_config_file refuses these unread
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const ZoneConfig defaults;
  const StaticMapResult map = load_static_map_string(text, "fuzz-map.yaml", defaults);
  if (map.ok()) {
    for (const StaticObjectSpec& o : map.objects) {
      require(o.x >= defaults.world.min_x && o.x <= defaults.world.max_x &&
                  o.y >= defaults.world.min_y && o.y <= defaults.world.max_y,
              "a loaded static object lies inside the world");
      require(o.radius >= 0.01 && o.radius <= kMaxStaticRadius, "a loaded radius is in range");
    }
  } else {
    require(map.objects.empty(), "a refused map loads nothing");
    for (const ConfigError& e : map.errors)
      require(!e.message.empty(), "a map error has a message");
  }
  const LoadResult r = load_config_string(text, "fuzz.yaml");
  if (!r.ok()) {
    for (const ConfigError& e : r.errors) require(!e.message.empty(), "an error has a message");
    require(!r.error_report().empty(), "errors are reported");
    return 0;
  }
  const auto errors = validate(r.config);
  require(errors.empty(), "a loaded config validates",
          errors.empty() ? "" : format_error(errors.front(), "validate"));
  const std::string described = describe(r.config);
  const LoadResult again = load_config_string(described, "describe");
  require(again.ok(), "describe() output loads", again.error_report() + described);
  require(diff(r.config, again.config).empty(), "describe() round-trips", described);
  // Numbers, booleans and names, as a reload applies them (text keys print quoted and
  // are all restart-only, so a reload never sets them this way).
  ZoneConfig copy;
  for (const KeyChange& c : diff(copy, r.config)) {
    if (!c.after.empty() && c.after.front() == '"') continue;
    require(!set_value(copy, c.key, c.after).has_value(), "set_value takes describe's value",
            c.key + " = " + c.after);
    require(diff(copy, r.config).empty() || diff(copy, r.config).front().key != c.key,
            "set_value sets describe's value", c.key + " = " + c.after);
  }
  require(refuse_dropped_keys(r.config, r).ok(), "a file does not lose keys against itself",
          refuse_dropped_keys(r.config, r).error_report());
  return 0;
}
