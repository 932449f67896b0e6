// The banned accounts of a zone (GM commands, docs/operations.md): a bounded list kept in
// a small JSON file (admin.bans_file) so that bans survive a restart.
//
// Threads: banned() is called by the tick thread at every ticketed Hello; ban() and
// unban() by admin threads. The file is written before the list in memory changes, so
// the zone never enforces a ban its file would lose (and a ban that could not be saved
// is refused, not half-done). Writes replace the file whole: a temporary file beside it,
// flushed, then renamed over it, so a crash leaves the old list or the new one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace zone {

struct Ban {
  std::uint64_t account = 0;
  std::int64_t at = 0;  // Unix seconds
  std::string by;       // the admin caller's address
  std::string reason;   // the operator's words (may be empty)
};

class BanList {
 public:
  // Bounds: a list an operator can read, and a file the zone reads at start-up quickly.
  static constexpr std::size_t kMaxBans = 100'000;
  static constexpr std::size_t kMaxReasonBytes = 200;
  static constexpr std::size_t kMaxByBytes = 64;
  static constexpr std::size_t kMaxFileBytes = 32 * 1024 * 1024;

  // `path`: the file ("" keeps the list in memory only).
  explicit BanList(std::string path) : path_(std::move(path)) {}

  // Start-up: reads the file (missing: an empty list). nullopt, or what is wrong with it
  // (the zone refuses to start rather than forget its bans).
  std::optional<std::string> load();

  bool banned(std::uint64_t account) const;

  enum class Change : std::uint8_t { kDone, kUnchanged, kFull, kSaveFailed };
  // Adds (or re-states) a ban; kUnchanged if the account was banned already (the first
  // ban's record stays). On kSaveFailed, `error` says why and nothing changed.
  Change ban(const Ban& ban, std::string& error);
  // kUnchanged if the account was not banned.
  Change unban(std::uint64_t account, std::string& error);

  std::vector<Ban> list() const;  // by account
  std::size_t size() const;
  const std::string& path() const { return path_; }

 private:
  using Map = std::unordered_map<std::uint64_t, Ban>;
  // Writes `bans` to path_ (temp + rename); false with `error` set.
  bool save(const Map& bans, std::string& error) const;

  const std::string path_;
  std::mutex write_mutex_;  // one ban or unban at a time: file and memory stay in step
  mutable std::mutex mutex_;
  Map bans_;  // under mutex_
};

}  // namespace zone
