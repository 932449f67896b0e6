#include "persist/pg_store.hpp"

#include <libpq-fe.h>

#include <array>
#include <charconv>
#include <cstdint>
#include <string_view>
#include <unordered_map>

namespace zone::persist {

namespace {

// Version 1: the row format of SQLite's version 2 (position, type, properties, groups,
// when it was saved), in PostgreSQL's types.
constexpr const char* kVersion1 =
    "CREATE TABLE schema_version (version INTEGER NOT NULL);"
    "INSERT INTO schema_version (version) VALUES (1);"
    "CREATE TABLE characters ("
    "  key TEXT PRIMARY KEY NOT NULL,"
    "  type TEXT NOT NULL,"
    "  x DOUBLE PRECISION NOT NULL,"
    "  y DOUBLE PRECISION NOT NULL,"
    "  properties TEXT NOT NULL,"
    "  party_key BIGINT NOT NULL DEFAULT 0,"
    "  guild_key BIGINT NOT NULL DEFAULT 0,"
    "  saved_at_ms BIGINT NOT NULL DEFAULT 0"
    ");";

// Version 2: the zone that owns the row and the generation of its claim. Rows of version
// 1 belong to no zone ('') at generation 0: the next login claims them.
constexpr const char* kVersion1To2 =
    "ALTER TABLE characters ADD COLUMN owner TEXT NOT NULL DEFAULT '',"
    "  ADD COLUMN generation BIGINT NOT NULL DEFAULT 0;"
    "UPDATE schema_version SET version = 2;";

// Any constant: the key of the advisory lock that keeps zones starting together from
// migrating one database twice.
constexpr const char* kMigrationLock = "SELECT pg_advisory_xact_lock(3117001)";

// A login: the row becomes this zone's, one generation on, and is read in the same
// statement (one transaction).
constexpr const char* kLoadClaim =
    "UPDATE characters SET owner = $2, generation = generation + 1 WHERE key = $1 "
    "RETURNING type, x, y, properties, party_key, guild_key, generation";
// Several logins: the same for every key of the array $1, in one statement.
constexpr const char* kLoadClaimMany =
    "UPDATE characters SET owner = $2, generation = generation + 1 WHERE key = ANY($1::text[]) "
    "RETURNING type, x, y, properties, party_key, guild_key, generation, key";

#define ZONE_PG_INSERT                                                                    \
  "INSERT INTO characters AS c (key, type, x, y, properties, party_key, guild_key, "      \
  "saved_at_ms, owner, generation) VALUES ($1, $2, $3, $4, $5, $6, $7, "                  \
  "(extract(epoch from clock_timestamp()) * 1000)::bigint, $8, 1) ON CONFLICT (key) DO "  \
  "UPDATE SET type = EXCLUDED.type, x = EXCLUDED.x, y = EXCLUDED.y, properties = "        \
  "EXCLUDED.properties, party_key = EXCLUDED.party_key, guild_key = EXCLUDED.guild_key, " \
  "saved_at_ms = EXCLUDED.saved_at_ms, owner = EXCLUDED.owner"

// An arrival: the row is this zone's whoever held it, with the state it arrived with.
constexpr const char* kWriteClaim =
    ZONE_PG_INSERT ", generation = c.generation + 1 RETURNING generation";
// A save: only while the row is still this zone's under its claim; no row comes back
// when it is not (stale).
constexpr const char* kWrite =
    ZONE_PG_INSERT " WHERE c.owner = $9 AND c.generation = $10 RETURNING generation";
#undef ZONE_PG_INSERT

// libpq's messages end with a newline and may run over several lines: the first says it.
std::string first_line(const char* message) {
  std::string s = message != nullptr ? message : "";
  if (const auto nl = s.find('\n'); nl != std::string::npos) s.resize(nl);
  return s.empty() ? "error" : s;
}

std::string text(double v) {
  std::array<char, 32> buf{};
  const auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), v);
  return std::string(buf.data(), end);
}

template <typename T>
bool parse(const char* s, T& out) {
  const std::string_view v(s);
  const auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  return ec == std::errc{} && ptr == v.data() + v.size();
}

