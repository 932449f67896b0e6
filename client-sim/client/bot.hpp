// One headless client: the client kit's protocol Session (client/session.hpp: the Hello,
// the replica the server's snapshots build, the inputs and requests it sends) and what a
// load tester checks and counts on top of it. Many bots share one ENet client host; the
// owner routes each network event to the bot whose peer it concerns, and the bot hands it
// to its session.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "client/layer_check.hpp"
#include "client/session.hpp"
#include "client/session_info.hpp"
#include "client/static_layer.hpp"
#include "net/enet_host.hpp"
#include "protocol/zone_generated.h"
#include "replica/frame_replica.hpp"
#include "util/chunk_grid.hpp"

namespace zone::client {

// The bot's party or guild as the server last described it (PartyStatus, GuildStatus).
struct GroupInfo {
  std::uint32_t id = 0;                // 0: none
  std::uint8_t last_result = 0;        // protocol::GroupResult of the last status
  std::vector<std::uint32_t> members;  // entity ids, ascending, the bot included
  std::uint64_t statuses = 0;          // status messages received
};

// The chunk layer as the bot follows it (ChunkUpdate), and its checks of the server's
// decisions: after each update the bot's chunks must be exactly right for its own
// position at the update's tick (read from its frame of that tick): every chunk within
// the load radius loaded, none beyond the unload radius.
// Mismatches: a wrong set, or a load of a loaded chunk (an unload of an absent one).
struct ChunkInfo : LayerCheck {
  std::vector<util::ChunkCoord> loaded;  // ascending
};

// An event as the bot received it: an entry of an Events message, and its tick.
struct ReceivedEvent {
  std::uint32_t tick = 0;  // the Events message's server_tick
  std::uint32_t sequence = 0;
  std::uint16_t kind = 0;
  std::uint32_t entity = 0;
  std::uint32_t target = 0;
  friend bool operator==(const ReceivedEvent&, const ReceivedEvent&) = default;
};

// The same with what only a reader needs (tests, the chat log): arguments, text, name.
struct EventDetail {
  ReceivedEvent event;
  std::vector<std::int32_t> args;
  std::string text;
  std::string name;  // chat: the speaker's
};

// What the server answered an Action with.
struct ActionAnswer {
  std::uint32_t sequence = 0;
  protocol::ActionStatus status = protocol::ActionStatus::Ok;
  std::uint32_t server_tick = 0;
};

inline constexpr std::size_t kActionStatusCount =
    static_cast<std::size_t>(protocol::ActionStatus::MAX) + 1;
inline constexpr std::size_t kChatStatusCount =
    static_cast<std::size_t>(protocol::ChatStatus::MAX) + 1;

// Gameplay traffic (protocol 8): actions and their answers, chat lines and their
// refusals, events received, and the events that broke the holding rule.
struct GameCounters {
  std::uint64_t actions_sent = 0;
  std::array<std::uint64_t, kActionStatusCount> action_results{};      // by ActionStatus
  std::array<std::uint64_t, protocol::kChatChannelCount> chat_sent{};  // by channel
  std::array<std::uint64_t, kChatStatusCount> chat_results{};          // refusals, by ChatStatus
  std::uint64_t events_received = 0;
  // Events received about an entity the bot never held at or before the event's tick
  // (docs/protocol.md, "Events"): a server error.
  std::uint64_t events_before_spawn = 0;
  void add(const GameCounters& o) {
    actions_sent += o.actions_sent;
    for (std::size_t i = 0; i < action_results.size(); ++i)
      action_results[i] += o.action_results[i];
    for (std::size_t i = 0; i < chat_sent.size(); ++i) chat_sent[i] += o.chat_sent[i];
    for (std::size_t i = 0; i < chat_results.size(); ++i) chat_results[i] += o.chat_results[i];
    events_received += o.events_received;
    events_before_spawn += o.events_before_spawn;
  }
};

struct BotCounters {
  std::uint64_t packets_in = 0;
  std::uint64_t bytes_in = 0;
  std::uint64_t packets_out = 0;
  std::uint64_t bytes_out = 0;
  std::uint64_t snapshots = 0;  // snapshot parts received
  std::uint64_t malformed = 0;  // server packets that failed verification or parsing
};

class Bot final : private SessionObserver {
 public:
  // kTransferring: the server sent a Transfer and closed the connection (Transferred);
  // the owner reconnects the bot to the new zone (connect_transfer).
  using Phase = Session::Phase;

