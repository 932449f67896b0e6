// The character store in SQLite: one file, WAL mode, the rows of characters keyed by
// character_key(). Synchronous and single-threaded: only the writer thread (writer.hpp)
// holds one, so no other thread ever waits on the database.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>

#include "persist/record.hpp"
#include "persist/store.hpp"

struct sqlite3;
struct sqlite3_stmt;

namespace zone::persist {

// The row format this build writes (schema.cpp migrates older files forward to it).
inline constexpr int kSchemaVersion = 2;

// A zone's own file: not shared, so rows record no owner and every write is taken.
class SqliteStore final : public Store {
 public:
  // Opens (creating it and its directory when missing) the file at `path`, switches it
  // to WAL and migrates its rows to kSchemaVersion. `busy_timeout_ms`: how long a
  // statement waits for another process's lock before it fails ("database is locked").
  // Null with `error` set when the file is not a database, is newer than this build, or
  // cannot be created.
  static std::unique_ptr<SqliteStore> open(const std::string& path, int busy_timeout_ms,
                                           std::string& error);
  ~SqliteStore() override;
  SqliteStore(const SqliteStore&) = delete;
  SqliteStore& operator=(const SqliteStore&) = delete;

  bool shared() const override { return false; }
  // The character's row, nullopt when there is none (a new character); `status` says
  // whether the read worked.
  LoadedRow load_row(const std::string& key, StoreStatus& status) override;
  // Writes every row in one transaction: all of them are committed, or none.
  StoreStatus write_rows(std::span<const RowWrite> rows,
                         std::vector<RowOutcome>& outcomes) override;
  // The schema version the file holds.
  int schema_version() override;
  std::string describe() const override { return path_; }
  const std::string& path() const { return path_; }

 private:
  SqliteStore(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  StoreStatus exec(const char* sql);
  StoreStatus prepare();
  std::string why(const char* what) const;

  sqlite3* db_;
  std::string path_;
  sqlite3_stmt* select_ = nullptr;
  sqlite3_stmt* upsert_ = nullptr;

  friend StoreStatus migrate(SqliteStore& store);
  friend StoreStatus force_schema_version_for_test(SqliteStore& store, int version);
  friend StoreStatus hold_write_lock_for_test(SqliteStore& store, bool hold);
};

// Brings the file's rows up to kSchemaVersion, one version at a time, each step in its
// own transaction (schema.cpp). A file at version 0 (new) is made at version 1 first.
StoreStatus migrate(SqliteStore& store);
// Writes a new file in the format of schema version 1 holding `records` (their group
// keys are not part of it): how the tests make an old file to migrate.
StoreStatus write_version_1_file(const std::string& path, std::span<const CharacterRecord> records);

// Tests only: sets the file's recorded version (a file of a later build), and takes or
// releases the write lock as another process would.
StoreStatus force_schema_version_for_test(SqliteStore& store, int version);
StoreStatus hold_write_lock_for_test(SqliteStore& store, bool hold);

}  // namespace zone::persist
