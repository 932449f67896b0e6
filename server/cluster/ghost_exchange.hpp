// A zone's part in a world of zones: every tick, send each neighbour the entities near
// it, keep the neighbours' entities near this zone as ghosts, and hand players and
// wandering NPCs who step into a neighbour's rectangle over to it (docs/world.md, "Ghosts" and
// "Handoff").
//
// Runs on the tick thread (tick()), which owns the world; the NATS link only queues
// what arrives. Subjects (cluster/subjects.hpp): "<prefix>.ghosts.<to>.<from>" carries
// the ghost messages zone <from> sends zone <to>, "<prefix>.handoff.<to>.<from>" its
// handoff messages (offers, answers, cancels); a message whose sender is not the
// subject's <from> is dropped (NATS permissions let a zone publish only as itself). Both land in
// one queue, but the bus may deliver the two subjects in another order than they were
// sent: nothing depends on it (a ghost list that still names an entity this zone now
// owns is skipped, an unlisted ghost waits a few ticks, and a handoff counts as done
// only once the old owner's lists stop naming the entity).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bus/nats_link.hpp"
#include "cluster/action_codec.hpp"
#include "cluster/chat_codec.hpp"
#include "cluster/cluster_stats.hpp"
#include "cluster/ghost_codec.hpp"
#include "cluster/login_codec.hpp"
#include "cluster/transfer_codec.hpp"
#include "protocol/zone_generated.h"
#include "world/ghosts.hpp"

namespace zone::cluster {

struct Neighbour {
  std::uint32_t index = 0;  // in the world map
  std::string name;
  aoi::Bounds area;  // its rectangle
};

struct ExchangeParams {
  std::string nats_url;
  // How the zone logs in to NATS (config::BusSecrets): user (empty: no credentials) and
  // password, TLS with the CA's certificate and optionally a client certificate.
  std::string nats_user;
  std::string nats_password;
  bool nats_tls = false;
  std::string nats_ca_file;
  std::string nats_cert_file;
  std::string nats_key_file;
  // Names that cross the bus meet the rule of a Hello's (players.max_name_length).
  std::size_t max_name_bytes = 32;
  std::string subject_prefix;
  std::uint32_t self_index = 0;
  std::string self_name;
  std::vector<Neighbour> neighbours;
  // Every other zone of the world, by name (chat lines cross the whole world).
  std::vector<std::string> world_zones;
  double ghost_distance = 40.0;  // metres
  std::chrono::milliseconds ghost_timeout{1000};
  // Ticks before a restarted neighbour's entities are placed (world::Ghosts).
  std::uint32_t id_reuse_ticks = 33;
  // Handoff: where this zone's clients connect (sent to a player's client when it comes
  // here from a neighbour), how long an offer waits for its answer, and how many ticks a
  // player taken back (refused, no answer) waits before it may cross again.
  std::string game_host;
  std::uint16_t game_port = 0;
  std::chrono::milliseconds handoff_timeout{2000};
  std::uint16_t cross_cooldown_ticks = 20;
  // Actions on a neighbour's entity (docs/world.md, "Actions across borders"): at most
  // this many forwarded per tick, in all (beyond: RateLimited to the player), and at most
  // this many taken from each neighbour per tick (beyond: dropped), so neither a crowd at
  // the border nor a neighbour gone wrong can flood the bus or the rules.
  std::uint32_t max_forwarded_actions_per_tick = 64;
  std::uint32_t max_remote_actions_per_tick = 64;
  // Each remote actor is held here to the rate its own zone holds it to
  // (game.actions_per_second), with twice the burst for the bus's jitter: a neighbour gone
  // wrong cannot make one player act faster than a client could (beyond: rate_limited).
  double actor_actions_per_second = 10.0;
  // How far (in ticks of the fastest movement) this zone's ghost of an actor may stand
  // from where the actor says it stood: further, the ghost is too stale for the rules'
  // range and sight checks, and the action is dropped.
  double actor_slack_ticks = 20.0;
};

// What became of an action forwarded to the zone that owns its target.
enum class ForwardResult : std::uint8_t {
  kSent,         // on the bus to the owner
  kRateLimited,  // max_forwarded_actions_per_tick reached this tick
  kFailed,       // the target's owner is not a neighbour, or the bus refused it
};

// Where a player handed over goes: what its client is told.
struct Destination {
  std::string zone;
  std::string host;
  std::uint16_t port = 0;
  TransferToken token{};
};

// What the zone does with its sessions when players come and go (called on the tick
// thread, from GhostExchange::tick).
class HandoffHooks {
 public:
  virtual ~HandoffHooks() = default;
  // Whether one more player may arrive (room for it, and the zone is not closing).
  virtual bool can_take_player() const = 0;
  // A neighbour took this zone's player at `slot`: send its client there and end the
  // session. Called just before the entity becomes a ghost.
  virtual void player_left(std::uint32_t slot, const Destination& to) = 0;
  // A player arrived from a neighbour at `slot`; its client will present `token`, and it
  // rejoins the party and guild of these keys (0: none) when it does.
  virtual void player_arrived(std::uint32_t slot, const TransferToken& token,
                              std::uint64_t party_key, std::uint64_t guild_key) = 0;
  // Its old zone kept the player `id` (it never got the answer): if the client has not
  // come, forget its token and return true (the entity becomes a ghost again); false if
  // the client is here already.
  virtual bool cancel_arrival(world::EntityId id) = 0;
  // An NPC arrived from a neighbour at `slot` (the game's rules meet it).
  virtual void npc_arrived(std::uint32_t /*slot*/) {}
  // A chat line from another zone of the world (checked: its names and text follow the
  // name rule): whispers for this zone's players of that name, guild lines for this zone's
  // guild of that key.
  virtual void remote_chat(const RemoteChat& /*line*/) {}
  // A ticket login in another zone of the world: a copy of that character here leaves
  // if it came here before that login (or at the same millisecond and `wins_tie`).
  virtual void remote_login(const LoginNotice& /*login*/, bool /*wins_tie*/) {}
  // A neighbour's player (this zone's ghost of it at `actor_slot`) acts on this zone's
  // entity `target` (checked: the actor is a player the sender owns, the target is this
  // zone's own): the rules' answer.
  virtual protocol::ActionStatus remote_action(std::uint32_t /*actor_slot*/,
                                               std::uint16_t /*action*/, world::EntityId /*target*/,
                                               std::span<const std::int32_t> /*args*/) {
    return protocol::ActionStatus::NotAllowed;
  }
};

class GhostExchange {
 public:
  // Connects to the bus (in the background if it is not up yet) and subscribes to this
  // zone's subject. Throws bus::BusError for a URL the client refuses.
  GhostExchange(const ExchangeParams& params, world::World& world);
  // The same on a bus of the caller's (tests: an in-memory one).
  GhostExchange(const ExchangeParams& params, world::World& world, std::unique_ptr<bus::Bus> bus);

