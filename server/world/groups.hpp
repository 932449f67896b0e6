// Groups: parties and guilds, players who keep each other in view whatever the distance
// ("teammates and guild members are synced at full range"; docs/architecture.md,
// "Parties and guilds"). One Groups table per kind; a player is in at most one group of
// each kind.
//
// A group is found by its invitation key, a 64-bit secret its members share out of band
// (a game's own invitation flow hands it out): the first player to ask for a key creates
// the group, later ones join it while it has room, and it ends with its last member. A
// stranger cannot join without the key, and nobody holds anything once they leave: a
// table never holds more groups than players.
//
// With full_range on, every membership change is also a list of links (observer, target)
// made or broken, which replication applies after the AOI's events: a member is in every
// other member's interest set while they share the group, in or out of view radius.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "world/entity.hpp"

namespace zone::world {

struct GroupParams {
  bool enabled = false;
  std::uint32_t max_size = 5;
  bool full_range = true;  // members are in each other's interest at any distance
};

enum class GroupResult : std::uint8_t { kJoined, kLeft, kFull, kDisabled };

// One direction of a group link: `observer` (a slot) gains or loses `target`.
struct GroupLink {
  std::uint32_t observer_slot;
  EntityId target;
  std::uint32_t target_slot;
  GroupKind kind;
  bool linked;
};

// What a join or leave did: the result for the player who asked, and the groups whose
// membership changed (their other members are to be told).
struct GroupChange {
  GroupResult result = GroupResult::kLeft;
  GroupId group = kNoGroup;       // the player's group now
  GroupId left_group = kNoGroup;  // the group the player left (kNoGroup if none)
};

class Groups {
 public:
  struct Member {
    EntityId id;
    std::uint32_t slot;
  };

  Groups(GroupKind kind, const GroupParams& params) : kind_(kind), params_(params) {}
  const GroupParams& params() const { return params_; }

  // The player (`id` at `slot`, currently in group `current`) asks for the group of
  // `key`; key 0 leaves. A player already in that group stays (kJoined, no change).
  // The entity's group field is the caller's to update from the result.
  GroupChange request(EntityId id, std::uint32_t slot, GroupId current, std::uint64_t key);
  // The player leaves `current` (despawn); returns the group left (kNoGroup if none).
  GroupId leave(EntityId id, GroupId current);

  // Members of a group, ascending by id (empty for an unknown group).
  std::span<const Member> members(GroupId group) const;
  // The invitation key of a group (0 for kNoGroup or an unknown group): what a handoff
  // carries to the next zone, where group ids are that zone's own.
  std::uint64_t key_of(GroupId group) const {
    const auto it = groups_.find(group);
    return it == groups_.end() ? 0 : it->second.key;
  }
  // The group of an invitation key here (kNoGroup: none): a guild line from another zone
  // names its guild by key.
  GroupId group_of_key(std::uint64_t key) const {
    const auto it = by_key_.find(key);
    return it == by_key_.end() ? kNoGroup : it->second;
  }
  std::size_t group_count() const { return groups_.size(); }
  std::size_t member_count() const { return members_; }

  // Links made or broken since the last clear_links(), in order.
  std::span<const GroupLink> links() const { return links_; }
  void clear_links() { links_.clear(); }

 private:
  struct Group {
    std::uint64_t key;
    std::vector<Member> members;  // ascending by id
  };
  void link_all(const Group& group, Member who, bool linked);

  GroupKind kind_;
  GroupParams params_;
  std::unordered_map<std::uint64_t, GroupId> by_key_;
  std::unordered_map<GroupId, Group> groups_;
  GroupId next_id_ = 1;
  std::size_t members_ = 0;
  std::vector<GroupLink> links_;
};

}  // namespace zone::world