  explicit Bot(std::string name) : session_(std::move(name)) {}

  // Starts connecting; the host delivers the connect event later.
  void connect(net::EnetHost& host, const std::string& server, std::uint16_t port);
  // After a Transfer: connects to the new zone, to say Hello with the transfer token. The
  // old zone's replica, chunks and static objects are dropped (bank their counts first).
  void connect_transfer(net::EnetHost& host);
  const TransferInfo& transfer() const { return session_.transfer(); }
  std::uint64_t transfers() const { return transfers_; }
  // Transfers after which the new zone's Welcome named another entity than the
  // Transfer did (the player's id must not change).
  std::uint64_t transfer_id_changes() const { return transfer_id_changes_; }
  // Routed network events.
  void on_connect(net::EnetHost& host);
  void on_disconnect(std::uint32_t reason);
  void on_packet(std::uint8_t channel, std::span<const std::uint8_t> bytes);
  // Sends one input with the given movement intent and the newest complete frame as ack.
  void send_input(net::EnetHost& host, float move_x, float move_y);
  // Asks for the party (guild) of `key` (0 leaves); the answer updates party() (guild()).
  void join_party(net::EnetHost& host, std::uint64_t key);
  void join_guild(net::EnetHost& host, std::uint64_t key);
  const GroupInfo& party() const { return party_; }
  const GroupInfo& guild() const { return guild_; }
  const ChunkInfo& chunks() const { return chunks_; }
  const StaticInfo& statics() const { return statics_.info(); }
  // The zone's static map (GET /debug/static) for the static layer's exact check; set
  // before connecting. Without it the bot checks the layer against its position only.
  void set_static_truth(std::shared_ptr<const StaticTruth> truth) {
    static_truth_ = std::move(truth);
  }
  // Same, by zone (the Welcome's zone name picks one); used when no single map was set.
  // `truths` must outlive the bot.
  void set_zone_statics(const ZoneStatics* truths) { zone_statics_ = truths; }
  // Checks the last ChunkUpdate against the bot's own position at its tick once the
  // frame of that tick is complete (on_packet calls it as frames arrive).
  void check_chunks();
  // Says goodbye (ClientQuit) and forgets the connection.
  void quit(net::EnetHost& host);
  // Reconnects (docs/protocol.md, "Reconnecting"). drop() forgets the connection without
  // a word, as a lost network does (the zone notices by a time-out); resume() connects
  // again (a new port, as after a network switch) and says Hello with the last Welcome's
  // resume token. The replica, chunks and static objects start again from nothing (bank
  // their counts first).
  void drop(net::EnetHost& host);
  // The same for a bot that shares its ENet host with others: it stops using the
  // connection (no inputs, nothing read) but leaves the peer to ENet until the zone closes
  // it. Freed at once, the peer's slot would go to the next connection of the host, which
  // on the same socket would then receive the old session's last packets (its goodbye
  // among them); a client that really lost its network has a new address instead.
  void go_silent() { session_.go_idle(); }
  // Connects to the zone it last played in (the first one, or the last Transfer's).
  void resume(net::EnetHost& host);
  const std::vector<std::uint8_t>& resume_token() const { return session_.resume_token(); }
  // Presents `token` as a resume token in the hello (tests give one of another client, or
  // a used one); set before connecting.
  void set_resume_token(std::vector<std::uint8_t> token) {
    session_.set_resume_token(std::move(token));
  }
  // Welcomes after a resume, and those that named another entity than before (the
  // player's id must not change).
  std::uint64_t resumes() const { return resumes_; }
  std::uint64_t resume_id_changes() const { return resume_id_changes_; }

