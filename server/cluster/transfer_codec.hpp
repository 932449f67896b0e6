// Handoff messages: a zone offering one of its entities to the neighbour whose rectangle
// it stepped into, the neighbour's answer, and the offering zone's cancel of an offer it
// gave up waiting for (docs/world.md, "Handoff", has the byte layout and the rules).
//
// Compact little-endian binary like the ghost messages, with its own magic byte, so
// both can share a zone's subjects without being mistaken for each other. decode()
// checks every field and never reads past the buffer.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "world/entity.hpp"
#include "world/game_types.hpp"

namespace zone::cluster {

inline constexpr std::uint8_t kTransferMagic = 0x54;  // 'T'
inline constexpr std::uint8_t kTransferVersion = 3;   // 2: game properties; 3: the login
inline constexpr std::size_t kTransferTokenBytes = 16;
using TransferToken = std::array<std::uint8_t, kTransferTokenBytes>;

enum class TransferKind : std::uint8_t { kOffer = 1, kAnswer = 2, kCancel = 3 };

// Why a zone refused an offer (kAccepted: it did not).
enum class TransferResult : std::uint8_t {
  kAccepted = 0,
  kFull = 1,         // no room for another player
  kNotMine = 2,      // the position is not in the receiver's rectangle
  kIdInUse = 3,      // the receiver owns an entity with that id already
  kUnavailable = 4,  // the receiver does not take entities of this kind (NPCs that do not
                     // wander there)
  kBadName = 5,      // the entity's name breaks the player-name rule (a Hello's)
};
const char* to_string(TransferResult r);

// The entity as the offering zone owns it: all the receiver needs to carry on with it.
struct TransferEntity {
  world::EntityId id = world::kNoEntity;
  world::EntityKind kind = world::EntityKind::kPlayer;
  double x = 0.0;
  double y = 0.0;
  double heading = 0.0;
  world::PropertyValues properties;  // its entity type and game properties
  // Invitation keys of its party and guild (0: none): group ids are a zone's own, the
  // keys are what membership means across zones.
  std::uint64_t party_key = 0;
  std::uint64_t guild_key = 0;
  // A player's login (ticket mode; 0 otherwise): the receiver honours the transfer token
  // only with a ticket of this account and character.
  std::uint64_t account = 0;
  std::uint64_t character = 0;
  std::string name;
};

struct TransferMessage {
  TransferKind kind = TransferKind::kOffer;
  std::uint32_t sender = 0;   // the sender's index in the world map
  std::uint32_t request = 0;  // the offering zone's number for this offer
  TransferEntity entity;      // kOffer: all of it; kAnswer, kCancel: only the id
  // kAnswer only.
  TransferResult result = TransferResult::kAccepted;
  TransferToken token{};  // the one-time token the player's client presents
  std::string host;       // where the player's client connects to (the receiver's game port)
  std::uint16_t port = 0;
};

enum class TransferDecodeError : std::uint8_t {
  kNone,
  kNotTransfer,  // no magic byte: not a handoff message
  kVersion,
  kTruncated,
  kBadValue,
  kTrailing,
};

void encode(const TransferMessage& message, std::vector<std::uint8_t>& out);
TransferDecodeError decode(std::span<const std::uint8_t> bytes, TransferMessage& out);

}  // namespace zone::cluster
