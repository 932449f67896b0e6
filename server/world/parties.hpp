// Parties: small groups of players who keep each other in view whatever the distance
// (docs/architecture.md, "Parties").
//
// A party is found by its invitation key, a 64-bit secret its members share out of band
// (a game's own invitation flow hands it out): the first player to ask for a key creates
// the party, later ones join it while it has room, and it ends with its last member. A
// stranger cannot join without the key, and nobody holds anything once they leave: the
// table never holds more parties than players.
//
// With full_range on, every membership change is also a list of links (observer, target)
// made or broken, which replication applies after the AOI's events: a member is in every
// other member's interest set while they share the party, in or out of view radius.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "world/entity.hpp"

namespace zone::world {

struct PartyParams {
  bool enabled = false;
  std::uint32_t max_size = 5;
  bool full_range = true;  // members are in each other's interest at any distance
};

enum class PartyResult : std::uint8_t { kJoined, kLeft, kFull, kDisabled };

// One direction of a party link: `observer` (a slot) gains or loses `target`.
struct PartyLink {
  std::uint32_t observer_slot;
  EntityId target;
  std::uint32_t target_slot;
  bool linked;
};

// What a join or leave did: the result for the player who asked, and the parties whose
// membership changed (their other members are to be told).
struct PartyChange {
  PartyResult result = PartyResult::kLeft;
  PartyId party = kNoParty;       // the player's party now
  PartyId left_party = kNoParty;  // the party the player left (kNoParty if none)
};

class Parties {
 public:
  struct Member {
    EntityId id;
    std::uint32_t slot;
  };

  explicit Parties(const PartyParams& params) : params_(params) {}
  const PartyParams& params() const { return params_; }
  // Only while no party exists (start-up): links made under one rule are never undone
  // under another.
  void set_params(const PartyParams& params);

  // The player (`id` at `slot`, currently in party `current`) asks for the party of
  // `key`; key 0 leaves. A player already in that party stays (kJoined, no change).
  // Entity::party is the caller's to update from the result.
  PartyChange request(EntityId id, std::uint32_t slot, PartyId current, std::uint64_t key);
  // The player leaves `current` (despawn); returns the party left (kNoParty if none).
  PartyId leave(EntityId id, PartyId current);

  // Members of a party, ascending by id (empty for an unknown party).
  std::span<const Member> members(PartyId party) const;
  std::size_t party_count() const { return parties_.size(); }
  std::size_t member_count() const { return members_; }

  // Links made or broken since the last clear_links(), in order.
  std::span<const PartyLink> links() const { return links_; }
  void clear_links() { links_.clear(); }

 private:
  struct Party {
    std::uint64_t key;
    std::vector<Member> members;  // ascending by id
  };
  void link_all(const Party& party, Member who, bool linked);

  PartyParams params_;
  std::unordered_map<std::uint64_t, PartyId> by_key_;
  std::unordered_map<PartyId, Party> parties_;
  PartyId next_id_ = 1;
  std::size_t members_ = 0;
  std::vector<PartyLink> links_;
};

}  // namespace zone::world