// A result that frees itself.
struct Result {
  PGresult* r;
  explicit Result(PGresult* p) : r(p) {}
  ~Result() { PQclear(r); }
  Result(const Result&) = delete;
  Result& operator=(const Result&) = delete;
  ExecStatusType status() const { return PQresultStatus(r); }
};

}  // namespace

PGconn* PgStore::connect(const std::string& conninfo, const std::string& owner) {
  // A server that does not answer must not hold the start (or the writer) for ever: a
  // connect_timeout, and TCP keepalives and a user timeout so that a connection cut
  // mid-statement fails within about 30 s, each unless the connection string sets its own
  // (later keys win; TCP settings are ignored on a unix socket).
  const std::string application = "zone-server " + owner;
  const char* keys[] = {"connect_timeout",     "keepalives",       "keepalives_idle",
                        "keepalives_interval", "keepalives_count", "tcp_user_timeout",
                        "application_name",    "dbname",           nullptr};
  const char* values[] = {
      "5", "1", "10", "5", "3", "30000", application.c_str(), conninfo.c_str(), nullptr};
  return PQconnectdbParams(keys, values, /*expand_dbname=*/1);
}

std::unique_ptr<PgStore> PgStore::open(const std::string& conninfo, std::string owner,
                                       std::string& error) {
  PGconn* conn = connect(conninfo, owner);
  if (conn == nullptr) {
    error = "postgres: out of memory";
    return nullptr;
  }
  if (PQstatus(conn) != CONNECTION_OK) {
    error = "postgres: cannot connect: " + first_line(PQerrorMessage(conn));
    PQfinish(conn);
    return nullptr;
  }
  std::unique_ptr<PgStore> store(new PgStore(conn, conninfo, std::move(owner)));
  if (StoreStatus s = migrate(*store); !s.ok) {
    error = s.error;
    return nullptr;
  }
  if (StoreStatus s = store->connected(); !s.ok) {
    error = s.error;
    return nullptr;
  }
  return store;
}

PgStore::PgStore(pg_conn* conn, std::string conninfo, std::string owner)
    : conn_(conn), conninfo_(std::move(conninfo)), owner_(std::move(owner)) {
  const char* host = PQhost(conn_);
  where_ = std::string("postgres ") + (host != nullptr ? host : "") + ":" +
           (PQport(conn_) != nullptr ? PQport(conn_) : "") + "/" +
           (PQdb(conn_) != nullptr ? PQdb(conn_) : "");
}

PgStore::~PgStore() {
  PQfinish(conn_);
}

StoreStatus PgStore::fail(const char* what) {
  return StoreStatus::fail(where_ + ": " + what + ": " + first_line(PQerrorMessage(conn_)));
}

StoreStatus PgStore::exec(const char* sql) {
  Result r(PQexec(conn_, sql));
  const ExecStatusType st = r.status();
  if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) return {};
  return StoreStatus::fail(where_ + ": " + first_line(PQresultErrorMessage(r.r)));
}

void PgStore::rollback() {
  if (PQstatus(conn_) == CONNECTION_OK && PQtransactionStatus(conn_) != PQTRANS_IDLE) {
    exec("ROLLBACK");
  }
}

StoreStatus PgStore::connected() {
  if (PQstatus(conn_) != CONNECTION_OK) {
    // A new connection rather than PQreset: nothing of the lost one (a pipeline cut
    // short, its prepared statements) carries over.
    prepared_ = false;
    PGconn* fresh = connect(conninfo_, owner_);
    if (fresh == nullptr) return StoreStatus::fail(where_ + ": cannot connect: out of memory");
    PQfinish(conn_);
    conn_ = fresh;
    if (PQstatus(conn_) != CONNECTION_OK) return fail("cannot connect");
  }
  if (prepared_) return {};
  const std::pair<const char*, const char*> statements[] = {{"load_claim", kLoadClaim},
                                                            {"load_claim_many", kLoadClaimMany},
                                                            {"write_claim", kWriteClaim},
                                                            {"write", kWrite}};
  for (const auto& [name, sql] : statements) {
    Result r(PQprepare(conn_, name, sql, 0, nullptr));
    if (r.status() != PGRES_COMMAND_OK) {
      return StoreStatus::fail(where_ + ": prepare: " + first_line(PQresultErrorMessage(r.r)));
    }
  }
  prepared_ = true;
  return {};
}

