#include "session.hpp"

#include <iterator>
#include <string>

namespace viewer {

namespace {

// docs/protocol.md: ActionStatus.
const char* action_status(std::uint32_t status) {
  static constexpr const char* kNames[] = {
      "ok",   "unknown action",   "bad arguments", "no target",    "out of range", "cooldown",
      "dead", "no line of sight", "not allowed",   "rate limited", "rules failed"};
  return status < std::size(kNames) ? kNames[status] : "refused";
}

const char* channel_name(std::int32_t channel) {
  static constexpr const char* kNames[] = {"say", "party", "guild", "whisper", "zone"};
  return channel >= 0 && channel < 5 ? kNames[channel] : "chat";
}

// Concatenation by appending: GCC 12 at -O3 warns (-Wrestrict, a false positive) on
// `"text" + std::string` temporaries, which -Werror makes an error.
template <typename... Parts>
std::string cat(const Parts&... parts) {
  std::string out;
  (out += ... += parts);
  return out;
}

}  // namespace

void Session::poll_events(ChatBox& chat) {
  zc_event e;
  while (zc_poll_event(client_, &e) != 0) {
    switch (e.type) {
      case ZC_EVENT_WELCOME: {
        zc_welcome w;
        zc_get_welcome(client_, &w);
        // The schema comes with each Welcome (a transfer may bring another zone's).
        attack_ = zc_find_action(client_, "attack");
        asked_.clear();  // answers to the old session never come
        chat.add(cat("welcome to ", w.zone, " as entity ", std::to_string(w.entity_id),
                     attack_ < 0 ? " (no attack action here)" : ""));
        break;
      }
      case ZC_EVENT_DISCONNECTED:
        chat.add(cat("disconnected, reason ", std::to_string(e.reason), " (docs/protocol.md)"));
        break;
      case ZC_EVENT_TRANSFER:
        chat.add(cat("handed over to ", e.text));
        break;
      case ZC_EVENT_RESUMING:
        chat.add(cat("connection lost: coming back (", std::to_string(e.count), " tries left)"));
        break;
      case ZC_EVENT_GAME:
        if (e.kind == 0) {
          chat.add(cat("[", channel_name(e.args[0]), "] ", e.name, ": ", e.text));
        } else {
          const char* name = zc_event_name(client_, e.kind);
          std::string line = cat(name != nullptr ? name : "event", ": ", who(e.entity));
          if (e.target != 0) line += cat(" by ", who(e.target));
          for (std::uint32_t i = 0; i < e.arg_count && i < 4; ++i) {
            line += cat(i == 0 ? " (" : ", ", std::to_string(e.args[i]));
          }
          if (e.arg_count > 0) line += ")";
          chat.add(line);
        }
        break;
      case ZC_EVENT_ACTION_RESULT: {
        const auto it = asked_.find(e.sequence);
        const std::string target = it != asked_.end() ? cat(" ", who(it->second)) : "";
        if (it != asked_.end()) asked_.erase(it);
        chat.add(cat("attack", target, ": ", action_status(e.status)));
        break;
      }
      case ZC_EVENT_CHAT_RESULT:
        chat.add(cat("line refused on ", channel_name(static_cast<std::int32_t>(e.channel)),
                     ", status ", std::to_string(e.status)));
        break;
      default:
        break;
    }
  }
}

std::string Session::who(std::uint32_t entity) const {
  zc_welcome w;
  if (zc_get_welcome(client_, &w) != 0 && w.entity_id == entity) return "you";
  // A player by name; an NPC by its id (its name, when it has one, is the zone's).
  zc_entity e;
  if (zc_entity_find(client_, entity, &e) != 0 && e.is_player != 0 && e.name != nullptr &&
      e.name[0] != '\0') {
    return e.name;
  }
  return cat("entity ", std::to_string(entity));
}

void Session::attack(std::uint32_t target, ChatBox& chat) {
  if (attack_ < 0) {
    chat.add("this zone's game has no attack action (configs/game/game.yaml has one)");
    return;
  }
  const std::uint32_t sequence =
      zc_send_action(client_, static_cast<std::uint16_t>(attack_), target, nullptr, 0);
  if (sequence != 0) asked_[sequence] = target;
}

void Session::say(const std::string& line, ChatBox& chat) {
  if (zc_send_chat(client_, 0, line.c_str(), nullptr) == 0) chat.add("not in a zone: not said");
}

}  // namespace viewer