  // Once per tick, after the world moved and before the AOI update: applies the ghost
  // messages that arrived, removes the ghosts of silent neighbours, moves ghosts towards
  // their owners' reports by at most `max_step` metres, and sends each neighbour this
  // zone's entities near it.
  // Then offers the players that stepped into a neighbour's rectangle
  // (World::crossings), and takes back those whose offer was refused or not answered.
  void tick(std::uint32_t tick, double max_step, HandoffHooks& hooks);
  // Sends a chat line to every other zone of the world (docs/world.md, "Chat across
  // zones"); it reaches their hooks' remote_chat at their next tick.
  void publish_chat(const RemoteChat& line);
  // Tells every other zone of the world of a ticket login here (docs/world.md, "One
  // character, online once"); it reaches their hooks' remote_login at their next tick.
  void publish_login(const LoginNotice& login);
  // Sends this zone's player `actor`'s action on `target`, a ghost here, to the zone the
  // ghost follows; that zone's rules resolve it at its next tick (docs/world.md, "Actions
  // across borders").
  ForwardResult forward_action(const world::Entity& actor, std::uint16_t action,
                               const world::Entity& target, std::span<const std::int32_t> args);

  ClusterStats stats() const;
  const ExchangeParams& params() const { return params_; }
  // This zone's ghosts of its neighbours' entities (the live map reads their owners).
  const world::Ghosts& ghosts() const { return ghosts_; }

 private:
  using Clock = std::chrono::steady_clock;
  void receive(Clock::time_point now, HandoffHooks& hooks);
  std::size_t neighbour_position(std::uint32_t index) const;
  void receive_ghosts(const bus::BusMessage& m, std::optional<std::uint32_t> from,
                      Clock::time_point now);
  bool name_ok(std::string_view name) const;
  void publish(std::uint32_t tick);
  const Neighbour* neighbour(std::uint32_t index) const;
  bool is_neighbour(std::uint32_t index) const { return neighbour(index) != nullptr; }
  // Handoff (handoff.cpp).
  void receive_handoff(const TransferMessage& m, Clock::time_point now, HandoffHooks& hooks);
  void on_offer(const TransferMessage& m, Clock::time_point now, HandoffHooks& hooks);
  void on_answer(const TransferMessage& m, Clock::time_point now, HandoffHooks& hooks);
  void offer_crossings(Clock::time_point now);
  void expire_offers(Clock::time_point now);
  void send_handoff(std::uint32_t to, const TransferMessage& m);
  void send_cancel(std::uint32_t to, std::uint32_t request, world::EntityId id);
  TransferToken new_token();

