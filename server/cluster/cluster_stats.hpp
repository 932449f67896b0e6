// What a zone's part in a world of zones has done: plain counters for /metrics.
#pragma once

#include <cstdint>

namespace zone::cluster {

struct ClusterStats {
  // Ghosts held now (other zones' entities in this zone's world), and their sources.
  std::uint64_t ghosts_in = 0;
  std::uint64_t ghost_sources = 0;
  std::uint64_t ghosts_spawned = 0;     // ghosts created
  std::uint64_t ghosts_removed = 0;     // no longer listed by their owner
  std::uint64_t ghosts_expired = 0;     // their owner went silent
  std::uint64_t ghosts_rejected = 0;    // listed with an id another ghost already has
  std::uint64_t ghosts_owned_here = 0;  // listed with the id of an entity this zone now owns
  std::uint64_t ghosts_rehomed = 0;     // listed by a new owner (handed over between others)
  std::uint64_t ghosts_restarted = 0;   // their owner restarted (a new epoch)
  std::uint64_t ghosts_out = 0;         // entity states sent to neighbours, in all
  // Events about entities near a border: sent with the ghost messages, received and
  // delivered here, refused (not about a ghost of its sender, or not of this game).
  std::uint64_t events_out = 0;
  std::uint64_t events_in = 0;
  std::uint64_t events_refused = 0;
  // Chat lines sent to the world, received and delivered here, refused (not decodable,
  // a name or text the name rule refuses).
  std::uint64_t chat_out = 0;
  std::uint64_t chat_in = 0;
  std::uint64_t chat_refused = 0;
  // Ticket logins told to the world, heard from other zones, refused (not decodable, or
  // not on a login subject).
  std::uint64_t logins_out = 0;
  std::uint64_t logins_in = 0;
  std::uint64_t logins_refused = 0;
  // Actions on a neighbour's entity: forwarded to its owner, or refused here (this tick's
  // bound, or the bus); and neighbours' actions on this zone's entities: carried out by
  // the rules, refused by them, or dropped unresolved (not decodable, not from the
  // subject's zone, an actor that is not the sender's player here or stands too far from
  // its ghost, a target that is not this zone's own, over the per-tick bound).
  std::uint64_t actions_forwarded = 0;
  std::uint64_t actions_forward_refused = 0;
  std::uint64_t remote_actions_ok = 0;
  std::uint64_t remote_actions_refused = 0;
  std::uint64_t remote_actions_dropped = 0;
  std::uint64_t remote_actions_rate_limited = 0;  // the actor over its rate here
  std::uint64_t messages_out = 0;
  std::uint64_t messages_in = 0;  // ghost messages applied
  // Bus messages dropped, by reason: not decodable (ghost_codec's reasons) or from a zone
  // that is not a neighbour.
  std::uint64_t dropped_not_ghost = 0;
  std::uint64_t dropped_version = 0;
  std::uint64_t dropped_truncated = 0;
  std::uint64_t dropped_bad_value = 0;
  std::uint64_t dropped_trailing = 0;
  std::uint64_t dropped_unknown_source = 0;
  std::uint64_t dropped_wrong_sender = 0;  // its sender is not the one its subject names
  std::uint64_t dropped_bad_name = 0;      // an entity name the player-name rule refuses
  std::uint64_t dropped_stale_epoch = 0;   // from a neighbour's earlier incarnation
  std::uint64_t dropped_queue_full = 0;    // arrived while the tick's queue was full
  std::uint64_t publish_failed = 0;        // refused by the client library (disconnected)
  std::uint64_t bytes_out = 0;
  std::uint64_t bytes_in = 0;
  // Handoff, this zone's players offered to neighbours: taken, refused (by reason in
  // the log), unanswered within handoff.timeout_ms; and neighbours' players offered here.
  std::uint64_t handoffs_out_accepted = 0;
  std::uint64_t handoffs_out_refused = 0;
  std::uint64_t handoffs_out_timed_out = 0;
  std::uint64_t handoffs_out_lost = 0;  // gone (client quit) before the answer came
  std::uint64_t handoffs_in_accepted = 0;
  std::uint64_t handoffs_in_refused = 0;
  std::uint64_t handoffs_in_cancelled = 0;
  std::uint64_t handoff_messages_dropped = 0;  // not decodable, or not for us
  std::uint64_t handoff_offers_bad_name = 0;   // refused: a name the player-name rule refuses
  bool connected = false;
  std::uint64_t disconnects = 0;
  std::uint64_t reconnects = 0;
  std::uint64_t bus_errors = 0;  // errors NATS reported (a refused publish or subscription)
  // Bus lag: receive time minus the sender's send time, over the applied messages.
  double lag_seconds_sum = 0.0;
  std::uint64_t lag_count = 0;
  double last_lag_seconds = 0.0;
};

}  // namespace zone::cluster
