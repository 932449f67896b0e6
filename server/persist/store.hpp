// What the writer thread (writer.hpp) needs of a database: load a character's row, write
// a batch of rows in one transaction. Two implementations: SQLite (sqlite_store.hpp, one
// file per zone) and PostgreSQL (pg_store.hpp, one database shared by the zones of a
// world). Synchronous and single-threaded: only the writer thread holds a store, so no
// other thread ever waits on the database. One virtual call per load and per flush.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "persist/record.hpp"

namespace zone::persist {

// What a call made of the database: ok, or a one-line reason naming the database.
struct StoreStatus {
  bool ok = true;
  std::string error;
  static StoreStatus fail(std::string why) { return {false, std::move(why)}; }
};

// A claim's generation: how many times a zone has taken the row over (shared stores).
// kUnclaimed: this zone holds no claim on the row; a save of it is stale.
using Generation = std::int64_t;
inline constexpr Generation kUnclaimed = -1;

// One row of a batch. For a shared store (shared() true):
//  - `claim`: the row becomes this zone's (owner := this zone, generation + 1) whoever
//    held it, and takes `record` (a player arriving from another zone);
//  - otherwise the write happens only while the row is this zone's under `generation`
//    (0: claimed while there was no row, so it may be inserted); else it is stale;
//  - `hand_to` (not empty): the row's owner becomes that zone (a handoff out), so that
//    this zone's later writes are refused.
// A store that is not shared writes every row as it is.
struct RowWrite {
  const CharacterRecord* record = nullptr;
  bool claim = false;
  Generation generation = kUnclaimed;
  const std::string* hand_to = nullptr;  // null or empty: the owner stays this zone
};

// What became of one RowWrite in a committed batch.
struct RowOutcome {
  bool stale = false;         // refused: the row is another zone's (or a newer claim's)
  Generation generation = 0;  // the row's generation after the write
};

// A login's read of a row; for a shared store also the claim of it.
struct LoadedRow {
  std::optional<CharacterRecord> record;  // nullopt: no row (a new character)
  Generation generation = 0;              // the claim's generation (0: no row yet)
};

class Store {
 public:
  virtual ~Store() = default;
  // True when the zones of a world share the database: rows record their owner zone and
  // a generation, loads claim them and saves are conditional on the claim.
  virtual bool shared() const = 0;
  // The row of `key` (a login). A shared store claims it for this zone in the same
  // transaction. `status` says whether it worked.
  virtual LoadedRow load_row(const std::string& key, StoreStatus& status) = 0;
  // The rows of several logins at once, one per key, in order (the writer takes every
  // login waiting): a shared store claims them in one transaction, so a zone restarting
  // under thousands of players commits once per batch, not once per login. Either every
  // row is read (and claimed) or none; the default reads them one by one.
  virtual StoreStatus load_rows(std::span<const std::string> keys, std::vector<LoadedRow>& rows);
  // Writes the batch in one transaction: every row is committed (or found stale), or, on
  // failure, none. `outcomes` gets one entry per row, in order, when it worked.
  virtual StoreStatus write_rows(std::span<const RowWrite> rows,
                                 std::vector<RowOutcome>& outcomes) = 0;
  // The row format's version the database holds.
  virtual int schema_version() = 0;
  // What the logs call the database (a path, or a host and database name: no secret).
  virtual std::string describe() const = 0;

  // Tests, tools and benchmarks: the row alone (claimed, with a shared store), and a
  // batch written as this zone's own (claimed whoever held the rows).
  std::optional<CharacterRecord> load(const std::string& key, StoreStatus& status) {
    return load_row(key, status).record;
  }
  StoreStatus save(std::span<const CharacterRecord> records);
};

}  // namespace zone::persist
