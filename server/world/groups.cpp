#include "world/groups.hpp"

#include <algorithm>

namespace zone::world {

GroupChange Groups::request(EntityId id, std::uint32_t slot, GroupId current, std::uint64_t key) {
  GroupChange change;
  change.group = current;
  if (!params_.enabled) {
    change.result = GroupResult::kDisabled;
    return change;
  }
  if (key == 0) {
    change.left_group = leave(id, current);
    change.group = kNoGroup;
    change.result = GroupResult::kLeft;
    return change;
  }
  const auto found = by_key_.find(key);
  if (found != by_key_.end() && found->second == current) {
    change.result = GroupResult::kJoined;  // already a member
    return change;
  }
  if (found != by_key_.end() && groups_.at(found->second).members.size() >= params_.max_size) {
    change.result = GroupResult::kFull;
    return change;
  }
  change.left_group = leave(id, current);
  GroupId target = found != by_key_.end() ? found->second : kNoGroup;
  if (target == kNoGroup) {
    // Ids count up and are not reused, so a client never mistakes a new group for an old
    // one; after 2^32 - 1 groups they wrap, skipping 0 and any still in use.
    do {
      target = next_id_++;
    } while (target == kNoGroup || groups_.contains(target));
    by_key_.emplace(key, target);
    groups_.emplace(target, Group{key, {}});
  }
  Group& group = groups_.at(target);
  const Member me{id, slot};
  link_all(group, me, true);
  const auto at = std::lower_bound(group.members.begin(), group.members.end(), id,
                                   [](const Member& m, EntityId k) { return m.id < k; });
  group.members.insert(at, me);
  ++members_;
  change.group = target;
  change.result = GroupResult::kJoined;
  return change;
}

GroupId Groups::leave(EntityId id, GroupId current) {
  const auto found = groups_.find(current);
  if (found == groups_.end()) return kNoGroup;
  Group& group = found->second;
  const auto at = std::find_if(group.members.begin(), group.members.end(),
                               [id](const Member& m) { return m.id == id; });
  if (at == group.members.end()) return kNoGroup;
  const Member me = *at;
  group.members.erase(at);
  --members_;
  link_all(group, me, false);
  if (group.members.empty()) {
    by_key_.erase(group.key);
    groups_.erase(found);
  }
  return current;
}

std::span<const Groups::Member> Groups::members(GroupId group) const {
  const auto found = groups_.find(group);
  if (found == groups_.end()) return {};
  return found->second.members;
}

void Groups::link_all(const Group& group, Member who, bool linked) {
  if (!params_.full_range) return;
  for (const Member& m : group.members) {
    if (m.id == who.id) continue;
    links_.push_back({who.slot, m.id, m.slot, kind_, linked});
    links_.push_back({m.slot, who.id, who.slot, kind_, linked});
  }
}

}  // namespace zone::world
