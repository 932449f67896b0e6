#include "client/session_info.hpp"

namespace zone::client {

WelcomeInfo read_welcome(const protocol::Welcome& w) {
  WelcomeInfo info;
  info.entity_id = w.entity_id();
  info.server_tick = w.server_tick();
  info.tick_rate = w.tick_rate();
  info.view_radius = w.view_radius();
  info.hysteresis = w.hysteresis();
  info.world_min_x = w.world_min_x();
  info.world_min_y = w.world_min_y();
  info.world_max_x = w.world_max_x();
  info.world_max_y = w.world_max_y();
  info.aoi_enabled = w.aoi_enabled();
  info.max_speed = w.max_speed();
  info.entity_type = w.entity_type();
  if (w.zone() != nullptr) info.zone = w.zone()->str();
  if (w.resume_token() != nullptr)
    info.resume_token.assign(w.resume_token()->begin(), w.resume_token()->end());
  return info;
}

TransferInfo read_transfer(const protocol::Transfer& t) {
  TransferInfo info;
  if (t.zone() != nullptr) info.zone = t.zone()->str();
  if (t.host() != nullptr) info.host = t.host()->str();
  info.port = t.port();
  if (t.token() != nullptr) info.token.assign(t.token()->begin(), t.token()->end());
  info.entity_id = t.entity_id();
  return info;
}

void apply_zone_params(WelcomeInfo& info, const protocol::ZoneParams& p) {
  info.view_radius = p.view_radius();
  info.hysteresis = p.hysteresis();
  info.aoi_enabled = p.aoi_enabled();
}

}  // namespace zone::client