  // Protocol 8. Asks for the schema's action `action` (an index into schema().actions())
  // on `target` (0: none); returns the Action's sequence number (0: not playing, nothing
  // sent). The answer arrives as an ActionAnswer (last_answers()).
  std::uint32_t send_action(net::EnetHost& host, std::uint16_t action, std::uint32_t target,
                            std::span<const std::int32_t> args = {});
  // Sends a chat line; the server answers only a refusal (chat_refusals()).
  void send_chat(net::EnetHost& host, protocol::ChatChannel channel, std::string_view text,
                 std::string_view to = {});
  const GameCounters& game() const { return game_; }
  // Events per kind (index into schema().events()) in this session.
  const std::vector<std::uint64_t>& events_by_kind() const { return events_by_kind_; }
  // The newest answers (64, oldest first), chat refusals (the same) and events with their
  // details (the last 64, in no particular order once there were more).
  const std::vector<ActionAnswer>& last_answers() const { return answers_; }
  const std::vector<std::pair<protocol::ChatStatus, std::uint8_t>>& chat_refusals() const {
    return refusals_;
  }
  const std::vector<EventDetail>& last_events() const { return recent_events_; }
  // The first events that broke the holding rule, readable.
  const std::vector<std::string>& before_spawn_details() const { return before_spawn_details_; }
  // Every event received, in order, kept for the event truth check while on (off by
  // default: nothing is kept); the checker drops what it has checked.
  void set_keep_events(bool keep) { keep_events_ = keep; }
  const std::deque<ReceivedEvent>& event_log() const { return event_log_; }
  void drop_events_through(std::uint32_t tick);
  // Every event the server sent this bot about ticks before this one has arrived: the
  // server sends a tick's events in order on the reliable channel, before anything it
  // sends reliably at a later tick (Events, ActionResult), so what carries a later tick
  // closes the earlier ones. 0: nothing yet.
  std::uint32_t events_settled_before() const { return settled_before_; }
  // Whether the bot held `entity` (its own, or in a frame it completed) at or before
  // `tick` in this session: what an event about it needs (full replica only).
  bool held_by(std::uint32_t entity, std::uint32_t tick) const;

  Phase phase() const { return session_.phase(); }
  net::PeerId peer() const { return peer_; }
  const std::string& name() const { return session_.name(); }
  const Session& session() const { return session_; }
  const WelcomeInfo& welcome() const { return session_.welcome(); }
  const replica::FrameReplica& replica() const { return session_.replica(); }
  replica::FrameReplica& replica() { return session_.replica(); }
  std::uint32_t disconnect_reason() const { return session_.disconnect_reason(); }
  BotCounters counters() const;
  std::uint32_t input_sequence() const { return session_.input_sequence(); }
  // Presents `token` in the hello, as a client another zone handed over does (tests give
  // one the zone never issued); set before connecting.
  void set_transfer_token(std::vector<std::uint8_t> token) {
    session_.set_transfer_token(std::move(token));
  }
  // The login ticket every Hello of this bot carries (a zone in ticket mode requires one;
  // docs/protocol.md, "Tickets"), after a Transfer too; set before connecting.
  void set_ticket(std::vector<std::uint8_t> ticket) { session_.set_ticket(std::move(ticket)); }
  // Protocol version to announce; tests change it to provoke a refusal.
  void set_protocol_version(std::uint16_t v) { session_.set_protocol_version(v); }
  // Light mode: snapshots are verified and acknowledged once every part of a tick has
  // arrived, but no replica is rebuilt. For loading a server harder than full replicas
  // would let one client machine (broadcast runs); no invariant checks in this mode.
  void set_light(bool light) {
    light_ = light;
    session_.set_replicate(!light);
  }
  bool light() const { return light_; }
  // The bot's own authoritative state (from the newest complete frame, in either mode).
  protocol::Values self() const {
    return light_ ? protocol::Values(light_self_) : session_.replica().self();
  }
  // The session's schema, from the Welcome (how every record of the session is read).
  const protocol::Schema& schema() const { return session_.schema(); }
  // The newest tick this bot holds completely; what its inputs acknowledge.
  std::uint32_t ack_tick() const { return light_ ? light_ack_ : session_.replica().ack_tick(); }

