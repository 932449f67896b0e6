// on_action's answer as an ActionStatus: nil or true is Ok, a reason string is its
// status ("out_of_range", "cooldown", "dead", "no_line_of_sight", "not_allowed",
// "no_target", "bad_arguments"); anything else is NotAllowed, flagged as not understood.
#pragma once

#include "protocol/zone_generated.h"
#include "script/script_value.hpp"

namespace zone::game {

struct ActionAnswer {
  protocol::ActionStatus status = protocol::ActionStatus::Ok;
  bool understood = true;  // false: a value that names no status
};

// For a call that returned (CallStatus::kOk).
ActionAnswer read_action_answer(const script::CallResult& result);

}  // namespace zone::game
