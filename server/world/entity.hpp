// What the world knows about one entity. Stored densely, indexed by the entity's AOI
// slot, so an AOI event leads to its entity without a lookup.
#pragma once

#include <cstdint>
#include <string>

#include "aoi/grid_aoi.hpp"

namespace zone::world {

// Unique across a world of zones and never reused while the process runs, so a client
// can never confuse a new entity with an old one that had the same id, nor one zone's
// entity with another's (docs/world.md, "Entity ids").
using EntityId = std::uint32_t;
inline constexpr EntityId kNoEntity = 0;

// The top kZoneIdBits of an id hold the index (in the world map) of the zone that created
// the entity, the rest a per-zone counter from 1. A zone on its own is index 0: its ids
// are 1, 2, 3... as before. Ids stay compact on the wire: within one zone's block they
// are small gaps apart, and a frame pays a few bytes more only where one zone's block
// ends and the next begins (spawns carry varint id gaps, docs/protocol.md).
inline constexpr unsigned kZoneIdBits = 6;  // 64 zones (config::kMaxWorldZones)
inline constexpr unsigned kLocalIdBits = 32 - kZoneIdBits;
inline constexpr EntityId kLocalIdMask = (EntityId{1} << kLocalIdBits) - 1;
constexpr EntityId first_entity_id(std::uint32_t zone_index) {
  return (zone_index << kLocalIdBits) | 1;
}
constexpr std::uint32_t zone_of(EntityId id) {
  return id >> kLocalIdBits;
}

// Positions the world takes: the AOI grid's bound. Decoders of other zones' messages
// refuse coordinates beyond it, so a position the world would refuse never reaches it.
inline constexpr double kMaxCoordinate = aoi::GridAoi::kMaxCoordinate;

enum class EntityKind : std::uint8_t { kPlayer = 0, kNpc = 1 };
enum class GroupKind : std::uint8_t { kParty = 0, kGuild = 1 };

// A party's or a guild's id (world/groups.hpp); 0 is none. Replicated as the entity's
// party and guild fields.
using GroupId = std::uint32_t;
inline constexpr GroupId kNoGroup = 0;

// How precisely an entity's movement is replicated (precision tiers, docs/architecture.md
// "Precision tiers"): centimetres per unit of x and y, and the heading in units of
// 2^heading_shift / 65536 turn. The defaults are the finest the protocol has.
struct Precision {
  std::uint16_t position_cm = 1;   // 1..256
  std::uint8_t heading_shift = 0;  // 0..8
  friend bool operator==(const Precision&, const Precision&) = default;
};

struct Entity {
  EntityId id = kNoEntity;
  EntityKind kind = EntityKind::kNpc;
  // The flags World::step reads of every entity every tick to decide whether and how it
  // moves (live(), ghost, in_handoff): in the bytes between kind and aoi, which were
  // padding, so they cost the record nothing, on the cache line of the position and
  // velocity the step moves. Of the state only a world of zones has, just the two
  // one-byte flags stay here, because the step asks them of every entity; the rest lives
  // with the code whose job it is: which zone a ghost follows in world::Ghosts' table of
  // each neighbour's ghosts (Ghosts::owner), handoff's state in World's handoff table (a
  // few rows, by slot; World::crossing, World::catching_up).
  //
  // A read-only copy of an entity another zone owns (docs/world.md, "Ghosts"): placed
  // and moved only by world::Ghosts from that zone's reports, never by step().
  bool ghost = false;
  // The entity has a row in World's handoff table (docs/world.md, "Handoff"): crossing,
  // catching up with where its old zone had it, or barred from crossing for a while. The
  // step looks the row up only for an entity that has one; a lone zone's never do.
  bool in_handoff = false;
  // Set by World::despawn. The record stays readable until its slot is reused, so the
  // AOI leave events of the despawn tick can still name the entity.
  bool despawned = false;
  aoi::EntityHandle aoi;
  double x = 0.0;
  double y = 0.0;
  double heading = 0.0;  // radians, direction of travel
  double vx = 0.0;       // m/s, this tick's velocity
  double vy = 0.0;
  std::uint16_t type = 0;  // index into the game's entity types (World::game())
  // Teleports so far (World::teleport): replicated in move_state, so a client tells a
  // teleport from movement (protocol::move_state).
  std::uint32_t teleports = 0;
  std::string name;
  // A player's login in ticket mode (the ticket's account and character; 0 otherwise). It
  // travels with the entity to other zones: a transfer token is honoured only for the
  // account and character it was issued to (docs/protocol.md, "Tickets").
  std::uint64_t account = 0;
  std::uint64_t character = 0;
  GroupId party = kNoGroup;
  GroupId guild = kNoGroup;
  // Set by World::update_aoi each tick: the precision tier, and for an NPC whether a
  // player stands within the engage radius ("in combat": sent as precisely as players).
  Precision precision;
  bool engaged = false;
  GroupId& group(GroupKind which) { return which == GroupKind::kParty ? party : guild; }
  GroupId group(GroupKind which) const { return which == GroupKind::kParty ? party : guild; }
  // The game's rules hold it still (a dead player): a player's intents are ignored and an
  // NPC neither thinks nor moves until they let go (World::set_frozen).
  bool frozen = false;
  bool live() const { return id != kNoEntity && !despawned; }
  bool moving() const { return vx != 0.0 || vy != 0.0; }
};

}  // namespace zone::world
