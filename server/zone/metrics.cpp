#include "zone/metrics.hpp"

#include <fmt/format.h>

namespace zone {
namespace {

// Prometheus label values escape backslash, double quote and newline.
std::string escape(const std::string& s) {
  std::string out;
  for (const char c : s) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

class Writer {
 public:
  void header(const char* name, const char* type, const char* help) {
    out_ += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  }
  void sample(const char* name, double v) { out_ += fmt::format("{} {}\n", name, v); }
  void counter(const char* name, const char* help, std::uint64_t v) {
    header(name, "counter", help);
    out_ += fmt::format("{} {}\n", name, v);
  }
  void counter_seconds(const char* name, const char* help, double v) {
    header(name, "counter", help);
    sample(name, v);
  }
  void gauge(const char* name, const char* help, double v) {
    header(name, "gauge", help);
    sample(name, v);
  }
  void labelled(const char* name, const char* type, const char* help, const char* label,
                const std::vector<LabelledCount>& values) {
    header(name, type, help);
    for (const LabelledCount& c : values) {
      out_ += fmt::format("{}{{{}=\"{}\"}} {}\n", name, label, escape(c.label), c.value);
    }
  }
  void histogram(const char* name, const char* help, const Histogram& h) {
    header(name, "histogram", help);
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i < h.bounds().size(); ++i) {
      cumulative += h.counts()[i];
      out_ += fmt::format("{}_bucket{{le=\"{}\"}} {}\n", name, h.bounds()[i], cumulative);
    }
    cumulative += h.counts().back();
    out_ += fmt::format("{}_bucket{{le=\"+Inf\"}} {}\n", name, cumulative);
    out_ += fmt::format("{}_sum {}\n{}_count {}\n", name, h.sum(), name, h.count());
  }
  std::string take() { return std::move(out_); }
  std::string& raw() { return out_; }

 private:
  std::string out_;
};

// A world of zones: ghosts in (held here) and out (sent to neighbours), and the bus.
void render_persist(Writer& w, const PersistMetrics& p) {
  w.gauge("zone_persist_enabled", "1 when the zone keeps characters (persist.enabled).",
          p.enabled ? 1.0 : 0.0);
  w.gauge("zone_persist_healthy",
          "1 while the character store's last write or read worked (0: it is failing and "
          "retrying; see the log).",
          p.healthy ? 1.0 : 0.0);
  w.gauge("zone_persist_queue_full",
          "1 while persist.max_queue characters wait to be written: new logins are refused "
          "(store_unavailable) and /readyz says degraded.",
          p.full ? 1.0 : 0.0);
  w.gauge("zone_persist_queue_depth", "Characters with a save not yet committed.",
          static_cast<double>(p.queue_depth));
  w.counter("zone_persist_saves_total", "Character saves committed to the store.", p.saves);
  w.counter("zone_persist_saves_stale_total",
            "Character saves refused because another zone holds the row now (shared "
            "PostgreSQL store): dropped, never retried, not counted as committed.",
            p.saves_stale);
  w.counter("zone_persist_save_failures_total",
            "Write transactions that failed (their saves stay queued and are retried).",
            p.save_failures);
  w.counter("zone_persist_flushes_total", "Write transactions committed (one per batch).",
            p.flushes);
  w.counter("zone_persist_loads_total", "Character loads answered (found, new or failed).",
            p.loads);
  w.counter("zone_persist_load_failures_total",
            "Character loads that failed (the login was refused with store_unavailable).",
            p.load_failures);
  w.counter_seconds("zone_persist_load_seconds_total",
                    "Summed time from a login's load request to its answer (divide by "
                    "zone_persist_loads_total for the mean).",
                    p.load_seconds);
  w.counter("zone_persist_logins_restored_total", "Logins that found their character's saved row.",
            p.loaded_logins);
  w.counter("zone_persist_checkpoints_put_off_total",
            "Checkpoint saves refused by a full queue (tried again at the next interval).",
            p.checkpoints_put_off);
}

void render_cluster(Writer& w, const cluster::ClusterStats& c) {
  w.gauge("zone_ghosts", "Other zones' entities held here as ghosts.",
          static_cast<double>(c.ghosts_in));
  w.gauge("zone_ghost_sources", "Neighbouring zones this zone holds ghosts of.",
          static_cast<double>(c.ghost_sources));
  w.labelled(
      "zone_ghost_changes_total", "counter",
      "Ghosts created and removed, by what happened: spawned, removed (no longer listed "
      "by their owner), expired (their owner went silent), restarted (their owner restarted), "
      "rejected (an id another ghost has), owned_here (listed while this zone owns it: a "
      "handoff in flight), rehomed (handed over between two other zones: same ghost).",
      "change",
      {{"spawned", c.ghosts_spawned},
       {"removed", c.ghosts_removed},
       {"expired", c.ghosts_expired},
       {"restarted", c.ghosts_restarted},
       {"rejected", c.ghosts_rejected},
       {"owned_here", c.ghosts_owned_here},
       {"rehomed", c.ghosts_rehomed}});
  w.labelled(
      "zone_handoffs_out_total", "counter",
      "This zone's players and wandering NPCs offered to a neighbour they stepped into, by answer: "
      "accepted, refused, timed_out (no answer within handoff.timeout_ms), lost (the "
      "client quit before the answer).",
      "result",
      {{"accepted", c.handoffs_out_accepted},
       {"refused", c.handoffs_out_refused},
       {"timed_out", c.handoffs_out_timed_out},
       {"lost", c.handoffs_out_lost}});
  w.labelled("zone_handoffs_in_total", "counter",
             "Neighbours' players and NPCs offered to this zone, by what it did: accepted, "
             "refused, cancelled (the offering zone kept it: it never got the answer).",
             "result",
             {{"accepted", c.handoffs_in_accepted},
              {"refused", c.handoffs_in_refused},
              {"cancelled", c.handoffs_in_cancelled}});
  w.counter("zone_handoff_messages_dropped_total",
            "Handoff messages dropped: not decodable, not from a neighbour, or not from the "
            "zone their subject names.",
            c.handoff_messages_dropped);
  w.counter("zone_handoff_offers_bad_name_total",
            "Handoff offers refused because the entity's name breaks the player-name rule.",
            c.handoff_offers_bad_name);
  w.counter("zone_ghosts_out_total", "Entity states sent to neighbouring zones as ghosts.",
            c.ghosts_out);
  w.labelled("zone_border_events_total", "counter",
             "Events about entities near a border: sent to neighbours with their ghosts (out), "
             "received about ghosts here and delivered (in), refused (not about a ghost of "
             "the sender, or not of this zone's game).",
             "direction",
             {{"out", c.events_out}, {"in", c.events_in}, {"refused", c.events_refused}});
  w.labelled("zone_world_chat_total", "counter",
             "Chat lines that cross zones (whispers to names elsewhere, guild lines): sent to "
             "the world (out), received and delivered here (in), refused (not decodable, or a "
             "name or text the name rule refuses).",
             "direction", {{"out", c.chat_out}, {"in", c.chat_in}, {"refused", c.chat_refused}});
  w.labelled("zone_world_logins_total", "counter",
             "Ticket logins told to the other zones of the world (out), heard from them (in), "
             "refused (not decodable, or not on a login subject).",
             "direction",
             {{"out", c.logins_out}, {"in", c.logins_in}, {"refused", c.logins_refused}});
  w.labelled("zone_actions_forwarded_total", "counter",
             "Players' actions on a neighbour's entity: sent to the zone that owns it (sent), "
             "refused here (this tick's forwarding bound, or the bus refused it).",
             "result", {{"sent", c.actions_forwarded}, {"refused", c.actions_forward_refused}});
  w.labelled("zone_remote_actions_total", "counter",
             "Neighbours' players' actions on this zone's entities: carried out by the rules "
             "(ok), refused by them (refused), dropped unresolved (not decodable, not from the "
             "subject's zone, no such actor or target, a stale actor, over the per-tick bound), "
             "over the actor's own action rate (rate_limited).",
             "result",
             {{"ok", c.remote_actions_ok},
              {"refused", c.remote_actions_refused},
              {"dropped", c.remote_actions_dropped},
              {"rate_limited", c.remote_actions_rate_limited}});
  w.labelled("zone_bus_messages_total", "counter", "Ghost messages sent and applied.", "direction",
             {{"out", c.messages_out}, {"in", c.messages_in}});
  w.labelled("zone_bus_bytes_total", "counter", "Bus payload bytes.", "direction",
             {{"out", c.bytes_out}, {"in", c.bytes_in}});
  w.labelled("zone_bus_dropped_messages_total", "counter",
             "Bus messages dropped, by reason (publish_failed: refused while disconnected).",
             "reason",
             {{"not_ghost", c.dropped_not_ghost},
              {"version", c.dropped_version},
              {"truncated", c.dropped_truncated},
              {"bad_value", c.dropped_bad_value},
              {"trailing", c.dropped_trailing},
              {"unknown_source", c.dropped_unknown_source},
              {"wrong_sender", c.dropped_wrong_sender},
              {"bad_name", c.dropped_bad_name},
              {"stale_epoch", c.dropped_stale_epoch},
              {"queue_full", c.dropped_queue_full},
              {"publish_failed", c.publish_failed}});
  w.gauge("zone_bus_connected", "1 while the NATS connection is up.", c.connected ? 1.0 : 0.0);
  w.labelled("zone_bus_connection_events_total", "counter",
             "NATS disconnects, reconnects and errors the server reported (error: a publish or "
             "subscription its permissions refuse, ...).",
             "event",
             {{"disconnect", c.disconnects}, {"reconnect", c.reconnects}, {"error", c.bus_errors}});
  w.header("zone_bus_lag_seconds", "summary",
           "Receive time minus the sender's send time of each ghost message applied.");
  w.raw() += fmt::format("zone_bus_lag_seconds_sum {}\nzone_bus_lag_seconds_count {}\n",
                         c.lag_seconds_sum, c.lag_count);
}

}  // namespace

std::string render_prometheus(const ZoneMetrics& m, const std::string& zone_name) {
  Writer w;
  w.header("zone_build_info", "gauge", "Build and zone information; always 1.");
  w.raw() += fmt::format("zone_build_info{{version=\"{}\",zone=\"{}\",compiler=\"{}\"}} 1\n",
                         ZONE_VERSION, escape(zone_name), escape(__VERSION__));
  w.gauge("zone_start_time_seconds", "Unix time the zone server started.", m.start_time_seconds);
  w.counter("zone_ticks_total", "Simulation ticks completed.", m.ticks);
  w.counter("zone_tick_overruns_total", "Ticks that took longer than the tick period.", m.overruns);
  w.histogram("zone_tick_duration_seconds", "Wall time of one whole tick.", m.tick_seconds);
  w.histogram("zone_aoi_update_duration_seconds", "Time spent in the AOI update per tick.",
              m.aoi_seconds);
  w.histogram("zone_replication_duration_seconds",
              "Time spent building and sending snapshots per tick.", m.replication_seconds);
  w.gauge("zone_players", "Players in the zone.", static_cast<double>(m.players));
  w.gauge("zone_npcs", "NPCs in the zone.", static_cast<double>(m.npcs));
  w.gauge("zone_entities", "Entities in the zone (players and NPCs).",
          static_cast<double>(m.entities));
  w.gauge("zone_precision_engaged_npcs",
          "NPCs within precision.engage_radius of a player, sent at the player precision.",
          static_cast<double>(m.engaged_npcs));
  w.gauge("zone_precision_ambient_entities",
          "Entities sent at the ambient NPC precision (0 when it equals the player precision).",
          static_cast<double>(m.ambient_entities));
  w.counter("zone_precision_engagements_total",
            "NPCs that became engaged (a player came within precision.engage_radius).",
            m.engagements);
  w.gauge("zone_aoi_occupied_cells",
          "AOI grid cells holding at least one entity (as listed: may lag a few ticks).",
          static_cast<double>(m.occupied_cells));
  w.gauge("zone_aoi_max_cell_entities", "Entities in the most crowded AOI cell.",
          static_cast<double>(m.max_cell_entities));
  w.gauge("zone_aoi_visible_pairs", "Observer-target pairs currently in view.",
          static_cast<double>(m.visible_pairs));
  w.gauge("zone_aoi_mutual_observers",
          "Observers in a mutual class (same view radius): their pairs with classmates are "
          "decided once for both directions.",
          static_cast<double>(m.mutual_observers));
  w.gauge("zone_aoi_crowd_members",
          "Observers in a crowd (aoi.crowd_min_in_view): their pairs with each other are "
          "decided by the AOI's crowd tier.",
          static_cast<double>(m.crowd_members));
  w.counter("zone_aoi_enter_events_total", "AOI enter events delivered to clients.",
            m.enter_events);
  w.counter("zone_aoi_leave_events_total", "AOI leave events delivered to clients.",
            m.leave_events);
  w.counter("zone_network_sent_bytes_total", "UDP payload bytes sent, ENet headers included.",
            m.bytes_out);
  w.counter("zone_network_received_bytes_total",
            "UDP payload bytes received, ENet headers included.", m.bytes_in);
  w.counter("zone_network_sent_packets_total", "Application packets sent.", m.packets_out);
  w.counter("zone_network_received_packets_total", "Application packets received.", m.packets_in);
  w.counter("zone_replication_spawns_total", "Entity spawns (full states) sent to clients.",
            m.spawns_sent);
  w.counter("zone_replication_updates_total", "Entity delta updates sent to clients.",
            m.updates_sent);
  w.counter("zone_replication_despawns_total", "Entity despawns sent to clients.", m.despawns_sent);
  w.counter("zone_replication_deferred_total",
            "Entity records held back by a client's bandwidth budget.", m.deferred);
  w.counter("zone_replication_forced_total",
            "Entity records sent over a client's budget: held by the client, or waited the "
            "longest allowed (network.max_deferral_ms).",
            m.forced);
  w.gauge("zone_replication_oldest_deferral_ticks",
          "Longest a record sent since the last scrape was held back by the budget, in ticks "
          "(from the first snapshot that held it to the one that sent it).",
          static_cast<double>(m.oldest_deferral_ticks));
  w.labelled(
      "zone_interest_tier_entities_total", "counter",
      "Entities in view per interest tier, summed over the snapshots built "
      "(interest.tiers; all near when the policy is off).",
      "tier",
      {{"near", m.tier_entities[0]}, {"middle", m.tier_entities[1]}, {"far", m.tier_entities[2]}});
  w.counter("zone_interest_tier_held_total",
            "Changed entities whose update waited for its interest tier's turn.", m.tier_held);
  w.counter("zone_interest_crowded_snapshots_total",
            "Snapshots built for a view holding more than interest.crowd_threshold entities.",
            m.crowded_snapshots);
  w.counter("zone_interest_behind_cone_total",
            "Entities in view moved to the far tier by the view cone (interest.cone), summed "
            "over the snapshots built.",
            m.behind_cone);
  w.counter("zone_interest_group_entities_total",
            "Entities in a client's view only as a member of its party or guild (beyond the "
            "view radius), summed over the snapshots built.",
            m.group_entities);
  w.gauge("zone_parties", "Parties now (party.enabled).", static_cast<double>(m.groups[0]));
  w.gauge("zone_party_members", "Players in a party now.", static_cast<double>(m.group_members[0]));
  w.labelled("zone_party_requests_total", "counter", "JoinParty requests, by answer.", "result",
             m.group_requests[0]);
  w.gauge("zone_guilds", "Guilds now (guild.enabled).", static_cast<double>(m.groups[1]));
  w.gauge("zone_guild_members", "Players in a guild now.", static_cast<double>(m.group_members[1]));
  w.labelled("zone_guild_requests_total", "counter", "JoinGuild requests, by answer.", "result",
             m.group_requests[1]);
  w.labelled("zone_actions_total", "counter", "Action messages, by answer (ActionStatus).",
             "status", m.actions);
  w.labelled("zone_chat_lines_total", "counter", "Chat lines sent, by channel.", "channel",
             m.chat_lines);
  w.labelled("zone_chat_refused_total", "counter", "Chat lines refused, by answer (ChatStatus).",
             "status", m.chat_refused);
  w.counter("zone_events_total", "Events emitted (game events and chat lines).", m.events_emitted);
  w.counter("zone_events_refused_total",
            "Events the rules tried to emit that the schema refuses (unknown kind, too many "
            "arguments, a text where none is carried).",
            m.events_refused);
  w.labelled("zone_events_dropped_total", "counter",
             "Events not sent: beyond game.max_events_per_tick (tick_budget), or deliveries "
             "beyond game.max_events_per_client to one client (client_budget).",
             "reason", m.events_dropped);
  w.counter("zone_event_deliveries_total", "Events delivered, one per event and client.",
            m.event_deliveries);
  w.counter("zone_event_messages_total", "Events messages sent to clients.", m.event_messages);
  w.counter("zone_event_bytes_total", "Bytes of Events messages sent to clients (payload).",
            m.event_bytes);
  const script::ScriptStats& sc = m.rules.script;
  w.counter("zone_script_calls_total", "Handler calls of the game's rules that ran.", sc.calls);
  w.counter("zone_script_errors_total",
            "Handler calls that failed (an error, a budget, memory): each cost only itself.",
            sc.errors);
  w.counter("zone_script_budget_exceeded_total",
            "Handler calls stopped by an instruction budget (script.instructions_per_call or "
            "script.instructions_per_tick).",
            sc.budget_exceeded);
  w.counter("zone_script_memory_refusals_total",
            "Allocations the rules' VM was refused (script.memory_mb).", sc.memory_refusals);
  w.counter("zone_script_skipped_calls_total",
            "Handler calls not run: the tick's instruction budget was spent.",
            sc.skipped_over_budget);
  w.counter("zone_script_instructions_total", "Lua instructions the rules ran.", sc.instructions);
  w.counter_seconds("zone_script_seconds_total",
                    "Time the tick thread spent in the game's rules: actions, their tick, timers "
                    "and NPC thinking.",
                    m.rules_seconds);
  w.gauge("zone_script_memory_bytes", "Bytes the rules' VM holds now.",
          static_cast<double>(sc.memory_in_use));
  w.gauge("zone_script_memory_peak_bytes", "The most bytes the rules' VM has held.",
          static_cast<double>(sc.memory_peak));
  w.labelled("zone_script_reloads_total", "counter",
             "Reloads of the rules: applied, or failed (the old rules stayed).", "result",
             {{"ok", m.rules.reloads}, {"failed", m.rules.reload_failures}});
  w.counter("zone_script_timers_fired_total", "Timers of the rules that fired.",
            m.rules.timers_fired);
  w.gauge("zone_script_timers_pending", "Timers of the rules waiting.",
          static_cast<double>(m.rules.timers_pending));
  w.counter("zone_script_api_refusals_total",
            "Game API calls refused (an unknown entity, property or event; a bad number).",
            m.rules.api_refusals);
  w.counter("zone_script_bad_answers_total",
            "on_action answers that name no status (answered NotAllowed).", m.rules.bad_answers);
  w.counter("zone_script_npc_thinks_total", "on_npc_think calls.", m.rules.npc_thinks);
  w.gauge("zone_script_thinking_npcs", "NPCs the rules think for now.",
          static_cast<double>(m.rules.thinking_npcs));
  w.counter("zone_chunk_updates_total", "ChunkUpdate messages sent to clients (chunks.enabled).",
            m.chunk_updates);
  w.counter("zone_chunk_loads_total", "Chunks clients were told to load.", m.chunk_loads);
  w.counter("zone_chunk_unloads_total", "Chunks clients were told to unload.", m.chunk_unloads);
  w.gauge("zone_static_objects", "Static objects in the zone's map (static.map_file).",
          static_cast<double>(m.static_objects));
  w.counter("zone_static_messages_total", "StaticObjects messages sent to clients.",
            m.static_messages);
  w.counter("zone_static_objects_sent_total",
            "Static objects sent to clients (each once a session).", m.static_objects_sent);
  w.counter("zone_static_bytes_sent_total", "Bytes of the StaticObjects messages sent to clients.",
            m.static_bytes_sent);
  w.labelled("zone_static_waits_total", "counter",
             "Ticks a player with static cells due waited: for its bandwidth budget "
             "(network.client_bandwidth), or with 64 KiB sent at ticks it has not acknowledged.",
             "reason",
             {{"budget", m.static_waits_budget}, {"unacknowledged", m.static_waits_unacked}});
  w.counter("zone_static_collisions_total",
            "Moves of players and NPCs that a static object shortened or stopped.",
            m.static_collisions);
  w.gauge("zone_interest_load_level",
          "Load-adaptive sync level (interest.load_adaptive): 0 normal, 1 far tier slowed, 2+ "
          "view radius shrunk.",
          static_cast<double>(m.load_level));
  w.gauge("zone_interest_load_level_max", "Highest load-adaptive level since start.",
          static_cast<double>(m.load_level_max));
  w.counter("zone_interest_load_level_changes_total", "Load-adaptive level changes.",
            m.load_level_changes);
  w.gauge("zone_interest_load_share",
          "Smoothed tick time as a share of the tick budget (interest.load_budget_ms).",
          m.load_share);
  w.gauge("zone_interest_view_radius_meters",
          "Players' view radius as the AOI uses it now (aoi.view_radius, shrunk under load).",
          m.view_radius);
  w.counter("zone_replication_snapshots_total", "Snapshots (frames) sent to clients.",
            m.snapshots_sent);
  w.counter("zone_replication_snapshot_parts_total", "Snapshot parts (packets) sent to clients.",
            m.snapshot_parts_sent);
  w.counter("zone_replication_snapshot_bytes_total",
            "Snapshot payload bytes, before ENet's headers.", m.snapshot_bytes_sent);
  w.gauge("zone_network_hosts", "ENet hosts sharing the game port, one thread each.",
          static_cast<double>(m.network_hosts));
  w.gauge("zone_replication_workers", "Threads building replication, the tick thread included.",
          static_cast<double>(m.replication_workers));
  w.gauge("zone_network_socket_receive_buffer_bytes",
          "Kernel receive buffer granted to the game sockets (smallest of the hosts).",
          static_cast<double>(m.socket_receive_buffer_bytes));
  w.gauge("zone_network_socket_send_buffer_bytes",
          "Kernel send buffer granted to the game sockets (smallest of the hosts).",
          static_cast<double>(m.socket_send_buffer_bytes));
  w.counter("zone_network_full_drains_total",
            "Socket reads that found more than one ENet batch (256 datagrams) waiting.",
            m.full_drains);
  // Admission control (docs/security.md, "The game port"): what the status line's
  // "admission:" warning sums up, as counters an operator can graph and alert on.
  w.labelled("zone_network_connects_refused_total", "counter",
             "Connection attempts (ENet CONNECTs) dropped unanswered before they got a peer, "
             "by reason: cookie (no valid cookie for its source address, limits.connect_cookies), "
             "address (limits.max_connections_per_address connections from the "
             "address already), handshakes (limits.max_handshakes_per_address from the address "
             "or limits.max_handshakes in all already in progress).",
             "reason",
             {{"address", m.connects_refused_address},
              {"handshakes", m.connects_refused_handshakes},
              {"cookie", m.connects_refused_cookie}});
  w.counter("zone_network_handshakes_expired_total",
            "Handshakes never finished, dropped after limits.handshake_timeout_ms.",
            m.handshakes_expired);
  w.gauge("zone_network_handshakes_in_progress",
          "Handshakes in progress (unfinished ENet connections) on all hosts, as last counted.",
          static_cast<double>(m.handshakes));
  w.counter("zone_sessions_evicted_silent_total",
            "Connections that never said hello closed for a newcomer beyond "
            "limits.max_awaiting_hello, the longest silent first (also counted in "
            "zone_disconnects_total as bad_hello).",
            m.evicted_silent);
  w.counter_seconds(
      "zone_network_send_wait_seconds_total",
      "Time the tick waited for the network threads to finish sending the tick before the "
      "previous one (whose arenas it reuses): non-zero only when a network thread fell a "
      "whole tick behind.",
      m.send_wait_seconds);
  w.histogram("zone_client_send_rate_bytes_per_second",
              "Snapshot bytes per second sent to each client, observed once a second.",
              m.client_send_rate);
  w.counter("zone_inputs_total", "Client inputs applied.", m.inputs);
  w.counter("zone_player_joins_total", "Players that joined.", m.joins);
  w.counter("zone_player_leaves_total", "Players that left or were removed.", m.leaves);
  w.labelled("zone_dropped_packets_total", "counter", "Client packets dropped, by reason.",
             "reason", m.drops);
  w.labelled("zone_disconnects_total", "counter", "Client disconnects, by reason.", "reason",
             m.disconnects);
  w.gauge("zone_auth_ticket_mode",
          "1 when joining needs a login ticket (auth.mode: ticket), 0 when anyone may join "
          "under any name (open).",
          m.ticket_mode ? 1.0 : 0.0);
  w.labelled("zone_auth_refused_total", "counter",
             "Hellos refused for their login ticket (ticket mode), by reason: missing, "
             "malformed, unknown_version, bad_signature, wrong_world, expired, bad_name.",
             "reason", m.tickets_refused);
  w.counter("zone_auth_tickets_accepted_total", "Hellos let in with a good login ticket.",
            m.tickets_accepted);
  w.counter("zone_auth_takeovers_total",
            "Logins of a character already playing here, which took its entity over (the older "
            "connection closed with logged_in_elsewhere).",
            m.takeovers);
  w.counter("zone_auth_logged_in_elsewhere_total",
            "Players that left because their character logged in in another zone of the world "
            "(closed with logged_in_elsewhere; docs/world.md, \"One character, online once\").",
            m.logged_in_elsewhere);
  w.gauge("zone_players_held",
          "Players whose connection was lost, held in the world for their client to resume "
          "(players.resume_grace_ms).",
          static_cast<double>(m.players_held));
  w.counter("zone_player_holds_total",
            "Players held in the world after their connection was lost (a time-out).", m.holds);
  w.labelled("zone_player_resumes_total", "counter",
             "Hellos with a resume token, by result: ok (the player taken back, from its hold "
             "or from an older connection), refused (unknown, used, expired, or another "
             "character's).",
             "result", {{"ok", m.resumes}, {"refused", m.resumes_refused}});
  w.counter("zone_player_holds_expired_total",
            "Held players whose client did not come back within the grace: they left the world.",
            m.holds_expired);
  render_persist(w, m.persist);
  w.labelled("zone_config_reloads_total", "counter", "Config reload attempts, by result.", "result",
             {{"success", m.reloads_ok}, {"failure", m.reloads_failed}});
  w.gauge("zone_config_last_reload_success", "1 if the last config reload succeeded.",
          m.last_reload_ok ? 1.0 : 0.0);
  if (m.in_world) {
    render_cluster(w, m.cluster);
    w.labelled("zone_arrivals_total", "counter",
               "Players handed over to this zone, by what their clients did: arrived (said "
               "hello with the transfer token), expired (never came).",
               "result", {{"arrived", m.arrivals}, {"expired", m.arrivals_expired}});
    w.counter("zone_transfers_out_total", "Players whose clients were sent to another zone.",
              m.transfers_out);
    w.counter("zone_arrival_tokens_refused_total",
              "Hellos with a transfer token this zone did not issue, or already used, or expired, "
              "or (ticket mode) with the ticket of another login than the token's player.",
              m.arrival_tokens_refused);
  }
  return w.take();
}

}  // namespace zone
