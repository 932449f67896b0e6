#include "persist/writer.hpp"

#include "persist/pg_store.hpp"
#include "persist/sqlite_store.hpp"

namespace zone::persist {

using Clock = std::chrono::steady_clock;

std::unique_ptr<Writer> Writer::start(const WriterParams& params, std::string& error) {
  std::unique_ptr<Store> store;
  if (params.backend == Backend::kPostgres) {
    store = PgStore::open(params.conninfo, params.owner, error);
  } else {
    store = SqliteStore::open(params.path, params.busy_timeout_ms, error);
  }
  if (!store) return nullptr;
  return start(params, std::move(store));
}

std::unique_ptr<Writer> Writer::start(const WriterParams& params, std::unique_ptr<Store> store) {
  return std::unique_ptr<Writer>(new Writer(params, std::move(store)));
}

Writer::Writer(const WriterParams& params, std::unique_ptr<Store> store)
    : params_(params),
      store_(std::move(store)),
      shared_(store_->shared()),
      describe_(store_->describe()),
      thread_([this] { run(); }) {}

Writer::~Writer() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

std::uint64_t Writer::save(CharacterRecord record, bool force) {
  // A forced save is a leave: this zone's claim on the row ends once it is written.
  Queued q;
  q.record = std::move(record);
  q.release = force;
  return enqueue(std::move(q), force);
}

std::uint64_t Writer::arrive(CharacterRecord record) {
  Queued q;
  q.record = std::move(record);
  q.claim = true;
  return enqueue(std::move(q), true);
}

std::uint64_t Writer::hand_over(CharacterRecord record, std::string to) {
  Queued q;
  q.record = std::move(record);
  q.hand_to = std::move(to);
  return enqueue(std::move(q), true);
}

std::uint64_t Writer::enqueue(Queued q, bool force) {
  std::uint64_t sequence = 0;
  {
    std::lock_guard lock(mutex_);
    auto it = queued_.find(q.record.key);
    if (it == queued_.end()) {
      if (!force && queued_.size() + in_flight_count_ >= params_.max_queue) return 0;
      sequence = q.sequence = ++next_sequence_;
      std::string key = q.record.key;
      queued_.emplace(std::move(key), std::move(q));
    } else {
      sequence = q.sequence = ++next_sequence_;
      // An arrival not written yet still claims the row when a newer save replaces it.
      q.claim = q.claim || it->second.claim;
      it->second = std::move(q);
    }
  }
  wake_.notify_one();
  return sequence;
}

bool Writer::full() const {
  std::lock_guard lock(mutex_);
  return queued_.size() + in_flight_count_ >= params_.max_queue;
}

void Writer::load(std::uint64_t request, std::string key) {
  {
    std::lock_guard lock(mutex_);
    loads_.push_back({request, std::move(key), Clock::now()});
  }
  wake_.notify_one();
}

void Writer::take_loads(std::vector<LoadResult>& out) {
  std::lock_guard lock(mutex_);
  for (LoadResult& r : answers_) out.push_back(std::move(r));
  answers_.clear();
}

void Writer::take_lost(std::vector<std::string>& out) {
  std::lock_guard lock(mutex_);
  for (std::string& key : lost_) out.push_back(std::move(key));
  lost_.clear();
}

bool Writer::flush(Clock::time_point deadline) {
  std::unique_lock lock(mutex_);
  const std::uint64_t target = next_sequence_;
  wake_.notify_one();
  return committed_.wait_until(lock, deadline, [&] { return committed_through_.load() >= target; });
}

WriterStats Writer::stats() const {
  std::lock_guard lock(mutex_);
  WriterStats s = stats_;
  s.queue_depth = queued_.size() + in_flight_count_;
  return s;
}

std::string Writer::last_error() const {
  std::lock_guard lock(mutex_);
  return last_error_;
}

void Writer::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] {
      return stopping_ || !loads_.empty() || !queued_.empty() || !in_flight_.empty();
    });
    // Loads first: a player is waiting for each; saves are already safe in the queue.
    answer_loads(lock);
    if (!queued_.empty() || !in_flight_.empty()) write_queued(lock);
    if (stopping_) {
      // One last try for what is left (the zone flushed before, within its grace).
      if (!queued_.empty() || !in_flight_.empty()) write_queued(lock);
      return;
    }
    // After a failure, wait before the next try (loads and the stop still wake us).
    if (!stats_.healthy && !in_flight_.empty()) {
      wake_.wait_for(lock, params_.retry, [&] { return stopping_ || !loads_.empty(); });
    }
  }
}

