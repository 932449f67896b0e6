#include "persist/sqlite_store.hpp"

#include <sqlite3.h>

#include <filesystem>
#include <system_error>

namespace zone::persist {

namespace {

// Row keys of every statement the store prepares (kept in one place, so the SQL reads as
// one piece).
constexpr const char* kSelect =
    "SELECT type, x, y, properties, party_key, guild_key FROM characters WHERE key = ?1";
constexpr const char* kUpsert =
    "INSERT INTO characters (key, type, x, y, properties, party_key, guild_key, saved_at_ms) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, CAST((julianday('now') - 2440587.5) * 86400000.0 AS "
    "INTEGER)) "
    "ON CONFLICT(key) DO UPDATE SET type = excluded.type, x = excluded.x, y = excluded.y, "
    "properties = excluded.properties, party_key = excluded.party_key, "
    "guild_key = excluded.guild_key, saved_at_ms = excluded.saved_at_ms";

std::string text_column(sqlite3_stmt* st, int col) {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(st, col));
  return p == nullptr ? std::string() : std::string(p, sqlite3_column_bytes(st, col));
}

}  // namespace

std::unique_ptr<SqliteStore> SqliteStore::open(const std::string& path, int busy_timeout_ms,
                                               std::string& error) {
  const std::filesystem::path file(path);
  if (file.has_parent_path()) {
    std::error_code ec;
    std::filesystem::create_directories(file.parent_path(), ec);
    if (ec) {
      error = path + ": cannot create its directory: " + ec.message();
      return nullptr;
    }
  }
  sqlite3* db = nullptr;
  // FULLMUTEX is not needed: one thread owns the connection.
  const int rc = sqlite3_open_v2(
      path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    error = path + ": cannot open: " + (db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
    sqlite3_close(db);
    return nullptr;
  }
  std::unique_ptr<SqliteStore> store(new SqliteStore(db, path));
  sqlite3_busy_timeout(db, busy_timeout_ms);
  // WAL: readers never block the writer and a commit appends to the log. synchronous=FULL
  // syncs the log at every commit, so a save the writer acknowledged survives a crash of
  // the machine, not only of the process (one commit per batch keeps it cheap).
  // The first statement reads the file's header: a file that is no database fails here.
  for (const char* sql : {"PRAGMA journal_mode=WAL", "PRAGMA synchronous=FULL"}) {
    if (StoreStatus s = store->exec(sql); !s.ok) {
      error = s.error;
      return nullptr;
    }
  }
  if (StoreStatus s = migrate(*store); !s.ok) {
    error = s.error;
    return nullptr;
  }
  if (StoreStatus s = store->prepare(); !s.ok) {
    error = s.error;
    return nullptr;
  }
  return store;
}

SqliteStore::~SqliteStore() {
  sqlite3_finalize(select_);
  sqlite3_finalize(upsert_);
  sqlite3_close(db_);
}

std::string SqliteStore::why(const char* what) const {
  return path_ + ": " + what + ": " + sqlite3_errmsg(db_);
}

StoreStatus SqliteStore::exec(const char* sql) {
  char* message = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &message) == SQLITE_OK) return {};
  std::string text = path_ + ": " + (message ? message : "error");
  sqlite3_free(message);
  return StoreStatus::fail(std::move(text));
}

StoreStatus SqliteStore::prepare() {
  if (sqlite3_prepare_v2(db_, kSelect, -1, &select_, nullptr) != SQLITE_OK ||
      sqlite3_prepare_v2(db_, kUpsert, -1, &upsert_, nullptr) != SQLITE_OK) {
    return StoreStatus::fail(why("prepare"));
  }
  return {};
}

int SqliteStore::schema_version() {
  sqlite3_stmt* st = nullptr;
  int version = 0;
  if (sqlite3_prepare_v2(db_, "SELECT version FROM schema_version", -1, &st, nullptr) ==
          SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW) {
    version = sqlite3_column_int(st, 0);
  }
  sqlite3_finalize(st);
  return version;
}

LoadedRow SqliteStore::load_row(const std::string& key, StoreStatus& status) {
  status = {};
  sqlite3_reset(select_);
  sqlite3_bind_text(select_, 1, key.data(), static_cast<int>(key.size()), SQLITE_TRANSIENT);
  const int rc = sqlite3_step(select_);
  if (rc == SQLITE_DONE) return {};
  if (rc != SQLITE_ROW) {
    status = StoreStatus::fail(why("load"));
    sqlite3_reset(select_);
    return {};
  }
  CharacterRecord r;
  r.key = key;
  r.type = text_column(select_, 0);
  r.x = sqlite3_column_double(select_, 1);
  r.y = sqlite3_column_double(select_, 2);
  auto properties = decode_properties(text_column(select_, 3));
  // Keys are 64-bit values; SQLite keeps them as signed integers of the same bits.
  r.party_key = static_cast<std::uint64_t>(sqlite3_column_int64(select_, 4));
  r.guild_key = static_cast<std::uint64_t>(sqlite3_column_int64(select_, 5));
  sqlite3_reset(select_);
  if (!properties) {
    status = StoreStatus::fail(path_ + ": row '" + key + "': unreadable properties");
    return {};
  }
  r.properties = std::move(*properties);
  return {.record = std::move(r)};
}

StoreStatus SqliteStore::write_rows(std::span<const RowWrite> rows,
                                    std::vector<RowOutcome>& outcomes) {
  if (StoreStatus s = exec("BEGIN IMMEDIATE"); !s.ok) return s;
  for (const RowWrite& row : rows) {
    const CharacterRecord& r = *row.record;
    const std::string properties = encode_properties(r.properties);
    sqlite3_reset(upsert_);
    sqlite3_bind_text(upsert_, 1, r.key.data(), static_cast<int>(r.key.size()), SQLITE_TRANSIENT);
    sqlite3_bind_text(upsert_, 2, r.type.data(), static_cast<int>(r.type.size()), SQLITE_TRANSIENT);
    sqlite3_bind_double(upsert_, 3, r.x);
    sqlite3_bind_double(upsert_, 4, r.y);
    sqlite3_bind_text(upsert_, 5, properties.data(), static_cast<int>(properties.size()),
                      SQLITE_TRANSIENT);
    sqlite3_bind_int64(upsert_, 6, static_cast<sqlite3_int64>(r.party_key));
    sqlite3_bind_int64(upsert_, 7, static_cast<sqlite3_int64>(r.guild_key));
    if (sqlite3_step(upsert_) != SQLITE_DONE) {
      StoreStatus s = StoreStatus::fail(why("save"));
      sqlite3_reset(upsert_);
      exec("ROLLBACK");
      return s;
    }
  }
  sqlite3_reset(upsert_);
  if (StoreStatus s = exec("COMMIT"); !s.ok) {
    exec("ROLLBACK");
    return s;
  }
  outcomes.assign(rows.size(), RowOutcome{});
  return {};
}

}  // namespace zone::persist
