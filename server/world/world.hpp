// The zone's entities: players and NPCs, their movement, and the AOI that tracks them.
//
// Entities live in a dense vector indexed by their AOI slot, so the AOI's events point
// straight at them. Movement is authoritative: players send intents (a direction of
// length <= 1), the world turns them into velocities clamped to the maximum speed and
// keeps every entity inside the world bounds.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "aoi/grid_aoi.hpp"
#include "aoi/static_grid.hpp"
#include "util/splitmix64.hpp"
#include "world/entity.hpp"
#include "world/event_log.hpp"
#include "world/game_types.hpp"
#include "world/groups.hpp"
#include "world/npc_brain.hpp"
#include "world/static_objects.hpp"

namespace zone::world {

// Precision tiers: players, and NPCs engaged with a player, at `player`; the others
// (ambient NPCs) at `npc`. An NPC is engaged while a player is within engage_radius, and
// stays so until it is beyond engage_radius + the AOI's hysteresis. 0: never engaged.
struct PrecisionParams {
  Precision player;
  Precision npc;
  double engage_radius = 0.0;  // metres
};

struct WorldParams {
  aoi::GridConfig grid;
  double player_view_radius = 30.0;
  bool broadcast = false;         // players see the whole world (AOI off baseline)
  double player_max_speed = 7.0;  // m/s
  std::uint64_t spawn_seed = 1;   // player spawn points
  // Index of this zone in the world map (0 alone): the top bits of its entity ids.
  std::uint32_t zone_index = 0;
  // Metres beyond grid.bounds that the AOI also covers, for the ghosts of neighbouring
  // zones (the world map's ghost distance; 0 alone). Owned entities stay inside bounds.
  double ghost_margin = 0.0;
  // Handoff: rectangles beyond grid.bounds (the neighbouring zones') that players may
  // step into. Empty (alone): the edge stops everyone.
  std::vector<aoi::Bounds> open_areas;
  NpcParams npcs;
  GroupParams parties;
  GroupParams guilds;
  PrecisionParams precision;
  StaticParams statics;
  // The game's schema and entity types (configs/game/); by default the engine's rows
  // alone, with the types "player" and "npc".
  GameTypes game = default_game_types();
};

class World {
 public:
  explicit World(const WorldParams& params);

  // Places a player at a random point of the world; returns its slot. The record stays
  // at that slot until the entity is despawned and its slot reused.
  std::uint32_t spawn_player(std::string name);
  // False once the zone has used all 2^26 - 1 ids of its block (67 million spawns): the
  // caller refuses further spawns rather than reuse an id or take another zone's.
  bool can_spawn() const { return (next_id_ & kLocalIdMask) != 0; }
  // Places the configured NPCs (seeded, reproducible).
  void spawn_npcs();
  void despawn(std::uint32_t slot);

  // Ghosts: read-only copies of other zones' entities (world/ghosts.hpp keeps them).
  // Places one with the given id, which must not be in use; returns its slot.
  std::uint32_t spawn_ghost(EntityId id, EntityKind kind, std::string name,
                            const PropertyValues& properties);
  // Sets a ghost's state as its owner reported it (position within the AOI's limits).
  void set_ghost_state(std::uint32_t slot, double x, double y, double heading, double vx, double vy,
                       const PropertyValues& properties);
  std::uint32_t ghost_count() const { return ghosts_; }
  // (Which zone a ghost's reports come from is world::Ghosts': Ghosts::owner.)

