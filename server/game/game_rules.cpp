// GameRules: the script host with the game API bound, and the order in which the zone's
// events reach the scripts' handlers.
#include "game/game_rules.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "game/action_answer.hpp"
#include "game/api.hpp"
#include "game/rules_state.hpp"
#include "script/script_host.hpp"

namespace zone::game {

struct GameRules::Impl {
  Impl(world::World& w, RulesParams p)
      : world(w),
        params(std::move(p)),
        shared(w, static_cast<std::uint64_t>(params.random_seed)),
        host(params.limits, options(params), [this](script::ScriptVm& vm) { return bind(vm); }) {
    // The host bound its first (empty) VM in its constructor.
    state = std::move(pending);
  }

  static script::ScriptOptions options(const RulesParams& p) {
    script::ScriptOptions o;
    o.random_seed = p.random_seed;
    o.log = p.log;
    return o;
  }

  // The host's binder: every new VM gets a VmState of its own, current once the VM is.
  std::optional<script::ScriptError> bind(script::ScriptVm& vm) {
    pending = std::make_unique<VmState>(shared);
    return bind_game_api(vm, pending.get());
  }

  std::optional<script::ScriptError> load(std::span<const script::ScriptFile> files) {
    auto error = host.reload(files);
    if (error) {
      pending.reset();
      return error;
    }
    state = std::move(pending);
    // The new scripts meet the zone's NPCs at the next tick.
    introduced = false;
    next_intro_slot = 0;
    return std::nullopt;
  }

  script::ScriptVm& vm() { return host.vm(); }

  // Every handler error goes to the zone's log.
  void report(const script::CallResult& result) const {
    if (result.status == script::CallStatus::kError && params.on_error)
      params.on_error(*result.error);
  }

  bool owned_player(std::uint32_t slot) const {
    if (slot >= world.slot_count()) return false;
    const world::Entity& e = world.entity(slot);
    return e.live() && !e.ghost && e.kind == world::EntityKind::kPlayer;
  }
  bool ghost_player(std::uint32_t slot) const {
    if (slot >= world.slot_count()) return false;
    const world::Entity& e = world.entity(slot);
    return e.live() && e.ghost && e.kind == world::EntityKind::kPlayer;
  }
  bool owned_npc(std::uint32_t slot) const {
    if (slot >= world.slot_count()) return false;
    const world::Entity& e = world.entity(slot);
    return e.live() && !e.ghost && e.kind == world::EntityKind::kNpc;
  }

  // on_npc_init for the NPCs the scripts have not met, in slot order, as far as the
  // tick's budget goes (the rest at the next tick).
  void introduce_npcs() {
    const std::uint32_t slots = world.slot_count();
    for (; next_intro_slot < slots; ++next_intro_slot) {
      if (!owned_npc(next_intro_slot)) continue;
      if (vm().tick_budget_spent()) return;
      const script::CallResult r = vm().call("on_npc_init", world.entity(next_intro_slot).id);
      if (r.status == script::CallStatus::kMissingHandler) break;
      report(r);
    }
    introduced = true;
  }

  void fire_timers() {
    TimerQueue& timers = state->timers;
    const std::uint64_t created_before = timers.next_sequence();
    TimerQueue::Due due;
    // A spent tick budget keeps the rest queued for the next tick.
    while (!vm().tick_budget_spent() && timers.pop_due(shared.now, created_before, due)) {
      ++timers_fired;
      const script::CallResult r = vm().call_ref(due.ref, "timer", {});
      vm().release_ref(due.ref);
      report(r);
    }
  }