void Writer::answer_loads(std::unique_lock<std::mutex>& lock) {
  while (!loads_.empty()) {
    // Every login waiting now (up to kLoadBatch) in one call: a shared store claims their
    // rows in one transaction. A login whose character still has a save waiting here
    // needs no database (a store of this zone's alone: no claim to take).
    batch_.clear();
    while (!loads_.empty() && batch_.size() < kLoadBatch) {
      LoadRequest req = std::move(loads_.front());
      loads_.pop_front();
      if (!shared_) {
        if (const Queued* waiting = waiting_save(req.key)) {
          // Not committed yet, but newer than the row: the player left and came back.
          LoadResult result;
          result.request = req.request;
          result.status = LoadResult::Status::kFound;
          result.record = waiting->record;
          answer(req, std::move(result));
          continue;
        }
      }
      batch_.push_back(std::move(req));
    }
    if (batch_.empty()) continue;
    keys_.clear();
    for (const LoadRequest& req : batch_) keys_.push_back(req.key);
    lock.unlock();
    std::vector<LoadedRow> rows;
    const StoreStatus status = store_->load_rows(keys_, rows);
    lock.lock();
    if (!status.ok) {
      ++stats_.load_failures;
      stats_.healthy = false;
      last_error_ = status.error;
    } else if (in_flight_.empty()) {
      // The database answers again: healthy, unless a failed batch still waits.
      stats_.healthy = true;
      last_error_.clear();
    }
    for (std::size_t i = 0; i < batch_.size(); ++i) {
      LoadRequest& req = batch_[i];
      LoadResult result;
      result.request = req.request;
      if (!status.ok) {
        result.status = LoadResult::Status::kFailed;
        result.error = status.error;
        answer(req, std::move(result));
        continue;
      }
      LoadedRow& row = rows[i];
      if (shared_) {
        owned_.insert_or_assign(req.key, row.generation);
        std::erase(lost_, req.key);  // claimed here again: that player is not the lost one
        // The saves waiting here are this zone's and newer than the row; the character is
        // back, so they neither end the claim nor give the row away.
        for (Queued* q : waiting_saves(req.key)) {
          if (q == nullptr) continue;
          q->release = false;
          q->hand_to.clear();
        }
      }
      // Looked up after the load (the lock was let go): a save queued meanwhile is newer.
      if (const Queued* waiting = waiting_save(req.key)) {
        result.status = LoadResult::Status::kFound;
        result.record = waiting->record;
      } else if (row.record) {
        result.status = LoadResult::Status::kFound;
        result.record = std::move(*row.record);
      } else {
        result.status = LoadResult::Status::kNew;
      }
      answer(req, std::move(result));
    }
  }
}

std::array<Writer::Queued*, 2> Writer::waiting_saves(const std::string& key) {
  // queued_ holds the newest; in_flight_ (this thread's) what a failed write left.
  const auto queued = queued_.find(key);
  const auto failed = in_flight_.find(key);
  return {queued != queued_.end() ? &queued->second : nullptr,
          failed != in_flight_.end() ? &failed->second : nullptr};
}

const Writer::Queued* Writer::waiting_save(const std::string& key) {
  const auto saves = waiting_saves(key);
  return saves[0] != nullptr ? saves[0] : saves[1];
}

