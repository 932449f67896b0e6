#include "zone/zone_rules.hpp"

#include <chrono>
#include <stdexcept>

#include "zone/script_files.hpp"
#include "zone/zone_params.hpp"

namespace zone {

namespace {

game::RulesParams rules_params(const config::ZoneConfig& config,
                               std::vector<script::ScriptFile> files) {
  game::RulesParams p;
  p.files = std::move(files);
  p.limits = script_limits(config.script);
  p.random_seed = static_cast<std::int64_t>(config.npcs.seed);
  p.tick_hz = config.game.tick_hz;
  return p;
}

}  // namespace

script::ScriptLimits script_limits(const config::ScriptConfig& config) {
  script::ScriptLimits l;
  l.memory_bytes = static_cast<std::size_t>(config.memory_mb) << 20;
  l.instructions_per_call = config.instructions_per_call;
  l.instructions_per_tick = config.instructions_per_tick;
  return l;
}

std::optional<std::string> check_rules(const config::ZoneConfig& config,
                                       const world::GameTypes& game) {
  if (config.game.scripts_dir.empty()) return std::nullopt;
  try {
    world::WorldParams params = make_world_params(config, 0, 0.0, {});
    params.npcs.count = 0;
    params.game = game;
    world::World world(params);
    game::RulesParams rules;
    rules.files = read_script_dir(config.game.scripts_dir);
    rules.limits = script_limits(config.script);
    rules.tick_hz = config.game.tick_hz;
    game::GameRules check(world, std::move(rules));
  } catch (const std::exception& e) {
    return std::string(e.what());
  }
  return std::nullopt;
}

ZoneRules::ZoneRules(world::World& world, const config::ZoneConfig& config,
                     std::vector<script::ScriptFile> files, Logger& log)
    : log_(log),
      errors_limit_(10, std::chrono::seconds(10)),
      print_limit_(50, std::chrono::seconds(10)),
      rules_(world, [&] {
        game::RulesParams p = rules_params(config, std::move(files));
        // The rules run on the tick thread: so do these, and their limiters.
        p.log = [this](std::string_view line) {
          log_.limited(print_limit_, LogLevel::kInfo, "script: {}", line);
        };
        p.on_error = [this](const script::ScriptError& e) {
          log_.limited(errors_limit_, LogLevel::kWarn, "script error: {}", e.what());
        };
        return p;
      }()) {}

std::optional<std::string> ZoneRules::reload(const config::ZoneConfig& config,
                                             std::vector<script::ScriptFile> files) {
  rules_.set_tick_hz(config.game.tick_hz);
  if (auto error = rules_.reload(std::move(files))) {
    const std::string text = error->what();
    log_.error("game rules reload failed, the old rules stay: {}", text);
    return text;
  }
  log_.info("game rules reloaded");
  return std::nullopt;
}

}  // namespace zone
