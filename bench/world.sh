#!/usr/bin/env bash
# The price of seamlessness (docs/benchmarks.md, "A world of zones"): the same bots in one
# zone, and spread over four zones in a 2 x 2 square linked by NATS.
#
#   one   - one zone-server, a 600 x 600 m world, all bots in it;
#   four  - four zone-servers of 300 x 300 m each (the same 600 x 600 m), a quarter of the
#           bots entering each. With the 40 m ghost distance about a quarter of a zone's
#           area lies within the ghost distance of another zone, so about a quarter of the
#           bots are near a border (the summary counts them from the truth).
# Bots wander (client-sim's wander scenario: they turn back at their zone's edges, so the
# bots of "four" stay in their zone; add --cross to use the border scenario instead, which
# walks them across and has them handed over). Every run is truth-checked in every zone.
#
# Reported per zone and in total: the zone process's CPU (user + system seconds over the
# run, from /proc), tick time (mean from /metrics), ghost messages and bus bytes (ghost
# and handoff messages) per second in and out, ghosts and players held halfway through,
# entity states sent as ghosts per second, handoffs; and client-sim's bytes per bot per
# second and truth results.
#
# usage: bench/world.sh [--bots N] [--duration S] [--build DIR] [--cross]
set -euo pipefail
cd "$(dirname "$0")/.."

bots=1000
duration=30
build=build-release
scenario=wander
while [[ $# -gt 0 ]]; do
  case "$1" in
    --bots) bots=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --cross) scenario=border; shift ;;
    *) echo "world.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
server_bin=$build/server/zone/zone-server
sim_bin=$build/client-sim/client-sim
for b in "$server_bin" "$sim_bin"; do
  [[ -x $b ]] || { echo "world.sh: $b not built (run: make release)" >&2; exit 2; }
done
nats_bin=$(command -v nats-server || true)
[[ -n $nats_bin ]] || nats_bin=/usr/sbin/nats-server
[[ -x $nats_bin ]] || { echo "world.sh: nats-server not installed (apt-get install nats-server)" >&2; exit 2; }

work=$(mktemp -d)
export ZONE_ADMIN_TOKEN=world-bench-token-0123456789
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# start_zone NAME LOG ARGS... : starts a zone-server, sets $zone_pid $zone_port $zone_admin
start_zone() {
  local name=$1 log=$2
  shift 2
  "$server_bin" --config configs/zone.yaml --bind 127.0.0.1 --port 0 --admin-port 0 \
    --set debug.truth=true --set admin.token_env=ZONE_ADMIN_TOKEN --npcs 0 \
    --set threads.workers=1 --set threads.network=1 "$@" >"$log" 2>&1 &
  zone_pid=$!
  pids+=("$zone_pid")
  zone_port="" zone_admin=""
  for _ in $(seq 200); do
    zone_port=$(grep -oP 'listening on udp 127\.0\.0\.1:\K\d+' "$log" || true)
    zone_admin=$(grep -oP 'admin endpoint on http://127\.0\.0\.1:\K\d+' "$log" || true)
    [[ -n $zone_port && -n $zone_admin ]] && break
    sleep 0.1
  done
  [[ -n $zone_port && -n $zone_admin ]] || { echo "world.sh: zone $name did not start:" >&2; cat "$log" >&2; exit 1; }
}

cpu_seconds() {  # user + system time of a process, in seconds
  awk -v hz="$(getconf CLK_TCK)" '{print ($14 + $15) / hz}' "/proc/$1/stat"
}

# run LABEL: the zones in zones[] (name pid port admin), client-sims per zone, metrics
run() {
  local label=$1
  local n=${#zone_names[@]}
  local per=$((bots / n))
  local truth=()
  for a in "${zone_admins[@]}"; do truth+=(--truth "127.0.0.1:$a"); done
  declare -a cpu0 sims
  for i in $(seq 0 $((n - 1))); do cpu0[$i]=$(cpu_seconds "${zone_pids[$i]}"); done
  local t0
  t0=$(date +%s.%N)
  for i in $(seq 0 $((n - 1))); do
    "$sim_bin" --server "127.0.0.1:${zone_ports[$i]}" --bots "$per" --ramp 500 \
      --duration "$duration" --scenario "configs/scenarios/$scenario.yaml" --seed $((7 + i)) \
      --threads 1 "${truth[@]}" --summary-json "$work/$label.$i.summary.json" -q \
      >"$work/$label.$i.sim.log" 2>&1 &
    sims[$i]=$!
  done
  # Ghosts held: sampled halfway, while every bot plays.
  sleep "$(python3 -c "print($duration / 2)")"
  for i in $(seq 0 $((n - 1))); do
    curl -s "http://127.0.0.1:${zone_admins[$i]}/metrics" >"$work/$label.$i.mid"
  done
  for i in $(seq 0 $((n - 1))); do wait "${sims[$i]}" || true; done
  local t1
  t1=$(date +%s.%N)
  for i in $(seq 0 $((n - 1))); do
    echo "$(cpu_seconds "${zone_pids[$i]}") ${cpu0[$i]}" >"$work/$label.$i.cpu"
    curl -s "http://127.0.0.1:${zone_admins[$i]}/metrics" >"$work/$label.$i.metrics"
  done
  python3 - "$work" "$label" "$n" "$bots" "$t0" "$t1" "${zone_names[@]}" <<'EOF'
import json, re, sys
work, label, n, bots, t0, t1 = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]), float(sys.argv[6])
names = sys.argv[7:]
wall = t1 - t0
def metric(text, name, labels=None):
    pat = re.escape(name) + (r'\{' + re.escape(labels) + r'\}' if labels else '') + r' ([0-9.e+-]+)\n'
    m = re.search(pat, text)
    return float(m.group(1)) if m else 0.0
