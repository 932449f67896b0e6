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
    wake_.wait(lock, [&] { return stopping_ || !loads_.empty() || !queued_.empty(); });
    // Loads first: a player is waiting for each; saves are already safe in the queue.
    answer_loads(lock);
    if (!queued_.empty()) write_queued(lock);
    if (stopping_) {
      // One last try for what is left (the zone flushed before, within its grace).
      if (!queued_.empty()) write_queued(lock);
      return;
    }
    // After a failure, wait before the next try (loads and the stop still wake us).
    if (!stats_.healthy && !queued_.empty()) {
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
    // (in_flight_ is empty here: writes and loads take turns on this thread.)
    if (const auto it = queued_.find(req.key); it != queued_.end()) {
      result.status = LoadResult::Status::kFound;
      result.record = it->second.record;
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
  // Everything queued now goes in one transaction; saves queued meanwhile wait for the
  // next one.
  in_flight_.swap(queued_);
  in_flight_count_ = in_flight_.size();
  const std::uint64_t through = next_sequence_;
  lock.unlock();
  std::vector<CharacterRecord> batch;
  batch.reserve(in_flight_.size());
  for (auto& [key, q] : in_flight_) batch.push_back(std::move(q.record));
  const StoreStatus status = store_->save(batch);
  lock.lock();
  if (!status.ok) {
    // Back into the queue, unless a newer save of the same character came meanwhile.
    for (CharacterRecord& r : batch) {
      const std::uint64_t sequence = in_flight_.at(r.key).sequence;
      std::string key = r.key;
      queued_.try_emplace(std::move(key), Queued{std::move(r), sequence});
    }
    in_flight_.clear();
    in_flight_count_ = 0;
    ++stats_.save_failures;
    stats_.healthy = false;
    last_error_ = status.error;
    return;
  }
  in_flight_.clear();
  in_flight_count_ = 0;
  stats_.saves_committed += batch.size();
  ++stats_.flushes;
  stats_.healthy = true;
  last_error_.clear();
  // Sequence numbers only grow and every save up to `through` was in the batch or replaced
  // by a newer one (still queued, with a larger number).
  committed_through_ = through;
  committed_.notify_all();
}

}  // namespace zone::persist
