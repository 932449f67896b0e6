// One character's saved state, as the store keeps it: a leaf type, free of the world's
// slots and the game's row numbers, so that a row outlives a reordered game data file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zone::persist {

struct Property {
  std::string name;  // the game data's field name ([a-z][a-z0-9_]*)
  std::int64_t value = 0;
  friend bool operator==(const Property&, const Property&) = default;
};

struct CharacterRecord {
  std::string key;   // character_key(): who the row belongs to
  std::string type;  // the entity type's name (configs/game/)
  double x = 0.0;    // metres, the zone's coordinates
  double y = 0.0;
  std::vector<Property> properties;  // the game's persistent properties, by name
  // The invitation keys of the party and guild the character was in (0: none): members
  // share them out of band, so they are what a group is found by again.
  std::uint64_t party_key = 0;
  std::uint64_t guild_key = 0;
  friend bool operator==(const CharacterRecord&, const CharacterRecord&) = default;
};

// The row key of a character: its ticket's character id in ticket mode; in open mode
// (local runs, where anyone joins under any name) the player's name.
std::string character_key(std::uint64_t character_id, std::string_view name);

// The properties as the store's text column holds them ("name=value" lines), and back
// (nullopt: the text is not in that form).
std::string encode_properties(const std::vector<Property>& properties);
std::optional<std::vector<Property>> decode_properties(std::string_view text);

}  // namespace zone::persist