  // Handoff (docs/world.md, "Handoff"). Players and wandering NPCs whose last step()
  // ended outside the zone's rectangle, in an open area: each stands still (`crossing`)
  // until one of the calls below.
  std::span<const std::uint32_t> crossings() const { return crossings_; }
  // Whether the entity at `slot` is crossing (stands still until handed over or taken
  // back), and whether it is catching up (taken over while this zone's ghost of it
  // trailed: it walks to where its old zone had it at the speed bound first).
  bool crossing(std::uint32_t slot) const {
    const Handoff* h = handoff_of(entities_[slot]);
    return h != nullptr && h->crossing;
  }
  bool catching_up(std::uint32_t slot) const {
    const Handoff* h = handoff_of(entities_[slot]);
    return h != nullptr && h->catching_up;
  }
  // Rows of the handoff table (entities crossing, catching up or barred from crossing).
  std::size_t handoff_rows() const { return handoffs_.size(); }
  // Refused or timed out: back to the nearest point of the rectangle (at most one step
  // away; an NPC turns round), and no crossing for `cooldown_ticks` ticks.
  void take_back(std::uint32_t slot, std::uint16_t cooldown_ticks);
  // Handed over: the entity becomes a ghost of the zone that took it, in place (same
  // slot and id, so nobody who sees it notices), leaving its party and guild. A player
  // stops observing; its session is the caller's to end.
  void release(std::uint32_t slot);
  // An entity another zone handed over: takes over this zone's ghost of it in place when
  // there is one (which then walks to the offered position at the speed bound, if it
  // trailed), else places it there. Players stand still and observe nothing until
  // attach_player; an NPC wanders on by this zone's rules. Returns the slot, or kNoSlot
  // when this zone owns an entity with that id already (or for an NPC, when this zone's
  // NPCs do not wander).
  struct Arrival {
    EntityId id = kNoEntity;
    EntityKind kind = EntityKind::kPlayer;
    double x = 0.0;
    double y = 0.0;
    double heading = 0.0;
    PropertyValues properties;  // its type and game properties, as its old zone had them
    std::string name;
    std::uint64_t account = 0;  // its login (Entity::account, character)
    std::uint64_t character = 0;
  };
  static constexpr std::uint32_t kNoSlot = 0xFFFFFFFFu;
  std::uint32_t adopt(const Arrival& arrival);
  // The player's client arrived: it observes from now on.
  void attach_player(std::uint32_t slot);
  // The login a player plays under (ticket mode; see Entity::account).
  void set_login(std::uint32_t slot, std::uint64_t account, std::uint64_t character) {
    entities_[slot].account = account;
    entities_[slot].character = character;
  }

  // Parties and guilds (world/groups.hpp). A player asks for the group of `key` (0
  // leaves); its entity's party or guild field follows. Despawning a player leaves both.
  GroupChange join_group(GroupKind kind, std::uint32_t slot, std::uint64_t key);
  GroupChange join_party(std::uint32_t slot, std::uint64_t key) {
    return join_group(GroupKind::kParty, slot, key);
  }
  const Groups& groups(GroupKind kind) const {
    return kind == GroupKind::kParty ? parties_ : guilds_;
  }
  const Groups& parties() const { return parties_; }
  const Groups& guilds() const { return guilds_; }
  // Links made or broken since the last clear (replication applies them each tick).
  void clear_group_links() {
    parties_.clear_links();
    guilds_.clear_links();
  }

  // Movement intent for a player: (mx, my) with length <= 1, scaled by max speed.
  // Longer vectors are shortened; non-finite ones stop the player. A frozen player's
  // intents are ignored (it stands).
  void set_intent(std::uint32_t slot, double mx, double my);

  // --- The game rules' hands (server/game). Each acts on a live entity this zone owns
  // (no ghost) of the kind it names, and otherwise changes nothing and returns false.
  // Spawns an NPC of entity type `type` (a type of kind npc) at (x, y), facing `heading`,
  // with the configured behaviour from there (a patrol's leg centred on it); kNoSlot when
  // the type is not an NPC type or the point is outside the zone or inside a static
  // object.
  std::uint32_t spawn_npc(std::uint16_t type, double x, double y, double heading);
  // The rules drive the NPC instead of its behaviour: it walks straight towards (x, y)
  // (clamped into the zone) at `speed` m/s (at most max_speed(), so that the AOI's
  // displacement bound holds), arrives exactly and stands there; an object in the way
  // stops or deflects it (no path-finding). hold_npc: it stands still. release_npc: its
  // configured behaviour takes over again from where it stands.
  bool steer_npc(std::uint32_t slot, double x, double y, double speed);
  bool hold_npc(std::uint32_t slot);
  bool release_npc(std::uint32_t slot);
  // The NPC's controller (kBehaviour for a slot that is no owned NPC).
  NpcControl npc_control(std::uint32_t slot) const;
  // A saved character's type (docs/persistence.md): a live player this zone owns takes
  // player type `type`, with that type's starting properties; false (nothing changes)
  // when `type` is no player type of the game's data.
  bool set_player_type(std::uint32_t slot, std::uint16_t type);
  // Freezes or thaws a player or an NPC (Entity::frozen): it stops at once.
  bool set_frozen(std::uint32_t slot, bool frozen);
  // Moves an entity to (x, y) at once (a respawn): false when the point is outside the
  // zone or inside a static object, or the entity is waiting for a handoff. The AOI
  // treats the jump as a teleport (exact). The entity stops (a player walks again at its
  // next intent; a steered NPC keeps its goal).
  bool teleport(std::uint32_t slot, double x, double y);
  // The fastest anything moves (m/s): the faster of players.max_speed and npcs.speed.
  double max_speed() const { return std::max(params_.player_max_speed, params_.npcs.speed); }
  // A random point of the zone outside every static object, drawn from `rng` (the
  // spawn rule).
  aoi::Vec2 free_point(util::SplitMix64& rng) const;

