// What a player name may be: the rule the server applies to every Hello before the name
// is logged, stored, shown on the admin map or relayed to other clients.
//
// A name is at most `max_bytes` bytes (players.max_name_length) of well-formed UTF-8:
// no invalid or truncated sequences, no overlong encodings, no surrogates (U+D800-DFFF),
// nothing above U+10FFFF. It may not contain:
//   - control characters: C0 (U+0000-001F), DEL (U+007F), C1 (U+0080-009F), and the line
//     and paragraph separators U+2028/U+2029;
//   - bidirectional controls, which reorder how the text around them is displayed
//     (a name could show as someone else's, or flip a chat line): U+061C, U+200E/200F,
//     U+202A-202E (embeddings and overrides), U+2066-2069 (isolates);
//   - invisible format and filler characters, which make look-alike names
//     ("alice" and "al<ZWSP>ice") or blank names: U+00AD, U+034F, U+115F/1160, U+17B4/17B5,
//     U+180E, U+200B-200D, U+2060-2064, U+206A-206F, U+3164, U+FEFF, U+FFA0, U+FFF9-FFFB,
//     U+13430-1343F, U+1BCA0-1BCA3, U+1D173-1D17A, U+E0000-E007F (tags);
//   - noncharacters (U+FDD0-FDEF and the last two code points of every plane).
// Everything else is allowed: letters of any script, digits, punctuation, spaces, emoji.
// The zero width joiner U+200D is allowed only where it joins two emoji into one
// sequence: after an emoji (Unicode's Extended_Pictographic, optionally followed by skin
// tone modifiers U+1F3FB-1F3FF or U+FE0F) and before another (👩‍💻, ❤️‍🔥,
// 🏳️‍🌈). Anywhere else it is invisible and refused.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace zone::protocol {

enum class NameProblem : std::uint8_t {
  kNone,
  kEmpty,
  kTooLong,       // more than max_bytes bytes
  kInvalidUtf8,   // malformed, truncated, overlong, a surrogate or beyond U+10FFFF
  kControl,       // C0, DEL, C1, U+2028/2029
  kBidi,          // a bidirectional control
  kInvisible,     // an invisible format or filler character
  kNoncharacter,  // U+FDD0-FDEF, U+xxFFFE/xxFFFF
};

// The first problem found (kNone for an acceptable name).
NameProblem check_player_name(std::string_view name, std::size_t max_bytes);
inline bool valid_player_name(std::string_view name, std::size_t max_bytes) {
  return check_player_name(name, max_bytes) == NameProblem::kNone;
}
const char* to_string(NameProblem problem);

// Whether `text` is well-formed UTF-8 (the decoding rule check_player_name() applies).
bool is_valid_utf8(std::string_view text);

}  // namespace zone::protocol
