#include "cluster/ghost_exchange.hpp"

#include <algorithm>

namespace zone::cluster {
namespace {

std::string ghost_subject(const std::string& prefix, const std::string& zone) {
  return prefix + ".ghosts." + zone;
}

std::int64_t wall_clock_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

GhostExchange::GhostExchange(const ExchangeParams& params, world::World& world)
    : params_(params),
      world_(world),
      ghosts_(world, params.id_reuse_ticks),
      link_({.url = params.nats_url, .name = "zone-" + params.self_name}),
      epoch_(static_cast<std::uint64_t>(wall_clock_us())) {
  link_.subscribe(ghost_subject(params_.subject_prefix, params_.self_name));
  for (const Neighbour& n : params_.neighbours) {
    subjects_out_.push_back(ghost_subject(params_.subject_prefix, n.name));
  }
}

bool GhostExchange::is_neighbour(std::uint32_t index) const {
  return std::any_of(params_.neighbours.begin(), params_.neighbours.end(),
                     [index](const Neighbour& n) { return n.index == index; });
}

void GhostExchange::tick(std::uint32_t tick, double max_step) {
  const auto now = std::chrono::steady_clock::now();
  receive(now);
  ghosts_.expire(now, params_.ghost_timeout);
  ghosts_.follow(max_step);
  publish(tick);
}

void GhostExchange::receive(std::chrono::steady_clock::time_point now) {
  link_.take(inbox_);
  for (const bus::BusMessage& m : inbox_) {
    const GhostDecodeError error = decode(m.data, message_);
    switch (error) {
      case GhostDecodeError::kNone:
        break;
      case GhostDecodeError::kNotGhost:
        ++stats_.dropped_not_ghost;
        continue;
      case GhostDecodeError::kVersion:
        ++stats_.dropped_version;
        continue;
      case GhostDecodeError::kTruncated:
        ++stats_.dropped_truncated;
        continue;
      case GhostDecodeError::kBadValue:
        ++stats_.dropped_bad_value;
        continue;
      case GhostDecodeError::kTrailing:
        ++stats_.dropped_trailing;
        continue;
    }
    // Only a neighbour's entities can be near this zone; anything else is a
    // misconfigured or foreign sender on our subject.
    if (message_.source == params_.self_index || !is_neighbour(message_.source)) {
      ++stats_.dropped_unknown_source;
      continue;
    }
    if (!ghosts_.apply(message_.source, message_.epoch, message_.ghosts, now)) continue;
    ++stats_.messages_in;
    const double lag = static_cast<double>(wall_clock_us() - message_.sent_us) / 1e6;
    stats_.lag_seconds_sum += std::max(0.0, lag);
    ++stats_.lag_count;
    stats_.last_lag_seconds = std::max(0.0, lag);
  }
}

void GhostExchange::publish(std::uint32_t tick) {
  for (std::size_t i = 0; i < params_.neighbours.size(); ++i) {
    message_.source = params_.self_index;
    message_.tick = tick;
    message_.epoch = epoch_;
    message_.ghosts.clear();
    world::collect_near(world_, params_.neighbours[i].area, params_.ghost_distance,
                        message_.ghosts);
    message_.sent_us = wall_clock_us();
    encode(message_, bytes_);
    // An empty list is sent too: it is how a neighbour learns that the last ghost left,
    // and that this zone is alive.
    if (link_.publish(subjects_out_[i], bytes_)) {
      ++stats_.messages_out;
      stats_.ghosts_out += message_.ghosts.size();
    }
  }
}

ClusterStats GhostExchange::stats() const {
  ClusterStats s = stats_;
  const world::GhostStats& g = ghosts_.stats();
  s.ghosts_in = ghosts_.count();
  s.ghost_sources = ghosts_.sources();
  s.ghosts_spawned = g.spawned;
  s.ghosts_removed = g.removed;
  s.ghosts_expired = g.expired;
  s.ghosts_rejected = g.rejected;
  s.ghosts_restarted = g.restarted;
  s.dropped_stale_epoch = g.stale_lists;
  const bus::LinkStats l = link_.stats();
  s.connected = l.connected;
  s.publish_failed = l.publish_failed;
  s.dropped_queue_full = l.dropped;
  s.bytes_out = l.bytes_out;
  s.bytes_in = l.bytes_in;
  s.disconnects = l.disconnects;
  s.reconnects = l.reconnects;
  return s;
}

}  // namespace zone::cluster