  // NPC behaviour and movement integration for one tick of dt seconds.
  void step(double dt);
  // Brings the AOI up to date, then each entity's precision (which depends on who is
  // near); the events are valid until the next call.
  std::span<const aoi::VisibilityEvent> update_aoi();
  // The AOI update's list rebuilds and pair tests run on these workers from the next
  // update_aoi on (aoi::GridAoi::set_parallel); its events are the same for any number.
  void set_aoi_parallel(aoi::GridAoi::ParallelFor run, std::uint32_t workers) {
    aoi_.set_parallel(std::move(run), workers);
  }
  // Precision tiers, as of the last update_aoi: NPCs engaged with a player, and entities
  // sent at the ambient precision.
  std::uint32_t engaged_npc_count() const { return engaged_npcs_; }
  std::uint32_t ambient_count() const { return ambient_; }
  std::uint64_t engagements() const { return engagements_; }  // NPCs that became engaged, ever

  const Entity& entity(std::uint32_t slot) const { return entities_[slot]; }
  // The game's properties (configs/game/): the schema, the types and, per entity, one
  // value per property (rows kEngineFieldCount.. of the schema), in slot order.
  const GameTypes& game() const { return params_.game; }
  std::span<const std::int32_t> properties(std::uint32_t slot) const {
    const std::size_t n = property_stride_;
    return {properties_.data() + static_cast<std::size_t>(slot) * n, n};
  }
  // Sets property `property` (0 = the schema's first game row) of a live entity this zone
  // owns, wrapped to the property's width as a client will read it.
  void set_property(std::uint32_t slot, std::size_t property, std::int64_t value);
  // Copies an entity's type and properties out (a ghost report, a handoff).
  PropertyValues property_values(std::uint32_t slot) const;
  // This tick's events (world/event_log.hpp): the game's rules emit them, replication
  // delivers them; the zone clears the log at the start of every tick.
  EventLog& events() { return events_; }
  const EventLog& events() const { return events_; }
  // One past the highest slot ever used (slots index per-entity arrays).
  std::uint32_t slot_count() const { return static_cast<std::uint32_t>(entities_.size()); }
  const Entity* find(EntityId id) const;
  const aoi::GridAoi& aoi() const { return aoi_; }
  std::uint32_t player_count() const { return players_; }
  std::uint32_t npc_count() const { return static_cast<std::uint32_t>(npcs_.size()); }
  const WorldParams& params() const { return params_; }
  // Radius a player observes with: the configured one, or the whole world when the AOI
  // is switched off.
  double effective_player_radius() const;
  // Every live entity's slot, in slot order (ground-truth dumps, tests).
  template <typename Fn>
  void for_each_entity(Fn&& fn) const {
    for (std::uint32_t s = 0; s < entities_.size(); ++s) {
      if (entities_[s].live()) fn(s, entities_[s]);
    }
  }

  // Run-time tuning (config reload). Returns false if the AOI refused the value.
  bool set_player_view_radius(double radius);
  // AOI off: players observe the whole world. Takes effect through the view radius.
  void set_broadcast(bool broadcast) { params_.broadcast = broadcast; }
  bool set_hysteresis(double hysteresis);
  bool set_cell_size(double cell_size);
  void set_npc_params(const NpcParams& npcs);
  void set_player_max_speed(double speed) { params_.player_max_speed = speed; }
  // The static layer: the map's objects (ascending ids from 1) and their grid. Nothing that
  // moves is ever inside one: spawns avoid them and movement slides along their rims.
  std::span<const StaticObject> statics() const;
  const aoi::StaticGrid& static_grid() const { return static_grid_; }
  // Moves of owned entities that an object shortened or stopped, ever.
  std::uint64_t collisions() const { return collisions_; }

  // Takes effect at the next update_aoi.
  void set_precision(const PrecisionParams& precision) { params_.precision = precision; }

