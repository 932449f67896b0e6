// A login ticket's byte layout (docs/protocol.md, "Tickets", is the contract): what a
// login service signs and a zone reads. This file knows bytes only; keys.hpp, issue.hpp
// and verifier.hpp add the signature.
//
//   offset  size  field
//   0       1     format version (kTicketVersion)
//   1       8     account id (u64, not 0)
//   9       8     character id (u64, not 0)
//   17      8     issued at (u64, Unix seconds)
//   25      8     expires at (u64, Unix seconds; the ticket is refused from then on)
//   33      1     name length N (1..255)
//   34      N     display name (UTF-8; the zone applies its player-name rule)
//   34+N    1     world length W (1..64)
//   35+N    W     world name
//   35+N+W  64    Ed25519 signature of bytes [0, 35+N+W)
//
// Integers are little-endian. Nothing may follow the signature.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace zone::auth {

inline constexpr std::uint8_t kTicketVersion = 1;
inline constexpr std::size_t kSignatureBytes = 64;
inline constexpr std::size_t kMaxTicketNameBytes = 255;
inline constexpr std::size_t kMaxTicketWorldBytes = 64;
// version + ids + times + the two length bytes.
inline constexpr std::size_t kTicketFixedBytes = 1 + 8 + 8 + 8 + 8 + 1 + 1;
inline constexpr std::size_t kMinTicketBytes = kTicketFixedBytes + 1 + 1 + kSignatureBytes;
inline constexpr std::size_t kMaxTicketBytes =
    kTicketFixedBytes + kMaxTicketNameBytes + kMaxTicketWorldBytes + kSignatureBytes;

// What a ticket says about its holder.
struct TicketClaims {
  std::uint64_t account_id = 0;
  std::uint64_t character_id = 0;
  std::uint64_t issued_at = 0;   // Unix seconds
  std::uint64_t expires_at = 0;  // Unix seconds
  std::string name;              // the character's display name
  std::string world;             // the world the ticket is for (auth.world of its zones)
};

// Why a ticket's claims cannot be written (issuing) or its bytes not read.
enum class LayoutError : std::uint8_t {
  kNone,
  kZeroId,          // account or character id 0
  kNameLength,      // name empty or longer than 255 bytes
  kWorldLength,     // world empty or longer than 64 bytes
  kTruncated,       // fewer bytes than the layout needs
  kTrailing,        // bytes after the signature
  kUnknownVersion,  // a format version this code does not read
};
const char* to_string(LayoutError e);

// The signed part of a ticket (everything but the signature), appended to `out`.
LayoutError encode_claims(const TicketClaims& claims, std::vector<std::uint8_t>& out);

// A ticket's bytes split into its claims, the bytes the signature covers and the
// signature. Spans point into the bytes given to read_ticket.
struct TicketLayout {
  TicketClaims claims;
  std::span<const std::uint8_t> signed_bytes;
  std::span<const std::uint8_t> signature;
};
LayoutError read_ticket(std::span<const std::uint8_t> bytes, TicketLayout& out);

}  // namespace zone::auth
