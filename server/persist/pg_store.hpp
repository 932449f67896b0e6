// The character store in PostgreSQL: one database the zones of a world share. Each row
// records the zone that owns it and a generation, so that exactly one zone writes a
// character at a time (docs/persistence.md, "One owner per row"): a login or an arrival
// claims the row (owner := this zone, generation + 1), and every other write happens only
// while the row is still this zone's under the generation it claimed.
// Synchronous and single-threaded, like SqliteStore: only the writer thread holds one.
#pragma once

#include <memory>
#include <span>
#include <string>

#include "persist/store.hpp"

struct pg_conn;
struct pg_result;

namespace zone::persist {

// The row format this build writes to PostgreSQL (pg_store.cpp migrates older databases
// forward to it).
inline constexpr int kPostgresSchemaVersion = 2;

class PgStore final : public Store {
 public:
  // Connects with `conninfo` (a libpq connection string: a secret, never logged), creates
  // or migrates the tables to kPostgresSchemaVersion. `owner`: the name this zone's rows
  // carry (zone.name, unique in a world). Null with `error` set when the server cannot be
  // reached or refuses, or holds a newer schema than this build's.
  static std::unique_ptr<PgStore> open(const std::string& conninfo, std::string owner,
                                       std::string& error);
  ~PgStore() override;
  PgStore(const PgStore&) = delete;
  PgStore& operator=(const PgStore&) = delete;

  bool shared() const override { return true; }
  LoadedRow load_row(const std::string& key, StoreStatus& status) override;
  StoreStatus load_rows(std::span<const std::string> keys, std::vector<LoadedRow>& rows) override;
  StoreStatus write_rows(std::span<const RowWrite> rows,
                         std::vector<RowOutcome>& outcomes) override;
  int schema_version() override;
  std::string describe() const override { return where_; }
  const std::string& owner() const { return owner_; }

 private:
  PgStore(pg_conn* conn, std::string conninfo, std::string owner);
  // A new connection with the settings of the first (a libpq connection string and the
  // defaults open() adds).
  static pg_conn* connect(const std::string& conninfo, const std::string& owner);
  // Reconnects when the connection was lost (the server restarted) and prepares the
  // statements again. The writer's retry paces it.
  StoreStatus connected();
  StoreStatus exec(const char* sql);
  StoreStatus fail(const char* what);
  void rollback();
  // Row i of an answer of load_claim or load_claim_many as a loaded row (no record: a
  // field did not parse).
  LoadedRow read_claimed(const pg_result* r, int i, const std::string& key) const;

  pg_conn* conn_;
  std::string conninfo_;  // kept to reconnect; never logged
  std::string owner_;
  std::string where_;  // host:port/database, for messages
  bool prepared_ = false;

  friend StoreStatus migrate(PgStore& store);
  friend StoreStatus force_schema_version_for_test(PgStore& store, int version);
};

// Brings the database up to kPostgresSchemaVersion one version at a time, each step in a
// transaction of its own under an advisory lock, so that zones starting together migrate
// it once.
StoreStatus migrate(PgStore& store);
// Makes the tables of schema version 1 in an empty database, holding `records`: how the
// tests make an old database to migrate.
StoreStatus write_postgres_version_1(const std::string& conninfo,
                                     std::span<const CharacterRecord> records);
// Tests only: sets the database's recorded version (a database of a later build).
StoreStatus force_schema_version_for_test(PgStore& store, int version);

}  // namespace zone::persist
