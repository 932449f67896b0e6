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
    {0x200B, 0x200D},    // zero width space, non-joiner, joiner
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
  for (std::size_t i = 0; i < name.size();) {
    char32_t c = 0;
    if (!decode(name, i, c)) return NameProblem::kInvalidUtf8;
    if (c < 0x20 || (c >= 0x7F && c <= 0x9F) || c == 0x2028 || c == 0x2029) {
      return NameProblem::kControl;
    }
    if (in(kBidi, c)) return NameProblem::kBidi;
    if (in(kInvisible, c)) return NameProblem::kInvisible;
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
