// Why a zone in ticket mode refused a Hello, and what it tells the client. The metric
// (zone_auth_refused_total{reason}) says more than the disconnect reason: an operator
// wants to tell a forged ticket from a malformed one, a client only what to do next.
#pragma once

#include <cstddef>
#include <cstdint>

#include "auth/verifier.hpp"
#include "protocol/zone_generated.h"

namespace zone {

enum class TicketRefusal : std::uint8_t {
  kMissing,         // no ticket in the Hello
  kMalformed,       // not the ticket layout
  kUnknownVersion,  // a ticket format this zone does not read
  kBadSignature,    // forged or altered
  kWrongWorld,      // issued for another world
  kExpired,         // past its expiry
  kBadName,         // signed, but its name breaks this zone's player-name rule
};
inline constexpr std::size_t kTicketRefusals = 7;

// The label values of zone_auth_refused_total.
inline const char* to_string(TicketRefusal r) {
  switch (r) {
    case TicketRefusal::kMissing:
      return "missing";
    case TicketRefusal::kMalformed:
      return "malformed";
    case TicketRefusal::kUnknownVersion:
      return "unknown_version";
    case TicketRefusal::kBadSignature:
      return "bad_signature";
    case TicketRefusal::kWrongWorld:
      return "wrong_world";
    case TicketRefusal::kExpired:
      return "expired";
    case TicketRefusal::kBadName:
      return "bad_name";
  }
  return "unknown";
}

// The verifier's verdict as a refusal (kNone is not one: the caller lets it in).
inline TicketRefusal refusal_of(auth::TicketError e) {
  switch (e) {
    case auth::TicketError::kUnknownVersion:
      return TicketRefusal::kUnknownVersion;
    case auth::TicketError::kBadSignature:
      return TicketRefusal::kBadSignature;
    case auth::TicketError::kWrongWorld:
      return TicketRefusal::kWrongWorld;
    case auth::TicketError::kExpired:
      return TicketRefusal::kExpired;
    case auth::TicketError::kNone:
    case auth::TicketError::kMalformed:
      break;
  }
  return TicketRefusal::kMalformed;
}

// What the client is told (docs/protocol.md, the disconnect reasons).
inline protocol::DisconnectReason disconnect_reason_of(TicketRefusal r) {
  switch (r) {
    case TicketRefusal::kMissing:
      return protocol::DisconnectReason::TicketRequired;
    case TicketRefusal::kExpired:
      return protocol::DisconnectReason::TicketExpired;
    case TicketRefusal::kWrongWorld:
      return protocol::DisconnectReason::TicketWrongWorld;
    case TicketRefusal::kMalformed:
    case TicketRefusal::kUnknownVersion:
    case TicketRefusal::kBadSignature:
    case TicketRefusal::kBadName:
      break;
  }
  return protocol::DisconnectReason::TicketInvalid;
}

}  // namespace zone
