#include "world/world.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>

#include "motion/player_motion.hpp"
#include "protocol/record.hpp"

namespace zone::world {

namespace {

// The AOI covers the zone and the ghost margin around it.
aoi::GridConfig grid_with_margin(const WorldParams& p) {
  aoi::GridConfig g = p.grid;
  g.bounds.min.x -= p.ghost_margin;
  g.bounds.min.y -= p.ghost_margin;
  g.bounds.max.x += p.ghost_margin;
  g.bounds.max.y += p.ghost_margin;
  return g;
}

}  // namespace

World::World(const WorldParams& params)
    : params_(params),
      aoi_(grid_with_margin(params)),
      parties_(GroupKind::kParty, params.parties),
      guilds_(GroupKind::kGuild, params.guilds),
      next_id_(first_entity_id(params.zone_index)),
      spawn_rng_(params.spawn_seed),
      npc_rng_(params.npcs.seed) {
  property_stride_ = params_.game.property_count();
  if (params.statics.objects && !params.statics.objects->empty()) {
    std::vector<aoi::StaticCircle> circles;
    circles.reserve(params.statics.objects->size());
    for (const StaticObject& o : *params.statics.objects) circles.push_back({o.x, o.y, o.radius});
    static_grid_ = aoi::StaticGrid(params.grid.bounds, params.statics.cell_size, circles);
  }
}

std::span<const StaticObject> World::statics() const {
  if (!params_.statics.objects) return {};
  return *params_.statics.objects;
}

aoi::Vec2 World::free_point(util::SplitMix64& rng) const {
  const aoi::Bounds& b = params_.grid.bounds;
  // The map covers at most half the world (config::kMaxStaticCover): a free point takes
  // two draws on average, and without objects exactly one, as always.
  for (int tries = 0; tries < 100000; ++tries) {
    const double x = rng.range(b.min.x, b.max.x);
    const double y = rng.range(b.min.y, b.max.y);
    if (!static_grid_.blocked({x, y})) return {x, y};
  }
  throw std::runtime_error("world: found no point outside the static objects to spawn at");
}

bool World::advance(Entity& e, double dt) {
  const aoi::Vec2 from{e.x, e.y};
  motion::integrate(e.x, e.y, {e.vx, e.vy}, dt);
  keep_inside(e, e.kind == EntityKind::kNpc);
  if (static_grid_.empty()) return false;
  const aoi::Vec2 to{e.x, e.y};
  aoi::Vec2 end = static_grid_.resolve(from, to);
  if (end.x == to.x && end.y == to.y) return false;
  // Pushed out past the world's edge by an object on it: stay.
  const aoi::Bounds& b = params_.grid.bounds;
  if (!aoi::contains(b, end)) end = from;
  e.x = end.x;
  e.y = end.y;
  ++collisions_;
  return true;
}

double World::effective_player_radius() const {
  if (!params_.broadcast) return params_.player_view_radius;
  const aoi::Bounds& b = params_.grid.bounds;
  return std::hypot(b.max.x - b.min.x, b.max.y - b.min.y) + 1.0;
}

std::uint32_t World::place(EntityKind kind, std::string name, double x, double y, double heading,
                           double radius, bool observer, std::uint16_t type) {
  // An id this zone's earlier run gave out may still be in use (an entity handed over to
  // a neighbour, seen here as a ghost): never give it twice.
  while (can_spawn() && slot_of_id_.count(next_id_) != 0) ++next_id_;
  if (!can_spawn()) throw std::logic_error("world: spawn with every entity id used");
  const aoi::EntityHandle h = aoi_.add({x, y}, radius, observer);
  if (!h.valid()) throw std::logic_error("world: AOI refused a spawn inside the world bounds");
  Entity& e = occupy(h, next_id_++, kind, x, y, std::move(name), type);
  e.heading = heading;
  return h.index;
}

Entity& World::occupy(aoi::EntityHandle h, EntityId id, EntityKind kind, double x, double y,
                      std::string name, std::uint16_t type) {
  if (h.index >= entities_.size()) {
    entities_.resize(h.index + 1);
    properties_.resize(entities_.size() * property_stride_);
  }
  Entity& e = entities_[h.index];
  drop_handoff(e);  // despawn dropped it already: a slot is reused clean
  e = Entity{};
  e.id = id;
  e.kind = kind;
  e.aoi = h;
  e.x = x;
  e.y = y;
  e.type = type;
  e.name = std::move(name);
  const std::vector<std::int32_t>& defaults = params_.game.defaults[type].properties;
  const auto row = properties_.begin() + static_cast<std::ptrdiff_t>(h.index * property_stride_);
  std::fill_n(row, property_stride_, 0);
  std::copy_n(defaults.begin(), std::min(defaults.size(), property_stride_), row);
  slot_of_id_[id] = h.index;
  return e;
}

std::uint32_t World::spawn_player(std::string name) {
  const aoi::Vec2 at = free_point(spawn_rng_);
  ++players_;
  return place(EntityKind::kPlayer, std::move(name), at.x, at.y, 0.0, effective_player_radius(),
               true, params_.game.player_type);
}

void World::spawn_npcs() {
  const NpcParams& p = params_.npcs;
  for (std::uint32_t i = 0; i < p.count; ++i) {
    const aoi::Vec2 at = free_point(npc_rng_);
    const double x = at.x, y = at.y;
    const double heading = npc_rng_.u01() * 2.0 * std::numbers::pi;
    const std::uint32_t slot = place(EntityKind::kNpc, "npc-" + std::to_string(i + 1), x, y,
                                     heading, 0.0, false, params_.game.npc_type);
    NpcBrain brain;
    brain.slot = slot;
    brain.anchor_x = x;
    brain.anchor_y = y;
    const double axis = npc_rng_.u01() * std::numbers::pi;
    brain.axis_x = std::cos(axis);
    brain.axis_y = std::sin(axis);
    brain.timer = npc_rng_.range(0.0, 3.0);
    add_brain(brain);
  }
}

void World::add_brain(const NpcBrain& brain) {
  if (brain.slot >= brain_of_slot_.size()) brain_of_slot_.resize(brain.slot + 1, kNoSlot);
  brain_of_slot_[brain.slot] = static_cast<std::uint32_t>(npcs_.size());
  npcs_.push_back(brain);
}

void World::remove_brain(std::uint32_t slot) {
  // The brains keep their order (the NPCs' random draws follow it): the ones after the
  // removed brain move down by one.
  std::erase_if(npcs_, [slot](const NpcBrain& b) { return b.slot == slot; });
  if (slot < brain_of_slot_.size()) brain_of_slot_[slot] = kNoSlot;
  for (std::uint32_t i = 0; i < npcs_.size(); ++i) brain_of_slot_[npcs_[i].slot] = i;
}

NpcBrain* World::brain_of(std::uint32_t slot) {
  if (slot >= brain_of_slot_.size() || brain_of_slot_[slot] == kNoSlot) return nullptr;
  return &npcs_[brain_of_slot_[slot]];
}

bool World::owned_npc(std::uint32_t slot) const {
  if (slot >= entities_.size()) return false;
  const Entity& e = entities_[slot];
  return e.live() && !e.ghost && e.kind == EntityKind::kNpc;
}

std::uint32_t World::spawn_npc(std::uint16_t type, double x, double y, double heading) {
  const std::span<const protocol::EntityTypeSpec> types = params_.game.schema.types();
  if (type >= types.size() || type >= params_.game.defaults.size() ||
      types[type].kind != protocol::EntityKind::kNpc || !std::isfinite(heading) ||
      !aoi::contains(params_.grid.bounds, {x, y}) || static_grid_.blocked({x, y})) {
    return kNoSlot;
  }
  const std::uint32_t slot =
      place(EntityKind::kNpc, types[type].name, x, y, heading, 0.0, false, type);
  Entity& e = entities_[slot];
  // Appended in two steps: GCC 12 at -O3 warns falsely (-Wrestrict) on "-" + to_string.
  const std::string number = std::to_string(e.id & kLocalIdMask);
  e.name += '-';
  e.name += number;
  NpcBrain brain;
  brain.slot = slot;
  brain.anchor_x = x;
  brain.anchor_y = y;
  brain.axis_x = std::cos(heading);
  brain.axis_y = std::sin(heading);
  add_brain(brain);
  return slot;
}

bool World::steer_npc(std::uint32_t slot, double x, double y, double speed) {
  NpcBrain* brain = owned_npc(slot) ? brain_of(slot) : nullptr;
  if (brain == nullptr || !std::isfinite(x) || !std::isfinite(y) || !std::isfinite(speed) ||
      speed < 0.0) {
    return false;
  }
  const aoi::Bounds& b = params_.grid.bounds;
  brain->control = NpcControl::kSteer;
  brain->goal_x = std::clamp(x, b.min.x, b.max.x);
  brain->goal_y = std::clamp(y, b.min.y, b.max.y);
  brain->goal_speed = std::min(speed, max_speed());
  return true;
}

bool World::hold_npc(std::uint32_t slot) {
  NpcBrain* brain = owned_npc(slot) ? brain_of(slot) : nullptr;
  if (brain == nullptr) return false;
  brain->control = NpcControl::kHold;
  entities_[slot].vx = entities_[slot].vy = 0.0;
  return true;
}

bool World::release_npc(std::uint32_t slot) {
  NpcBrain* brain = owned_npc(slot) ? brain_of(slot) : nullptr;
  if (brain == nullptr) return false;
  brain->control = NpcControl::kBehaviour;
  // A patroller walks its leg from here; a wanderer wanders on from here.
  brain->anchor_x = entities_[slot].x;
  brain->anchor_y = entities_[slot].y;
  return true;
}

NpcControl World::npc_control(std::uint32_t slot) const {
  if (slot >= brain_of_slot_.size() || brain_of_slot_[slot] == kNoSlot) {
    return NpcControl::kBehaviour;
  }
  return npcs_[brain_of_slot_[slot]].control;
}

bool World::set_player_type(std::uint32_t slot, std::uint16_t type) {
  if (slot >= entities_.size()) return false;
  const Entity& e = entities_[slot];
  const auto types = params_.game.schema.types();
  if (!e.live() || e.ghost || e.kind != EntityKind::kPlayer || type >= types.size() ||
      types[type].kind != protocol::EntityKind::kPlayer) {
    return false;
  }
  PropertyValues p;
  p.type = type;
  p.assign(params_.game.defaults[type].properties);
  copy_properties(slot, p);
  return true;
}

bool World::set_frozen(std::uint32_t slot, bool frozen) {
  if (slot >= entities_.size()) return false;
  Entity& e = entities_[slot];
  if (!e.live() || e.ghost) return false;
  e.frozen = frozen;
  if (frozen) e.vx = e.vy = 0.0;
  return true;
}

bool World::teleport(std::uint32_t slot, double x, double y) {
  if (slot >= entities_.size()) return false;
  Entity& e = entities_[slot];
  if (!e.live() || e.ghost) return false;
  if (const Handoff* h = handoff_of(e); h != nullptr && (h->crossing || h->catching_up)) {
    return false;
  }
  if (!aoi::contains(params_.grid.bounds, {x, y}) || static_grid_.blocked({x, y})) return false;
  e.x = x;
  e.y = y;
  e.vx = e.vy = 0.0;
  ++e.teleports;
  aoi_.move(e.aoi, {x, y});
  return true;
}

void World::despawn(std::uint32_t slot) {
  Entity& e = entities_[slot];
  if (!e.live()) return;
  aoi_.remove(e.aoi);
  slot_of_id_.erase(e.id);
  parties_.leave(e.id, e.party);
  guilds_.leave(e.id, e.guild);
  e.party = e.guild = kNoGroup;
  if (e.ghost) {
    --ghosts_;
  } else if (e.kind == EntityKind::kPlayer) {
    --players_;
  } else {
    remove_brain(slot);
  }
  drop_handoff(e);
  e.despawned = true;
  e.vx = e.vy = 0.0;
}

GroupChange World::join_group(GroupKind kind, std::uint32_t slot, std::uint64_t key) {
  Entity& e = entities_[slot];
  if (!e.live() || e.ghost || e.kind != EntityKind::kPlayer) {
    throw std::logic_error("world: only a live player of this zone joins a party or guild");
  }
  Groups& groups = kind == GroupKind::kParty ? parties_ : guilds_;
  const GroupChange change = groups.request(e.id, slot, e.group(kind), key);
  e.group(kind) = change.group;
  return change;
}

std::uint32_t World::spawn_ghost(EntityId id, EntityKind kind, std::string name,
                                 const PropertyValues& properties) {
  // Placed at the zone's corner until its state is set, in the same tick, before the
  // AOI runs: nobody sees it there.
  const aoi::Bounds& b = params_.grid.bounds;
  const aoi::EntityHandle h = aoi_.add(b.min, 0.0, false);
  if (!h.valid()) throw std::logic_error("world: AOI refused a ghost at the world's corner");
  Entity& e = occupy(h, id, kind, b.min.x, b.min.y, std::move(name), default_type(kind));
  copy_properties(h.index, properties);
  e.ghost = true;
  ++ghosts_;
  return h.index;
}

void World::set_ghost_state(std::uint32_t slot, double x, double y, double heading, double vx,
                            double vy, const PropertyValues& properties) {
  Entity& e = entities_[slot];
  if (!e.live() || !e.ghost) return;
  if (!aoi_.move(e.aoi, {x, y})) return;  // non-finite: keep the last good state
  e.x = x;
  e.y = y;
  e.heading = heading;
  e.vx = vx;
  e.vy = vy;
  copy_properties(slot, properties);
}

void World::copy_properties(std::uint32_t slot, const PropertyValues& p) {
  // Zones of one world share the game's data (docs/world.md): a report that does not
  // fit it (another game's, a corrupt one) leaves the entity as it was.
  if (p.type >= params_.game.defaults.size() || p.count != property_stride_) return;
  entities_[slot].type = p.type;
  for (std::size_t i = 0; i < property_stride_; ++i) {
    properties_[slot * property_stride_ + i] = normalize_property(params_.game, i, p.values[i]);
  }
}

void World::set_property(std::uint32_t slot, std::size_t property, std::int64_t value) {
  if (property >= property_stride_ || !entities_[slot].live() || entities_[slot].ghost) return;
  properties_[slot * property_stride_ + property] =
      normalize_property(params_.game, property, value);
}

PropertyValues World::property_values(std::uint32_t slot) const {
  PropertyValues p;
  p.type = entities_[slot].type;
  p.assign(properties(slot));
  return p;
}

const Entity* World::find(EntityId id) const {
  auto it = slot_of_id_.find(id);
  return it == slot_of_id_.end() ? nullptr : &entities_[it->second];
}

void World::set_intent(std::uint32_t slot, double mx, double my) {
  Entity& e = entities_[slot];
  if (e.frozen) {
    e.vx = e.vy = 0.0;
    return;
  }
  // The rule a predicting client replays (shared/motion).
  const motion::Velocity v = motion::player_velocity(mx, my, params_.player_max_speed);
  e.vx = v.vx;
  e.vy = v.vy;
  if (e.moving()) e.heading = std::atan2(e.vy, e.vx);
}

void World::keep_inside(Entity& e, bool reflect) {
  const aoi::Bounds& b = params_.grid.bounds;
  if (aoi::contains(b, {e.x, e.y})) return;
  // A player, or a wandering NPC, stepping into a neighbouring zone stops there until the
  // zone hands it over. (Patrollers keep to their legs, which lie in their zone.)
  const bool may_cross =
      e.kind == EntityKind::kPlayer || params_.npcs.behaviour == NpcBehaviour::kWander;
  Handoff* h = handoff_of(e);
  if (may_cross && (h == nullptr || h->cooldown == 0) && in_open_area(e.x, e.y)) {
    (h != nullptr ? *h : open_handoff(e)).crossing = true;
    return;
  }
  // NPCs bounce off the world's edge; players are stopped by it.
  if (motion::clamp_axis(e.x, b.min.x, b.max.x)) {
    if (reflect) {
      e.heading = std::numbers::pi - e.heading;
      e.vx = -e.vx;
    }
  }
  if (motion::clamp_axis(e.y, b.min.y, b.max.y)) {
    if (reflect) {
      e.heading = -e.heading;
      e.vy = -e.vy;
    }
  }
}

void World::step(double dt) {
  // Nothing moves further than the fastest speed for one tick (keep_inside only shortens a
  // step): the AOI uses that bound to skip pair tests that cannot have changed, and still
  // handles any longer move exactly, as a teleport. Unchanged values cost nothing.
  const double step = std::max(params_.player_max_speed, params_.npcs.speed) * dt;
  aoi_.set_max_step(step);
  for (NpcBrain& brain : npcs_) {
    Entity& npc = entities_[brain.slot];
    if (npc.frozen) {
      npc.vx = npc.vy = 0.0;
      continue;
    }
    think(brain, npc, params_.npcs, npc_rng_, dt);
  }
  // NPCs with their brains at hand: one that cannot move turns back. Wanderers bounce off
  // the world's edge already (keep_inside reflects them), so for them only an object
  // counts; a patroller's heading comes from its leg, which may end beyond the edge.
  const bool patrol = params_.npcs.behaviour == NpcBehaviour::kPatrol;
  crossings_.clear();
  // An entity with a row in the handoff table: crossing, it waits; catching up, it walks
  // on towards its old zone's position; else it moves as the others and counts down the
  // ticks before it may cross again. (A move may add its row: it began to cross.)
  for (NpcBrain& brain : npcs_) {
    Entity& npc = entities_[brain.slot];
    Handoff* h = handoff_of(npc);
    if (h != nullptr) {
      if (h->crossing) {
        npc.vx = npc.vy = 0.0;  // waits for the handoff
        continue;
      }
      if (h->catching_up) {
        catch_up(npc, *h, step);
        continue;
      }
    }
    if (npc.moving()) {
      const double x0 = npc.x, y0 = npc.y;
      const bool hit = advance(npc, dt);
      if (npc.x == x0 && npc.y == y0 && (hit || patrol)) turn_back(brain, npc, params_.npcs);
      aoi_.move(npc.aoi, {npc.x, npc.y});
      if (h == nullptr) h = handoff_of(npc);  // rows stay put: only a new one to look for
      if (h != nullptr && h->crossing) crossings_.push_back(brain.slot);
    }
    count_down_cooldown(npc, h);
  }
  for (Entity& e : entities_) {
    if (!e.live() || e.ghost || e.kind == EntityKind::kNpc) continue;
    Handoff* h = handoff_of(e);
    if (h != nullptr) {
      if (h->crossing) {
        e.vx = e.vy = 0.0;  // waits for the handoff, whatever its client asks
        continue;
      }
      if (h->catching_up) {
        catch_up(e, *h, step);
        continue;
      }
    }
    if (e.moving()) {
      advance(e, dt);
      aoi_.move(e.aoi, {e.x, e.y});
      if (h == nullptr) h = handoff_of(e);
      if (h != nullptr && h->crossing) crossings_.push_back(e.aoi.index);
    }
    count_down_cooldown(e, h);
  }
}

World::Handoff* World::find_handoff(std::uint32_t slot) {
  const auto it = handoffs_.find(slot);
  return it == handoffs_.end() ? nullptr : &it->second;
}

World::Handoff& World::open_handoff(Entity& e) {
  e.in_handoff = true;
  return handoffs_[e.aoi.index];  // its row, or a new, clear one
}

void World::close_handoff_if_idle(Entity& e) {
  const Handoff* h = handoff_of(e);
  if (h != nullptr && h->idle()) drop_handoff(e);
}

void World::drop_handoff(Entity& e) {
  if (!e.in_handoff) return;
  e.in_handoff = false;
  handoffs_.erase(e.aoi.index);
}

void World::count_down_cooldown(Entity& e, Handoff* h) {
  if (h == nullptr || h->cooldown == 0) return;
  --h->cooldown;
  if (h->idle()) drop_handoff(e);
}

void World::catch_up(Entity& e, Handoff& h, double step) {
  const double dx = h.catch_x - e.x, dy = h.catch_y - e.y;
  const double gap = std::hypot(dx, dy);
  if (gap <= step) {
    e.x = h.catch_x;
    e.y = h.catch_y;
    h.catching_up = false;
    close_handoff_if_idle(e);  // h goes with its row
  } else {
    e.x += dx * (step / gap);
    e.y += dy * (step / gap);
  }
  e.vx = e.vy = 0.0;
  aoi_.move(e.aoi, {e.x, e.y});
}

bool World::in_open_area(double x, double y) const {
  return std::any_of(params_.open_areas.begin(), params_.open_areas.end(),
                     [x, y](const aoi::Bounds& a) {
                       return aoi::contains(a, {x, y});
                     });
}

void World::take_back(std::uint32_t slot, std::uint16_t cooldown_ticks) {
  Entity& e = entities_[slot];
  if (!e.live() || e.ghost) return;
  const aoi::Bounds& b = params_.grid.bounds;
  e.x = std::clamp(e.x, b.min.x, b.max.x);
  e.y = std::clamp(e.y, b.min.y, b.max.y);
  Handoff& h = open_handoff(e);
  h.crossing = false;
  h.cooldown = cooldown_ticks;
  close_handoff_if_idle(e);  // no cooldown: nothing left to hold
  aoi_.move(e.aoi, {e.x, e.y});
  if (e.kind == EntityKind::kNpc) e.heading += std::numbers::pi;  // walks away from the edge
}

void World::release(std::uint32_t slot) {
  Entity& e = entities_[slot];
  if (!e.live() || e.ghost) return;
  parties_.leave(e.id, e.party);
  guilds_.leave(e.id, e.guild);
  e.party = e.guild = kNoGroup;
  if (e.kind == EntityKind::kPlayer) {
    --players_;
    aoi_.set_observer(e.aoi, false);
    aoi_.set_view_radius(e.aoi, 0.0);
  } else {
    remove_brain(slot);
  }
  e.ghost = true;
  ++ghosts_;
  drop_handoff(e);
  e.engaged = false;
  e.vx = e.vy = 0.0;
}

std::uint32_t World::adopt(const Arrival& a) {
  // Only wanderers cross (see keep_inside); this zone's NPCs must be of that kind too.
  if (a.kind == EntityKind::kNpc && params_.npcs.behaviour != NpcBehaviour::kWander) {
    return kNoSlot;
  }
  std::uint32_t slot = kNoSlot;
  if (const auto it = slot_of_id_.find(a.id); it != slot_of_id_.end()) {
    slot = it->second;
    if (!entities_[slot].ghost) return kNoSlot;
    entities_[slot].ghost = false;
    --ghosts_;
  } else {
    const aoi::EntityHandle h = aoi_.add({a.x, a.y}, 0.0, false);
    if (!h.valid()) return kNoSlot;
    occupy(h, a.id, a.kind, a.x, a.y, a.name, default_type(a.kind));
    slot = h.index;
  }
  Entity& e = entities_[slot];
  // Our ghost of it may trail the owner's last position by a step or two: it walks there
  // at the speed bound (step() moves it), so nobody sees it jump.
  e.kind = a.kind;
  drop_handoff(e);  // a ghost has no row; nor does a record just placed
  if (e.x != a.x || e.y != a.y) {
    Handoff& h = open_handoff(e);
    h.catching_up = true;
    h.catch_x = a.x;
    h.catch_y = a.y;
  }
  const double x = e.x, y = e.y;
  e.heading = a.heading;
  copy_properties(slot, a.properties);
  e.name = a.name;
  e.account = a.account;
  e.character = a.character;
  e.vx = e.vy = 0.0;
  aoi_.move(e.aoi, {x, y});
  if (a.kind == EntityKind::kPlayer) {
    ++players_;
  } else {
    // Walks on the way it came, with this zone's wander rules.
    NpcBrain brain;
    brain.slot = slot;
    brain.anchor_x = x;
    brain.anchor_y = y;
    brain.axis_x = std::cos(a.heading);
    brain.axis_y = std::sin(a.heading);
    brain.timer = npc_rng_.range(2.0, 8.0);
    add_brain(brain);
  }
  return slot;
}

void World::attach_player(std::uint32_t slot) {
  Entity& e = entities_[slot];
  if (!e.live() || e.ghost || e.kind != EntityKind::kPlayer) return;
  aoi_.set_view_radius(e.aoi, effective_player_radius());
  aoi_.set_observer(e.aoi, true);
}

bool World::set_player_view_radius(double radius) {
  params_.player_view_radius = radius;
  const double r = effective_player_radius();
  bool ok = true;
  for (const Entity& e : entities_) {
    if (e.live() && !e.ghost && e.kind == EntityKind::kPlayer) {
      ok &= aoi_.set_view_radius(e.aoi, r);
    }
  }
  return ok;
}

bool World::set_hysteresis(double hysteresis) {
  if (aoi_.set_hysteresis(hysteresis) != aoi::GridConfigError::kNone) return false;
  params_.grid.hysteresis = hysteresis;
  return true;
}

bool World::set_cell_size(double cell_size) {
  if (aoi_.set_cell_size(cell_size) != aoi::GridConfigError::kNone) return false;
  params_.grid.cell_size = cell_size;
  return true;
}

void World::set_npc_params(const NpcParams& npcs) {
  // The population is fixed at start-up; behaviour and speeds can change live.
  const std::uint32_t count = params_.npcs.count;
  const std::uint64_t seed = params_.npcs.seed;
  params_.npcs = npcs;
  params_.npcs.count = count;
  params_.npcs.seed = seed;
}

std::span<const aoi::VisibilityEvent> World::update_aoi() {
  const std::span<const aoi::VisibilityEvent> events = aoi_.update();
  update_precision();
  return events;
}

void World::update_precision() {
  const PrecisionParams& p = params_.precision;
  // Engagement only matters when it changes something: ambient NPCs coarser than players.
  const bool engage = p.engage_radius > 0.0 && p.npc != p.player;
  if (engage) {
    engaged_.assign(entities_.size(), 0);
    const double outer = p.engage_radius + params_.grid.hysteresis;
    for (const Entity& player : entities_) {
      if (!player.live() || player.kind != EntityKind::kPlayer) continue;
      near_.clear();
      aoi_.query_radius({player.x, player.y}, outer, near_);
      for (const aoi::EntityHandle h : near_) {
        const Entity& npc = entities_[h.index];
        if (npc.kind != EntityKind::kNpc) continue;
        const double dx = npc.x - player.x, dy = npc.y - player.y;
        const double reach = npc.engaged ? outer : p.engage_radius;
        if (dx * dx + dy * dy <= reach * reach) engaged_[h.index] = 1;
      }
    }
  }
  engaged_npcs_ = 0;
  ambient_ = 0;
  for (std::uint32_t s = 0; s < entities_.size(); ++s) {
    Entity& e = entities_[s];
    if (!e.live()) continue;
    const bool was = e.engaged;
    e.engaged = engage && e.kind == EntityKind::kNpc && engaged_[s] != 0;
    engagements_ += e.engaged && !was ? 1 : 0;
    engaged_npcs_ += e.engaged ? 1 : 0;
    const bool precise = e.kind == EntityKind::kPlayer || e.engaged;
    e.precision = precise ? p.player : p.npc;
    ambient_ += !precise && p.npc != p.player ? 1 : 0;
  }
}

GameTypes default_game_types() {
  GameTypes game;
  game.defaults.resize(game.schema.types().size());
  game.player_type = 0;
  game.npc_type = 1;
  return game;
}

std::int32_t normalize_property(const GameTypes& game, std::size_t property, std::int64_t value) {
  const protocol::FieldSpec& f = game.schema.field(protocol::kEngineFieldCount + property);
  return protocol::fields::normalize(f, static_cast<std::uint32_t>(value));
}

}  // namespace zone::world
