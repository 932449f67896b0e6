// The zone's connected clients: the session table and the rules of the protocol's
// session layer. Takes the decoded events of the network threads (Inbox) on the tick
// thread: connects, hellos (validated, then a player joins the world and a replication
// client is attached), inputs (flood control, value checks, acknowledgments), bad packets
// (counted, and a client that sends too many is disconnected with a reason), silent
// clients and disconnects. What it sends back (welcomes, goodbyes) goes into the
// per-host batches the tick posts.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <random>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include <flatbuffers/flatbuffers.h>

#include "cluster/login_codec.hpp"

#include "config/zone_config.hpp"
#include "net/host_thread.hpp"
#include "protocol/codec.hpp"
#include "replication/replicator.hpp"
#include "util/chunk_grid.hpp"
#include "world/world.hpp"
#include "zone/character_store.hpp"
#include "zone/chat.hpp"
#include "zone/game_hooks.hpp"
#include "zone/ingest.hpp"
#include "zone/layer_streams.hpp"
#include "zone/logger.hpp"
#include "zone/moderation.hpp"
#include "zone/ticket_refusal.hpp"
#include "zone/token_bucket.hpp"

namespace zone {

// Where a zone of a world tells the others of its ticket logins (Sessions::set_login_notices).
using LoginNotices = std::function<void(const cluster::LoginNotice&)>;

// The wall clock in milliseconds since the Unix epoch: when a login happened, comparable
// across the zones of a world (their clocks kept by NTP).
inline std::int64_t wall_clock_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

inline constexpr std::size_t kDisconnectReasons =
    static_cast<std::size_t>(protocol::DisconnectReason::MAX) + 1;
inline constexpr std::size_t kGroupResults =
    static_cast<std::size_t>(protocol::GroupResult::MAX) + 1;
inline constexpr std::size_t kGroupKinds = 2;  // world::GroupKind: party, guild
inline constexpr std::size_t kActionStatuses =
    static_cast<std::size_t>(protocol::ActionStatus::MAX) + 1;
inline constexpr std::size_t kChatStatuses =
    static_cast<std::size_t>(protocol::ChatStatus::MAX) + 1;

struct SessionCounters {
  std::uint64_t joins = 0;
  std::uint64_t leaves = 0;
  std::uint64_t inputs = 0;  // inputs applied
  // Connections closed to make room for a newcomer: limits.max_awaiting_hello others had
  // not said hello, and this one had been silent longest.
  std::uint64_t evicted_silent = 0;
  std::array<std::uint64_t, kDropReasons> drops{};
  std::array<std::uint64_t, kDisconnectReasons> disconnects{};  // by protocol::DisconnectReason
  // JoinParty and JoinGuild requests (by world::GroupKind), by answer.
  std::array<std::array<std::uint64_t, kGroupResults>, kGroupKinds> group_requests{};
  // Handoff: players sent to another zone (Transfer), players who arrived from one with
  // their token, tokens refused (unknown, used or expired), and players handed over here
  // whose clients never came (removed after handoff.arrival_timeout_ms).
  std::uint64_t transfers_out = 0;
  std::uint64_t arrivals = 0;
  std::uint64_t arrival_tokens_refused = 0;
  std::uint64_t arrivals_expired = 0;
  // Gameplay: actions by answer (protocol::ActionStatus), chat lines sent by channel and
  // refused by answer (protocol::ChatStatus).
  std::array<std::uint64_t, kActionStatuses> actions{};
  std::array<std::uint64_t, protocol::kChatChannelCount> chat_lines{};
  std::array<std::uint64_t, kChatStatuses> chat_refused{};
  // Ticket mode (auth.mode: ticket): hellos refused for their ticket, by why; hellos let
  // in with a good ticket; logins that took over a character online here.
  std::array<std::uint64_t, kTicketRefusals> tickets_refused{};
  std::uint64_t tickets_accepted = 0;
  std::uint64_t takeovers = 0;
  // Players that left because their character logged in in another zone of the world.
  std::uint64_t logged_in_elsewhere = 0;
  // Reconnects (players.resume_grace_ms): players held in the world after their
  // connection was lost; players a connection took back with its resume token (from the
  // hold, or from a connection not yet timed out); resume tokens refused; holds that ran
  // out (the player left).
  std::uint64_t holds = 0;
  std::uint64_t resumes = 0;
  std::uint64_t resumes_refused = 0;
  std::uint64_t holds_expired = 0;
  std::uint64_t players_held = 0;  // held now (not a count since start)
  // The character store: logins that found a saved row (the others were new characters).
  std::uint64_t logins_loaded = 0;
};

struct Session {
  // kLoading: a good hello whose character's row the store has not answered yet
  // (persist.enabled); it counts as awaiting hello until it plays.
  enum class Phase : std::uint8_t { kFree, kAwaitingHello, kLoading, kPlaying };
  Phase phase = Phase::kFree;
  net::PeerId peer;
  std::uint32_t player_slot = 0;
  replication::ClientId client = 0;
  std::string name;
  // The ticket's account and character (ticket mode); 0 in open mode.
  std::uint64_t account_id = 0;
  std::uint64_t character_id = 0;
  std::int64_t login_ms = 0;  // ticket mode: when the Hello's ticket was let in (wall clock)
  std::uint32_t last_sequence = 0;
  // The token of this session's Welcome that brings the player back after a lost
  // connection (players.resume_grace_ms > 0).
  std::array<std::uint8_t, 16> resume_token{};
  bool has_resume_token = false;
  // The character store's load this session waits for (kLoading), and since when.
  std::uint64_t load_request = 0;
  // Another zone claimed this character (shared store): its leave is not saved here.
  bool character_lost = false;
  std::chrono::steady_clock::time_point load_started{};
  float intent_x = 0.0f;  // latest accepted movement intent
  float intent_y = 0.0f;
  std::uint32_t bad_packets = 0;  // drops charged to this client
  std::chrono::steady_clock::time_point connected_at{};
  std::chrono::steady_clock::time_point last_input_at{};  // or the welcome
  // Flood control: a token bucket holding up to one second of inputs.
  double input_tokens = 0.0;
  std::chrono::steady_clock::time_point input_refill{};
  // The last JoinParty and JoinGuild accepted (by world::GroupKind); zero: none yet.
  std::array<std::chrono::steady_clock::time_point, kGroupKinds> last_group_request{};
  // What the client has been told of the chunk and static layers (LayerStreams).
  ClientLayers layers;
  // Gameplay rate limits: game.actions_per_second, chat.lines_per_second.
  TokenBucket actions;
  TokenBucket chat;
};

class Sessions {
 public:
  // `config` is the zone's live config (reloads change it in place).
  Sessions(const config::ZoneConfig& config, Logger& log, world::World& world,
           replication::Replicator& replicator);
  // One table per network host, with a slot per peer it can hold.
  void size_hosts(std::span<const std::size_t> peers_per_host);

