// The writer thread. No wall-clock bounds: each test waits on progress (a flush, the
// loads it asked for) with a generous deadline.
#include <doctest/doctest.h>

#include <fstream>
#include <thread>

#include "persist/sqlite_store.hpp"
#include "persist/writer.hpp"
#include "temp_dir.hpp"

using namespace zone::persist;
using zone::persist::test::TempDir;
using Clock = std::chrono::steady_clock;

namespace {

constexpr auto kPatience = std::chrono::seconds(30);

CharacterRecord record(const std::string& key, double x) {
  CharacterRecord r;
  r.key = key;
  r.type = "player";
  r.x = x;
  r.y = 1.0;
  r.properties = {{"health", static_cast<std::int64_t>(x)}};
  return r;
}

std::vector<LoadResult> wait_loads(Writer& w, std::size_t n) {
  std::vector<LoadResult> out;
  const auto deadline = Clock::now() + kPatience;
  while (out.size() < n && Clock::now() < deadline) {
    w.take_loads(out);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return out;
}

}  // namespace

TEST_CASE("saves are committed and acknowledged, loads find them, or say new") {
  TempDir dir;
  std::string error;
  auto w = Writer::start({.path = dir.file("z.sqlite3")}, error);
  REQUIRE_MESSAGE(w, error);
  std::uint64_t last = 0;
  for (int i = 0; i < 100; ++i) last = w->save(record("character:" + std::to_string(i), i), false);
  REQUIRE(last != 0);
  REQUIRE(w->flush(Clock::now() + kPatience));
  CHECK(w->committed_through() >= last);
  CHECK(w->stats().saves_committed == 100);
  CHECK(w->stats().queue_depth == 0);
  w->load(1, "character:42");
  w->load(2, "character:1000");
  const auto loads = wait_loads(*w, 2);
  REQUIRE(loads.size() == 2);
  CHECK(loads[0].request == 1);
  CHECK(loads[0].status == LoadResult::Status::kFound);
  CHECK(loads[0].record == record("character:42", 42));
  CHECK(loads[1].status == LoadResult::Status::kNew);
  CHECK(w->stats().loads == 2);
}

TEST_CASE("what was acknowledged survives the writer and the file being reopened") {
  TempDir dir;
  const std::string path = dir.file("z.sqlite3");
  std::string error;
  {
    auto w = Writer::start({.path = path}, error);
    REQUIRE(w);
    w->save(record("name:ann", 5), true);
    w->save(record("name:ann", 6), true);  // coalesced: the newer one wins
    REQUIRE(w->flush(Clock::now() + kPatience));
  }
  auto store = SqliteStore::open(path, 1000, error);
  REQUIRE(store);
  StoreStatus status;
  CHECK(*store->load("name:ann", status) == record("name:ann", 6));
}

TEST_CASE("the queue's bound refuses new characters but never a leaving one") {
  TempDir dir;
  const std::string path = dir.file("z.sqlite3");
  std::string error;
  // Another connection holds the write lock: nothing can be committed, the queue fills.
  auto holder = SqliteStore::open(path, 10, error);
  REQUIRE(holder);
  auto w = Writer::start(
      {.path = path, .max_queue = 3, .retry = std::chrono::milliseconds(5), .busy_timeout_ms = 10},
      error);
  REQUIRE_MESSAGE(w, error);
  REQUIRE(hold_write_lock_for_test(*holder, true).ok);
  CHECK(w->save(record("character:1", 1), false) != 0);
  CHECK(w->save(record("character:2", 2), false) != 0);
  CHECK(w->save(record("character:3", 3), false) != 0);
  CHECK(w->full());
  CHECK(w->save(record("character:4", 4), false) == 0);  // a checkpoint of a new one: refused
  CHECK(w->save(record("character:1", 11), true) != 0);  // newer than the one waiting
  CHECK(w->save(record("character:5", 5), true) != 0);   // a leave: always taken
  // The failures are counted and reported while the lock is held.
  const auto deadline = Clock::now() + kPatience;
  while (w->stats().save_failures == 0 && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  CHECK(w->stats().save_failures > 0);
  CHECK_FALSE(w->stats().healthy);
  CHECK(w->last_error().find("locked") != std::string::npos);
  // A load meanwhile is answered from the queue (it holds the newest state).
  w->load(7, "character:1");
  const auto loads = wait_loads(*w, 1);
  REQUIRE(loads.size() == 1);
  CHECK(loads[0].record.x == 11);
  // The lock goes: everything queued is committed, nothing acknowledged was lost.
  REQUIRE(hold_write_lock_for_test(*holder, false).ok);
  REQUIRE(w->flush(Clock::now() + kPatience));
  CHECK(w->stats().healthy);
  CHECK_FALSE(w->full());
  StoreStatus status;
  CHECK(holder->load("character:1", status)->x == 11);
  CHECK(holder->load("character:5", status)->x == 5);
  CHECK_FALSE(holder->load("character:4", status));
}

TEST_CASE("a writer on a corrupt file does not start, and says why") {
  TempDir dir;
  const std::string path = dir.file("bad.sqlite3");
  { std::ofstream(path) << std::string(4096, 'x'); }
  std::string error;
  CHECK_FALSE(Writer::start({.path = path}, error));
  CHECK(error.find("not a database") != std::string::npos);
}
