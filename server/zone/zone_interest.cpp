// ZoneServer: load-adaptive interest (interest.load_adaptive) and simulated load.
#include <chrono>

#include "zone/zone_params.hpp"
#include "zone/zone_server.hpp"

namespace zone {

void ZoneServer::observe_load(std::chrono::nanoseconds tick) {
  if (load_.observe(std::chrono::duration<double>(tick).count())) load_changed_ = true;
}

void ZoneServer::apply_load_level() {
  load_changed_ = false;
  const std::uint32_t level = load_.level();
  if (level == load_applied_) return;
  const double before = world_.effective_player_radius();
  world_.set_player_view_radius(config_.aoi.view_radius *
                                load_radius_factor(config_.interest, level));
  replicator_.set_params(make_replication_params(config_, level));
  log_.info("interest: load level {} -> {} (tick time {:.0f}% of its budget), view radius {} m",
            load_applied_, level, load_.share() * 100.0, world_.effective_player_radius());
  load_applied_ = level;
  // Clients check what they hold against the radius they were told: tell them, as a
  // reload does. The AOI's leave events despawn what the smaller radius drops.
  if (world_.effective_player_radius() != before) announce_params();
}

void ZoneServer::simulate_load() {
  const replication::ReplicationStats& r = replicator_.stats();
  const std::uint64_t records = r.spawns + r.updates + r.despawns;
  const std::uint64_t sent = records - load_records_;
  load_records_ = records;
  const std::uint32_t ns = config_.debug.simulated_load_ns_per_record;
  if (ns == 0 || sent == 0) return;
  const auto until = std::chrono::steady_clock::now() + std::chrono::nanoseconds(sent * ns);
  while (std::chrono::steady_clock::now() < until) {
  }
}

}  // namespace zone
