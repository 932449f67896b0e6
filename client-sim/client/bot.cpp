#include "client/bot.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "client/chunk_set.hpp"
#include "protocol/codec.hpp"
#include "protocol/quantize.hpp"

namespace zone::client {

namespace {

void update(GroupInfo& info, std::uint32_t id, protocol::GroupResult result,
            const flatbuffers::Vector<std::uint32_t>* members) {
  info.id = id;
  info.last_result = static_cast<std::uint8_t>(result);
  info.members.clear();
  if (members != nullptr) info.members.assign(members->begin(), members->end());
  ++info.statuses;
}

}  // namespace

void Bot::connect(net::EnetHost& host, const std::string& server, std::uint16_t port) {
  peer_ = host.connect(server, port);
  session_.start(server, port);
}

std::shared_ptr<const StaticTruth> Bot::statics_for(const std::string& zone) const {
  if (static_truth_ || zone_statics_ == nullptr) return static_truth_;
  const auto it = zone_statics_->find(zone);
  return it == zone_statics_->end() ? nullptr : it->second;
}

BotCounters Bot::counters() const {
  const SessionCounters& s = session_.counters();
  BotCounters c;
  c.packets_in = s.packets_in;
  c.bytes_in = s.bytes_in;
  c.packets_out = s.packets_out;
  c.bytes_out = s.bytes_out;
  c.snapshots = s.snapshot_parts;
  c.malformed = s.malformed;
  return c;
}

void Bot::reset_session() {
  // The old session's replica, chunks and static objects are over (the owner banked their
  // counts): a new one starts from nothing, and if it never welcomes the bot nothing of
  // the old one is counted twice.
  const WelcomeInfo& w = session_.welcome();
  session_.replica().reset({w.max_speed, w.tick_rate, w.entity_id}, session_.schema());
  // The gameplay counts too (banked with the rest).
  game_ = GameCounters{};
  before_spawn_details_.clear();
  reset_game_session();
  chunks_ = ChunkInfo{};
  chunk_check_ = PendingChunkCheck{};
  statics_ = StaticLayer{};
}

void Bot::drop(net::EnetHost& host) {
  host.abandon(peer_);
  session_.go_idle();
}

void Bot::resume(net::EnetHost& host) {
  reset_session();
  session_.begin_resume();
  peer_ = host.connect(session_.server_host(), session_.server_port());
}

void Bot::connect_transfer(net::EnetHost& host) {
  reset_session();
  session_.begin_transfer();
  peer_ = host.connect(session_.server_host(), session_.server_port());
  ++transfers_;
}

void Bot::on_connect(net::EnetHost& host) {
  send_reliable(host, session_.hello());
}

void Bot::on_disconnect(std::uint32_t reason) {
  // After a Transfer the bot goes however the old connection ended (a lost goodbye
  // times out instead): kTransferring, else kClosed.
  session_.on_disconnect(reason);
}

void Bot::on_packet(std::uint8_t channel, std::span<const std::uint8_t> bytes) {
  session_.receive(channel, bytes, *this);
}

void Bot::on_snapshot_part(bool completed, std::uint32_t previous_ack) {
  if (completed) track_held(previous_ack);
  check_chunks();  // the frame a ChunkUpdate waits for may be complete now
  statics_.check(session_.replica());
}

void Bot::on_unreplicated_part(std::span<const std::uint8_t> bytes) {
  light_part(bytes);
}

void Bot::on_welcome(const protocol::Welcome& w, const WelcomeNote& note) {
  if (note.arrived) {
    if (w.entity_id() != session_.transfer().entity_id) ++transfer_id_changes_;
    // What the old zone said is void here (docs/protocol.md, "Transfer"): its groups'
    // ids, the ticks it counted (chunks and static objects went at connect_transfer).
    party_.id = guild_.id = 0;
    party_.members.clear();
    guild_.members.clear();
    light_selves_ = {};
    light_ack_ = light_tick_ = light_parts_ = 0;
  }
  if (note.resumed) {
    ++resumes_;
    if (w.entity_id() != note.previous_entity) ++resume_id_changes_;
  }
  reset_game_session();
  light_self_.assign(session_.schema().size(), 0);
  statics_.reset({w.world_min_x(), w.world_min_y(), w.world_max_x(), w.world_max_y(), 1.0},
                 statics_for(session_.welcome().zone));
}

void Bot::on_party(const protocol::PartyStatus& s) {
  update(party_, s.party(), s.result(), s.members());
}

void Bot::on_guild(const protocol::GuildStatus& g) {
  update(guild_, g.guild(), g.result(), g.members());
}

void Bot::on_statics(const protocol::StaticObjects& o) {
  if (light_) return;
  statics_.on_message(o);
  statics_.check(session_.replica());
}

void Bot::on_action_result(const protocol::ActionResult& ar) {
  const auto status = static_cast<std::size_t>(ar.status());
  if (status < game_.action_results.size()) ++game_.action_results[status];
  if (answers_.size() >= 64) answers_.erase(answers_.begin());
  answers_.push_back({ar.sequence(), ar.status(), ar.server_tick()});
  // Handled at the start of its tick, so sent after every earlier tick's events but
  // one's (conservatively).
  if (ar.server_tick() > 1) settled_before_ = std::max(settled_before_, ar.server_tick() - 1);
}

void Bot::on_chat_result(const protocol::ChatResult& cr) {
  const auto status = static_cast<std::size_t>(cr.status());
  if (status < game_.chat_results.size()) ++game_.chat_results[status];
  if (refusals_.size() >= 64) refusals_.erase(refusals_.begin());
  refusals_.emplace_back(cr.status(), cr.channel());
}

void Bot::reset_game_session() {
  events_by_kind_.assign(session_.schema().events().size(), 0);
  held_.clear();
  frames_tracked_ = 0;
  event_log_.clear();
  settled_before_ = 0;
}

void Bot::track_held(std::uint32_t previous_tick) {
  const replica::FrameReplica& replica = session_.replica();
  const replica::Frame& now = replica.current();
  const replica::Frame* was = replica.frame_at(previous_tick);
  const replica::EntityList* before = was != nullptr ? &was->entities : nullptr;
  // Entities that entered since the previous current frame start (or resume) being
  // held; those that left stop at the previous frame.
  std::size_t a = 0, b = 0;
  const std::size_t na = before != nullptr ? before->size() : 0;
  const replica::EntityList& after = now.entities;
  while (a < na || b < after.size()) {
    if (b == after.size() || (a < na && before->id(a) < after.id(b))) {
      Held& h = held_[before->id(a)];
      h.left = previous_tick;
      ++a;
    } else if (a == na || after.id(b) < before->id(a)) {
      const auto [it, fresh] = held_.try_emplace(after.id(b), Held{now.tick, 0});
      if (!fresh) it->second.left = 0;
      ++b;
    } else {
      ++a;
      ++b;
    }
  }
  // Without the previous frame (a gap of more than the replica's history) the ones that
  // left are not known: they stay marked as held, which only errs on the lenient side.
  if (++frames_tracked_ % 1024 == 0) {
    std::erase_if(held_, [&](const auto& kv) {
      return kv.second.left != 0 && kv.second.left + 8192 < now.tick;
    });
  }
}

bool Bot::held_by(std::uint32_t entity, std::uint32_t tick) const {
  if (entity == session_.welcome().entity_id) return true;
  const auto it = held_.find(entity);
  return it != held_.end() && it->second.first <= tick;
}

void Bot::on_events(const protocol::Events& events) {
  const std::uint32_t tick = events.server_tick();
  // Events of one tick come in order, possibly in several messages: this one closes
  // every earlier tick.
  settled_before_ = std::max(settled_before_, tick);
  if (events.events() == nullptr) return;
  for (const protocol::Event* e : *events.events()) {
    const ReceivedEvent r{tick, e->sequence(), e->kind(), e->entity(), e->target()};
    ++game_.events_received;
    if (r.kind < events_by_kind_.size()) ++events_by_kind_[r.kind];
    if (keep_events_) event_log_.push_back(r);
    // An event about an entity (a game event, or a chat line said aloud) goes only to a
    // client that holds the entity; the other chat channels are routed directly.
    const bool about_entity =
        r.kind != protocol::kChatEvent ||
        (e->args() != nullptr && e->args()->size() > 0 &&
         e->args()->Get(0) == static_cast<std::int32_t>(protocol::ChatChannel::kSay));
    if (about_entity && !light_ && !held_by(r.entity, tick)) {
      ++game_.events_before_spawn;
      if (before_spawn_details_.size() < 10) {
        const auto held = held_.find(r.entity);
        before_spawn_details_.push_back(fmt::format(
            "{} (entity {}): event {} (kind {}) at tick {} about entity {}, {}", session_.name(),
            session_.welcome().entity_id, r.sequence, r.kind, tick, r.entity,
            held == held_.end() ? std::string("never held")
                                : fmt::format("first held at tick {}", held->second.first)));
      }
    }
    // The last few with their details, in a ring.
    EventDetail* d = nullptr;
    if (recent_events_.size() < 64) {
      d = &recent_events_.emplace_back();
    } else {
      d = &recent_events_[recent_next_];
      recent_next_ = (recent_next_ + 1) % recent_events_.size();
    }
    d->event = r;
    d->args.clear();
    if (e->args() != nullptr) d->args.assign(e->args()->begin(), e->args()->end());
    d->text = e->text() != nullptr ? e->text()->string_view() : std::string_view();
    d->name = e->name() != nullptr ? e->name()->string_view() : std::string_view();
  }
}

void Bot::drop_events_through(std::uint32_t tick) {
  while (!event_log_.empty() && event_log_.front().tick <= tick) event_log_.pop_front();
}

std::uint32_t Bot::send_action(net::EnetHost& host, std::uint16_t action, std::uint32_t target,
                               std::span<const std::int32_t> args) {
  if (!session_.playing()) return 0;
  send_reliable(host, session_.action(action, target, args));
  ++game_.actions_sent;
  return session_.action_sequence();
}

void Bot::send_chat(net::EnetHost& host, protocol::ChatChannel channel, std::string_view text,
                    std::string_view to) {
  if (!session_.playing()) return;
  send_reliable(host, session_.chat(channel, text, to));
  const auto c = static_cast<std::size_t>(channel);
  if (c < game_.chat_sent.size()) ++game_.chat_sent[c];
}

void Bot::on_chunks(const protocol::ChunkUpdate& u) {
  ChunkInfo& ci = chunks_;
  ++ci.updates;
  auto mismatch = [&](std::string what) { ci.fail(std::move(what)); };
  if (chunk_check_.tick != 0) ++ci.skipped;  // the previous one was never checked
  apply_chunk_update(ci.loaded, u, [&](bool load, util::ChunkCoord cc) {
    mismatch(load ? fmt::format("tick {}: load of chunk ({}, {}), which is loaded already",
                                u.server_tick(), cc.col, cc.row)
                  : fmt::format("tick {}: unload of chunk ({}, {}), which is not loaded",
                                u.server_tick(), cc.col, cc.row));
  });
  chunk_check_.tick = u.server_tick();
  const WelcomeInfo& w = session_.welcome();
  chunk_check_.grid = {w.world_min_x, w.world_min_y, w.world_max_x, w.world_max_y, u.chunk_size()};
  chunk_check_.load_radius = u.load_radius();
  chunk_check_.unload_radius = u.unload_radius();
  check_chunks();
}

void Bot::check_chunks() {
  PendingChunkCheck& p = chunk_check_;
  if (p.tick == 0 || light_) return;
  const auto at = chunks_.position_at(session_.replica(), p.tick);
  if (!at) return;
  const double x = at->x, y = at->y, kSlack = at->slack;
  std::vector<util::ChunkCoord> near;
  p.grid.within(x, y, std::max(0.0, p.load_radius - kSlack), near);
  const std::vector<util::ChunkCoord>& loaded = chunks_.loaded;
  auto fail = [&](std::string what) { chunks_.fail(std::move(what)); };
  for (const util::ChunkCoord c : near) {
    if (!std::binary_search(loaded.begin(), loaded.end(), c)) {
      fail(fmt::format("tick {}: chunk ({}, {}) at {:.2f} m (load radius {:.1f} m) not loaded",
                       p.tick, c.col, c.row, p.grid.distance(c, x, y), p.load_radius));
      break;
    }
  }
  for (const util::ChunkCoord c : loaded) {
    if (p.grid.distance(c, x, y) > p.unload_radius + kSlack) {
      fail(fmt::format("tick {}: chunk ({}, {}) at {:.2f} m (unload radius {:.1f} m) still loaded",
                       p.tick, c.col, c.row, p.grid.distance(c, x, y), p.unload_radius));
      break;
    }
  }
  p.tick = 0;
}

void Bot::join_party(net::EnetHost& host, std::uint64_t key) {
  if (session_.playing()) send_reliable(host, session_.join_party(key));
}

void Bot::join_guild(net::EnetHost& host, std::uint64_t key) {
  if (session_.playing()) send_reliable(host, session_.join_guild(key));
}

void Bot::send_reliable(net::EnetHost& host, std::span<const std::uint8_t> bytes) {
  host.send(peer_, bytes, net::Delivery::kReliable, protocol::kReliableChannel);
  session_.count_sent(bytes.size());
}

void Bot::light_part(std::span<const std::uint8_t> bytes) {
  const protocol::Schema& schema = session_.schema();
  if (protocol::parse_snapshot_part(bytes, schema, light_scratch_) != protocol::ParseError::kNone) {
    session_.count_malformed();
    return;
  }
  const protocol::SnapshotHeader& h = light_scratch_.header;
  if (h.server_tick <= light_ack_) return;
  if (h.server_tick != light_tick_) {
    light_tick_ = h.server_tick;
    light_parts_ = 0;
    // The own record is relative to the baseline frame's; without that frame (never
    // complete here), the tick cannot be completed either.
    const auto& base = light_selves_[h.baseline_tick() % light_selves_.size()];
    if (h.baseline_tick() != 0 && base.first != h.baseline_tick()) {
      light_tick_ = 0;
      return;
    }
    if (h.baseline_tick() != 0) {
      light_pending_self_ = base.second;
    } else {
      light_pending_self_.assign(schema.size(), 0);
    }
  }
  if (h.part == 0 && (h.flags & protocol::kSnapshotHasSelf)) {
    protocol::fields::apply(schema, light_scratch_.self_mask,
                            light_scratch_.wire_at(light_scratch_.self_wire_begin),
                            light_pending_self_);
  }
  if (++light_parts_ >= h.part_count) {
    light_ack_ = light_tick_;
    light_self_ = light_pending_self_;
    light_selves_[light_ack_ % light_selves_.size()] = {light_ack_, light_self_};
  }
}

void Bot::send_input(net::EnetHost& host, float move_x, float move_y) {
  if (!session_.playing()) return;
  const std::span<const std::uint8_t> bytes = session_.input(move_x, move_y, ack_tick());
  if (host.send(peer_, bytes, net::Delivery::kUnreliable, protocol::kUnreliableChannel)) {
    session_.count_sent(bytes.size());
  }
}

void Bot::quit(net::EnetHost& host) {
  // At once, not after what is queued: through 10% loss a goodbye that waited for the
  // queues (ENet's disconnect_later) was still unsent 5 s later in about 1 quit in 100,
  // and the zone kept the player until its input timeout.
  host.disconnect_at_once(peer_,
                          static_cast<std::uint32_t>(protocol::DisconnectReason::ClientQuit));
  session_.quit();
}

}  // namespace zone::client