  // Whether a player this zone owns stands within `radius` of the NPC.
  bool player_near(const world::Entity& npc, double radius) {
    shared.near.clear();
    world.aoi().query_radius({npc.x, npc.y}, radius + world.max_speed() + 1.0, shared.near);
    const double r2 = radius * radius;
    for (const aoi::EntityHandle h : shared.near) {
      const world::Entity& e = world.entity(h.index);
      if (!e.live() || e.ghost || e.kind != world::EntityKind::kPlayer) continue;
      const double dx = e.x - npc.x, dy = e.y - npc.y;
      if (dx * dx + dy * dy <= r2) return true;
    }
    return false;
  }

  // on_npc_think for the thinking NPCs whose turn it is: those whose slot falls on this
  // tick of the rules' period, so a period's thinking spreads over its zone ticks.
  void think(std::uint32_t tick, std::uint32_t period, double think_dt) {
    Thinkers& thinkers = state->thinkers;
    const std::size_t n = thinkers.size();  // NPCs marked during the loop wait their turn
    const std::uint32_t phase = tick % period;
    for (std::size_t i = 0; i < n; ++i) {
      // A copy: a handler may mark NPCs, which may grow the list.
      const Thinker t = thinkers.list()[i];
      if (!t.active || t.slot % period != phase) continue;
      const world::Entity* e = t.slot < world.slot_count() ? &world.entity(t.slot) : nullptr;
      if (e == nullptr || !e->live() || e->ghost || e->id != t.id) {
        thinkers.stop(t.slot);  // despawned, or handed over to a neighbour zone
        continue;
      }
      if (t.radius > 0.0 && !player_near(*e, t.radius)) continue;
      if (vm().tick_budget_spent()) break;
      ++npc_thinks;
      const script::CallResult r = vm().call("on_npc_think", t.id, think_dt);
      if (r.status == script::CallStatus::kMissingHandler) break;
      report(r);
    }
    thinkers.compact();
  }