  struct Offer {  // a player of this zone offered to a neighbour, waiting for the answer
    std::uint32_t request = 0;
    std::uint32_t slot = 0;
    world::EntityId id = world::kNoEntity;
    std::uint32_t to = 0;  // the neighbour's index
    Clock::time_point deadline;
  };
  std::vector<Offer> offers_;
  // An entity taken over, until its old zone is seen to have let it go: that zone's
  // lists stop naming it (done), or a cancel or 2 x handoff_timeout of lists still naming
  // it say that zone kept it (the copy becomes a ghost again).
  struct Arrival {
    world::EntityId id = world::kNoEntity;
    std::uint32_t slot = 0;
    std::uint32_t from = 0;         // the old zone's index
    std::uint32_t request = 0;      // its offer's number
    std::uint64_t lists_at = 0;     // lists from `from` applied when it was taken over
    std::uint64_t last_listed = 0;  // the newest of them that named it as that zone's own
    Clock::time_point deadline;
    bool player = false;
  };
  std::vector<Arrival> arrivals_;
  void settle_arrivals(Clock::time_point now, HandoffHooks& hooks);
  void give_back(const Arrival& a, Clock::time_point now, HandoffHooks& hooks);
  std::uint32_t next_request_ = 1;
  std::vector<std::string> handoff_subjects_;  // per neighbour
  TransferMessage transfer_;                   // scratch
  std::random_device random_;                  // transfer tokens

  ExchangeParams params_;
  // Events about the entities a ghost message lists go with it; a neighbour's events
  // about its ghosts here join this tick's events (docs/world.md, "Events across borders").
  void add_events(GhostMessage& message);
  void relay_events(const GhostMessage& message);
  std::vector<world::EntityId> listed_;  // scratch: a message's ghost ids, sorted
  void receive_chat(const RemoteChat& line, HandoffHooks& hooks);
  // Actions from neighbours: queued while the tick's messages are read (so that the
  // actor's ghost is up to date), resolved after; bounded per neighbour and tick.
  void queue_action(const bus::BusMessage& m, std::uint32_t from);
  void resolve_actions(Clock::time_point now, double max_step, HandoffHooks& hooks);
  bool actor_token(const world::Entity& actor, Clock::time_point now);
  // Per slot of this zone's world: the token bucket of the remote actor in it (the ghost
  // of another zone's player); a new id in the slot starts a full bucket. Grows with the
  // world's slots, never per tick.
  struct ActorBucket {
    world::EntityId id = world::kNoEntity;
    double tokens = 0.0;
    Clock::time_point at;
  };
  std::vector<ActorBucket> actor_buckets_;
  std::vector<RemoteAction> actions_in_;  // this tick's, at most the bound per neighbour
  std::vector<std::uint32_t> actions_in_per_source_;  // by neighbour position, this tick
  std::uint32_t actions_out_this_tick_ = 0;
  RemoteAction action_;  // decoding and encoding scratch
  std::vector<std::uint8_t> action_bytes_;
  std::map<std::string, std::string> chat_from_;   // chat subject -> its zone
  std::map<std::string, std::string> login_from_;  // login subject -> its zone
  LoginNotice login_;                              // decoding scratch
  std::vector<std::uint8_t> login_bytes_;
  RemoteChat chat_;  // decoding scratch
  std::vector<std::uint8_t> chat_bytes_;
  world::World& world_;
  world::Ghosts ghosts_;
  std::unique_ptr<bus::Bus> link_;
  std::vector<std::string> subjects_out_;  // per neighbour
  // Subjects this zone subscribes to, and the neighbour each names as the sender.
  std::map<std::string, std::uint32_t, std::less<>> inbound_;
  std::vector<bus::BusMessage> inbox_;
  GhostMessage message_;             // scratch, decoded and encoded in turn
  std::vector<std::uint8_t> bytes_;  // scratch
  ClusterStats stats_;
  std::uint64_t epoch_ = 0;  // this process's start, sent with every message
};

}  // namespace zone::cluster
