#include "protocol/schema.hpp"

#include <algorithm>

namespace zone::protocol {
namespace {

FieldSpec engine_field(std::string name, DeltaRule rule, std::uint8_t bits, std::string unit) {
  FieldSpec f;
  f.name = std::move(name);
  f.rule = rule;
  f.bits = bits;
  f.unit = std::move(unit);
  return f;
}

}  // namespace

Schema::Schema() {
  using enum DeltaRule;
  fields_ = {
      engine_field("x", kDelta, 32, "position_unit (centimetre by default), world coordinates"),
      engine_field("y", kDelta, 32, "position_unit (centimetre by default), world coordinates"),
      engine_field("heading", kDelta, 16, "heading_unit (1/65536 turn by default), from +x"),
      engine_field("move_state", kAbsolute, 8,
                   "bits 0-1: 0 idle, 1 walking; bits 2-7: teleports so far, mod 64"),
      engine_field("position_unit", kAbsolute, 8, "x and y count (1 + value) centimetres"),
      engine_field("heading_unit", kAbsolute, 8, "heading counts 2^value / 65536 turn"),
      engine_field("party", kAbsolute, 32, "party id, 0 none (PartyStatus.party)"),
      engine_field("guild", kAbsolute, 32, "guild id, 0 none (GuildStatus.guild)"),
  };
  types_ = {{"player", EntityKind::kPlayer}, {"npc", EntityKind::kNpc}};
  events_ = {{"chat",
              Audience::kEveryone,
              {"channel"},
              true,
              "a chat line: channel 0 say, 1 party, 2 guild, 3 whisper, 4 zone, 5 system"}};
  recompute_masks();
}

bool Schema::valid_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxFieldNameBytes) return false;
  if (name[0] < 'a' || name[0] > 'z') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

std::optional<std::size_t> Schema::find_field(std::string_view name) const {
  for (std::size_t i = 0; i < fields_.size(); ++i) {
    if (fields_[i].name == name) return i;
  }
  return std::nullopt;
}

std::optional<std::size_t> Schema::find_type(std::string_view name) const {
  for (std::size_t i = 0; i < types_.size(); ++i) {
    if (types_[i].name == name) return i;
  }
  return std::nullopt;
}

std::optional<std::size_t> Schema::find_action(std::string_view name) const {
  for (std::size_t i = 0; i < actions_.size(); ++i) {
    if (actions_[i].name == name) return i;
  }
  return std::nullopt;
}

std::optional<std::size_t> Schema::find_event(std::string_view name) const {
  for (std::size_t i = 0; i < events_.size(); ++i) {
    if (events_[i].name == name) return i;
  }
  return std::nullopt;
}

std::optional<std::string> Schema::add_action(ActionSpec action) {
  if (!valid_name(action.name)) {
    return "action name '" + action.name +
           "' is not an identifier ([a-z][a-z0-9_]*, at most 32 bytes)";
  }
  if (find_action(action.name)) return "action '" + action.name + "' is declared twice";
  if (actions_.size() >= kMaxActions) {
    return "too many actions (at most " + std::to_string(kMaxActions) + ")";
  }
  if (action.args > kMaxArgs) {
    return "action '" + action.name + "': at most " + std::to_string(kMaxArgs) + " arguments";
  }
  if (action.target > ActionTarget::kOptional) {
    return "action '" + action.name + "': unknown target rule";
  }
  if (action.unit.size() > kMaxUnitBytes) {
    return "action '" + action.name + "': its description is longer than " +
           std::to_string(kMaxUnitBytes) + " bytes";
  }
  actions_.push_back(std::move(action));
  return std::nullopt;
}

