// What a zone says about a session, read from its messages: the Welcome (the zone, its
// tick rate and world, the player's entity) and a Transfer (where the player goes next).
// Shared by every client of the project (the kit's Connection, client-sim's bots), so
// that the messages are read in one place.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "protocol/zone_generated.h"

namespace zone::client {

struct WelcomeInfo {
  std::uint32_t entity_id = 0;
  std::uint32_t server_tick = 0;
  std::uint32_t tick_rate = 0;
  float view_radius = 0.0f;
  float hysteresis = 0.0f;
  float world_min_x = 0.0f, world_min_y = 0.0f, world_max_x = 0.0f, world_max_y = 0.0f;
  bool aoi_enabled = true;
  float max_speed = 0.0f;
  std::uint16_t entity_type = 0;  // the player's own type, an index into the schema's types
  std::string zone;               // the zone's name
  // Brings the player back after a lost connection (docs/protocol.md, "Reconnecting");
  // empty when the zone holds nobody for a reconnect.
  std::vector<std::uint8_t> resume_token;
};

// A Transfer the server sent (a world of zones): where to reconnect, with what.
struct TransferInfo {
  std::string zone;
  std::string host;
  std::uint16_t port = 0;
  std::vector<std::uint8_t> token;
  std::uint32_t entity_id = 0;
};

WelcomeInfo read_welcome(const protocol::Welcome& w);
TransferInfo read_transfer(const protocol::Transfer& t);
// A ZoneParams applied to what the Welcome said (a reload, the load-adaptive view).
void apply_zone_params(WelcomeInfo& info, const protocol::ZoneParams& p);

}  // namespace zone::client
