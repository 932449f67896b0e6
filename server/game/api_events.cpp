// The game API, events: game.emit puts an event about an entity into the tick's event
// log (world::EventLog), which replication delivers to the clients that hold the entity.
#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <string_view>

#include "game/api.hpp"
#include "game/api_util.hpp"
#include "script/script_binding.hpp"

namespace zone::game {
namespace {

using api::world_of;

// game.emit(e, event, target, args...) -> boolean. `event` names one of the game's
// events, `target` is another entity's id or 0 (only named: it need not exist any more),
// the args are integers (int32), no more than the event declares. False when the tick's
// event limit is reached (the event is dropped and counted by the log).
int l_emit(lua_State* L) {
  const char* fn = "game.emit";
  const std::uint32_t slot = api::check_owned(L, 1, fn);
  if (lua_type(L, 2) != LUA_TSTRING) {
    api::refuse(L, "%s: argument 2: expected an event name, got %s", fn, luaL_typename(L, 2));
  }
  world::World& w = world_of(L);
  const protocol::Schema& schema = w.game().schema;
  std::size_t length = 0;
  const char* name = lua_tolstring(L, 2, &length);
  const auto kind = schema.find_event(std::string_view(name, length));
  if (!kind) api::refuse(L, "%s: argument 2: '%s' is not an event of this game", fn, name);
  const protocol::EventSpec& spec = schema.events()[*kind];
  if (spec.text)
    api::refuse(L, "%s: event '%s' carries a text (chat): not for game.emit", fn, name);
  lua_Integer target = 0;
  if (!lua_isnoneornil(L, 3)) target = api::check_int(L, 3, fn, "target");
  if (target < 0 || target > 0xFFFFFFFF) {
    api::refuse(L, "%s: argument 3 (target): %I is not an entity id", fn, target);
  }
  const int given = std::max(0, lua_gettop(L) - 3);
  if (given > static_cast<int>(spec.args.size())) {
    api::refuse(L, "%s: event '%s' takes %d arguments, given %d", fn, name,
                static_cast<int>(spec.args.size()), given);
  }
  std::array<std::int32_t, protocol::kMaxArgs> args{};
  for (int i = 0; i < given; ++i) {
    const lua_Integer v = api::check_int(L, 4 + i, fn, spec.args[i].c_str());
    if (v < std::numeric_limits<std::int32_t>::min() ||
        v > std::numeric_limits<std::int32_t>::max()) {
      api::refuse(L, "%s: argument %d (%s): %I does not fit in 32 bits", fn, 4 + i,
                  spec.args[i].c_str(), v);
    }
    args[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(v);
  }
  world::EventDraft draft;
  draft.kind = static_cast<std::uint16_t>(*kind);
  draft.route = world::EventRoute::kEntity;
  draft.entity = w.entity(slot).id;
  draft.target = static_cast<world::EntityId>(target);
  draft.args = std::span<const std::int32_t>(args.data(), static_cast<std::size_t>(given));
  const int emitted = script::guarded_call(L, [&](lua_State*) {
    // The draft was checked above: a refusal here is the tick's limit.
    return w.events().emit(schema, draft).has_value() ? 0 : 1;
  });
  if (emitted == 0) api::count_refusal(L);
  lua_pushboolean(L, emitted);
  return 1;
}

}  // namespace

std::optional<script::ScriptError> bind_event_api(script::ScriptVm& vm, VmState* state) {
  return vm.register_function("game", "emit", l_emit, state);
}

}  // namespace zone::game
