// Sessions and the character store (docs/persistence.md): a login waits off the tick for
// its character's row, then plays on with the saved state; a store that cannot keep up
// refuses logins (StoreUnavailable) instead of stalling the zone.
#include <algorithm>

#include "zone/sessions.hpp"

namespace zone {

using protocol::DisconnectReason;
using Clock = std::chrono::steady_clock;

void Sessions::begin_load(Session& s, std::string_view name, std::span<net::SendBatch> out) {
  // A full write queue means the database is behind or down: a login now could neither
  // be loaded in time nor be saved soon. Refused, counted by reason, before any work.
  if (store_->full()) {
    log_.warn("refused peer {}.{}: the character store's write queue is full", s.peer.host,
              s.peer.index);
    return kick(s, DisconnectReason::StoreUnavailable, out);
  }
  s.phase = Session::Phase::kLoading;
  s.name = std::string(name);
  s.load_request = ++next_load_;
  s.load_started = Clock::now();
  loading_[s.load_request] = s.peer;
  store_->request_load(s.load_request, s.character_id, s.name);
}

void Sessions::finish_loads(std::uint32_t tick, std::span<net::SendBatch> out) {
  if (store_ == nullptr) return;
  // Before the loads: a login answered in this batch claimed its row after any loss the
  // writer reported, and the writer drops such a report.
  drop_lost_characters(out);
  load_answers_.clear();
  store_->take_loads(load_answers_);
  for (const persist::LoadResult& r : load_answers_) {
    const auto it = loading_.find(r.request);
    if (it == loading_.end()) continue;  // its session ended meanwhile
    Session* s = find(it->second);
    loading_.erase(it);
    if (s == nullptr || s->phase != Session::Phase::kLoading || s->load_request != r.request) {
      continue;
    }
    if (r.status == persist::LoadResult::Status::kFailed) {
      log_.warn("refused player '{}': its character could not be loaded: {}", s->name, r.error);
      kick(*s, DisconnectReason::StoreUnavailable, out);
      continue;
    }
    // The same character may have logged in twice while its row was on its way: the
    // newer login takes the first one's entity over, as it would have without a store.
    if (s->character_id != 0 && take_over(*s, tick, out)) continue;
    const bool found = r.status == persist::LoadResult::Status::kFound;
    if (found) ++counters_.logins_loaded;
    const std::string name = s->name;
    join_new(*s, name, tick, out, found ? &r.record : nullptr);
  }
}

void Sessions::drop_lost_characters(std::span<net::SendBatch> out) {
  lost_characters_.clear();
  store_->take_lost(lost_characters_);
  if (lost_characters_.empty()) return;  // the usual case: no scan
  for (auto& host : table_) {
    for (Session& s : host) {
      if (s.phase != Session::Phase::kPlaying) continue;
      const std::string key = persist::character_key(s.character_id, s.name);
      if (std::find(lost_characters_.begin(), lost_characters_.end(), key) ==
          lost_characters_.end()) {
        continue;
      }
      // The character logged in to another zone since (its claim there made this zone's
      // checkpoint stale): this copy's play would never be saved. The newest login wins,
      // as within one zone.
      log_.warn("player '{}' disconnected: its character was claimed by another zone", s.name);
      s.character_lost = true;
      kick(s, DisconnectReason::LoggedInElsewhere, out);
    }
  }
  // A held player's client would come back to a copy whose play is never saved.
  for (std::size_t i = 0; i < held_.size();) {
    const Hold& h = held_[i];
    const std::string key = persist::character_key(world_.entity(h.slot).character, h.name);
    if (std::find(lost_characters_.begin(), lost_characters_.end(), key) ==
        lost_characters_.end()) {
      ++i;
      continue;
    }
    log_.warn("held player '{}' left: its character was claimed by another zone", h.name);
    release_hold(h.slot, /*save=*/false);
  }
}

void Sessions::expire_loads(Clock::time_point now, std::span<net::SendBatch> out) {
  if (store_ == nullptr || loading_.empty()) return;
  const auto limit = store_->load_timeout();
  for (auto& host : table_) {
    for (Session& s : host) {
      if (s.phase != Session::Phase::kLoading || now - s.load_started <= limit) continue;
      log_.warn("refused player '{}': its character's row did not come back within {} ms", s.name,
                limit.count());
      loading_.erase(s.load_request);
      kick(s, DisconnectReason::StoreUnavailable, out);
    }
  }
}

}  // namespace zone
