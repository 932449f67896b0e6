-- The sample game's rules, part 1: players. Their actions (game.yaml `actions`), damage,
-- death, experience and respawn. npc.lua (loaded after this file) adds the NPCs' side.
-- The game API and the handlers: docs/scripting.md, "The game API".

-- Tuning. Globals, so that a test or another file may read them.
MELEE = {range = 3.0, cooldown = 1.0, damage = 12, attack = 0}
RANGED = {range = 25.0, cooldown = 2.0, damage = 8, attack = 1, needs_sight = true}
HEAL = {range = 10.0, cooldown = 4.0, cost = 20, amount = 25}
MANA = {max = 100, regen = 10, every = 5.0}  -- +10 mana every 5 s, up to 100
RESPAWN_AFTER = 10.0  -- seconds until a dead player comes back by itself
XP_PER_LEVEL = 100    -- experience points per level
EMOTES = 16           -- emote numbers 0 .. EMOTES - 1

ALIVE, DEAD = 0, 1  -- the `state` property

-- Per player id: `ready[spec]`, when each attack or heal may be used again (game.now()
-- seconds), `respawn_timer`, the pending automatic respawn, and `regen_timer`, its mana's. Made on first use, so a reload
-- (which starts the scripts afresh) loses only cooldowns and automatic respawns.
local players = {}

local function player_state(player)
  local p = players[player]
  if p == nil then
    p = {ready = {}}
    players[player] = p
  end
  return p
end