  // Applies one host's events, in order. `out` holds one batch per host.
  void handle(const Inbox& inbox, std::uint32_t tick, std::span<net::SendBatch> out);
  // Closes connections that never said hello and players that stopped sending inputs.
  void expire(std::chrono::steady_clock::time_point now, std::span<net::SendBatch> out);
  // Each player's latest intent becomes its velocity.
  void apply_inputs();
  // Refuses newcomers from now on and says goodbye to everyone; returns the players' peers
  // (their clients confirm the goodbye; the others are closed at once).
  std::vector<net::PeerId> close_all(protocol::DisconnectReason reason,
                                     std::span<net::SendBatch> out);
  // A Changed status to every member of each group changed since the last call (the
  // tick's requests and leaves), but the member whose answer already said so.
  void send_group_notices(std::span<net::SendBatch> out);
  // Calls fn(Session&) for every session playing (the chunk and static layers walk them).
  template <typename Fn>
  void for_each_playing(Fn&& fn) {
    for (auto& host : table_) {
      for (Session& s : host) {
        if (s.phase == Session::Phase::kPlaying) fn(s);
      }
    }
  }
  // Handoff (a world of zones, docs/world.md). The player at `slot` was taken over by
  // another zone: its client is sent a Transfer and its connection closed (Transferred);
  // the entity stays, for the caller to make a ghost.
  void transfer_out(std::uint32_t slot, std::string_view zone, std::string_view host,
                    std::uint16_t port, std::span<const std::uint8_t> token,
                    std::span<net::SendBatch> out);
  // A player handed over to this zone at `slot`: its client may say Hello with `token`
  // within `timeout`, once; then it plays on in that entity and rejoins its party and
  // guild (invitation keys, 0: none).
  void expect_arrival(std::uint32_t slot, std::span<const std::uint8_t> token,
                      std::uint64_t party_key, std::uint64_t guild_key,
                      std::chrono::milliseconds timeout);
  // Withdraws the arrival of entity `id` if its client has not come (the caller makes the
  // entity a ghost again); true when there was one.
  bool cancel_arrival(world::EntityId id);
  // Room for one more player (joins and arrivals alike), and the zone not closing.
  bool can_take_player() const;
  // Players whose connection was lost, held in the world for their client to resume.
  std::size_t held_count() const { return held_.size(); }
  // Whether the player at `slot` is held so (no client plays it now).
  bool is_held(std::uint32_t slot) const;

