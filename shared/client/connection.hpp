// One player's connection to a zone: the whole client side of docs/protocol.md behind a
// poll loop. It owns its ENet client host and peer and a Session (session.hpp: the Hello
// with the login ticket, the transfer token after a Transfer or the resume token after a
// lost connection, frames rebuilt with replica::FrameReplica, the messages), acknowledges
// frames in one input per server tick, keeps the clock in step with the server's ticks, predicts
// the own player (Predictor), buffers every other entity for interpolation (InterpolationBuffer),
// keeps the chunk and static layers, and queues what the game must hear of (ClientEvent) for it to
// poll.
//
// The C ABI (zoneclient.h) is a thin layer over this class; C++ games may use it directly.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "client/clock_sync.hpp"
#include "client/event_queue.hpp"
#include "client/interpolation.hpp"
#include "client/prediction.hpp"
#include "client/session.hpp"
#include "client/session_info.hpp"
#include "net/enet_host.hpp"
#include "protocol/zone_generated.h"
#include "replica/frame_replica.hpp"
#include "util/chunk_grid.hpp"

namespace zone::client {

struct ConnectionOptions {
  std::string player_name;
  std::vector<std::uint8_t> ticket;  // empty: none (an open zone)
  double interpolation_delay = 0.1;  // seconds
  double correction_time = 0.25;     // seconds
  double player_speed = 0.0;         // m/s; 0: the Welcome's max_speed
  // After a lost connection (no goodbye from the zone): connections tried again with the
  // Welcome's resume token before giving up (docs/protocol.md, "Reconnecting"); 0: none.
  std::uint32_t resume_attempts = 3;
  // Silence from the zone after which the connection counts as lost (ENet's peer
  // time-out, milliseconds).
  std::uint32_t timeout_ms = 5000;
};

struct StaticObject {
  std::uint32_t id = 0;
  std::int32_t x = 0, y = 0;
  std::uint32_t radius = 0;
  std::uint8_t kind = 0;
};

// Chunks are squares of chunk_size metres counted from the world's minimum corner
// (docs/protocol.md, "Chunk layer").
struct ChunkLayer {
  float chunk_size = 0.0F;  // metres
  float load_radius = 0.0F;
  float unload_radius = 0.0F;
};

struct ConnectionStats {
  std::uint64_t packets_in = 0, packets_out = 0, bytes_in = 0, bytes_out = 0;
  std::uint64_t frames = 0;
  std::uint64_t malformed = 0;
  std::uint64_t corrections = 0;
  double largest_correction = 0.0;
};

class Connection final : private SessionObserver {
 public:
  // kResuming: the connection was lost; connecting again with the resume token.
  enum class State : std::uint8_t {
    kIdle,
    kConnecting,
    kPlaying,
    kTransferring,
    kClosed,
    kResuming
  };

  explicit Connection(ConnectionOptions options);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Starts connecting (false: the address does not resolve).
  bool connect(const std::string& host, std::uint16_t port);
  void disconnect();
  // Network in and out; one input per server tick while playing. `now`: seconds.
  void update(double now);
  void set_move(float mx, float my) {
    move_x_ = mx;
    move_y_ = my;
  }

  std::uint32_t send_action(std::uint16_t action, std::uint32_t target,
                            std::span<const std::int32_t> args);
  bool send_chat(protocol::ChatChannel channel, std::string_view text, std::string_view to);
  bool join_party(std::uint64_t key);
  bool join_guild(std::uint64_t key);

  State state() const { return state_; }
  std::uint32_t disconnect_reason() const { return session_.disconnect_reason(); }
  bool welcomed() const { return welcomed_; }
  const WelcomeInfo& welcome() const { return session_.welcome(); }
  const protocol::Schema& schema() const { return session_.schema(); }
  const replica::FrameReplica& replica() const { return session_.replica(); }
  // The protocol session inside (its phase, sequences, resume token and counters).
  const Session& session() const { return session_; }
  bool has_frame() const { return session_.replica().ack_tick() != 0; }
  const Predictor& predictor() const { return predictor_; }
  const ClockSync& clock() const { return clock_; }
  std::uint32_t last_input_applied() const { return session_.frame_input_sequence(); }
  std::uint32_t last_input_sent() const { return session_.input_sequence(); }
  // The server tick other entities are drawn at (fractional).
  double render_tick() const { return render_tick_; }
  // An entity's interpolated state at render_tick(); false when none is buffered.
  bool interpolated(std::uint32_t id, EntitySample& out) const;
  const std::vector<StaticObject>& statics() const { return statics_; }
  const std::vector<util::ChunkCoord>& chunks() const { return chunks_; }
  // The newest ChunkUpdate's geometry: what a game needs to place the chunks it holds;
  // chunk_size 0 until the first ChunkUpdate of the session.
  const ChunkLayer& chunk_layer() const { return chunk_layer_; }
  ConnectionStats stats() const;
  std::uint32_t round_trip_ms() const;

  EventQueue& events() { return events_; }

 private:
  // SessionObserver: what the session heard of, into the event queue and the layers.
  void on_welcome(const protocol::Welcome& w, const WelcomeNote& note) override;
  void on_unreadable_welcome() override;
  void on_snapshot_part(bool completed, std::uint32_t previous_ack) override;
  void on_transfer(const TransferInfo& transfer) override;
  void on_zone_params(const protocol::ZoneParams& p) override;
  void on_party(const protocol::PartyStatus& s) override;
  void on_guild(const protocol::GuildStatus& g) override;
  void on_chunks(const protocol::ChunkUpdate& u) override;
  void on_statics(const protocol::StaticObjects& o) override;
  void on_events(const protocol::Events& e) override;
  void on_action_result(const protocol::ActionResult& r) override;
  void on_chat_result(const protocol::ChatResult& r) override;
  void on_frame();
  void on_disconnect(std::uint32_t reason);
  void send_reliable(std::span<const std::uint8_t> bytes);
  void send_input();
  void start_transfer();
  // A lost connection: connects again to the zone it played in, to resume (true), or
  // false when it may not (no token, no attempts left).
  bool start_resume();
  void clear_session();
  void closed();  // the connection is over: kClosed, and the game hears of it

  ConnectionOptions options_;
  // ENet's setup: its allocator (per-thread free lists). Setting it up again for each
  // connection is harmless, and no connection depends on another's lifetime.
  net::EnetLibrary enet_;
  std::unique_ptr<net::EnetHost> host_;
  net::PeerId peer_;
  State state_ = State::kIdle;
  Session session_;
  bool welcomed_ = false;
  bool frame_seen_ = false;  // the session's first frame arrived (inputs start then)
  Predictor predictor_;
  ClockSync clock_;
  std::unordered_map<std::uint32_t, InterpolationBuffer> others_;
  std::vector<std::uint32_t> gone_;  // scratch
  std::vector<StaticObject> statics_;
  std::vector<util::ChunkCoord> chunks_;  // ascending
  ChunkLayer chunk_layer_;
  EventQueue events_;
  std::uint64_t corrections_ = 0;
  double largest_correction_ = 0.0;
  double now_ = 0.0;
  double input_slot_ = -1.0;  // the server tick slot of the last input sent
  double render_tick_ = 0.0;
  float move_x_ = 0.0f, move_y_ = 0.0f;
  std::uint32_t resume_attempts_left_ = 0;
};

}  // namespace zone::client