void Writer::answer(const LoadRequest& req, LoadResult result) {
  result.latency = Clock::now() - req.asked;
  ++stats_.loads;
  stats_.load_nanoseconds += static_cast<std::uint64_t>(result.latency.count());
  answers_.push_back(std::move(result));
}

void Writer::write_queued(std::unique_lock<std::mutex>& lock) {
  // Everything queued now goes in one transaction, with what a failed try left; saves
  // queued meanwhile wait for the next one. Under the lock only the swap: the tick's
  // save() never waits for records to be copied or merged.
  std::unordered_map<std::string, Queued> fresh;
  fresh.swap(queued_);
  in_flight_count_ += fresh.size();  // may count a character twice until merged: a bound
  const std::uint64_t through = next_sequence_;
  lock.unlock();
  for (auto& [key, q] : fresh) {
    // Newer wins; an arrival still waiting for its retry keeps its claim.
    if (auto it = in_flight_.find(key); it != in_flight_.end()) {
      q.claim = q.claim || it->second.claim;
      it->second = std::move(q);
    } else {
      in_flight_.emplace(key, std::move(q));
    }
  }
  fresh = {};  // freed here, not under the lock below
  // The rows point into in_flight_, which only this thread touches: nothing is copied, and
  // a failed batch stays there for the retry.
  std::vector<RowWrite> rows;
  std::vector<const std::string*> keys;
  std::vector<const std::string*> unclaimed;  // shared store: no claim here, stale as it is
  rows.reserve(in_flight_.size());
  keys.reserve(in_flight_.size());
  for (const auto& [key, q] : in_flight_) {
    RowWrite row{.record = &q.record, .claim = q.claim, .hand_to = &q.hand_to};
    if (shared_ && !q.claim) {
      const auto owned = owned_.find(key);
      if (owned == owned_.end()) {
        unclaimed.push_back(&key);
        continue;
      }
      row.generation = owned->second;
    }
    rows.push_back(row);
    keys.push_back(&key);
  }
  std::vector<RowOutcome> outcomes;
  const StoreStatus status = rows.empty() ? StoreStatus{} : store_->write_rows(rows, outcomes);
  std::uint64_t committed = 0;
  std::uint64_t stale = unclaimed.size();
  // Checkpoints found stale: characters online here that another zone claimed since.
  std::vector<std::string> lost;
  const auto stale_checkpoint = [&](const std::string& key) {
    const Queued& q = in_flight_.at(key);
    if (!q.release && q.hand_to.empty()) lost.push_back(key);
  };
  for (const std::string* key : unclaimed) stale_checkpoint(*key);
  if (status.ok) {
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const std::string& key = *keys[i];
      const Queued& q = in_flight_.at(key);
      if (outcomes[i].stale) {
        ++stale;
        owned_.erase(key);  // another zone holds the row now: every later save is stale too
        stale_checkpoint(key);
        continue;
      }
      ++committed;
      if (!shared_) continue;
      if (!q.hand_to.empty() || q.release) {
        owned_.erase(key);
      } else {
        owned_.insert_or_assign(key, outcomes[i].generation);
      }
    }
  }
  lock.lock();
  if (!status.ok) {
    in_flight_count_ = in_flight_.size();  // tried again at the next wake, newer ones merged
    ++stats_.save_failures;
    stats_.healthy = false;
    last_error_ = status.error;
    return;
  }
  in_flight_count_ = 0;
  for (std::string& key : lost) lost_.push_back(std::move(key));
  stats_.saves_committed += committed;
  stats_.saves_stale += stale;
  if (!rows.empty()) ++stats_.flushes;
  stats_.healthy = true;
  last_error_.clear();
  // Sequence numbers only grow, and every save up to `through` was in the batch or was
  // replaced by a newer one in it; a stale one never will be written.
  committed_through_ = through;
  committed_.notify_all();
  lock.unlock();
  in_flight_.clear();  // the writer's alone: freed outside the lock
  lock.lock();
}

}  // namespace zone::persist
