// The game API (docs/scripting.md, "The game API"): the functions of the Lua table
// `game`, bound into a VM by topic. Each installs its functions with `state` as their
// upvalue.
#pragma once

#include <optional>

#include "game/rules_state.hpp"
#include "script/script_error.hpp"
#include "script/script_vm.hpp"

namespace zone::game {

std::optional<script::ScriptError> bind_entity_api(script::ScriptVm& vm, VmState* state);
std::optional<script::ScriptError> bind_movement_api(script::ScriptVm& vm, VmState* state);
std::optional<script::ScriptError> bind_event_api(script::ScriptVm& vm, VmState* state);
std::optional<script::ScriptError> bind_query_api(script::ScriptVm& vm, VmState* state);
std::optional<script::ScriptError> bind_time_api(script::ScriptVm& vm, VmState* state);

// All of them.
std::optional<script::ScriptError> bind_game_api(script::ScriptVm& vm, VmState* state);

}  // namespace zone::game
