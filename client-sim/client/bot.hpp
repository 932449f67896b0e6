// One headless client: its connection state, the replica the server's snapshots build,
// and the inputs it sends. Many bots share one ENet client host; the owner routes each
// network event to the bot whose peer it concerns.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <flatbuffers/flatbuffers.h>

#include "client/layer_check.hpp"
#include "client/static_layer.hpp"
#include "net/enet_host.hpp"
#include "protocol/zone_generated.h"
#include "replica/frame_replica.hpp"
#include "util/chunk_grid.hpp"

namespace zone::client {

struct WelcomeInfo {
  std::uint32_t entity_id = 0;
  std::uint32_t server_tick = 0;
  std::uint32_t tick_rate = 0;
  float view_radius = 0.0f;
  float hysteresis = 0.0f;
  float world_min_x = 0.0f, world_min_y = 0.0f, world_max_x = 0.0f, world_max_y = 0.0f;
  bool aoi_enabled = true;
  float max_speed = 0.0f;
  std::string zone;  // the zone's name
};

// A Transfer the server sent (a world of zones): where to reconnect, with what.
struct TransferInfo {
  std::string zone;
  std::string host;
  std::uint16_t port = 0;
  std::vector<std::uint8_t> token;
  std::uint32_t entity_id = 0;
};

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

struct BotCounters {
  std::uint64_t packets_in = 0;
  std::uint64_t bytes_in = 0;
  std::uint64_t packets_out = 0;
  std::uint64_t bytes_out = 0;
  std::uint64_t snapshots = 0;  // snapshot parts received
  std::uint64_t malformed = 0;  // server packets that failed verification or parsing
};

class Bot {
 public:
  // kTransferring: the server sent a Transfer and closed the connection (Transferred);
  // the owner reconnects the bot to the new zone (connect_transfer).
  enum class Phase : std::uint8_t {
    kIdle,
    kConnecting,
    kAwaitingWelcome,
    kPlaying,
    kTransferring,
    kClosed
  };

  explicit Bot(std::string name) : name_(std::move(name)) {}

  // Starts connecting; the host delivers the connect event later.
  void connect(net::EnetHost& host, const std::string& server, std::uint16_t port);
  // After a Transfer: connects to the new zone, to say Hello with the transfer token. The
  // old zone's replica, chunks and static objects are dropped (bank their counts first).
  void connect_transfer(net::EnetHost& host);
  const TransferInfo& transfer() const { return transfer_; }
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

  Phase phase() const { return phase_; }
  net::PeerId peer() const { return peer_; }
  const std::string& name() const { return name_; }
  const WelcomeInfo& welcome() const { return welcome_; }
  const replica::FrameReplica& replica() const { return replica_; }
  replica::FrameReplica& replica() { return replica_; }
  std::uint32_t disconnect_reason() const { return disconnect_reason_; }
  const BotCounters& counters() const { return counters_; }
  std::uint32_t input_sequence() const { return sequence_; }
  // Presents `token` in the hello, as a client another zone handed over does (tests give
  // one the zone never issued); set before connecting.
  void set_transfer_token(std::vector<std::uint8_t> token) {
    transfer_.token = std::move(token);
    arriving_ = true;
  }
  // The login ticket every Hello of this bot carries (a zone in ticket mode requires one;
  // docs/protocol.md, "Tickets"), after a Transfer too; set before connecting.
  void set_ticket(std::vector<std::uint8_t> ticket) { ticket_ = std::move(ticket); }
  // Protocol version to announce; tests change it to provoke a refusal.
  void set_protocol_version(std::uint16_t v) { protocol_version_ = v; }
  // Light mode: snapshots are verified and acknowledged once every part of a tick has
  // arrived, but no replica is rebuilt. For loading a server harder than full replicas
  // would let one client machine (broadcast runs); no invariant checks in this mode.
  void set_light(bool light) { light_ = light; }
  bool light() const { return light_; }
  // The bot's own authoritative state (from the newest complete frame, in either mode).
  protocol::Values self() const { return light_ ? protocol::Values(light_self_) : replica_.self(); }
  // The session's schema, from the Welcome (how every record of the session is read).
  const protocol::Schema& schema() const { return replica_.schema(); }
  // The newest tick this bot holds completely; what its inputs acknowledge.
  std::uint32_t ack_tick() const { return light_ ? light_ack_ : replica_.ack_tick(); }

 private:
  std::string name_;
  Phase phase_ = Phase::kIdle;
  net::PeerId peer_;
  WelcomeInfo welcome_;
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
  void on_chunk_update(const protocol::ChunkUpdate& u);
  void send_reliable(net::EnetHost& host);
  replica::FrameReplica replica_;
  std::uint32_t disconnect_reason_ = 0;
  TransferInfo transfer_;
  std::vector<std::uint8_t> ticket_;  // empty: none
  bool transfer_pending_ = false;     // a Transfer came: the coming goodbye is expected
  bool arriving_ = false;             // connected with a transfer token, awaiting the Welcome
  std::uint64_t transfers_ = 0;
  std::uint64_t transfer_id_changes_ = 0;
  std::uint32_t sequence_ = 0;
  std::uint16_t protocol_version_ = 0;  // 0: the current version
  BotCounters counters_;
  flatbuffers::FlatBufferBuilder fbb_{128};
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