  // The game's rules, told of joins and leaves and asked for actions (none: every action
  // is answered NotAllowed). Must outlive the sessions or be reset first.
  void set_game(GameHooks* game) { game_ = game; }
  const PlayerNames& names() const { return names_; }
  // In a world of zones: where chat lines for other zones go (a zone alone: none).
  void set_chat_forward(ChatForward forward) { chat_forward_ = std::move(forward); }
  // In a world of zones: where this zone's ticket logins are told to the other zones
  // (docs/world.md, "One character, online once"; a zone alone: nowhere).
  void set_login_notices(LoginNotices notices) { login_notice_ = std::move(notices); }
  // A ticket login in another zone of the world: this zone's copy of the character, if
  // it came here before that login, leaves with reason LoggedInElsewhere (saved, as any
  // leave). True if one left.
  bool logged_in_elsewhere(const cluster::LoginNotice& login, bool wins_tie,
                           std::span<net::SendBatch> out);

  // GM commands (docs/operations.md). Bans and mutes are asked of `moderation` (none:
  // nobody is banned or muted); it must outlive the sessions or be reset first.
  void set_moderation(const Moderation* moderation) { moderation_ = moderation; }
  // Ends the connection of the player at `slot` with `reason` (Kicked, Banned); a player
  // held for a reconnect leaves at once. False when no client plays it here and it is not
  // held (an NPC, a ghost, a player whose client has not come).
  bool kick_player(std::uint32_t slot, protocol::DisconnectReason reason,
                   std::span<net::SendBatch> out);
  // The session playing `slot`, or nullptr (inspect).
  const Session* session_of(std::uint32_t slot) const;

  // The character store (persist.enabled; none: every login is a new character). Logins
  // wait for their row (kLoading); leaves and handoffs save. Must outlive the sessions.
  void set_store(CharacterStore* store) { store_ = store; }
  // Logins whose rows came back start playing (restored), or are refused
  // (StoreUnavailable) when the store failed them (sessions_store.cpp).
  void finish_loads(std::uint32_t tick, std::span<net::SendBatch> out);

  // Sends `bytes` reliably to every player (a parameter change).
  void broadcast(std::span<const std::uint8_t> bytes, std::span<net::SendBatch> out);

  net::PeerId peer_of(replication::ClientId c) const { return peer_of_client_[c]; }
  const SessionCounters& counters() const { return counters_; }
  bool accepting() const { return accepting_; }
  // Players per network host (which host the kernel gave each client to).
  std::vector<std::size_t> players_per_host() const;

