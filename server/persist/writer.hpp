// The writer thread: the only thread that touches the database. The tick thread hands it
// saves and load requests and takes the loads' answers, never waiting on it: every call
// here is a short critical section over the queues.
//
// Saves are coalesced by character (a newer record replaces a queued older one) and
// written in one transaction per flush: everything queued when the writer wakes. A save
// counts as acknowledged (saves_committed, committed_through()) only after its COMMIT. A
// failed flush keeps its records queued (newer ones win) and is tried again after
// `retry`, while the store reports itself unhealthy.
//
// Loads are answered in order, each from the queue when the character has a save still
// waiting there (it is newer than the row), else from the database.
//
// With a shared store (PostgreSQL) the writer also keeps this zone's claims: a load claims
// the row (whether or not its data comes from the queue), an arrival's save claims it with
// the state the player arrived with, and every other save is written only under the
// claim's generation. A save the database refuses that way is stale: counted, dropped,
// never retried and never counted as committed. A handoff's save gives the row to the
// receiving zone and ends this zone's claim.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "persist/record.hpp"

namespace zone::persist {

class Store;

enum class Backend : std::uint8_t { kSqlite, kPostgres };

struct WriterParams {
  Backend backend = Backend::kSqlite;
  std::string path{};                    // kSqlite: the file (created with its directory)
  std::string conninfo{};                // kPostgres: the libpq connection string (a secret)
  std::string owner{};                   // kPostgres: this zone's name, as rows record it
  std::size_t max_queue = 4096;          // queued characters beyond which full() says so
  std::chrono::milliseconds retry{250};  // after a failed flush
  int busy_timeout_ms = 1000;            // waiting for another process's lock
};

struct LoadResult {
  enum class Status : std::uint8_t { kFound, kNew, kFailed };
  std::uint64_t request = 0;
  Status status = Status::kFailed;
  CharacterRecord record;               // kFound
  std::string error;                    // kFailed
  std::chrono::nanoseconds latency{0};  // from the request to the answer
};

// Counts since start; read from any thread.
struct WriterStats {
  // Saves not yet committed (a character with one in a failed batch and a newer one
  // queued counts twice until the next try merges them).
  std::uint64_t queue_depth = 0;
  std::uint64_t saves_committed = 0;  // records committed
  std::uint64_t saves_stale = 0;      // refused: the row is another zone's now (shared store)
  std::uint64_t save_failures = 0;    // flushes that failed (their records stay queued)
  std::uint64_t flushes = 0;          // transactions committed
  std::uint64_t loads = 0;            // loads answered (found, new or failed)
  std::uint64_t load_failures = 0;
  std::uint64_t load_nanoseconds = 0;  // summed latency of the loads answered
  bool healthy = true;                 // the last flush or load worked
};

class Writer {
 public:
  // Opens the store (on the caller's thread: a bad file stops the start with `error`) and
  // starts the thread. Null on failure.
  static std::unique_ptr<Writer> start(const WriterParams& params, std::string& error);
  // Starts the thread over a store opened by the caller (tests, benchmarks).
  static std::unique_ptr<Writer> start(const WriterParams& params, std::unique_ptr<Store> store);
  // Writes what is queued (one last try), then stops the thread.
  ~Writer();
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  // Queues a save; returns its sequence number (see committed_through). `force`: taken
  // even past max_queue (a player leaving: its last state must not be dropped); otherwise
  // a save of a character not queued yet is refused (0) while full().
  std::uint64_t save(CharacterRecord record, bool force);
  // A player arriving from another zone (always taken): its state claims the row for this
  // zone whichever zone held it (shared store).
  std::uint64_t arrive(CharacterRecord record);
  // A player handed to zone `to` (always taken): its last state here, and the row becomes
  // `to`'s (shared store), so that this zone's later saves of it are stale.
  std::uint64_t hand_over(CharacterRecord record, std::string to);
  // True while max_queue or more characters wait: the zone refuses new logins.
  bool full() const;
  // Asks for `key`'s row; the answer comes back through take_loads with `request`.
  void load(std::uint64_t request, std::string key);
  // Appends the loads answered since the last call.
  void take_loads(std::vector<LoadResult>& out);
  // Appends the characters whose claim this zone lost since the last call (shared store):
  // a checkpoint of theirs was stale, so another zone claimed them since (a login there),
  // and nothing this zone saves of them is taken any more. Not reported when a newer
  // claim here came after, nor for a leave's or a handoff's save.
  void take_lost(std::vector<std::string>& out);
  // Every save with a sequence number up to this one is committed (or, with a shared
  // store, was refused as stale: it will never be).
  std::uint64_t committed_through() const { return committed_through_.load(); }
  // True when rows record their owner zone (PostgreSQL).
  bool shared() const { return shared_; }
  // What the logs call the database (no secret); fixed at start.
  const std::string& describe() const { return describe_; }
  // Waits until every save queued before the call is committed or `deadline` passes
  // (shutdown; never on the tick thread). True when it was.
  bool flush(std::chrono::steady_clock::time_point deadline);
  WriterStats stats() const;
  // The last error the store reported ("" after a success).
  std::string last_error() const;

