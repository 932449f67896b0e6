-- The sample game's rules, part 2: NPCs. An idle NPC thinks only while a player is within
-- its aggro radius (game.think with a radius: the test is a grid query in C++); then it
-- chases the nearest living player, strikes with a cooldown, and walks back home (where
-- the chase began) when the target dies, flees beyond the leash or it is dragged too far,
-- healing fully there. A dead NPC lies for a while, then a new one of its type stands at
-- its spawn point. Uses is_alive, deal_damage and kill from combat.lua.

NPC = {
  aggro_radius = 12.0,  -- metres: notices living players this near
  leash = 30.0,         -- metres from where the chase began (or to its target): gives up
  chase_speed = 6.0,    -- m/s (the world caps it at its fastest speed)
  melee = {range = 2.5, cooldown = 1.5, damage = 6},
  corpse = 5.0,         -- seconds a dead NPC lies before it is removed
  respawn = 20.0,       -- seconds from its death until a new one stands at its spawn point
  home_within = 15.0,   -- seconds to walk home; then (stuck behind a rock) it is put there
}

-- Per NPC id: its spawn point and type, `home` (where a chase began), `mode` (idle,
-- chase, home, dead), its target and when it may strike again.
local npcs = {}

function on_npc_init(npc)
  local x, y = game.position(npc)
  local n = {spawn_x = x, spawn_y = y, home_x = x, home_y = y, type = game.type(npc),
             mode = "idle", target = 0, ready = 0}
  npcs[npc] = n
  game.set(npc, "target", 0)
  game.release(npc)  -- after a reload: whatever chase was going on is over
  if game.get(npc, "state") == DEAD then
    -- Dead when the rules (re)started: it goes, and comes back where it lay.
    npc_died(npc)
    return
  end
  game.think(npc, NPC.aggro_radius)
end

local function engage(npc, n, player)
  n.mode = "chase"
  n.target = player
  n.home_x, n.home_y = game.position(npc)
  game.set(npc, "target", player)
  game.think(npc, true)  -- every rules tick while the chase lasts
end

local function go_home(npc, n)
  n.mode = "home"
  n.target = 0
  game.set(npc, "target", 0)
  game.move_to(npc, n.home_x, n.home_y, NPC.chase_speed)
  n.home_by = game.now() + NPC.home_within
end

-- From deal_damage: an idle NPC that is hit turns on its attacker.
function npc_attacked(npc, attacker)
  local n = npcs[npc]
  -- An attacker acting from a neighbour zone is out of its reach: it stays idle.
  if n and n.mode == "idle" and game.kind(attacker) == "player" and game.owned(attacker) then
    engage(npc, n, attacker)
  end
end

-- From kill.
function npc_died(npc)
  local n = npcs[npc]
  if n == nil then return end
  n.mode = "dead"
  npcs[npc] = nil
  game.think(npc, false)
  game.after(NPC.corpse, function()
    if game.exists(npc) then game.despawn(npc) end
  end)
  game.after(NPC.respawn, function()
    local id = game.spawn(n.type, n.spawn_x, n.spawn_y)
    if id then on_npc_init(id) end
  end)
end

local function nearest_living_player(npc)
  for _, player in ipairs(game.within(npc, NPC.aggro_radius, "player", 8)) do
    if is_alive(player) then return player end
  end
  return nil
end

local function chase(npc, n)
  local target = n.target
  if not is_alive(target) then return go_home(npc, n) end
  local x, y = game.position(npc)
  local tx, ty = game.position(target)
  local dx, dy = tx - x, ty - y
  local d = math.sqrt(dx * dx + dy * dy)
  local hx, hy = x - n.home_x, y - n.home_y
  if d > NPC.leash or hx * hx + hy * hy > NPC.leash * NPC.leash then return go_home(npc, n) end
  local melee = NPC.melee
  if d > melee.range then
    -- To a point just inside its reach, not onto the target.
    local stop = (d - melee.range * 0.6) / d
    game.move_to(npc, x + dx * stop, y + dy * stop, NPC.chase_speed)
    return
  end
  game.stop(npc)
  local now = game.now()
  if now < n.ready then return end
  n.ready = now + melee.cooldown
  if deal_damage(npc, target, melee.damage + game.get(npc, "level"), MELEE.attack) then
    go_home(npc, n)
  end
end

function on_npc_think(npc, dt)
  local n = npcs[npc]
  if n == nil then return end
  if n.mode == "idle" then
    local player = nearest_living_player(npc)
    if player then engage(npc, n, player) end
  elseif n.mode == "chase" then
    chase(npc, n)
  elseif n.mode == "home" then
    local x, y = game.position(npc)
    local arrived = (x - n.home_x) ^ 2 + (y - n.home_y) ^ 2 < 1.0
    if not arrived and game.now() > n.home_by then
      arrived = game.teleport(npc, n.home_x, n.home_y)
    end
    if arrived then
      game.set(npc, "health", game.get(npc, "max_health"))  -- regenerates at home
      game.release(npc)
      n.mode = "idle"
      game.think(npc, NPC.aggro_radius)
    end
  end
end
