#include "protocol/player_name.hpp"

#include <array>

namespace zone::protocol {
namespace {

struct Range {
  char32_t first;
  char32_t last;
};

constexpr std::array<Range, 4> kBidi = {{
    {0x061C, 0x061C},  // arabic letter mark
    {0x200E, 0x200F},  // left-to-right and right-to-left marks
    {0x202A, 0x202E},  // embeddings, pop, overrides
    {0x2066, 0x2069},  // isolates
}};

constexpr std::array<Range, 16> kInvisible = {{
    {0x00AD, 0x00AD},    // soft hyphen
    {0x034F, 0x034F},    // combining grapheme joiner
    {0x115F, 0x1160},    // hangul choseong and jungseong fillers
    {0x17B4, 0x17B5},    // khmer inherent vowels
    {0x180E, 0x180E},    // mongolian vowel separator
    {0x200B, 0x200D},    // zero width space, non-joiner, joiner (but see kZwj)
    {0x2060, 0x2064},    // word joiner, invisible operators
    {0x206A, 0x206F},    // deprecated format characters
    {0x3164, 0x3164},    // hangul filler
    {0xFEFF, 0xFEFF},    // zero width no-break space (byte order mark)
    {0xFFA0, 0xFFA0},    // halfwidth hangul filler
    {0xFFF9, 0xFFFB},    // interlinear annotation
    {0x13430, 0x1343F},  // egyptian hieroglyph format controls
    {0x1BCA0, 0x1BCA3},  // shorthand format controls
    {0x1D173, 0x1D17A},  // musical symbol format controls
    {0xE0000, 0xE007F},  // tags
}};

constexpr char32_t kZwj = 0x200D;  // zero width joiner: joins emoji into one (👩‍💻)

// Emoji a zero width joiner may join: Unicode's Extended_Pictographic, by its ranges
// (whole blocks where the property covers most of one; the skin tone modifiers
// U+1F3FB-1F3FF are not among them, they may only end an emoji before a joiner).
constexpr std::array<Range, 33> kPictographic = {{
    {0x00A9, 0x00A9},   {0x00AE, 0x00AE},   {0x203C, 0x203C},   {0x2049, 0x2049},
    {0x2122, 0x2122},   {0x2139, 0x2139},   {0x2194, 0x2199},   {0x21A9, 0x21AA},
    {0x231A, 0x231B},   {0x2328, 0x2328},   {0x2388, 0x2388},   {0x23CF, 0x23CF},
    {0x23E9, 0x23F3},   {0x23F8, 0x23FA},   {0x24C2, 0x24C2},   {0x25AA, 0x25AB},
    {0x25B6, 0x25B6},   {0x25C0, 0x25C0},   {0x25FB, 0x25FE},   {0x2600, 0x27BF},
    {0x2934, 0x2935},   {0x2B05, 0x2B07},   {0x2B1B, 0x2B1C},   {0x2B50, 0x2B50},
    {0x2B55, 0x2B55},   {0x3030, 0x3030},   {0x303D, 0x303D},   {0x3297, 0x3297},
    {0x3299, 0x3299},   {0x1F000, 0x1F1E5}, {0x1F200, 0x1F3FA}, {0x1F400, 0x1FAFF},
    {0x1FC00, 0x1FFFD},
}};

// What may come between an emoji and a joiner: a skin tone modifier, or the variation
// selector that asks for emoji presentation (U+FE0F).
bool emoji_tail(char32_t c) {
  return (c >= 0x1F3FB && c <= 0x1F3FF) || c == 0xFE0F;
}

template <std::size_t N>
bool in(const std::array<Range, N>& ranges, char32_t c) {
  for (const Range& r : ranges) {
    if (c >= r.first && c <= r.last) return true;
  }
  return false;
}

// Decodes one code point at s[i], advancing i; false on anything but well-formed UTF-8
// (RFC 3629: shortest form only, no surrogates, at most U+10FFFF).
bool decode(std::string_view s, std::size_t& i, char32_t& out) {
  const auto byte = [&s](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b0 = byte(i);
  if (b0 < 0x80) {
    out = b0;
    ++i;
    return true;
  }
  std::size_t length = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    length = 2;
    out = b0 & 0x1F;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    length = 3;
    out = b0 & 0x0F;
    if (b0 == 0xE0) lo = 0xA0;  // overlong below U+0800
    if (b0 == 0xED) hi = 0x9F;  // surrogates U+D800-DFFF
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    length = 4;
    out = b0 & 0x07;
    if (b0 == 0xF0) lo = 0x90;  // overlong below U+10000
    if (b0 == 0xF4) hi = 0x8F;  // beyond U+10FFFF
  } else {
    return false;  // a continuation byte, C0/C1 (overlong), F5-FF
  }
  if (s.size() - i < length) return false;
  for (std::size_t k = 1; k < length; ++k) {
    const unsigned char b = byte(i + k);
    if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xBF)) return false;
    out = (out << 6) | (b & 0x3F);
  }
  i += length;
  return true;
}

}  // namespace

NameProblem check_player_name(std::string_view name, std::size_t max_bytes) {
  if (name.empty()) return NameProblem::kEmpty;
  if (name.size() > max_bytes) return NameProblem::kTooLong;
  // Whether the code points so far end in an emoji (with its tail): a joiner may follow.
  bool after_emoji = false;
  for (std::size_t i = 0; i < name.size();) {
    char32_t c = 0;
    if (!decode(name, i, c)) return NameProblem::kInvalidUtf8;
    if (c < 0x20 || (c >= 0x7F && c <= 0x9F) || c == 0x2028 || c == 0x2029) {
      return NameProblem::kControl;
    }
    if (in(kBidi, c)) return NameProblem::kBidi;
    if (c == kZwj) {
      // Between two emoji it joins them (a visible sequence such as 👩‍💻); anywhere else
      // it is invisible ("al<ZWJ>ice").
      std::size_t k = i;
      char32_t next = 0;
      if (!after_emoji || k == name.size() || !decode(name, k, next) || !in(kPictographic, next)) {
        return NameProblem::kInvisible;
      }
      after_emoji = false;
      continue;
    }
    if (in(kInvisible, c)) return NameProblem::kInvisible;
    after_emoji = in(kPictographic, c) || (after_emoji && emoji_tail(c));
    if ((c >= 0xFDD0 && c <= 0xFDEF) || (c & 0xFFFE) == 0xFFFE) return NameProblem::kNoncharacter;
  }
  return NameProblem::kNone;
}

bool is_valid_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    char32_t c = 0;
    if (!decode(text, i, c)) return false;
  }
  return true;
}

const char* to_string(NameProblem problem) {
  switch (problem) {
    case NameProblem::kNone:
      return "ok";
    case NameProblem::kEmpty:
      return "empty";
    case NameProblem::kTooLong:
      return "too long";
    case NameProblem::kInvalidUtf8:
      return "not valid UTF-8";
    case NameProblem::kControl:
      return "a control character";
    case NameProblem::kBidi:
      return "a bidirectional control";
    case NameProblem::kInvisible:
      return "an invisible character";
    case NameProblem::kNoncharacter:
      return "a noncharacter";
  }
  return "unknown";
}

}  // namespace zone::protocol
