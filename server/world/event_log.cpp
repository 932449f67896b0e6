#include "world/event_log.hpp"

#include "protocol/player_name.hpp"

namespace zone::world {

namespace {
constexpr std::size_t kMaxNameBytes = 64;
}

std::optional<std::string> EventLog::emit(const protocol::Schema& schema, const EventDraft& d) {
  auto refuse = [&](std::string why) -> std::optional<std::string> {
    ++refused_;
    return why;
  };
  if (d.kind >= schema.events().size()) {
    return refuse("unknown event kind " + std::to_string(d.kind));
  }
  const protocol::EventSpec& spec = schema.events()[d.kind];
  if (d.args.size() > spec.args.size()) {
    return refuse("event '" + spec.name + "' takes " + std::to_string(spec.args.size()) +
                  " arguments, given " + std::to_string(d.args.size()));
  }
  if (!d.text.empty() && !spec.text) return refuse("event '" + spec.name + "' carries no text");
  if (d.text.size() > protocol::kMaxEventText || !protocol::is_valid_utf8(d.text)) {
    return refuse("event '" + spec.name + "': its text must be at most " +
                  std::to_string(protocol::kMaxEventText) + " bytes of UTF-8");
  }
  if (d.name.size() > kMaxNameBytes || !protocol::is_valid_utf8(d.name)) {
    return refuse("event '" + spec.name + "': a name of at most 64 bytes of UTF-8");
  }
  if (d.route > EventRoute::kZone) return refuse("unknown route");
  if (events_.size() >= max_per_tick_) {
    ++dropped_;
    return "more than " + std::to_string(max_per_tick_) + " events in one tick";
  }
  WorldEvent e;
  e.sequence = next_sequence_++;
  if (next_sequence_ == 0) next_sequence_ = 1;
  e.kind = d.kind;
  e.route = d.route;
  e.entity = d.entity;
  e.target = d.target;
  e.group = d.group;
  e.arg_count = static_cast<std::uint8_t>(d.args.size());
  for (std::size_t i = 0; i < d.args.size(); ++i) e.args[i] = d.args[i];
  e.text_at = static_cast<std::uint32_t>(texts_.size());
  e.text_size = static_cast<std::uint16_t>(d.text.size());
  texts_.append(d.text);
  e.name_at = static_cast<std::uint32_t>(texts_.size());
  e.name_size = static_cast<std::uint16_t>(d.name.size());
  texts_.append(d.name);
  events_.push_back(e);
  ++emitted_;
  return std::nullopt;
}

void EventLog::clear() {
  events_.clear();
  texts_.clear();
}

}  // namespace zone::world
