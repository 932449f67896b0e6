// GM commands (docs/operations.md): what an operator does to players through the admin
// endpoint - kick, ban and unban an account, mute and unmute, teleport, broadcast,
// inspect.
//
// Threads: the admin threads parse a request into a GmRequest and queue it (GmQueue);
// the tick thread applies the queue at the start of a tick (GmDesk::apply), since only it
// may touch the world and the sessions, and answers each request through its promise.
// Bans live in the BanList (its file is written by the admin thread that bans, never by
// the tick); mutes live in the GmDesk, on the tick thread.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <future>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/zone_config.hpp"
#include "net/host_thread.hpp"
#include "world/world.hpp"
#include "zone/ban_list.hpp"
#include "zone/moderation.hpp"
#include "zone/sessions.hpp"

namespace zone {

enum class GmCommand : std::uint8_t {
  kKick,
  kBan,
  kUnban,
  kMute,
  kUnmute,
  kTeleport,
  kBroadcast,
  kInspect
};
inline constexpr std::size_t kGmCommands = 8;

// How a command ended: the label of zone_gm_commands_total{result} and the HTTP status.
enum class GmResult : std::uint8_t {
  kOk,        // 200: done
  kInvalid,   // 400: missing or malformed arguments
  kNotFound,  // 404: no such player (or entity)
  kRefused,   // 409: the zone will not (a blocked point, a ban in open mode, a name two
              // players share, shutting down)
  kError,     // 500/503: it could not (the bans file not written, the tick did not answer)
};
inline constexpr std::size_t kGmResults = 5;

const char* to_string(GmCommand c);
const char* to_string(GmResult r);
int http_status(GmResult r);

// Which player (or entity) a command is about: id= or name= (exactly one).
struct GmTarget {
  std::uint32_t id = 0;  // 0: by name
  std::string name;
};

struct GmRequest {
  GmCommand command = GmCommand::kInspect;
  GmTarget target;
  std::uint64_t account = 0;  // ban: the account whose online players are kicked
  double x = 0.0;             // teleport
  double y = 0.0;
  std::uint32_t seconds = 0;  // mute
  std::string text;           // broadcast: the line
};

struct GmAnswer {
  GmResult result = GmResult::kOk;
  std::string message;    // one line, for the audit log and the answer
  nlohmann::json detail;  // the answer's fields (inspect: the character)
};

// zone_gm_commands_total{command,result}: atomics, counted by the admin threads.
class GmCounters {
 public:
  void count(GmCommand c, GmResult r) {
    counts_[static_cast<std::size_t>(c)][static_cast<std::size_t>(r)].fetch_add(
        1, std::memory_order_relaxed);
  }
  std::uint64_t get(GmCommand c, GmResult r) const {
    return counts_[static_cast<std::size_t>(c)][static_cast<std::size_t>(r)].load(
        std::memory_order_relaxed);
  }
  // The family in Prometheus text, every pair present (0 until counted).
  std::string render() const;

 private:
  std::array<std::array<std::atomic<std::uint64_t>, kGmResults>, kGmCommands> counts_{};
};

struct PendingGm {
  GmRequest request;
  std::promise<GmAnswer> done;
};

// Requests from the admin threads to the tick (like ReloadController): request() and
// close() from any thread, pending() and take() from the tick thread.
class GmQueue {
 public:
  // Bounded: an operator's script gone wrong cannot pile work onto the tick.
  static constexpr std::size_t kMaxPending = 256;
  std::future<GmAnswer> request(GmRequest request);
  void close();
  bool pending() const { return pending_.load(); }
  std::vector<PendingGm> take();

 private:
  std::mutex mutex_;
  std::vector<PendingGm> queue_;  // under mutex_
  bool closed_ = false;           // under mutex_
  std::atomic<bool> pending_{false};
};

// What a command may act on, for one tick.
struct GmContext {
  world::World& world;
  Sessions& sessions;
  std::span<net::SendBatch> out;
  const config::ZoneConfig& config;
  const CharacterStore* store;  // persist.enabled, else null
};

// The tick thread's side: the mutes, and every command applied. Sessions ask it who is
// banned (through the BanList) and who is muted.
class GmDesk final : public Moderation {
 public:
  // Mutes kept at once (expired ones are forgotten first).
  static constexpr std::size_t kMaxMutes = 100'000;
  static constexpr std::uint32_t kMaxMuteSeconds = 30 * 24 * 3600;

  explicit GmDesk(const BanList& bans) : bans_(bans) {}
  bool banned(std::uint64_t account) const override { return bans_.banned(account); }
  bool muted(const world::Entity& player, std::chrono::steady_clock::time_point now) const override;

  GmAnswer apply(const GmRequest& request, GmContext& zone);

 private:
  // The slot of the live entity the target names, or an answer saying why not.
  std::optional<std::uint32_t> resolve(const GmTarget& target, const world::World& world,
                                       bool players_only, GmAnswer& why) const;
  GmAnswer kick(const GmRequest& r, GmContext& zone);
  GmAnswer kick_account(const GmRequest& r, GmContext& zone);
  GmAnswer mute(const GmRequest& r, GmContext& zone, bool on);
  GmAnswer teleport(const GmRequest& r, GmContext& zone);
  GmAnswer broadcast(const GmRequest& r, GmContext& zone);
  GmAnswer inspect(const GmRequest& r, GmContext& zone);

  const BanList& bans_;
  // Until when: by account in ticket mode (a muted player cannot shake it off by
  // logging in again), by entity id in open mode (until it leaves).
  std::unordered_map<std::uint64_t, std::chrono::steady_clock::time_point> muted_accounts_;
  std::unordered_map<world::EntityId, std::chrono::steady_clock::time_point> muted_entities_;
};

}  // namespace zone