int PgStore::schema_version() {
  // Two statements: a query naming a table that does not exist fails (and, inside the
  // migration's transaction, aborts it) even in a branch never taken.
  {
    Result r(PQexec(conn_, "SELECT to_regclass('schema_version') IS NOT NULL"));
    if (r.status() != PGRES_TUPLES_OK || PQntuples(r.r) != 1 ||
        std::string_view(PQgetvalue(r.r, 0, 0)) != "t") {
      return 0;
    }
  }
  Result r(PQexec(conn_, "SELECT version FROM schema_version"));
  int version = 0;
  if (r.status() == PGRES_TUPLES_OK && PQntuples(r.r) == 1) parse(PQgetvalue(r.r, 0, 0), version);
  return version;
}

LoadedRow PgStore::load_row(const std::string& key, StoreStatus& status) {
  status = connected();
  if (!status.ok) return {};
  const char* params[] = {key.c_str(), owner_.c_str()};
  Result r(PQexecPrepared(conn_, "load_claim", 2, params, nullptr, nullptr, 0));
  if (r.status() != PGRES_TUPLES_OK) {
    status = StoreStatus::fail(where_ + ": load: " + first_line(PQresultErrorMessage(r.r)));
    return {};
  }
  if (PQntuples(r.r) == 0) return {};  // a new character: claimed by its first write
  LoadedRow row = read_claimed(r.r, 0, key);
  if (!row.record) status = StoreStatus::fail(where_ + ": row '" + key + "': unreadable");
  return row;
}

LoadedRow PgStore::read_claimed(const pg_result* r, int i, const std::string& key) const {
  CharacterRecord rec;
  rec.key = key;
  rec.type = PQgetvalue(r, i, 0);
  std::int64_t party = 0;
  std::int64_t guild = 0;
  Generation generation = 0;
  auto properties = decode_properties(PQgetvalue(r, i, 3));
  if (!parse(PQgetvalue(r, i, 1), rec.x) || !parse(PQgetvalue(r, i, 2), rec.y) || !properties ||
      !parse(PQgetvalue(r, i, 4), party) || !parse(PQgetvalue(r, i, 5), guild) ||
      !parse(PQgetvalue(r, i, 6), generation)) {
    return {};
  }
  rec.properties = std::move(*properties);
  // Keys are 64-bit values kept as signed integers of the same bits.
  rec.party_key = static_cast<std::uint64_t>(party);
  rec.guild_key = static_cast<std::uint64_t>(guild);
  return {.record = std::move(rec), .generation = generation};
}

StoreStatus PgStore::load_rows(std::span<const std::string> keys, std::vector<LoadedRow>& rows) {
  rows.clear();
  if (keys.empty()) return {};
  if (StoreStatus s = connected(); !s.ok) return s;
  // The keys as a text array literal: each element quoted, its quotes and backslashes
  // escaped (a name may hold either).
  std::string array = "{";
  for (const std::string& key : keys) {
    if (array.size() > 1) array += ',';
    array += '"';
    for (const char c : key) {
      if (c == '"' || c == '\\') array += '\\';
      array += c;
    }
    array += '"';
  }
  array += '}';
  const char* params[] = {array.c_str(), owner_.c_str()};
  Result r(PQexecPrepared(conn_, "load_claim_many", 2, params, nullptr, nullptr, 0));
  if (r.status() != PGRES_TUPLES_OK) {
    return StoreStatus::fail(where_ + ": load: " + first_line(PQresultErrorMessage(r.r)));
  }
  // The rows come back in no particular order; a key without one is a new character.
  std::unordered_map<std::string_view, int> found;
  for (int i = 0; i < PQntuples(r.r); ++i) found.emplace(PQgetvalue(r.r, i, 7), i);
  rows.resize(keys.size());
  for (std::size_t k = 0; k < keys.size(); ++k) {
    const auto it = found.find(keys[k]);
    if (it == found.end()) continue;
    rows[k] = read_claimed(r.r, it->second, keys[k]);
    if (!rows[k].record) {
      rows.clear();
      return StoreStatus::fail(where_ + ": row '" + keys[k] + "': unreadable");
    }
  }
  return {};
}