-- Remote actors (neighbour zones' players acting here, by id): their cooldowns, each kept
-- only while it runs, since no on_leave tells when one is gone.
local remote = {}

local function actor_state(player)
  if game.owned(player) then return player_state(player) end
  local p = remote[player]
  if p == nil then
    p = {ready = {}}
    remote[player] = p
  end
  return p
end

local function forget_remote(player)
  local p = remote[player]
  if p == nil then return end
  local now = game.now()
  for _, ready in pairs(p.ready) do
    if ready > now then return end
  end
  remote[player] = nil
end

function is_alive(e)
  return game.exists(e) and game.get(e, "state") == ALIVE
end

function award_xp(player, amount)
  local xp = game.get(player, "xp") + amount
  game.set(player, "xp", xp)
  game.emit(player, "xp", 0, amount)
  local level = math.min(255, 1 + xp // XP_PER_LEVEL)
  if level > game.get(player, "level") then
    game.set(player, "level", level)
    game.set(player, "max_health", math.min(65535, 100 + 10 * (level - 1)))
  end
end

-- Dead: `state` 1, no health, no target, frozen where it fell; the death event names the
-- killer (0: none), who gains experience if it is a player.
function kill(victim, killer)
  game.set(victim, "state", DEAD)
  game.set(victim, "health", 0)
  game.set(victim, "target", 0)
  game.freeze(victim, true)
  game.emit(victim, "death", killer)
  -- A killer acting from a neighbour zone (a ghost here) gains its experience there, not
  -- here: this zone cannot change it.
  if killer ~= 0 and game.exists(killer) and game.kind(killer) == "player" and game.owned(killer) then
    award_xp(killer, 10 * game.get(victim, "level"))
  end
  if game.kind(victim) == "player" then
    local p = player_state(victim)
    p.respawn_timer = game.after(RESPAWN_AFTER, function() respawn(victim) end)
  else
    npc_died(victim)  -- npc.lua
  end
end

-- `amount` of damage to `target` from `attacker` with attack kind `attack` (0 melee,
-- 1 ranged): the hit event, then death at 0 health. Returns true when it died.
function deal_damage(attacker, target, amount, attack)
  local health = math.max(0, game.get(target, "health") - amount)
  game.set(target, "health", health)
  game.emit(target, "hit", attacker, amount, attack)
  if health == 0 then
    kill(target, attacker)
    return true
  end
  if game.kind(target) == "npc" then npc_attacked(target, attacker) end  -- npc.lua
  return false
end

-- Back at a random free point of the zone with full health (the player asked, or
-- RESPAWN_AFTER passed).
function respawn(player)
  if not game.exists(player) or game.get(player, "state") ~= DEAD then return end
  local p = player_state(player)
  if p.respawn_timer then
    game.cancel(p.respawn_timer)
    p.respawn_timer = nil
  end
  local x, y = game.random_point()
  game.teleport(player, x, y)
  game.set(player, "health", game.get(player, "max_health"))
  game.set(player, "state", ALIVE)
  game.freeze(player, false)
  game.emit(player, "respawn", 0)
end

-- attack and shoot: the checks in the order a player learns most from. `player` may act
-- from a neighbour zone (game.owned(player) false: its ghost here, docs/world.md "Actions
-- across borders"): it is checked and hurts like any player, its cooldown is kept here
-- (while it runs), and what would change the player itself (its target, experience) is
-- its own zone's.
local function strike(player, target, spec)
  if not is_alive(player) then return "dead" end
  if target == 0 or not game.exists(target) then return "no_target" end
  -- A neighbour zone's entity seen across the border: its own zone's rules decide.
  if target == player or not game.owned(target) then return "not_allowed" end
  if not is_alive(target) then return "dead" end
  if game.distance(player, target) > spec.range then return "out_of_range" end
  if spec.needs_sight and not game.line_of_sight(player, target) then
    return "no_line_of_sight"
  end
  local p = actor_state(player)
  local now = game.now()
  if now < (p.ready[spec] or 0) then return "cooldown" end
  p.ready[spec] = now + spec.cooldown
  if game.owned(player) then
    game.set(player, "target", target)
  else
    game.after(spec.cooldown, function() forget_remote(player) end)
  end
  deal_damage(player, target, spec.damage + 2 * (game.get(player, "level") - 1), spec.attack)
end

-- heal: mana for a living player's health (its own too).
local function heal(player, target)
  if not game.owned(player) then return "not_allowed" end  -- its mana is its own zone's
  if not is_alive(player) then return "dead" end
  if target == 0 or not game.exists(target) or game.kind(target) ~= "player" then
    return "no_target"
  end
  if not game.owned(target) then return "not_allowed" end
  if not is_alive(target) then return "dead" end
  if game.distance(player, target) > HEAL.range then return "out_of_range" end
  local p = player_state(player)
  local now = game.now()
  if now < (p.ready[HEAL] or 0) then return "cooldown" end
  local mana = game.get(player, "mana")
  if mana < HEAL.cost then return "not_allowed" end
  p.ready[HEAL] = now + HEAL.cooldown
  game.set(player, "mana", mana - HEAL.cost)
  local health = game.get(target, "health")
  local amount = math.min(HEAL.amount, game.get(target, "max_health") - health)
  game.set(target, "health", health + amount)
  game.emit(target, "healed", player, amount)
end

-- Mana comes back by MANA.regen every MANA.every seconds: one timer per player.
local function regenerate(player)
  local p = players[player]
  if p == nil or not game.exists(player) then return end
  local mana = game.get(player, "mana")
  if mana < MANA.max then game.set(player, "mana", math.min(MANA.max, mana + MANA.regen)) end
  p.regen_timer = game.after(MANA.every, function() regenerate(player) end)
end

local ACTIONS = {
  attack = function(player, target) return strike(player, target, MELEE) end,
  shoot = function(player, target) return strike(player, target, RANGED) end,
  emote = function(player, target, emote)
    if not game.owned(player) then return "not_allowed" end  -- an event about the player
    if not is_alive(player) then return "dead" end
    if emote == nil or emote < 0 or emote >= EMOTES then return "bad_arguments" end
    if target ~= 0 and not game.exists(target) then return "no_target" end
    game.emit(player, "emote", target, emote)
  end,
  respawn = function(player)
    if is_alive(player) then return "not_allowed" end
    respawn(player)
  end,
  heal = heal,
}

function on_action(player, action, target, ...)
  local act = ACTIONS[action]
  if act == nil then return "not_allowed" end
  return act(player, target, ...)
end

function on_join(player)
  local p = player_state(player)
  -- The first regeneration at a phase of the player's own, so that players who joined
  -- together (a zone's start) do not all regenerate in the same tick.
  local phase = MANA.every * ((player % 97) + 1) / 97
  p.regen_timer = game.after(phase, function() regenerate(player) end)
  -- A character saved dead comes back dead: it may ask to respawn.
  if game.get(player, "state") == DEAD then
    game.freeze(player, true)
    player_state(player).respawn_timer = game.after(RESPAWN_AFTER, function() respawn(player) end)
  end
end

function on_leave(player, handed_over)  -- a dead player handed over is frozen again by on_join there
  local p = players[player]
  if p and p.respawn_timer then game.cancel(p.respawn_timer) end
  if p and p.regen_timer then game.cancel(p.regen_timer) end
  players[player] = nil
end
