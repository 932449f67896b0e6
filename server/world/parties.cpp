#include "world/parties.hpp"

#include <algorithm>
#include <stdexcept>

namespace zone::world {

void Parties::set_params(const PartyParams& params) {
  if (!parties_.empty()) throw std::logic_error("parties: parameters change only while empty");
  params_ = params;
}

PartyChange Parties::request(EntityId id, std::uint32_t slot, PartyId current, std::uint64_t key) {
  PartyChange change;
  change.party = current;
  if (!params_.enabled) {
    change.result = PartyResult::kDisabled;
    return change;
  }
  if (key == 0) {
    change.left_party = leave(id, current);
    change.party = kNoParty;
    change.result = PartyResult::kLeft;
    return change;
  }
  const auto found = by_key_.find(key);
  if (found != by_key_.end() && found->second == current) {
    change.result = PartyResult::kJoined;  // already a member
    return change;
  }
  if (found != by_key_.end() && parties_.at(found->second).members.size() >= params_.max_size) {
    change.result = PartyResult::kFull;
    return change;
  }
  change.left_party = leave(id, current);
  PartyId target = found != by_key_.end() ? found->second : kNoParty;
  if (target == kNoParty) {
    target = next_id_++;
    if (next_id_ == kNoParty) next_id_ = 1;  // 4 billion parties later: ids wrap, skipping 0
    by_key_.emplace(key, target);
    parties_.emplace(target, Party{key, {}});
  }
  Party& party = parties_.at(target);
  const Member me{id, slot};
  link_all(party, me, true);
  const auto at = std::lower_bound(party.members.begin(), party.members.end(), id,
                                   [](const Member& m, EntityId k) { return m.id < k; });
  party.members.insert(at, me);
  ++members_;
  change.party = target;
  change.result = PartyResult::kJoined;
  return change;
}

PartyId Parties::leave(EntityId id, PartyId current) {
  const auto found = parties_.find(current);
  if (found == parties_.end()) return kNoParty;
  Party& party = found->second;
  const auto at = std::find_if(party.members.begin(), party.members.end(),
                               [id](const Member& m) { return m.id == id; });
  if (at == party.members.end()) return kNoParty;
  const Member me = *at;
  party.members.erase(at);
  --members_;
  link_all(party, me, false);
  if (party.members.empty()) {
    by_key_.erase(party.key);
    parties_.erase(found);
  }
  return current;
}

std::span<const Parties::Member> Parties::members(PartyId party) const {
  const auto found = parties_.find(party);
  if (found == parties_.end()) return {};
  return found->second.members;
}

void Parties::link_all(const Party& party, Member who, bool linked) {
  if (!params_.full_range) return;
  for (const Member& m : party.members) {
    if (m.id == who.id) continue;
    links_.push_back({who.slot, m.id, m.slot, linked});
    links_.push_back({m.slot, who.id, who.slot, linked});
  }
}

}  // namespace zone::world