 private:
  Session* find(net::PeerId peer);
  void on_connect(const InboundEvent& ev, std::span<net::SendBatch> out);
  void on_disconnect(const InboundEvent& ev);
  void on_hello(Session& s, const Inbox& inbox, const InboundEvent& ev, std::uint32_t tick,
                std::span<net::SendBatch> out);
  // The player at s.player_slot starts playing: its replication client, the Welcome.
  // `fresh`: a new player (or one arriving from another zone); false: a take-over of an
  // entity already playing here.
  void start_playing(Session& s, std::uint32_t tick, std::span<net::SendBatch> out,
                     bool fresh = true);
  // Ticket mode: lets the hello's verified ticket through, or refuses the connection
  // (false) with the reason and a count.
  bool admit_ticket(Session& s, const InboundEvent& ev, std::string_view name,
                    std::span<net::SendBatch> out);
  void refuse_ticket(Session& s, TicketRefusal why, std::span<net::SendBatch> out);
  // A ticketed Hello of a banned account: refused with Banned (true), before it takes
  // anything over or arrives.
  bool refuse_banned(Session& s, std::span<net::SendBatch> out);
  // Whether s's player may not chat now.
  bool muted(const Session& s, std::chrono::steady_clock::time_point at) const;
  // Ticket mode: if s's character is online here, s takes its entity over (the older
  // connection is closed with LoggedInElsewhere) and true is returned.
  bool take_over(Session& s, std::uint32_t tick, std::span<net::SendBatch> out);
  // Tells the other zones of the world of a ticket login that now plays here.
  void announce_login(const Session& s);
  // A hello with a transfer token: the player another zone handed over.
  void on_arrival(Session& s, std::span<const std::uint8_t> token, std::uint32_t tick,
                  std::span<net::SendBatch> out);
  void expire_arrivals(std::chrono::steady_clock::time_point now);
  // Reconnects (docs/protocol.md, "Reconnecting"). A playing session whose connection was
  // lost: its player stays in the world, still, for players.resume_grace_ms; true if so
  // (false: the grace is 0 or the zone is closing, and the caller ends the session).
  bool hold(Session& s);
  // A hello with a resume token: s takes that player back, from the hold or from an older
  // connection of the same client that has not timed out yet.
  void on_resume(Session& s, std::span<const std::uint8_t> token, std::uint32_t tick,
                 std::span<net::SendBatch> out);
  // Holds past their grace: those players leave the world.
  void expire_holds(std::chrono::steady_clock::time_point now);
  // Ends the hold at `slot`: the player leaves the world (saved unless `save` is false:
  // another zone claimed the character). False if none.
  bool release_hold(std::uint32_t slot, bool save = true);
  // s plays the entity at `slot`, which is in the world already (a take-over or a
  // resume): a new replication client (full snapshots), the Welcome, its groups' status.
  void reattach(Session& s, std::uint32_t slot, std::uint32_t tick, std::span<net::SendBatch> out);
  // The player at `slot` leaves the world, or is handed over (`keep_entity`): the rules
  // are told, its last state saved (unless `save` is false), its name and groups updated.
  // `s`, if any, is the session playing it, detached from it before the entity goes.
  void leave_world(std::uint32_t slot, const std::string& name, bool keep_entity, Session* s,
                   bool save = true);
  void on_input(Session& s, const InboundEvent& ev, std::span<net::SendBatch> out);
  void on_join_group(Session& s, world::GroupKind kind, const InboundEvent& ev,
                     std::span<net::SendBatch> out);
  void on_action(Session& s, const InboundEvent& ev, std::uint32_t tick,
                 std::span<net::SendBatch> out);
  // The checks the engine makes before the rules see an action (docs/protocol.md).
  protocol::ActionStatus check_action(const Session& s, const InboundEvent& ev) const;
  void on_chat(Session& s, const Inbox& inbox, const InboundEvent& ev,
               std::span<net::SendBatch> out);
  const config::GroupConfig& group_config(world::GroupKind kind) const;
  // Takes one token of the session's input bucket (inputs and requests share it);
  // false, with the packet dropped as a flood, when none is left.
  bool take_token(Session& s, std::chrono::steady_clock::time_point at,
                  std::span<net::SendBatch> out);
  // PartyStatus or GuildStatus to the player in `slot` (its current group and members).
  void send_group_status(world::GroupKind kind, std::uint32_t slot, protocol::GroupResult result,
                         std::span<net::SendBatch> out);
  // Notes that `group` changed; `answered_slot` (or kNobody) is the member whose answer
  // already shows the change. Every other member is told once per tick, whatever the
  // number of changes: a guild whose members all leave in one tick (a host outage) costs
  // each remaining member one notice, not one per leaver.
  static constexpr std::uint32_t kNobody = 0xFFFFFFFFu;
  void group_changed(world::GroupKind kind, world::GroupId group, std::uint32_t answered_slot);
  // The character store's part of a login and a leave (sessions_store.cpp): a hello
  // that passed every check waits for its character's row; a new player spawns, with
  // the saved state when there is one.
  void begin_load(Session& s, std::string_view name, std::span<net::SendBatch> out);
  void join_new(Session& s, std::string_view name, std::uint32_t tick,
                std::span<net::SendBatch> out, const persist::CharacterRecord* saved);
  void expire_loads(std::chrono::steady_clock::time_point now, std::span<net::SendBatch> out);
  // Disconnects (LoggedInElsewhere) the players whose character another zone claimed.
  void drop_lost_characters(std::span<net::SendBatch> out);
  // Back in the party and guild of these invitation keys (0: none), each answered.
  void rejoin_groups(Session& s, std::uint64_t party_key, std::uint64_t guild_key,
                     std::span<net::SendBatch> out);
  void drop(Session& s, DropReason reason, std::span<net::SendBatch> out);
  void kick(Session& s, protocol::DisconnectReason reason, std::span<net::SendBatch> out);
  // Ends the session; `keep_entity`: the player stays in the world (handed over).
  void end_session(Session& s, bool keep_entity = false);
  // A playing session lets go of its player: its replication client and its place in the
  // tables; the entity and its groups stay as they are. The session is free afterwards.
  // `keep_character`: the character stays this slot's (held for a reconnect).
  void detach_player(Session& s, bool keep_character = false);
  void new_resume_token(Session& s);

