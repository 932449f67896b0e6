#include "zone/ban_list.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace zone {

namespace {

// Writes all of `text` to a new file at `path` and flushes it to disk.
bool write_file(const std::string& path, const std::string& text, std::string& error) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    error = fmt::format("cannot create {}: {}", path, std::strerror(errno));
    return false;
  }
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error = fmt::format("cannot write {}: {}", path, std::strerror(errno));
      ::close(fd);
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  // The rename must not reach the disk before the data it names.
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    error = fmt::format("cannot flush {}: {}", path, std::strerror(errno));
    return false;
  }
  return true;
}

}  // namespace

std::optional<std::string> BanList::load() {
  if (path_.empty()) return std::nullopt;
  std::error_code ec;
  const auto status = std::filesystem::status(path_, ec);
  if (!std::filesystem::exists(status)) return std::nullopt;  // no bans yet
  if (!std::filesystem::is_regular_file(status)) return path_ + ": not a regular file";
  if (std::filesystem::file_size(path_, ec) > kMaxFileBytes || ec) {
    return fmt::format("{}: larger than {} bytes (or unreadable)", path_, kMaxFileBytes);
  }
  std::ifstream in(path_, std::ios::binary);
  if (!in) return path_ + ": cannot be read";
  std::stringstream text;
  text << in.rdbuf();
  Map bans;
  try {
    const nlohmann::json doc = nlohmann::json::parse(text.str());
    if (doc.at("version").get<int>() != 1) return path_ + ": unknown version";
    const nlohmann::json& list = doc.at("bans");
    if (!list.is_array() || list.size() > kMaxBans) {
      return fmt::format("{}: \"bans\" must be a list of at most {}", path_, kMaxBans);
    }
    for (const nlohmann::json& b : list) {
      Ban ban;
      ban.account = b.at("account").get<std::uint64_t>();
      ban.at = b.value("at", std::int64_t{0});
      ban.by = b.value("by", std::string());
      ban.reason = b.value("reason", std::string());
      if (ban.account == 0) return path_ + ": account 0 is no account";
      ban.by.resize(std::min(ban.by.size(), kMaxByBytes));
      ban.reason.resize(std::min(ban.reason.size(), kMaxReasonBytes));
      bans[ban.account] = std::move(ban);
    }
  } catch (const std::exception& e) {
    return fmt::format("{}: not a bans file ({})", path_, e.what());
  }
  std::lock_guard lock(mutex_);
  bans_ = std::move(bans);
  return std::nullopt;
}

bool BanList::banned(std::uint64_t account) const {
  std::lock_guard lock(mutex_);
  return bans_.contains(account);
}

BanList::Change BanList::ban(const Ban& ban, std::string& error) {
  std::lock_guard write(write_mutex_);
  Map next;
  {
    std::lock_guard lock(mutex_);
    if (bans_.contains(ban.account)) return Change::kUnchanged;
    if (bans_.size() >= kMaxBans) return Change::kFull;
    next = bans_;
  }
  Ban b = ban;
  b.by.resize(std::min(b.by.size(), kMaxByBytes));
  b.reason.resize(std::min(b.reason.size(), kMaxReasonBytes));
  next[b.account] = std::move(b);
  if (!save(next, error)) return Change::kSaveFailed;
  std::lock_guard lock(mutex_);
  bans_ = std::move(next);
  return Change::kDone;
}

BanList::Change BanList::unban(std::uint64_t account, std::string& error) {
  std::lock_guard write(write_mutex_);
  Map next;
  {
    std::lock_guard lock(mutex_);
    if (!bans_.contains(account)) return Change::kUnchanged;
    next = bans_;
  }
  next.erase(account);
  if (!save(next, error)) return Change::kSaveFailed;
  std::lock_guard lock(mutex_);
  bans_ = std::move(next);
  return Change::kDone;
}

std::vector<Ban> BanList::list() const {
  std::vector<Ban> out;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [account, ban] : bans_) out.push_back(ban);
  }
  std::sort(out.begin(), out.end(),
            [](const Ban& a, const Ban& b) { return a.account < b.account; });
  return out;
}

std::size_t BanList::size() const {
  std::lock_guard lock(mutex_);
  return bans_.size();
}

bool BanList::save(const Map& bans, std::string& error) const {
  if (path_.empty()) return true;
  std::vector<const Ban*> sorted;
  for (const auto& [account, ban] : bans) sorted.push_back(&ban);
  std::sort(sorted.begin(), sorted.end(),
            [](const Ban* a, const Ban* b) { return a->account < b->account; });
  nlohmann::json list = nlohmann::json::array();
  for (const Ban* b : sorted) {
    list.push_back({{"account", b->account}, {"at", b->at}, {"by", b->by}, {"reason", b->reason}});
  }
  const nlohmann::json doc = {{"version", 1}, {"bans", std::move(list)}};
  // Reasons are the operator's text: invalid UTF-8 is replaced rather than refused.
  const std::string text = doc.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  const std::filesystem::path target(path_);
  std::error_code ec;
  if (target.has_parent_path()) std::filesystem::create_directories(target.parent_path(), ec);
  const std::string temp = path_ + ".tmp";
  if (!write_file(temp, text, error)) return false;
  if (::rename(temp.c_str(), path_.c_str()) != 0) {
    error = fmt::format("cannot rename {} to {}: {}", temp, path_, std::strerror(errno));
    ::unlink(temp.c_str());
    return false;
  }
  // The rename itself is durable once the directory is.
  const std::string dir = target.has_parent_path() ? target.parent_path().string() : ".";
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return true;
}

}  // namespace zone