StoreStatus PgStore::write_rows(std::span<const RowWrite> rows, std::vector<RowOutcome>& outcomes) {
  if (StoreStatus s = connected(); !s.ok) return s;
  // The whole batch in one round trip (libpq's pipeline mode): BEGIN, one prepared
  // statement per row, COMMIT, then the answers in order. libpq reads answers while it
  // waits to send, so a large batch cannot deadlock on full socket buffers.
  if (PQenterPipelineMode(conn_) != 1) return fail("pipeline");
  std::string error;
  const auto send = [&](int ok, const char* what) {
    if (ok != 1 && error.empty())
      error = std::string(what) + ": " + first_line(PQerrorMessage(conn_));
  };
  send(PQsendQueryParams(conn_, "BEGIN", 0, nullptr, nullptr, nullptr, nullptr, 0), "begin");
  for (const RowWrite& row : rows) {
    if (!error.empty()) break;
    const CharacterRecord& c = *row.record;
    const std::string x = text(c.x);
    const std::string y = text(c.y);
    const std::string properties = encode_properties(c.properties);
    const std::string party = std::to_string(static_cast<std::int64_t>(c.party_key));
    const std::string guild = std::to_string(static_cast<std::int64_t>(c.guild_key));
    const std::string& owner_after =
        row.hand_to != nullptr && !row.hand_to->empty() ? *row.hand_to : owner_;
    const std::string generation = std::to_string(row.generation);
    const char* params[] = {
        c.key.c_str(), c.type.c_str(), x.c_str(),           y.c_str(),      properties.c_str(),
        party.c_str(), guild.c_str(),  owner_after.c_str(), owner_.c_str(), generation.c_str()};
    // libpq copies the parameters into its buffer: they need not outlive the call.
    send(row.claim ? PQsendQueryPrepared(conn_, "write_claim", 8, params, nullptr, nullptr, 0)
                   : PQsendQueryPrepared(conn_, "write", 10, params, nullptr, nullptr, 0),
         "save");
  }
  if (error.empty()) {
    send(PQsendQueryParams(conn_, "COMMIT", 0, nullptr, nullptr, nullptr, nullptr, 0), "commit");
  }
  if (PQpipelineSync(conn_) != 1) {
    // Without the sync there is no end to read up to: this connection is given up and
    // the next try opens another.
    if (error.empty()) error = "sync: " + first_line(PQerrorMessage(conn_));
    StoreStatus s = StoreStatus::fail(where_ + ": " + error);
    PQfinish(conn_);
    conn_ = connect(conninfo_, owner_);
    prepared_ = false;
    return s;
  }
  // The answers: BEGIN, each row, COMMIT, each followed by a null, then the sync. After an
  // error the rest are "aborted" up to the sync. A lost connection ends the reading.
  std::vector<RowOutcome> done;
  done.reserve(rows.size());
  std::size_t answer = 0;  // 0: BEGIN, 1..n: rows, n + 1: COMMIT
  for (;;) {
    PGresult* r = PQgetResult(conn_);
    if (r == nullptr) {
      if (PQstatus(conn_) != CONNECTION_OK) {
        if (error.empty()) error = "connection lost: " + first_line(PQerrorMessage(conn_));
        break;
      }
      continue;  // between one statement's answer and the next
    }
    const Result result(r);
    const ExecStatusType st = result.status();
    if (st == PGRES_PIPELINE_SYNC) break;
    if (st == PGRES_PIPELINE_ABORTED) {
      ++answer;
      continue;
    }
    if (st == PGRES_FATAL_ERROR || st == PGRES_NONFATAL_ERROR || st == PGRES_BAD_RESPONSE) {
      if (error.empty()) {
        const char* what = answer == 0 ? "begin" : answer <= rows.size() ? "save" : "commit";
        error = std::string(what) + ": " + first_line(PQresultErrorMessage(r));
      }
      ++answer;
      continue;
    }
    if (answer >= 1 && answer <= rows.size()) {
      RowOutcome outcome;
      outcome.stale = PQntuples(r) == 0;
      if (!outcome.stale) parse(PQgetvalue(r, 0, 0), outcome.generation);
      done.push_back(outcome);
    }
    ++answer;
  }
  if (PQstatus(conn_) == CONNECTION_OK) PQexitPipelineMode(conn_);
  if (!error.empty() || done.size() != rows.size()) {
    if (error.empty())
      error = "save: " + std::to_string(done.size()) + " answers for " +
              std::to_string(rows.size()) + " rows";
    rollback();
    return StoreStatus::fail(where_ + ": " + error);
  }
  outcomes = std::move(done);
  return {};
}

