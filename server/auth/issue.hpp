// Issuing a ticket: what the login service does (and zone-ticket, tests and client-sim's
// bots). Zones never issue; they hold no secret key.
#pragma once

#include <cstdint>
#include <vector>

#include "auth/keys.hpp"
#include "auth/ticket.hpp"

namespace zone::auth {

// The signed ticket, replacing `out`; on a layout error `out` is left empty. The name is
// not checked against a zone's player-name rule here: the zone does that.
LayoutError issue_ticket(const TicketClaims& claims, const SecretKey& secret,
                         std::vector<std::uint8_t>& out);

}  // namespace zone::auth
