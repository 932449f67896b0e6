#include "world/event_log.hpp"

namespace zone::world {

namespace {
constexpr std::size_t kMaxNameBytes = 64;
}

bool valid_utf8(std::string_view text) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const auto* end = p + text.size();
  while (p < end) {
    const unsigned c = *p;
    std::size_t n = 0;
    std::uint32_t cp = 0;
    if (c < 0x80) {
      ++p;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      n = 1;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      n = 2;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      n = 3;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (static_cast<std::size_t>(end - p) <= n) return false;
    for (std::size_t i = 1; i <= n; ++i) {
      if ((p[i] & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (p[i] & 0x3F);
    }
    static constexpr std::uint32_t kMin[] = {0, 0x80, 0x800, 0x10000};
    if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    p += n + 1;
  }
  return true;
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
  if (d.text.size() > protocol::kMaxEventText || !valid_utf8(d.text)) {
    return refuse("event '" + spec.name + "': its text must be at most " +
                  std::to_string(protocol::kMaxEventText) + " bytes of UTF-8");
  }
  if (d.name.size() > kMaxNameBytes || !valid_utf8(d.name)) {
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
