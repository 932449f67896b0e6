// protocol::check_player_name(): the rule every Hello's name must pass (issue 9, item 3).
#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "protocol/player_name.hpp"

using zone::protocol::check_player_name;
using zone::protocol::NameProblem;
using zone::protocol::valid_player_name;

namespace {

constexpr std::size_t kMax = 32;

// UTF-8 encoding of any value up to 0x1FFFFF, surrogates included (to build bad input).
std::string utf8(char32_t c) {
  std::string out;
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
  return out;
}

// `before`, the encoding of `c`, then `after`. (Built by appending: GCC 12 at -O3 reports
// a false -Wrestrict on "literal" + std::string.)
std::string around(std::string_view before, char32_t c, std::string_view after = {}) {
  std::string out(before);
  out += utf8(c);
  out += after;
  return out;
}

std::string fmt_hex(unsigned char byte) {
  constexpr char kDigits[] = "0123456789ABCDEF";
  return {'\\', 'x', kDigits[byte >> 4], kDigits[byte & 0xF]};
}

NameProblem check(const std::string& name) {
  return check_player_name(name, kMax);
}

// Well-formed UTF-8 by the Unicode standard's table of byte sequences (Table 3-7),
// written independently of the implementation.
bool well_formed(const std::string& s) {
  std::size_t i = 0;
  const auto b = [&s](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const auto in = [](unsigned char x, unsigned lo, unsigned hi) { return x >= lo && x <= hi; };
  while (i < s.size()) {
    const unsigned char c = b(i);
    const std::size_t left = s.size() - i;
    if (c <= 0x7F) {
      i += 1;
    } else if (in(c, 0xC2, 0xDF) && left >= 2 && in(b(i + 1), 0x80, 0xBF)) {
      i += 2;
    } else if (left >= 3 && in(b(i + 2), 0x80, 0xBF) &&
               ((c == 0xE0 && in(b(i + 1), 0xA0, 0xBF)) ||
                (in(c, 0xE1, 0xEC) && in(b(i + 1), 0x80, 0xBF)) ||
                (c == 0xED && in(b(i + 1), 0x80, 0x9F)) ||
                (in(c, 0xEE, 0xEF) && in(b(i + 1), 0x80, 0xBF)))) {
      i += 3;
    } else if (left >= 4 && in(b(i + 2), 0x80, 0xBF) && in(b(i + 3), 0x80, 0xBF) &&
               ((c == 0xF0 && in(b(i + 1), 0x90, 0xBF)) ||
                (in(c, 0xF1, 0xF3) && in(b(i + 1), 0x80, 0xBF)) ||
                (c == 0xF4 && in(b(i + 1), 0x80, 0x8F)))) {
      i += 4;
    } else {
      return false;
    }
  }
  return true;
}

}  // namespace

TEST_CASE("player names: ordinary names of any script are accepted") {
  for (const char* name : {"alice", "Bob the 2nd", "x", "émile-42", "Zoë", "Łukasz", "Ærøskøbing",
                           "日本語の名前", "Дмитрий", "محمد", "שלום", "ผู้เล่น", "🙂 smile",
                           "❤️ heart", "a\u00A0b" /* no-break space */, "\uE000 private"}) {
    CAPTURE(name);
    CHECK(check(name) == NameProblem::kNone);
    CHECK(valid_player_name(name, kMax));
  }
}

TEST_CASE("player names: the length limit counts bytes") {
  CHECK(check("") == NameProblem::kEmpty);
  CHECK(check(std::string(32, 'y')) == NameProblem::kNone);
  CHECK(check(std::string(33, 'y')) == NameProblem::kTooLong);
  std::string e16;
  for (int i = 0; i < 16; ++i) e16 += "é";  // 2 bytes each
  CHECK(check(e16) == NameProblem::kNone);
  CHECK(check(e16 + "é") == NameProblem::kTooLong);
  CHECK(check_player_name("abc", 3) == NameProblem::kNone);
  CHECK(check_player_name("abcd", 3) == NameProblem::kTooLong);
  CHECK(check_player_name("\xC3\xA9\xC3\xA9", 3) == NameProblem::kTooLong);
}

TEST_CASE("player names: malformed UTF-8 is refused") {
  const char* const bad[] = {
      "\x80",                      // lone continuation byte
      "abc\xBF",                   // continuation at the end
      "\xC3",                      // truncated 2-byte sequence
      "\xE2\x82",                  // truncated 3-byte sequence
      "\xF0\x9F\x99",              // truncated 4-byte sequence
      "\xC3\x28",                  // second byte not a continuation
      "\xE2\x28\xA1",              // ditto, 3 bytes
      "\xE2\x82\x28",              // third byte not a continuation
      "\xC0\xAF",                  // overlong '/'
      "\xC1\xBF",                  // overlong
      "\xE0\x80\xAF",              // overlong 3-byte
      "\xE0\x9F\xBF",              // overlong: U+07FF in 3 bytes
      "\xF0\x80\x80\xAF",          // overlong 4-byte
      "\xF0\x8F\xBF\xBF",          // overlong: U+FFFF in 4 bytes
      "\xED\xA0\x80",              // U+D800, a surrogate
      "\xED\xBF\xBF",              // U+DFFF
      "\xED\xA0\xBD\xED\xB8\x80",  // a CESU-8 surrogate pair
      "\xF4\x90\x80\x80",          // U+110000
      "\xF5\x80\x80\x80",          // lead bytes F5-FF never appear
      "\xF8\x88\x80\x80\x80",      // 5-byte form
      "\xFE",
      "\xFF",
      "ok\xC0\x80",  // "modified UTF-8" NUL
  };
  for (const char* name : bad) {
    CAPTURE(std::string(name));
    CHECK(check(name) == NameProblem::kInvalidUtf8);
  }
  // The first and last code points of each encoding length pass.
  for (const char32_t c : {0xA0u, 0x7FFu, 0x800u, 0xD7FFu, 0xE000u, 0xFFFDu, 0x10000u, 0x10FFFDu}) {
    CAPTURE(static_cast<std::uint32_t>(c));
    CHECK(check(utf8(c)) == NameProblem::kNone);
  }
}

TEST_CASE("player names: every code point decodes - exactly the surrogates never do") {
  for (char32_t c = 1; c <= 0x10FFFF; ++c) {
    const NameProblem p = check(utf8(c));
    const bool surrogate = c >= 0xD800 && c <= 0xDFFF;
    if (surrogate != (p == NameProblem::kInvalidUtf8)) {
      FAIL_CHECK("U+", static_cast<std::uint32_t>(c), " (decimal): ", zone::protocol::to_string(p));
    }
  }
}

TEST_CASE("player names: random bytes are UTF-8 exactly when the standard's table says so") {
  CHECK(zone::protocol::is_valid_utf8(""));
  CHECK(zone::protocol::is_valid_utf8("plain \xC3\xA9"));
  CHECK_FALSE(zone::protocol::is_valid_utf8("\xC3"));
  std::mt19937_64 rng(9);
  // Bytes drawn mostly from the interesting ones: lead, continuation and boundary values.
  const std::vector<unsigned char> pool = {0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF,
                                           0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xE1, 0xEC, 0xED,
                                           0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xFF};
  int agree = 0, valid = 0;
  for (int i = 0; i < 200000; ++i) {
    std::string s(1 + rng() % 8, 'a');
    for (char& ch : s) ch = static_cast<char>(rng() % 3 ? pool[rng() % pool.size()] : rng() % 256);
    const bool decoded = zone::protocol::is_valid_utf8(s);
    const NameProblem p = check_player_name(s, 64);
    // A name check stops at the first problem: a control character before a bad byte is
    // reported as such. But it never calls well-formed text malformed, nor lets
    // malformed text through.
    const bool consistent =
        well_formed(s) ? p != NameProblem::kInvalidUtf8 : p != NameProblem::kNone;
    if (decoded == well_formed(s) && consistent) {
      ++agree;
    } else {
      std::string hex;
      for (const char ch : s) hex += fmt_hex(static_cast<unsigned char>(ch));
      FAIL_CHECK("disagree on ", hex);
    }
    valid += decoded;
  }
  CHECK(agree == 200000);
  CHECK(valid > 1000);  // the draw does reach well-formed multi-byte sequences
}

TEST_CASE("player names: control characters - C0, DEL, C1 and line separators") {
  for (char32_t c = 0; c < 0x20; ++c) {
    CAPTURE(static_cast<std::uint32_t>(c));
    CHECK(check(around("a", c, "b")) == NameProblem::kControl);
  }
  CHECK(check("new\nline") == NameProblem::kControl);
  CHECK(check(std::string("nul\0byte", 8)) == NameProblem::kControl);
  for (char32_t c = 0x7F; c <= 0x9F; ++c) {
    CAPTURE(static_cast<std::uint32_t>(c));
    CHECK(check(around("a", c)) == NameProblem::kControl);
  }
  CHECK(check(utf8(0x2028)) == NameProblem::kControl);
  CHECK(check(utf8(0x2029)) == NameProblem::kControl);
  CHECK(check(utf8(0xA0)) == NameProblem::kNone);  // the first code point after C1
}

TEST_CASE("player names: bidirectional controls - overrides, embeddings, isolates, marks") {
  // The classic: "admin" followed by RIGHT-TO-LEFT OVERRIDE shows reversed text.
  CHECK(check("admin\u202Egnp.exe") == NameProblem::kBidi);
  for (const char32_t c : {0x061Cu, 0x200Eu, 0x200Fu, 0x202Au, 0x202Bu, 0x202Cu, 0x202Du, 0x202Eu,
                           0x2066u, 0x2067u, 0x2068u, 0x2069u}) {
    CAPTURE(static_cast<std::uint32_t>(c));
    CHECK(check(around("x", c, "y")) == NameProblem::kBidi);
  }
  // Right-to-left letters themselves are fine.
  CHECK(check("\u05D0\u05D1") == NameProblem::kNone);
}

TEST_CASE("player names: invisible format and filler characters") {
  const std::pair<char32_t, char32_t> ranges[] = {
      {0x00AD, 0x00AD},   {0x034F, 0x034F},   {0x115F, 0x1160},   {0x17B4, 0x17B5},
      {0x180E, 0x180E},   {0x200B, 0x200D},   {0x2060, 0x2064},   {0x206A, 0x206F},
      {0x3164, 0x3164},   {0xFEFF, 0xFEFF},   {0xFFA0, 0xFFA0},   {0xFFF9, 0xFFFB},
      {0x13430, 0x1343F}, {0x1BCA0, 0x1BCA3}, {0x1D173, 0x1D17A}, {0xE0000, 0xE007F},
  };
  for (const auto& [first, last] : ranges) {
    for (char32_t c = first; c <= last; ++c) {
      CAPTURE(static_cast<std::uint32_t>(c));
      CHECK(check(around("al", c, "ice")) == NameProblem::kInvisible);
    }
  }
  // Their neighbours are ordinary characters.
  for (const char32_t c :
       {0xACu,    0x34Eu,   0x115Eu,  0x1161u,  0x17B3u,  0x17B6u,  0x180Du, 0x180Fu, 0x200Au,
        0x205Fu,  0x2070u,  0x3163u,  0x3165u,  0xFEFEu,  0xFF9Fu,  0xFFA1u, 0xFFF8u, 0xFFFCu,
        0x1342Fu, 0x13440u, 0x1BC9Fu, 0x1BCA4u, 0x1D172u, 0x1D17Bu, 0xE0080u}) {
    CAPTURE(static_cast<std::uint32_t>(c));
    CHECK(check(utf8(c)) == NameProblem::kNone);
  }
  CHECK(check(utf8(0x3164)) == NameProblem::kInvisible);  // a "blank" name
  CHECK(check(utf8(0x2065)) == NameProblem::kNone);       // unassigned, between the ranges
}

TEST_CASE("player names: a zero width joiner joins emoji, and nothing else") {
  // Joined emoji sequences: technologist, heart on fire (VS16 before the joiner), rainbow
  // flag, a family, a skin tone before the joiner, and one in a name.
  for (const char* ok :
       {"\U0001F469\u200D\U0001F4BB", "\u2764\uFE0F\u200D\U0001F525",
        "\U0001F3F3\uFE0F\u200D\U0001F308", "\U0001F468\u200D\U0001F469\u200D\U0001F467",
        "\U0001F469\U0001F3FD\u200D\U0001F4BB", "dev \U0001F9D1\u200D\U0001F4BB",
        "\U0001F3C3\u200D\u2640\uFE0F"}) {
    CAPTURE(ok);
    CHECK(check(ok) == NameProblem::kNone);
  }
  // Anywhere else it is invisible: between letters, at either end, doubled, after a skin
  // tone alone, before a letter, or after a letter before an emoji.
  for (const char* bad :
       {"al\u200Dice", "\u200D\U0001F4BB", "\U0001F469\u200D", "\U0001F469\u200D\u200D\U0001F4BB",
        "\U0001F3FD\u200D\U0001F4BB", "\U0001F469\u200Dx", "a\u200D\U0001F4BB", "\u200D"}) {
    CAPTURE(bad);
    CHECK(check(bad) == NameProblem::kInvisible);
  }
  // The other zero width characters stay refused, emoji or not.
  CHECK(check("\U0001F469\u200C\U0001F4BB") == NameProblem::kInvisible);
  CHECK(check("\U0001F469\u200B\U0001F4BB") == NameProblem::kInvisible);
}

TEST_CASE("player names: noncharacters") {
  for (char32_t c = 0xFDD0; c <= 0xFDEF; ++c) CHECK(check(utf8(c)) == NameProblem::kNoncharacter);
  for (char32_t plane = 0; plane <= 0x10; ++plane) {
    CAPTURE(static_cast<std::uint32_t>(plane));
    CHECK(check(utf8((plane << 16) | 0xFFFE)) == NameProblem::kNoncharacter);
    CHECK(check(utf8((plane << 16) | 0xFFFF)) == NameProblem::kNoncharacter);
  }
  CHECK(check(utf8(0xFDCF)) == NameProblem::kNone);
  CHECK(check(utf8(0xFDF0)) == NameProblem::kNone);
}

TEST_CASE("player names: every problem has a description") {
  for (int p = 0; p <= static_cast<int>(NameProblem::kNoncharacter); ++p) {
    CHECK(std::string(zone::protocol::to_string(static_cast<NameProblem>(p))) != "unknown");
  }
}
