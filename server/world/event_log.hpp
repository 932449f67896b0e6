// The events of one tick: hits, deaths, emotes, chat lines. The game's rules emit them
// (through the world), replication delivers each to exactly the clients its route names,
// and the log is cleared at the start of the next tick. Storage is reused from tick to
// tick (texts live in one buffer), so a steady tick allocates nothing.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/schema.hpp"
#include "world/entity.hpp"

namespace zone::world {

// Who an event goes to.
enum class EventRoute : std::uint8_t {
  // Every client that holds `entity` (has acknowledged a snapshot with it and not been
  // sent its despawn), narrowed by the event kind's audience (owner: its own player only;
  // party: its player and the members of its party who hold it); always its own player.
  kEntity = 0,
  kPlayer = 1,  // one player, `target` (a whisper)
  kParty = 2,   // the members of party `group`
  kGuild = 3,   // the members of guild `group`
  kZone = 4,    // every player of the zone
};

struct WorldEvent {
  std::uint32_t sequence = 0;  // the zone's event number, from 1 (wraps at 2^32)
  std::uint16_t kind = 0;      // index into the schema's events
  EventRoute route = EventRoute::kEntity;
  EntityId entity = kNoEntity;  // what it is about (kEntity), or who speaks (chat)
  EntityId target = kNoEntity;  // another entity it names; kPlayer: the receiver
  GroupId group = kNoGroup;     // kParty, kGuild: the group
  std::uint8_t arg_count = 0;
  std::array<std::int32_t, protocol::kMaxArgs> args{};
  std::uint32_t text_at = 0;  // into the log's texts
  std::uint16_t text_size = 0;
  std::uint32_t name_at = 0;  // the speaker's name (chat)
  std::uint16_t name_size = 0;
  std::span<const std::int32_t> arg_span() const { return {args.data(), arg_count}; }
};

// What an emit gives: the event's fields but its sequence and storage.
struct EventDraft {
  std::uint16_t kind = 0;
  EventRoute route = EventRoute::kEntity;
  EntityId entity = kNoEntity;
  EntityId target = kNoEntity;
  GroupId group = kNoGroup;
  std::span<const std::int32_t> args;
  std::string_view text;
  std::string_view name;
};

class EventLog {
 public:
  explicit EventLog(std::uint32_t max_per_tick = 4096) : max_per_tick_(max_per_tick) {}

  // Checks the draft against the schema (a known kind, no more arguments than it names,
  // a text only where it carries one, at most kMaxEventText bytes of UTF-8, a name of at
  // most 64 bytes) and appends it. Returns the refusal's reason, or nothing. Past
  // max_per_tick events in a tick, later ones are refused and counted.
  std::optional<std::string> emit(const protocol::Schema& schema, const EventDraft& draft);

  // The start of a tick: this tick's events begin (sequence numbers go on).
  void clear();
  std::span<const WorldEvent> events() const { return events_; }
  std::string_view text(const WorldEvent& e) const { return {texts_.data() + e.text_at, e.text_size}; }
  std::string_view name(const WorldEvent& e) const { return {texts_.data() + e.name_at, e.name_size}; }

  std::uint64_t emitted() const { return emitted_; }  // ever
  std::uint64_t refused() const { return refused_; }  // ever: bad drafts
  std::uint64_t dropped() const { return dropped_; }  // ever: past max_per_tick
  void set_max_per_tick(std::uint32_t n) { max_per_tick_ = n; }

 private:
  std::uint32_t max_per_tick_;
  std::uint32_t next_sequence_ = 1;
  std::vector<WorldEvent> events_;
  std::string texts_;
  std::uint64_t emitted_ = 0;
  std::uint64_t refused_ = 0;
  std::uint64_t dropped_ = 0;
};

// Whether `text` is well-formed UTF-8 (no overlong forms, no surrogates).
bool valid_utf8(std::string_view text);

}  // namespace zone::world
