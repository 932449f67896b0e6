// The row format's versions and the steps between them. A file records its version in
// the schema_version table; opening it runs every step from there to kSchemaVersion, each
// in a transaction of its own, so a crash mid-migration leaves a file at one version.
#include <sqlite3.h>

#include <string>

#include "persist/sqlite_store.hpp"

namespace zone::persist {

namespace {

// Version 1: position, type and properties.
constexpr const char* kVersion1 =
    "CREATE TABLE schema_version (version INTEGER NOT NULL);"
    "INSERT INTO schema_version (version) VALUES (1);"
    "CREATE TABLE characters ("
    "  key TEXT PRIMARY KEY NOT NULL,"
    "  type TEXT NOT NULL,"
    "  x REAL NOT NULL,"
    "  y REAL NOT NULL,"
    "  properties TEXT NOT NULL"
    ");";

// Version 2: the party and guild invitation keys, and when the row was last written
// (for operators: how old a character's state is). Rows of version 1 get no groups.
constexpr const char* kVersion1To2 =
    "ALTER TABLE characters ADD COLUMN party_key INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE characters ADD COLUMN guild_key INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE characters ADD COLUMN saved_at_ms INTEGER NOT NULL DEFAULT 0;"
    "UPDATE schema_version SET version = 2;";

bool has_version_table(sqlite3* db) {
  sqlite3_stmt* st = nullptr;
  bool found = false;
  if (sqlite3_prepare_v2(db,
                         "SELECT 1 FROM sqlite_master WHERE type = 'table' AND "
                         "name = 'schema_version'",
                         -1, &st, nullptr) == SQLITE_OK) {
    found = sqlite3_step(st) == SQLITE_ROW;
  }
  sqlite3_finalize(st);
  return found;
}

}  // namespace

StoreStatus write_version_1_file(const std::string& path,
                                 std::span<const CharacterRecord> records) {
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) {
    sqlite3_close(db);
    return StoreStatus::fail(path + ": cannot open");
  }
  std::string sql = std::string("BEGIN;") + kVersion1;
  for (const CharacterRecord& r : records) {
    char* row =
        sqlite3_mprintf("INSERT INTO characters VALUES (%Q, %Q, %.17g, %.17g, %Q);", r.key.c_str(),
                        r.type.c_str(), r.x, r.y, encode_properties(r.properties).c_str());
    sql += row;
    sqlite3_free(row);
  }
  sql += "COMMIT;";
  char* message = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message);
  StoreStatus status;
  if (rc != SQLITE_OK) status = StoreStatus::fail(path + ": " + (message ? message : "error"));
  sqlite3_free(message);
  sqlite3_close(db);
  return status;
}

StoreStatus migrate(SqliteStore& store) {
  int version = has_version_table(store.db_) ? store.schema_version() : 0;
  if (version > kSchemaVersion) {
    return StoreStatus::fail(store.path() + ": schema version " + std::to_string(version) +
                             " is newer than this server's (" + std::to_string(kSchemaVersion) +
                             "); run a newer zone-server");
  }
  if (version == 0) {
    if (StoreStatus s = store.exec("BEGIN IMMEDIATE"); !s.ok) return s;
    if (StoreStatus s = store.exec(kVersion1); !s.ok) {
      store.exec("ROLLBACK");
      return s;
    }
    if (StoreStatus s = store.exec("COMMIT"); !s.ok) return s;
    version = 1;
  }
  const char* steps[] = {kVersion1To2};  // steps[v - 1] takes version v to v + 1
  for (; version < kSchemaVersion; ++version) {
    if (StoreStatus s = store.exec("BEGIN IMMEDIATE"); !s.ok) return s;
    if (StoreStatus s = store.exec(steps[version - 1]); !s.ok) {
      store.exec("ROLLBACK");
      return StoreStatus::fail(s.error + " (migrating from schema version " +
                               std::to_string(version) + ")");
    }
    if (StoreStatus s = store.exec("COMMIT"); !s.ok) return s;
  }
  return {};
}

StoreStatus force_schema_version_for_test(SqliteStore& store, int version) {
  return store.exec(("UPDATE schema_version SET version = " + std::to_string(version)).c_str());
}

StoreStatus hold_write_lock_for_test(SqliteStore& store, bool hold) {
  return store.exec(hold ? "BEGIN IMMEDIATE" : "COMMIT");
}

}  // namespace zone::persist
