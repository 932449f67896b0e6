// The zone as the viewer plays it: the events turned into chat box lines, and the player's
// requests (a line to say, an entity to attack) turned into calls of zoneclient.h.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

#include "chat_box.hpp"
#include "zoneclient.h"

namespace viewer {

class Session {
 public:
  explicit Session(zc_client* client) : client_(client) {}

  // Reads every queued event into `chat`.
  void poll_events(ChatBox& chat);
  // The sample game's attack (configs/game/game.yaml, `actions`) on `target`; a zone
  // without that action says so in the chat box.
  void attack(std::uint32_t target, ChatBox& chat);
  void say(const std::string& line, ChatBox& chat);

 private:
  // How a line names an entity: "you", a player's name, or "entity N".
  std::string who(std::uint32_t entity) const;

  zc_client* client_;
  std::int32_t attack_ = -1;                                // the schema's action, -1: none
  std::unordered_map<std::uint32_t, std::uint32_t> asked_;  // action sequence -> target
};

}  // namespace viewer
