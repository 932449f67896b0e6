// The sessions' way to the game's rules in a world of zones (docs/world.md, "Actions
// across borders"): an action on this zone's own entity goes to the rules here; one that
// must have a target (target rule `entity`: it acts on the target) on a ghost (a
// neighbour's entity the player sees across the border) goes over the bus to the zone
// that owns it, whose rules resolve it at its next tick. An action whose target is
// optional is the actor's own (an emote facing someone): it stays here, the ghost named. The player
// is answered Ok once it is on its way (RateLimited when this tick's forwarding bound is reached,
// NotAllowed when it cannot be sent): what the owner's rules make of it shows in the
// world, as the effects of every action do.
#pragma once

#include <cstdint>
#include <span>

#include "cluster/ghost_exchange.hpp"
#include "world/world.hpp"
#include "zone/game_hooks.hpp"
#include "zone/zone_rules.hpp"

namespace zone {

class ActionRouter final : public GameHooks {
 public:
  ActionRouter(ZoneRules& rules, const world::World& world, cluster::GhostExchange& exchange)
      : rules_(rules), world_(world), exchange_(exchange) {}

  void player_joined(std::uint32_t slot) override { rules_.player_joined(slot); }
  void player_leaving(std::uint32_t slot, bool handed_over) override {
    rules_.player_leaving(slot, handed_over);
  }
  protocol::ActionStatus act(std::uint32_t slot, std::uint16_t action, world::EntityId target,
                             std::span<const std::int32_t> args) override {
    const world::Entity* t = target != world::kNoEntity ? world_.find(target) : nullptr;
    const auto actions = world_.game().schema.actions();
    if (t == nullptr || !t->ghost || action >= actions.size() ||
        actions[action].target != protocol::ActionTarget::kEntity) {
      return rules_.act(slot, action, target, args);
    }
    switch (exchange_.forward_action(world_.entity(slot), action, *t, args)) {
      case cluster::ForwardResult::kSent:
        return protocol::ActionStatus::Ok;
      case cluster::ForwardResult::kRateLimited:
        return protocol::ActionStatus::RateLimited;
      case cluster::ForwardResult::kFailed:
        break;
    }
    return protocol::ActionStatus::NotAllowed;
  }

 private:
  ZoneRules& rules_;
  const world::World& world_;
  cluster::GhostExchange& exchange_;
};

}  // namespace zone
