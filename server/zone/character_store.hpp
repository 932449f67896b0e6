// The zone's side of the character store (docs/persistence.md): what of a player is saved
// and how a saved row is put back, over persist::Writer. Called on the tick thread only,
// and never waits: saves and load requests are queued for the writer thread, answers are
// taken when they are there. No SQL here; the world never sees the store.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "config/zone_config.hpp"
#include "persist/writer.hpp"
#include "world/world.hpp"
#include "zone/logger.hpp"

namespace zone {

class CharacterStore {
 public:
  // Null when persist.enabled is false. Opens the file or connects to the database at
  // start-up (not on the tick); throws std::runtime_error naming it when it cannot be used
  // (not a database, a newer schema, no room for its directory, a server that refuses).
  // `conninfo`: backend postgres, the connection string main read from
  // persist.conninfo_file; empty, the file is read here.
  static std::unique_ptr<CharacterStore> open(const config::ZoneConfig& config,
                                              const world::World& world, Logger& log,
                                              std::string conninfo = {});

  // New logins are refused (StoreUnavailable) while this is true: the write queue holds
  // persist.max_queue characters. /readyz says degraded.
  bool full() const { return writer_->full(); }
  // Asks for the row of the character a login names; the answer comes through take_loads.
  void request_load(std::uint64_t request, std::uint64_t character_id, std::string_view name);
  void take_loads(std::vector<persist::LoadResult>& out) { writer_->take_loads(out); }
  // The row keys of characters another zone claimed since (shared store): their players
  // here are stale copies, whose saves are refused (persist::Writer::take_lost).
  void take_lost(std::vector<std::string>& out) { writer_->take_lost(out); }
  // Puts a loaded row onto the player just spawned at `slot`, before its Welcome: its
  // type, its position (when still inside the zone and outside every object) and its
  // persistent properties. The party and guild keys are the caller's to rejoin.
  void restore(world::World& world, std::uint32_t slot, const persist::CharacterRecord& r);
  // Queues the state of the player at `slot`. `leaving`: its last (taken even when the
  // queue is full); otherwise a checkpoint, put off while the queue is full.
  void save(const world::World& world, std::uint32_t slot, bool leaving);
  // A player that arrived from another zone: its state, which claims its row for this zone
  // (with a shared store, from whichever zone held it).
  void arrive(const world::World& world, std::uint32_t slot);
  // A player handed to zone `to`: its last state here, and (with a shared store) its row
  // becomes `to`'s, so that nothing this zone writes of it later is taken.
  void hand_over(const world::World& world, std::uint32_t slot, std::string_view to);
  // The checkpoint's share of this tick: every persist.checkpoint_seconds each player is
  // saved once, a 1/(checkpoint ticks) slice of the slots each tick.
  void checkpoint(const world::World& world, std::uint32_t tick);
  // Shutdown: waits until every queued save is committed or `deadline` passes.
  bool flush(std::chrono::steady_clock::time_point deadline) { return writer_->flush(deadline); }

  // The newest state of a character this zone queued (by its row key) and when: what a
  // GM's inspect shows as saved. Null: none queued here since it came (a leave forgets it).
  struct LastSave {
    persist::CharacterRecord record;
    std::uint64_t sequence = 0;  // the writer's (see committed)
    std::chrono::system_clock::time_point at{};
  };
  const LastSave* last_save(const std::string& key) const {
    const auto it = last_saves_.find(key);
    return it == last_saves_.end() ? nullptr : &it->second;
  }
  // Whether the store has committed the save of this sequence number.
  bool committed(std::uint64_t sequence) const { return writer_->committed_through() >= sequence; }

  persist::WriterStats stats() const { return writer_->stats(); }
  std::string last_error() const { return writer_->last_error(); }
  std::uint64_t checkpoints_put_off() const { return put_off_; }
  std::chrono::milliseconds load_timeout() const { return load_timeout_; }
  // What the logs call the store: the SQLite file, or the PostgreSQL server and database.
  const std::string& path() const { return path_; }

 private:
  CharacterStore(std::unique_ptr<persist::Writer> writer, const config::ZoneConfig& config,
                 std::string where);
  persist::CharacterRecord record_of(const world::World& world, std::uint32_t slot) const;

  std::unique_ptr<persist::Writer> writer_;
  std::string path_;
  std::uint32_t checkpoint_ticks_;
  std::chrono::milliseconds load_timeout_;
  std::uint64_t put_off_ = 0;                             // checkpoints refused by a full queue
  std::unordered_map<std::string, LastSave> last_saves_;  // by row key, online characters
};

}  // namespace zone