 private:
  // The record of the slot the AOI just gave `h`, reset and filled in, its id registered.
  // Its properties are the defaults of `type`.
  Entity& occupy(aoi::EntityHandle h, EntityId id, EntityKind kind, double x, double y,
                 std::string name, std::uint16_t type);
  std::uint32_t place(EntityKind kind, std::string name, double x, double y, double heading,
                      double radius, bool observer, std::uint16_t type);
  // The type an entity of this kind has until told otherwise (a ghost or an arrival
  // before its reported type is copied).
  std::uint16_t default_type(EntityKind kind) const {
    return kind == EntityKind::kPlayer ? params_.game.player_type : params_.game.npc_type;
  }
  // Copies a type and property values reported by another zone (unknown type: ignored).
  void copy_properties(std::uint32_t slot, const PropertyValues& properties);
  void keep_inside(Entity& e, bool reflect);
  bool in_open_area(double x, double y) const;
  // Handoff state of an owned entity (docs/world.md, "Handoff"), in a table apart from
  // Entity: only a world of zones has any, and only the few entities crossing, catching
  // up or barred from crossing at the moment, so a row exists only while one of them
  // holds (Entity::in_handoff marks the entities that have one, for step()).
  struct Handoff {
    // Stepped out of the zone's rectangle into a neighbour's: stands still until the
    // zone hands it over or takes it back.
    bool crossing = false;
    // Taken over from another zone while this zone's ghost of it trailed its owner: it
    // walks to where its owner had it (catch_x, catch_y) at the speed bound first.
    bool catching_up = false;
    // After a take-back: ticks before it may cross again.
    std::uint16_t cooldown = 0;
    double catch_x = 0.0;
    double catch_y = 0.0;
    bool idle() const { return !crossing && !catching_up && cooldown == 0; }
  };
  // The entity's row, or null when it has none: the step asks for every entity, and
  // looks for a row only when the entity's flag says it has one.
  Handoff* handoff_of(const Entity& e) {
    return e.in_handoff ? find_handoff(e.aoi.index) : nullptr;
  }
  const Handoff* handoff_of(const Entity& e) const {
    return e.in_handoff ? const_cast<World*>(this)->find_handoff(e.aoi.index) : nullptr;
  }
  Handoff* find_handoff(std::uint32_t slot);
  // The entity's row, added (all clear) when it has none.
  Handoff& open_handoff(Entity& e);
  // Removes the entity's row if it holds nothing any more (or at once: drop_handoff).
  void close_handoff_if_idle(Entity& e);
  void drop_handoff(Entity& e);
  // A tick of the entity's wait before it may cross again, if it has one (`h`: its row,
  // or null).
  void count_down_cooldown(Entity& e, Handoff* h);
  // One step of an adopted entity towards where its old zone had it.
  void catch_up(Entity& e, Handoff& h, double step);
  void update_precision();
  // npcs_ and brain_of_slot_ together.
  void add_brain(const NpcBrain& brain);
  void remove_brain(std::uint32_t slot);
  NpcBrain* brain_of(std::uint32_t slot);
  // A live NPC this zone owns.
  bool owned_npc(std::uint32_t slot) const;
  // Moves e by its velocity for dt, inside the world and outside every static object;
  // true when an object shortened or stopped the move.
  bool advance(Entity& e, double dt);

  WorldParams params_;
  aoi::GridAoi aoi_;
  aoi::StaticGrid static_grid_;
  std::uint64_t collisions_ = 0;
  std::vector<Entity> entities_;  // by AOI slot; see Entity::live()
  std::size_t property_stride_ = 0;
  std::vector<std::int32_t> properties_;  // by slot, property_stride_ values each
  std::vector<NpcBrain> npcs_;
  // By slot: the index of its brain in npcs_ (kNoSlot: none), for the rules' steering.
  std::vector<std::uint32_t> brain_of_slot_;
  Groups parties_;
  Groups guilds_;
  EventLog events_;
  std::unordered_map<EntityId, std::uint32_t> slot_of_id_;
  EntityId next_id_;                      // first_entity_id(zone_index), then counting up
  std::vector<std::uint32_t> crossings_;  // the last step's
  // The handoff table: a row per owned entity with handoff state, by slot. Usually a few
  // rows; hundreds when a neighbour refuses a crowd at the border (each waits a second),
  // so a hash table, not a list to scan; its rows stay where they are while others come
  // and go (step() holds one across a move).
  std::unordered_map<std::uint32_t, Handoff> handoffs_;
  std::uint32_t players_ = 0;  // owned players (not ghosts)
  std::uint32_t ghosts_ = 0;
  std::uint32_t engaged_npcs_ = 0;
  std::uint32_t ambient_ = 0;
  std::uint64_t engagements_ = 0;
  std::vector<std::uint8_t> engaged_;    // by slot, this update's engagements (scratch)
  std::vector<aoi::EntityHandle> near_;  // query scratch
  util::SplitMix64 spawn_rng_;
  util::SplitMix64 npc_rng_;
};

}  // namespace zone::world