std::optional<std::string> Schema::add_event(EventSpec event) {
  if (!valid_name(event.name)) {
    return "event name '" + event.name +
           "' is not an identifier ([a-z][a-z0-9_]*, at most 32 bytes)";
  }
  if (const auto kind = find_event(event.name)) {
    if (*kind < kEngineEventCount) {
      return "'" + event.name +
             "' is one of the engine's events (chat): an event needs another name";
    }
    return "event '" + event.name + "' is declared twice";
  }
  if (events_.size() >= kMaxEvents) {
    return "too many events (at most " + std::to_string(kMaxEvents) + ")";
  }
  if (event.args.size() > kMaxArgs) {
    return "event '" + event.name + "': at most " + std::to_string(kMaxArgs) + " arguments";
  }
  for (const std::string& arg : event.args) {
    if (!valid_name(arg)) {
      return "event '" + event.name + "': argument name '" + arg +
             "' is not an identifier ([a-z][a-z0-9_]*, at most 32 bytes)";
    }
  }
  if (event.audience > Audience::kParty) return "event '" + event.name + "': unknown audience";
  if (event.unit.size() > kMaxUnitBytes) {
    return "event '" + event.name + "': its description is longer than " +
           std::to_string(kMaxUnitBytes) + " bytes";
  }
  events_.push_back(std::move(event));
  return std::nullopt;
}

std::optional<std::string> Schema::add_field(FieldSpec field) {
  if (!valid_name(field.name)) {
    return "property name '" + field.name +
           "' is not an identifier ([a-z][a-z0-9_]*, at most 32 bytes)";
  }
  if (const auto row = find_field(field.name)) {
    if (*row < kEngineFieldCount) {
      return "'" + field.name +
             "' is one of the engine's rows (x, y, heading, move_state, position_unit, "
             "heading_unit, party, guild): a property needs another name";
    }
    return "property '" + field.name + "' is declared twice";
  }
  if (fields_.size() >= kMaxFields) {
    return "too many properties: an entity has at most " + std::to_string(kMaxFields) +
           " fields, " + std::to_string(kEngineFieldCount) + " of them the engine's";
  }
  if (field.bits < 1 || field.bits > 32) {
    return "property '" + field.name + "': width " + std::to_string(field.bits) +
           " is not in 1..32";
  }
  if (field.unit.size() > kMaxUnitBytes) {
    return "property '" + field.name + "': its description is longer than " +
           std::to_string(kMaxUnitBytes) + " bytes";
  }
  fields_.push_back(std::move(field));
  recompute_masks();
  return std::nullopt;
}

std::optional<std::string> Schema::add_type(EntityTypeSpec type) {
  if (!valid_name(type.name)) {
    return "entity type name '" + type.name +
           "' is not an identifier ([a-z][a-z0-9_]*, at most 32 bytes)";
  }
  if (find_type(type.name)) return "entity type '" + type.name + "' is declared twice";
  if (types_.size() >= kMaxEntityTypes) {
    return "too many entity types (at most " + std::to_string(kMaxEntityTypes) + ")";
  }
  types_.push_back(std::move(type));
  return std::nullopt;
}

std::optional<std::string> Schema::set_types(std::vector<EntityTypeSpec> types) {
  const std::vector<EntityTypeSpec> old = std::move(types_);
  types_.clear();
  for (EntityTypeSpec& t : types) {
    if (auto error = add_type(std::move(t))) {
      types_ = old;
      return error;
    }
  }
  const bool has_player = std::any_of(types_.begin(), types_.end(), [](const EntityTypeSpec& t) {
    return t.kind == EntityKind::kPlayer;
  });
  if (!has_player) {
    types_ = old;
    return std::string("no entity type of kind player: players need one");
  }
  return std::nullopt;
}

void Schema::recompute_masks() {
  public_mask_ = party_mask_ = immediate_mask_ = delta_mask_ = 0;
  for (std::size_t i = 0; i < fields_.size(); ++i) {
    const std::uint64_t bit = 1ull << i;
    bits_[i] = fields_[i].bits;
    if (fields_[i].rule == DeltaRule::kDelta) delta_mask_ |= bit;
    if (fields_[i].audience == Audience::kEveryone) public_mask_ |= bit;
    if (fields_[i].audience != Audience::kOwner) party_mask_ |= bit;
    if (fields_[i].update == UpdateTier::kImmediate) immediate_mask_ |= bit;
  }
}

}  // namespace zone::protocol
