// ZoneServer: applying reloaded configs to the zone's parts, on the tick thread at the
// start of a tick (ReloadController brings them there from the threads that asked).
#include "zone/zone_server.hpp"

#include "protocol/codec.hpp"
#include "zone/reload_policy.hpp"
#include "zone/zone_params.hpp"

namespace zone {

void ZoneServer::announce_params() {
  fbb_.Clear();
  const auto params =
      protocol::CreateZoneParams(fbb_, tick_, static_cast<float>(world_.effective_player_radius()),
                                 static_cast<float>(config_.aoi.hysteresis), config_.aoi.enabled);
  fbb_.Finish(
      protocol::CreateServerPacket(fbb_, protocol::ServerMessage::ZoneParams, params.Union()));
  sessions_.broadcast(protocol::bytes_of(fbb_), batches_);
}

void ZoneServer::apply_pending_reloads() {
  std::vector<PendingReload> batch = reloads_.take();
  std::vector<std::string> reports;
  for (PendingReload& r : batch) reports.push_back(apply_config(r));
  if (announce_params_) {
    announce_params();
    announce_params_ = false;
  }
  // Publish before answering, so whoever asked sees the outcome in /metrics at once.
  observability_.publish_metrics();
  for (std::size_t i = 0; i < batch.size(); ++i) batch[i].done.set_value(std::move(reports[i]));
}

// Applies the keys that can change while running; reports the rest as needing a restart.
// An invalid config changes nothing.
std::string ZoneServer::apply_config(PendingReload& pending) {
  const config::LoadResult& loaded = pending.result;
  // A file that lost keys the running zone has set (cut short?) changes nothing either.
  const config::LoadResult result = config::refuse_dropped_keys(config_, loaded);
  if (!result.ok()) {
    observability_.count_reload_refused();
    log_.error("config reload from {} failed; nothing changed:\n{}", result.source,
               result.error_report());
    return "reload failed, nothing changed:\n" + result.error_report();
  }
  const config::ZoneConfig& next = result.config;
  std::vector<std::string> applied, restart;
  config::ZoneConfig merged = config_;
  for (const config::KeyChange& c : config::diff(config_, next)) {
    const std::string line = fmt::format("{} {} -> {}", c.key, c.before, c.after);
    if (needs_restart(c.key)) {
      restart.push_back(line);
    } else {
      applied.push_back(line);
      config::set_value(merged, c.key, c.after);
    }
  }
  // Clients were told the view parameters in their Welcome: tell them what changed.
  if (merged.aoi.view_radius != config_.aoi.view_radius ||
      merged.aoi.hysteresis != config_.aoi.hysteresis ||
      merged.aoi.enabled != config_.aoi.enabled) {
    announce_params_ = true;
  }
  // Push the live values down to the layers that hold copies.
  const double radius_before = world_.effective_player_radius();
  world_.set_broadcast(!merged.aoi.enabled);
  load_.configure(make_load_params(merged));
  load_applied_ = load_.level();
  bool ok = world_.set_player_view_radius(merged.aoi.view_radius *
                                          load_radius_factor(merged.interest, load_applied_));
  if (world_.effective_player_radius() != radius_before) announce_params_ = true;
  ok &= world_.set_hysteresis(merged.aoi.hysteresis);
  ok &= world_.set_cell_size(merged.aoi.cell_size);
  world_.set_npc_params(make_npc_params(merged.npcs));
  world_.set_precision(make_precision_params(merged.precision));
  replicator_.set_params(make_replication_params(merged, load_applied_));
  log_.set_level(merged.log.level);
  config_ = merged;
  apply_game_limits();
  const std::string rules = apply_rules(pending);
  observability_.count_reload_applied(ok);
  std::string report = fmt::format("config reloaded from {}: {} applied{}{}", result.source,
                                   applied.size(), applied.empty() ? "" : " (", "");
  for (std::size_t i = 0; i < applied.size(); ++i) report += (i ? ", " : "") + applied[i];
  if (!applied.empty()) report += ")";
  report += rules;
  if (!restart.empty()) {
    report += fmt::format("; {} need a restart and were not applied (", restart.size());
    for (std::size_t i = 0; i < restart.size(); ++i) report += (i ? ", " : "") + restart[i];
    report += ")";
  }
  if (restart.empty()) {
    log_.info("{}", report);
  } else {
    log_.warn("{}", report);
  }
  return report;
}

std::string ZoneServer::apply_rules(PendingReload& pending) {
  // Rules start and stop with the zone: players already here would never have met them.
  if (static_cast<bool>(rules_) != !config_.game.scripts_dir.empty()) {
    return rules_ ? "; game.scripts_dir \"\" needs a restart to stop the game rules"
                  : "; game.scripts_dir needs a restart to start the game rules";
  }
  if (!rules_) return "";
  if (!pending.scripts_error.empty()) {
    log_.error("game rules reload failed, the old rules stay: {}", pending.scripts_error);
    return "; game rules kept: " + pending.scripts_error;
  }
  if (auto error = rules_->reload(config_, std::move(pending.scripts))) {
    return "; game rules kept: " + *error;
  }
  return "; game rules reloaded";
}

}  // namespace zone