  world::World& world;
  RulesParams params;
  RulesShared shared;
  std::unique_ptr<VmState> pending;  // the VM a reload is building
  std::unique_ptr<VmState> state;    // the current VM's
  script::ScriptHost host;
  bool introduced = false;
  std::uint32_t next_intro_slot = 0;
  // The rules' clock: now = clock_base + clock_ticks * clock_dt.
  double clock_base = 0.0;
  double clock_dt = 0.0;
  std::uint64_t clock_ticks = 0;
  std::uint64_t reloads = 0;
  std::uint64_t reload_failures = 0;
  std::uint64_t timers_fired = 0;
  std::uint64_t bad_answers = 0;
  std::uint64_t npc_thinks = 0;
};

GameRules::GameRules(world::World& world, RulesParams params)
    : impl_(std::make_unique<Impl>(world, std::move(params))) {
  if (auto error = impl_->load(impl_->params.files)) {
    throw std::runtime_error("game rules: " + error->what());
  }
}

GameRules::~GameRules() = default;

std::optional<script::ScriptError> GameRules::reload(std::vector<script::ScriptFile> files) {
  auto error = impl_->load(files);
  if (error) {
    ++impl_->reload_failures;
    return error;
  }
  impl_->params.files = std::move(files);
  ++impl_->reloads;
  return std::nullopt;
}

void GameRules::player_joined(std::uint32_t slot) {
  if (!impl_->owned_player(slot)) return;
  impl_->report(impl_->vm().call("on_join", impl_->world.entity(slot).id));
}

void GameRules::player_leaving(std::uint32_t slot, bool handed_over) {
  if (!impl_->owned_player(slot)) return;
  impl_->report(impl_->vm().call("on_leave", impl_->world.entity(slot).id, handed_over));
}

void GameRules::npc_arrived(std::uint32_t slot) {
  if (!impl_->owned_npc(slot)) return;
  impl_->report(impl_->vm().call("on_npc_init", impl_->world.entity(slot).id));
}

protocol::ActionStatus GameRules::act(const ActionRequest& request) {
  Impl& m = *impl_;
  using protocol::ActionStatus;
  const auto actions = m.world.game().schema.actions();
  if (request.action >= actions.size()) return ActionStatus::UnknownAction;
  if (request.args.size() > protocol::kMaxArgs) return ActionStatus::BadArguments;
  if (request.remote ? !m.ghost_player(request.player_slot)
                     : !m.owned_player(request.player_slot)) {
    return ActionStatus::NotAllowed;
  }
  // on_action(player, action_name, target, args...): target 0 when the action names none.
  std::array<script::ScriptArg, 3 + protocol::kMaxArgs> args{};
  args[0] = script::make_script_arg(m.world.entity(request.player_slot).id);
  args[1] = script::make_script_arg(std::string_view(actions[request.action].name));
  args[2] = script::make_script_arg(request.target);
  for (std::size_t i = 0; i < request.args.size(); ++i) {
    args[3 + i] = script::make_script_arg(request.args[i]);
  }
  const script::CallResult r =
      m.vm().call_with("on_action", std::span(args.data(), 3 + request.args.size()));
  switch (r.status) {
    case script::CallStatus::kOk: {
      const ActionAnswer answer = read_action_answer(r);
      if (!answer.understood) ++m.bad_answers;
      return answer.status;
    }
    case script::CallStatus::kMissingHandler:
      return ActionStatus::NotAllowed;
    case script::CallStatus::kSkippedOverBudget:
      return ActionStatus::RulesFailed;
    case script::CallStatus::kError:
      m.report(r);
      return ActionStatus::RulesFailed;
  }
  return ActionStatus::RulesFailed;
}

void GameRules::tick(std::uint32_t tick, double dt) {
  Impl& m = *impl_;
  m.shared.tick = tick;
  if (std::isfinite(dt) && dt > 0.0) {
    // Time as ticks times their period, not a running sum, so that 80 ticks of 50 ms are
    // exactly 4 s (a cooldown of 4 s ends on that tick); a new period starts a new base.
    if (dt != m.clock_dt) {
      m.clock_base += static_cast<double>(m.clock_ticks) * m.clock_dt;
      m.clock_ticks = 0;
      m.clock_dt = dt;
    }
    ++m.clock_ticks;
    m.shared.now = m.clock_base + static_cast<double>(m.clock_ticks) * m.clock_dt;
  }
  m.vm().begin_tick();
  if (!m.introduced) m.introduce_npcs();
  m.fire_timers();
  // Zone ticks per rules tick: on_tick runs on one of them, NPC thinking spreads over all.
  const double rate = dt > 0.0 && std::isfinite(dt) ? 1.0 / dt : m.params.tick_hz;
  const double ratio = m.params.tick_hz > 0.0 ? rate / m.params.tick_hz : 1.0;
  const auto period = static_cast<std::uint32_t>(std::clamp(std::lround(ratio), 1l, 1000l));
  const double rules_dt = period * (dt > 0.0 && std::isfinite(dt) ? dt : 0.0);
  if (tick % period == 0 && !m.vm().tick_budget_spent()) {
    m.report(m.vm().call("on_tick", rules_dt));
  }
  m.think(tick, period, rules_dt);
}

void GameRules::set_tick_hz(double tick_hz) {
  if (std::isfinite(tick_hz) && tick_hz > 0.0) impl_->params.tick_hz = tick_hz;
}

RulesStats GameRules::stats() const {
  const Impl& m = *impl_;
  RulesStats s;
  s.script = m.host.stats();
  s.reloads = m.reloads;
  s.reload_failures = m.reload_failures;
  s.timers_fired = m.timers_fired;
  s.timers_pending = m.state->timers.pending();
  s.api_refusals = m.shared.api_refusals;
  s.bad_answers = m.bad_answers;
  s.npc_thinks = m.npc_thinks;
  std::uint64_t thinking = 0;
  for (const Thinker& t : m.state->thinkers.list()) thinking += t.active ? 1 : 0;
  s.thinking_npcs = thinking;
  return s;
}

}  // namespace zone::game
