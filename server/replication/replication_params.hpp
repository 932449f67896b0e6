// What replication is asked to do (ReplicationParams, with the interest policy) and what
// it counts (ReplicationStats): shared by the Replicator and its stages.
#pragma once

#include <array>
#include <cstdint>

namespace zone::replication {

// Interest policy (docs/architecture.md, "Interest policy"): how often an entity in view
// is refreshed. Every entity in a client's view gets a tier each snapshot: 0 near (every
// snapshot), 1 middle (every middle_divisor-th), 2 far (every far_divisor-th, times
// far_slowdown under load). A tier only says when a changed entity's update becomes due;
// the priority accumulator still orders what is due, spawns and despawns never wait for
// a tier, and a due update waits for budget at most max_deferral_ticks as before. With
// everything off (the default) every entity is near: today's bytes exactly.
struct InterestParams {
  bool tiers = false;          // distance tiers
  double near_fraction = 0.5;  // of the view radius: within it, near
  double far_fraction = 0.8;   // beyond it, far; between, middle
  std::uint32_t middle_divisor = 2;
  std::uint32_t far_divisor = 4;
  std::uint32_t far_slowdown = 1;     // multiplies far_divisor (load-adaptive level >= 1)
  std::uint32_t crowd_threshold = 0;  // > K in view: all but the K nearest are far; 0 off
  bool cone = false;                  // entities behind the player are far
  double cone_fov_degrees = 120.0;    // field of view, centred on the player's heading
  double cone_radius = 5.0;           // metres: never behind within this distance
  bool active() const { return tiers || crowd_threshold > 0 || cone; }
};

struct ReplicationParams {
  std::uint32_t tick_rate = 20;
  std::uint32_t max_packet_bytes = 1200;
  std::uint32_t client_bandwidth = 16000;  // bytes per second per client
  std::uint32_t snapshot_interval = 1;     // ticks between snapshots to one client
  std::uint32_t history_ticks = 32;
  std::uint32_t max_deferral_ticks = 20;  // longest a due record waits for budget
  InterestParams interest;
};

// Ticks an update of an entity in `tier` may wait for its turn beyond the snapshot
// interval (0 for the near tier): a client may hold its values up to this much longer
// than max_deferral_ticks.
std::uint32_t tier_slack_ticks(const ReplicationParams& p, std::uint8_t tier);

struct ReplicationStats {
  std::uint64_t snapshots = 0;  // frames sent
  std::uint64_t packets = 0;    // snapshot parts sent
  std::uint64_t bytes = 0;      // snapshot payload bytes
  std::uint64_t spawns = 0;
  std::uint64_t updates = 0;  // entities with changed fields sent
  std::uint64_t despawns = 0;
  std::uint64_t deferred = 0;      // records held back by the budget (per tick they wait)
  std::uint64_t forced = 0;        // records sent over budget: held or waited too long
  std::uint64_t full_resyncs = 0;  // snapshots without a baseline after the first
  std::uint64_t enter_events = 0;
  std::uint64_t leave_events = 0;
  std::uint32_t oldest_deferral_ticks = 0;  // longest wait of a record sent this period
  // Interest policy: entities in view per tier, summed over the snapshots built;
  // changed entities whose update was not due yet (tier); snapshots of a client whose
  // view held more than crowd_threshold entities; entities made far by the view cone.
  std::array<std::uint64_t, 3> tier_entities{};
  std::uint64_t tier_held = 0;
  std::uint64_t crowded = 0;
  std::uint64_t behind = 0;
  std::uint64_t group_entities = 0;  // entities in view through a party or guild link alone
  // Events (replication/event_delivery.hpp): deliveries (an event to a client), the
  // Events messages and their bytes, and deliveries dropped by the per-client bound.
  std::uint64_t event_deliveries = 0;
  std::uint64_t event_messages = 0;
  std::uint64_t event_bytes = 0;
  std::uint64_t events_over_budget = 0;
  void add(const ReplicationStats& o);
};

}  // namespace zone::replication
