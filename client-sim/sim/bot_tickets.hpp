// Login tickets for a swarm's bots (client-sim --ticket-key), so that load tests run
// against zones in ticket mode. client-sim plays the login service: bot i is account and
// character i + 1, under its own name.
#pragma once

#include <cstdint>
#include <ctime>
#include <string>
#include <vector>

#include "auth/issue.hpp"
#include "auth/keys.hpp"

namespace zone::sim {

struct BotTickets {
  auth::SecretKey key;
  std::string world;           // the zones' auth.world
  std::uint64_t ttl_s = 3600;  // a ticket's lifetime from its bot's connection

  // The ticket of bot `index` (0-based, across the whole swarm) named `name`; empty if the
  // claims cannot be written (a name or world too long: the zone would refuse it anyway).
  std::vector<std::uint8_t> issue(std::uint32_t index, const std::string& name) const {
    auth::TicketClaims claims;
    claims.account_id = std::uint64_t{index} + 1;
    claims.character_id = std::uint64_t{index} + 1;
    claims.name = name;
    claims.world = world;
    claims.issued_at = static_cast<std::uint64_t>(std::time(nullptr));
    claims.expires_at = claims.issued_at + ttl_s;
    std::vector<std::uint8_t> ticket;
    auth::issue_ticket(claims, key, ticket);
    return ticket;
  }
};

}  // namespace zone::sim
