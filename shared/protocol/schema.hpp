// The one schema: every replicated field of an entity, every entity type, and the
// actions and events of the game, as a table
// that every part of replication reads at run time. The server builds it at start-up
// from the engine's own rows and the game's data (configs/game/), sends it to each client
// in its Welcome, and the snapshot codec, the client's replica, the truth check and the
// codecs between zones all follow it. Adding a property is a line of game data.
//
// Rows 0 .. kEngineFieldCount - 1 are the engine's, always present, in this order (the
// engine fills them: movement, precision tiers, groups); the game's properties follow in
// the order its data declares them. A record's mask has one bit per row (64 at most).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace zone::protocol {

// How a field's value goes on the wire (docs/protocol.md, "The field table").
enum class DeltaRule : std::uint8_t {
  kDelta = 0,     // the change from the baseline, wrapped to the width, zigzag-encoded
  kAbsolute = 1,  // the value itself, as the low `bits` bits
};

// Who receives a field of an entity.
enum class Audience : std::uint8_t {
  kEveryone = 0,  // every client that holds the entity
  kOwner = 1,     // the entity's own client only (its self record)
  kParty = 2,     // the owner and the members of the owner's party
};

// When a change of the field is sent to a client that holds the entity.
enum class UpdateTier : std::uint8_t {
  kTiered = 0,     // with the entity's interest tier (a far entity's change may wait)
  kImmediate = 1,  // in the next snapshot whatever the entity's tier (health, state)
};

struct FieldSpec {
  std::string name;  // [a-z][a-z0-9_]*, at most kMaxFieldNameBytes
  DeltaRule rule = DeltaRule::kAbsolute;
  std::uint8_t bits = 32;  // 1 .. 32: width of the value; deltas wrap at this width
  bool is_signed = false;  // values are two's complement in `bits` bits
  Audience audience = Audience::kEveryone;
  UpdateTier update = UpdateTier::kTiered;
  bool persistent = false;  // saved with the character (the game's data declares it)
  std::string unit;         // what the value means, for people (sent with the schema)
  friend bool operator==(const FieldSpec&, const FieldSpec&) = default;
};

enum class EntityKind : std::uint8_t { kPlayer = 0, kNpc = 1 };

// An entity type: what a spawn names (its index in the schema's types).
struct EntityTypeSpec {
  std::string name;  // [a-z][a-z0-9_]*, at most kMaxFieldNameBytes
  EntityKind kind = EntityKind::kNpc;
  friend bool operator==(const EntityTypeSpec&, const EntityTypeSpec&) = default;
};

// An action a client may ask for (the Action message names it by its index in the
// schema's actions): what it must name as its target, and how many integer arguments it
// takes. The game's data declares them; the rules (scripts) decide what they do.
enum class ActionTarget : std::uint8_t {
  kNone = 0,      // the action names no entity (target 0)
  kEntity = 1,    // it names an entity the player holds
  kOptional = 2,  // either
};

inline constexpr std::size_t kMaxArgs = 4;  // integer arguments of an action or an event

struct ActionSpec {
  std::string name;  // [a-z][a-z0-9_]*, at most kMaxFieldNameBytes
  ActionTarget target = ActionTarget::kNone;
  std::uint8_t args = 0;  // 0 .. kMaxArgs: an Action carries at most this many
  std::string unit;       // what it does, for people (sent with the schema)
  friend bool operator==(const ActionSpec&, const ActionSpec&) = default;
};

// An event the server sends about an entity (a hit, a death, an emote, a chat line):
// its index in the schema's events is the kind an Event message carries. Row 0 is the
// engine's chat line; the game's events follow.
struct EventSpec {
  std::string name;  // [a-z][a-z0-9_]*, at most kMaxFieldNameBytes
  // Who receives an event about an entity: every client that holds the entity (and its
  // own player), its own player only, or its player and party members who hold it.
  Audience audience = Audience::kEveryone;
  std::vector<std::string> args;  // the names of its integer arguments, 0 .. kMaxArgs
  bool text = false;              // carries a text (at most kMaxEventText bytes of UTF-8)
  std::string unit;               // what it means, for people (sent with the schema)
  friend bool operator==(const EventSpec&, const EventSpec&) = default;
};

// The engine's event kinds.
enum EventKind : std::uint16_t {
  kChatEvent = 0,  // a chat line: args [channel], text; its speaker's name in Event.name
  kEngineEventCount = 1
};
// A chat line's channel (the chat event's first argument).
enum class ChatChannel : std::uint8_t {
  kSay = 0,      // the speaker's observers: every client that holds the speaker
  kParty = 1,    // the speaker's party
  kGuild = 2,    // the speaker's guild
  kWhisper = 3,  // one player, by name
  kZone = 4,     // everyone in the zone
  kSystem = 5,   // from the server (an operator's broadcast, a rule's notice)
};
inline constexpr std::uint8_t kChatChannelCount = 6;

inline constexpr std::size_t kMaxActions = 255;
inline constexpr std::size_t kMaxEvents = 255;
inline constexpr std::size_t kMaxEventText = 255;  // bytes of a chat line or event text