rows = []
tot = {"cpu": 0.0, "msg_out": 0.0, "msg_in": 0.0, "bytes_out": 0.0, "bytes_in": 0.0, "ghosts": 0.0, "ghosts_out": 0.0, "handoffs": 0.0}
mismatches = checks = 0
bytes_per_bot = []
for i in range(n):
    m = open(f"{work}/{label}.{i}.metrics").read()
    mid = open(f"{work}/{label}.{i}.mid").read()
    c1, c0 = map(float, open(f"{work}/{label}.{i}.cpu").read().split())
    s = json.load(open(f"{work}/{label}.{i}.summary.json"))
    mismatches += s["truth_mismatches"]; checks += s["truth_checks"]
    bytes_per_bot.append(s["bytes_in_per_bot_per_s"])
    tick_sum = metric(m, "zone_tick_duration_seconds_sum"); tick_n = metric(m, "zone_tick_duration_seconds_count")
    r = {"zone": names[i], "cpu_share": (c1 - c0) / wall,
         "tick_mean_ms": 1000 * tick_sum / tick_n if tick_n else 0.0,
         "bus_msgs_out_per_s": metric(m, "zone_bus_messages_total", 'direction="out"') / wall,
         "bus_msgs_in_per_s": metric(m, "zone_bus_messages_total", 'direction="in"') / wall,
         "bus_kb_out_per_s": metric(m, "zone_bus_bytes_total", 'direction="out"') / wall / 1000,
         "bus_kb_in_per_s": metric(m, "zone_bus_bytes_total", 'direction="in"') / wall / 1000,
         "ghosts_held": metric(mid, "zone_ghosts"),
         "players_mid": metric(mid, "zone_players"),
         "ghost_states_out_per_s": metric(m, "zone_ghosts_out_total") / wall,
         "handoffs_out": metric(m, "zone_handoffs_out_total", 'result="accepted"')}
    rows.append(r)
    tot["cpu"] += r["cpu_share"]; tot["msg_out"] += r["bus_msgs_out_per_s"]; tot["msg_in"] += r["bus_msgs_in_per_s"]
    tot["bytes_out"] += r["bus_kb_out_per_s"]; tot["bytes_in"] += r["bus_kb_in_per_s"]
    tot["ghosts"] += r["ghosts_held"]; tot["ghosts_out"] += r["ghost_states_out_per_s"]; tot["handoffs"] += r["handoffs_out"]
for r in rows:
    print(json.dumps({"run": label, **{k: round(v, 4) if isinstance(v, float) else v for k, v in r.items()}}))
print(json.dumps({"run": label, "zones": n, "bots": bots, "wall_s": round(wall, 1),
                  "cpu_share_total": round(tot["cpu"], 4),
                  "bus_msgs_per_s_out": round(tot["msg_out"], 1), "bus_kb_per_s_out": round(tot["bytes_out"], 1),
                  "ghosts_held_total_mid": tot["ghosts"], "ghost_states_out_per_s": round(tot["ghosts_out"], 1),
                  "handoffs": tot["handoffs"],
                  "client_bytes_in_per_bot_per_s": round(sum(bytes_per_bot) / len(bytes_per_bot), 1),
                  "truth_checks": checks, "truth_mismatches": mismatches}))
EOF
}

# One zone: 600 x 600 m.
zone_names=(one)
start_zone one "$work/one.log" --set world.min_x=0 --set world.min_y=0 --set world.max_x=600 --set world.max_y=600
zone_pids=("$zone_pid") zone_ports=("$zone_port") zone_admins=("$zone_admin")
sleep 1
run one
kill "$zone_pid"; wait "$zone_pid" 2>/dev/null || true

# Four zones of 300 x 300 m on NATS.
nats_port=$(free_port)
"$nats_bin" -a 127.0.0.1 -p "$nats_port" >"$work/nats.log" 2>&1 &
pids+=($!)
sleep 0.5
cat >"$work/world.yaml" <<YAML
nats:
  url: "nats://127.0.0.1:$nats_port"
  subject_prefix: "bench"
ghosts:
  distance: 40.0
  timeout_ms: 1000
zones:
  - {name: sw, rect: {min_x: 0, min_y: 0, max_x: 300, max_y: 300}, game: "127.0.0.1:0", admin: "127.0.0.1:0"}
  - {name: se, rect: {min_x: 300, min_y: 0, max_x: 600, max_y: 300}, game: "127.0.0.1:0", admin: "127.0.0.1:0"}
  - {name: nw, rect: {min_x: 0, min_y: 300, max_x: 300, max_y: 600}, game: "127.0.0.1:0", admin: "127.0.0.1:0"}
  - {name: ne, rect: {min_x: 300, min_y: 300, max_x: 600, max_y: 600}, game: "127.0.0.1:0", admin: "127.0.0.1:0"}
YAML
zone_names=(sw se nw ne) zone_pids=() zone_ports=() zone_admins=()
for z in "${zone_names[@]}"; do
  start_zone "$z" "$work/$z.log" --world "$work/world.yaml" --zone "$z"
  zone_pids+=("$zone_pid") zone_ports+=("$zone_port") zone_admins+=("$zone_admin")
done
sleep 1
run four
