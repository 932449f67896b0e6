#include "persist/writer.hpp"

#include "persist/sqlite_store.hpp"

namespace zone::persist {

using Clock = std::chrono::steady_clock;

std::unique_ptr<Writer> Writer::start(const WriterParams& params, std::string& error) {
  std::unique_ptr<SqliteStore> store =
      SqliteStore::open(params.path, params.busy_timeout_ms, error);
  if (!store) return nullptr;
  return std::unique_ptr<Writer>(new Writer(params, std::move(store)));
}

Writer::Writer(const WriterParams& params, std::unique_ptr<SqliteStore> store)
    : params_(params), store_(std::move(store)), thread_([this] { run(); }) {}

Writer::~Writer() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

std::uint64_t Writer::save(CharacterRecord record, bool force) {
  std::uint64_t sequence = 0;
  {
    std::lock_guard lock(mutex_);
    auto it = queued_.find(record.key);
    if (it == queued_.end()) {
      if (!force && queued_.size() + in_flight_count_ >= params_.max_queue) return 0;
      sequence = ++next_sequence_;
      std::string key = record.key;
      queued_.emplace(std::move(key), Queued{std::move(record), sequence});
    } else {
      sequence = ++next_sequence_;
      it->second = Queued{std::move(record), sequence};
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
    LoadRequest req = std::move(loads_.front());
    loads_.pop_front();
    LoadResult result;
    result.request = req.request;
    // Not committed yet, but newer than the row: the player left and came back quickly.
    // queued_ holds the newest; in_flight_ (this thread's) what a failed write left.
    const auto queued = queued_.find(req.key);
    const auto failed = in_flight_.find(req.key);
    if (queued != queued_.end()) {
      result.status = LoadResult::Status::kFound;
      result.record = queued->second.record;
    } else if (failed != in_flight_.end()) {
      result.status = LoadResult::Status::kFound;
      result.record = failed->second.record;
    } else {
      lock.unlock();
      StoreStatus status;
      std::optional<CharacterRecord> row = store_->load(req.key, status);
      lock.lock();
      if (!status.ok) {
        result.status = LoadResult::Status::kFailed;
        result.error = status.error;
        ++stats_.load_failures;
        stats_.healthy = false;
        last_error_ = status.error;
      } else if (row) {
        result.status = LoadResult::Status::kFound;
        result.record = std::move(*row);
      } else {
        result.status = LoadResult::Status::kNew;
      }
    }
    result.latency = Clock::now() - req.asked;
    ++stats_.loads;
    stats_.load_nanoseconds += static_cast<std::uint64_t>(result.latency.count());
    answers_.push_back(std::move(result));
  }
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
  for (auto& [key, q] : fresh) in_flight_.insert_or_assign(key, std::move(q));  // newer wins
  fresh = {};  // freed here, not under the lock below
  std::vector<CharacterRecord> batch;
  batch.reserve(in_flight_.size());
  for (const auto& [key, q] : in_flight_) batch.push_back(q.record);  // kept for a retry
  const StoreStatus status = store_->save(batch);
  lock.lock();
  if (!status.ok) {
    in_flight_count_ = in_flight_.size();  // tried again at the next wake, newer ones merged
    ++stats_.save_failures;
    stats_.healthy = false;
    last_error_ = status.error;
    return;
  }
  in_flight_count_ = 0;
  stats_.saves_committed += batch.size();
  ++stats_.flushes;
  stats_.healthy = true;
  last_error_.clear();
  // Sequence numbers only grow, and every save up to `through` was in the batch or was
  // replaced by a newer one in it.
  committed_through_ = through;
  committed_.notify_all();
  lock.unlock();
  in_flight_.clear();  // the writer's alone: freed outside the lock
  lock.lock();
}

}  // namespace zone::persist