inline constexpr std::size_t kMaxFields = 64;
inline constexpr std::size_t kMaxEntityTypes = 255;
inline constexpr std::size_t kMaxFieldNameBytes = 32;
inline constexpr std::size_t kMaxUnitBytes = 200;

// The engine's rows.
enum Field : std::size_t {
  kX = 0,             // position_unit (a centimetre by default), world coordinates
  kY = 1,             // the same
  kHeading = 2,       // heading_unit (1/65536 turn by default), from +x
  kMoveState = 3,     // bits 0-1: 0 idle, 1 walking; bits 2-7: teleports, mod 64
  kPositionUnit = 4,  // x and y count (1 + value) centimetres
  kHeadingUnit = 5,   // heading counts 2^value / 65536 turn
  kParty = 6,         // party id, 0 none
  kGuild = 7,         // guild id, 0 none
  kEngineFieldCount = 8
};

// The move_state row: whether the entity walks (bits 0-1), and how many times it has
// teleported, mod 64 (bits 2-7). A client that sees the count change between two of its
// frames knows the entity's jump between them is a teleport (a respawn), not movement: it
// neither interpolates across it nor holds it to max_speed.
inline constexpr std::int32_t move_state(bool walking, std::uint32_t teleports) {
  return static_cast<std::int32_t>(((teleports & 63u) << 2) | (walking ? 1u : 0u));
}
inline constexpr std::uint32_t teleports_of(std::int32_t move_state) {
  return (static_cast<std::uint32_t>(move_state) >> 2) & 63u;
}
inline constexpr bool walking_of(std::int32_t move_state) {
  return (move_state & 3) == 1;
}

// A row of values, one per field (in the schema's order); quantised integers, so both
// sides agree bit for bit.
using Values = std::span<const std::int32_t>;
using MutableValues = std::span<std::int32_t>;

class Schema {
 public:
  // The engine's rows alone, and the two types every zone has ("player", "npc").
  Schema();

  // Adds a game property after the rows so far. Returns an error text (and changes
  // nothing) if the name is taken or not well-formed, the width is out of 1..32, or the
  // table is full.
  std::optional<std::string> add_field(FieldSpec field);
  // Adds an entity type; the same checks. The first player type is the one players get.
  std::optional<std::string> add_type(EntityTypeSpec type);
  // Replaces the types (the game's data names its own; at least one player type).
  std::optional<std::string> set_types(std::vector<EntityTypeSpec> types);
  // Adds an action, or an event after the engine's; the same checks (and at most
  // kMaxArgs arguments, each argument name an identifier).
  std::optional<std::string> add_action(ActionSpec action);
  std::optional<std::string> add_event(EventSpec event);

  std::size_t size() const { return fields_.size(); }
  const FieldSpec& field(std::size_t row) const { return fields_[row]; }
  std::span<const FieldSpec> fields() const { return fields_; }
  std::span<const EntityTypeSpec> types() const { return types_; }
  std::span<const ActionSpec> actions() const { return actions_; }
  std::span<const EventSpec> events() const { return events_; }
  std::optional<std::size_t> find_field(std::string_view name) const;
  std::optional<std::size_t> find_type(std::string_view name) const;
  std::optional<std::size_t> find_action(std::string_view name) const;
  std::optional<std::size_t> find_event(std::string_view name) const;

  // Bits of the rows each audience may receive about an entity that is not its own:
  // everyone's rows, and everyone's plus the party's.
  std::uint64_t public_mask() const { return public_mask_; }
  std::uint64_t party_mask() const { return party_mask_; }
  // Every row (a client's own entity).
  std::uint64_t all_mask() const { return size() >= 64 ? ~0ull : (1ull << size()) - 1; }
  std::uint64_t immediate_mask() const { return immediate_mask_; }
  // The rows' rules and widths side by side, for the record codec's loops (which touch
  // them for every record written): a bit per delta row, a byte per row's width.
  std::uint64_t delta_mask() const { return delta_mask_; }
  std::uint8_t bits(std::size_t row) const { return bits_[row]; }

  friend bool operator==(const Schema& a, const Schema& b) {
    return a.fields_ == b.fields_ && a.types_ == b.types_ && a.actions_ == b.actions_ &&
           a.events_ == b.events_;
  }

  // Well-formed identifier: [a-z][a-z0-9_]*, 1 .. kMaxFieldNameBytes bytes.
  static bool valid_name(std::string_view name);

 private:
  void recompute_masks();
  std::vector<FieldSpec> fields_;
  std::vector<EntityTypeSpec> types_;
  std::vector<ActionSpec> actions_;
  std::vector<EventSpec> events_;
  std::uint64_t public_mask_ = 0;
  std::uint64_t party_mask_ = 0;
  std::uint64_t immediate_mask_ = 0;
  std::uint64_t delta_mask_ = 0;
  std::array<std::uint8_t, kMaxFields> bits_{};
};

}  // namespace zone::protocol
