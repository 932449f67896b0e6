// The character store in SQLite: one file, WAL mode, the rows of characters keyed by
// character_key(). Synchronous and single-threaded: only the writer thread (writer.hpp)
// holds one, so no other thread ever waits on the database.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>

#include "persist/record.hpp"

struct sqlite3;
struct sqlite3_stmt;

namespace zone::persist {

// The row format this build writes (schema.cpp migrates older files forward to it).
inline constexpr int kSchemaVersion = 2;

// What a call made of the database: ok, or a one-line reason naming the file.
struct StoreStatus {
  bool ok = true;
  std::string error;
  static StoreStatus fail(std::string why) { return {false, std::move(why)}; }
};

class SqliteStore {
 public:
  // Opens (creating it and its directory when missing) the file at `path`, switches it
  // to WAL and migrates its rows to kSchemaVersion. `busy_timeout_ms`: how long a
  // statement waits for another process's lock before it fails ("database is locked").
  // Null with `error` set when the file is not a database, is newer than this build, or
  // cannot be created.
  static std::unique_ptr<SqliteStore> open(const std::string& path, int busy_timeout_ms,
                                           std::string& error);
  ~SqliteStore();
  SqliteStore(const SqliteStore&) = delete;
  SqliteStore& operator=(const SqliteStore&) = delete;

  // The character's row, nullopt when there is none (a new character); `status` says
  // whether the read worked.
  std::optional<CharacterRecord> load(const std::string& key, StoreStatus& status);
  // Writes every record in one transaction: all of them are committed, or none.
  StoreStatus save(std::span<const CharacterRecord> records);
  // The schema version the file holds.
  int schema_version();
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