StoreStatus migrate(PgStore& store) {
  const char* steps[] = {kVersion1, kVersion1To2};  // steps[v] takes version v to v + 1
  for (;;) {
    if (StoreStatus s = store.exec("BEGIN"); !s.ok) return s;
    if (StoreStatus s = store.exec(kMigrationLock); !s.ok) {
      store.rollback();
      return s;
    }
    // Read under the lock: another zone may have migrated meanwhile.
    const int version = store.schema_version();
    if (version > kPostgresSchemaVersion) {
      store.rollback();
      return StoreStatus::fail(store.where_ + ": schema version " + std::to_string(version) +
                               " is newer than this server's (" +
                               std::to_string(kPostgresSchemaVersion) +
                               "); run a newer zone-server");
    }
    if (version == kPostgresSchemaVersion) return store.exec("COMMIT");
    if (StoreStatus s = store.exec(steps[version]); !s.ok) {
      store.rollback();
      return StoreStatus::fail(s.error + " (migrating from schema version " +
                               std::to_string(version) + ")");
    }
    if (StoreStatus s = store.exec("COMMIT"); !s.ok) return s;
  }
}

StoreStatus write_postgres_version_1(const std::string& conninfo,
                                     std::span<const CharacterRecord> records) {
  PGconn* conn = PQconnectdb(conninfo.c_str());
  if (PQstatus(conn) != CONNECTION_OK) {
    StoreStatus s = StoreStatus::fail("cannot connect: " + first_line(PQerrorMessage(conn)));
    PQfinish(conn);
    return s;
  }
  StoreStatus status;
  const auto run = [&](const char* sql, int n, const char* const* params) {
    if (!status.ok) return;
    Result r(PQexecParams(conn, sql, n, nullptr, params, nullptr, nullptr, 0));
    if (r.status() != PGRES_COMMAND_OK && r.status() != PGRES_TUPLES_OK) {
      status = StoreStatus::fail(first_line(PQresultErrorMessage(r.r)));
    }
  };
  run("BEGIN", 0, nullptr);
  if (status.ok) {
    // The simple protocol: a list of statements in one call.
    Result r(PQexec(conn, kVersion1));
    if (r.status() != PGRES_COMMAND_OK)
      status = StoreStatus::fail(first_line(PQresultErrorMessage(r.r)));
  }
  for (const CharacterRecord& r : records) {
    const std::string x = text(r.x);
    const std::string y = text(r.y);
    const std::string properties = encode_properties(r.properties);
    const char* params[] = {r.key.c_str(), r.type.c_str(), x.c_str(), y.c_str(),
                            properties.c_str()};
    run("INSERT INTO characters (key, type, x, y, properties) VALUES ($1, $2, $3, $4, $5)", 5,
        params);
  }
  run("COMMIT", 0, nullptr);
  PQfinish(conn);
  return status;
}

StoreStatus force_schema_version_for_test(PgStore& store, int version) {
  return store.exec(("UPDATE schema_version SET version = " + std::to_string(version)).c_str());
}

}  // namespace zone::persist