 private:
  struct Queued {
    CharacterRecord record;
    std::uint64_t sequence = 0;
    bool claim = false;    // an arrival: the write claims the row
    bool release = false;  // a leave: the claim ends once written
    std::string hand_to;   // a handoff: the row becomes this zone's
  };

  Writer(const WriterParams& params, std::unique_ptr<Store> store);
  std::uint64_t enqueue(Queued q, bool force);
  void run();
  void answer_loads(std::unique_lock<std::mutex>& lock);
  void write_queued(std::unique_lock<std::mutex>& lock);

  WriterParams params_;
  std::unique_ptr<Store> store_;  // the writer thread's alone once it runs
  const bool shared_;
  const std::string describe_;

  mutable std::mutex mutex_;
  std::condition_variable wake_;                    // work for the writer
  std::condition_variable committed_;               // a flush finished (flush() waits on it)
  std::unordered_map<std::string, Queued> queued_;  // by key: the newest save of each
  // The batch being written, and after a failed write what waits for the retry: the
  // writer thread's alone (queued_ is swapped out in one move, so the tick's saves never
  // wait for records to be copied or merged); its size is published under mutex_.
  std::unordered_map<std::string, Queued> in_flight_;
  std::size_t in_flight_count_ = 0;
  // This zone's claims (shared store): the generation each character's row was claimed
  // at. The writer thread's alone.
  std::unordered_map<std::string, std::int64_t> owned_;
  std::uint64_t next_sequence_ = 0;
  struct LoadRequest {
    std::uint64_t request;
    std::string key;
    std::chrono::steady_clock::time_point asked;
  };
  std::deque<LoadRequest> loads_;
  // Logins answered in one call to the store at most (a shared store claims them in one
  // transaction; the array of their keys stays well within a statement's size).
  static constexpr std::size_t kLoadBatch = 512;
  std::vector<LoadRequest> batch_;  // the writer thread's: the logins being loaded
  std::vector<std::string> keys_;   // ... and their keys
  // The saves of `key` waiting here: queued (the newest), and left by a failed write.
  std::array<Queued*, 2> waiting_saves(const std::string& key);
  const Queued* waiting_save(const std::string& key);  // the newer of the two, or null
  void answer(const LoadRequest& req, LoadResult result);
  std::vector<LoadResult> answers_;
  std::vector<std::string> lost_;  // take_lost's
  bool stopping_ = false;
  WriterStats stats_;  // queue_depth is queued_.size() when read
  std::string last_error_;
  std::atomic<std::uint64_t> committed_through_{0};
  std::thread thread_;  // last: starts after the members it reads
};

}  // namespace zone::persist
