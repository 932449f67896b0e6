// Which config keys a running zone can take on at a tick boundary, and which only at the
// next start: those that size sockets, buffers, threads or the world, and the speeds the
// clients were told in their Welcome (their jump checks rely on them). The view radius,
// hysteresis and aoi.enabled apply live: connected clients are told (ZoneParams). The AOI's
// crowd threshold is a setting of the AOI made with the world.
#pragma once

#include <array>
#include <string_view>

namespace zone {

inline bool needs_restart(std::string_view key) {
  // Whole sections fixed at start-up, then single keys.
  // The rules' budgets size their VM, made once (a scripts reload keeps them). auth: the
  // network threads verify tickets with the key and world of the start.
  // persist: the writer opens its file once, at start-up.
  constexpr std::array<std::string_view, 8> kSections = {
      "zone.", "world.", "admin.", "debug.", "threads.", "script.", "auth.", "persist."};
  // Parties and guilds: links made under one rule are never undone under another, so
  // only the request interval changes live.
  // Chunks: a chunk's column and row mean something else under another size. The static
  // layer: its map is read once, and clients hold cells of the size they were sent.
  constexpr std::array<std::string_view, 24> kKeys = {
      "aoi.crowd_min_in_view",
      "chunks.enabled",
      "chunks.size",
      "static.map_file",
      "static.cell_size",
      "party.enabled",
      "party.max_size",
      "party.full_range",
      "guild.enabled",
      "guild.max_size",
      "guild.full_range",
      "tick.rate_hz",
      "network.bind_address",
      "network.port",
      "network.channel_limit",
      "network.max_packet_bytes",
      "network.history_ticks",
      "network.timeout_ms",
      "players.max_players",
      "players.max_speed",
      "npcs.speed",
      "game.data_file",
      "npcs.count",
      "npcs.seed",
  };
  // A test knob that reloads live, so a test can take simulated load away again.
  if (key == "debug.simulated_load_ns_per_record") return false;
  for (std::string_view s : kSections) {
    if (key.substr(0, s.size()) == s) return true;
  }
  for (std::string_view k : kKeys) {
    if (key == k) return true;
  }
  return false;
}

}  // namespace zone