  const config::ZoneConfig& config_;
  Logger& log_;
  GameHooks* game_ = nullptr;
  const Moderation* moderation_ = nullptr;
  PlayerNames names_;
  ChatForward chat_forward_;
  world::World& world_;
  replication::Replicator& replicator_;
  std::vector<std::vector<Session>> table_;  // by host, then peer slot
  std::vector<net::PeerId> peer_of_client_;  // replication client -> its peer
  std::vector<net::PeerId> peer_of_slot_;    // world slot -> its player's peer (or invalid)
  // Ticket mode: the world slot of each character playing here (one login a character).
  // With the time it came here (a login's, else its arrival's or resume's): of two copies
  // of a character in a world, the later one stays (logged_in_elsewhere).
  struct CharacterHere {
    std::uint32_t slot = 0;
    std::int64_t since_ms = 0;
  };
  std::unordered_map<std::uint64_t, CharacterHere> slot_of_character_;
  LoginNotices login_notice_;
  bool accepting_ = true;
  std::size_t awaiting_hello_ = 0;  // sessions in kAwaitingHello
  SessionCounters counters_;
  flatbuffers::FlatBufferBuilder fbb_{256};
  std::vector<std::uint32_t> member_ids_;  // scratch for PartyStatus and GuildStatus
  struct ChangedGroup {
    world::GroupKind kind;
    world::GroupId group;
    std::uint32_t answered_slot;
  };
  std::vector<ChangedGroup> changed_groups_;  // since the last send_group_notices
  struct Arrival {  // a player handed over to this zone, its client not yet here
    std::array<std::uint8_t, 16> token;
    std::uint32_t slot;
    world::EntityId id;
    std::uint64_t party_key;
    std::uint64_t guild_key;
    std::chrono::steady_clock::time_point deadline;
  };
  std::vector<Arrival> arrivals_;
  struct Hold {  // a player whose connection was lost, kept for its client to resume
    std::array<std::uint8_t, 16> token;
    std::uint32_t slot;
    std::string name;
    std::chrono::steady_clock::time_point deadline;
  };
  std::vector<Hold> held_;
  std::vector<Hold>::iterator find_hold(std::uint32_t slot);
  std::random_device random_;  // resume tokens
  CharacterStore* store_ = nullptr;
  std::unordered_map<std::uint64_t, net::PeerId> loading_;  // load request -> its session
  std::uint64_t next_load_ = 0;
  std::vector<persist::LoadResult> load_answers_;
  std::vector<std::string> lost_characters_;
  // Joins, leaves and refusals come in bursts under churn: a few lines, then a count.
  LogRateLimiter session_log_{50, std::chrono::seconds(10)};
  LogRateLimiter bad_input_log_{10, std::chrono::seconds(10)};
};

}  // namespace zone