 private:
  // SessionObserver: the checks and counts on what the session heard of.
  void on_welcome(const protocol::Welcome& w, const WelcomeNote& note) override;
  void on_snapshot_part(bool completed, std::uint32_t previous_ack) override;
  void on_unreplicated_part(std::span<const std::uint8_t> bytes) override;
  void on_party(const protocol::PartyStatus& s) override;
  void on_guild(const protocol::GuildStatus& g) override;
  void on_chunks(const protocol::ChunkUpdate& u) override;
  void on_statics(const protocol::StaticObjects& o) override;
  void on_events(const protocol::Events& events) override;
  void on_action_result(const protocol::ActionResult& r) override;
  void on_chat_result(const protocol::ChatResult& r) override;

  Session session_;
  net::PeerId peer_;
  GroupInfo party_;
  GroupInfo guild_;
  ChunkInfo chunks_;
  StaticLayer statics_;
  std::shared_ptr<const StaticTruth> static_truth_;
  const ZoneStatics* zone_statics_ = nullptr;
  std::shared_ptr<const StaticTruth> statics_for(const std::string& zone) const;
  struct PendingChunkCheck {
    std::uint32_t tick = 0;  // 0: none
    util::ChunkGrid grid;
    double load_radius = 0.0, unload_radius = 0.0;
  } chunk_check_;
  void send_reliable(net::EnetHost& host, std::span<const std::uint8_t> bytes);
  // Protocol 8: the session's gameplay traffic.
  void track_held(std::uint32_t previous_tick);
  void reset_game_session();
  GameCounters game_;
  std::vector<std::uint64_t> events_by_kind_;
  std::vector<ActionAnswer> answers_;
  std::vector<std::pair<protocol::ChatStatus, std::uint8_t>> refusals_;
  std::vector<EventDetail> recent_events_;
  std::size_t recent_next_ = 0;  // ring position in recent_events_ once full
  std::vector<std::string> before_spawn_details_;
  bool keep_events_ = false;
  std::deque<ReceivedEvent> event_log_;
  std::uint32_t settled_before_ = 0;
  // Per entity ever held this session: the first frame (tick) that held it, and the last
  // one before it left (0: held now). Entries that left long ago are forgotten.
  struct Held {
    std::uint32_t first = 0;
    std::uint32_t left = 0;
  };
  std::unordered_map<std::uint32_t, Held> held_;
  std::uint64_t frames_tracked_ = 0;
  void reset_session();  // before connecting again: the replica and layers start afresh
  std::uint64_t resumes_ = 0;
  std::uint64_t resume_id_changes_ = 0;
  std::uint64_t transfers_ = 0;
  std::uint64_t transfer_id_changes_ = 0;
  bool light_ = false;
  // Light mode: only the client's own record is decoded, against the own values of the
  // baseline frame, so those are kept per tick.
  void light_part(std::span<const std::uint8_t> bytes);
  std::vector<std::int32_t> light_self_ = std::vector<std::int32_t>(protocol::kEngineFieldCount);
  std::array<std::pair<std::uint32_t, std::vector<std::int32_t>>, 64> light_selves_{};
  std::uint32_t light_ack_ = 0;
  std::uint32_t light_tick_ = 0;   // tick whose parts are being counted
  std::uint32_t light_parts_ = 0;  // parts of light_tick_ received so far
  std::vector<std::int32_t> light_pending_self_;
  protocol::SnapshotPart light_scratch_;
};

}  // namespace zone::client
