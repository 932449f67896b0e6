#!/usr/bin/env bash
# Interest policy on versus off (docs/benchmarks.md, "Interest policy").
#
# Three scenarios, each run with the policy off and on, back to back in one invocation so
# the ratios compare runs on the same machine state:
#   hotspot  - client-sim's hotspot scenario (every bot heads for the town square) on a
#              600 x 600 m zone with 100 NPCs at the default budget; "on" is distance
#              tiers plus the crowd policy (interest.crowd_threshold 24);
#   overload - a crowded zone (200 x 200 m, 100 NPCs) whose tick is made to cost
#              debug.simulated_load_ns_per_record per record sent, more than its budget;
#              "on" is distance tiers plus interest.load_adaptive;
#   party    - client-sim's party scenario (parties of four that split and re-form, in
#              guilds of twenty) on the hotspot map; "off" is party.enabled and
#              guild.enabled false (every request refused), "on" the default (members
#              see each other at any distance);
#   precision - client-sim's wander scenario among many NPCs (300 x 300 m, 400 wandering
#              NPCs); "on" sends ambient NPCs at 10 cm and 1/256 turn (precision.*),
#              NPCs within 10 m of a player at the player precision (the finest).
#   static   - client-sim's wander scenario on the default 2 km world with 300 NPCs;
#              "on" loads configs/maps/sample.yaml (3,000 trees, rocks and resource
#              nodes): collision for every move, and each client sent the objects of
#              the static cells within 100 m once (reported as static objects sent).
# For each run, from the server's /metrics and client-sim's summary: snapshot payload
# bytes per client per second, mean and p99-ish (histogram) tick time, overruns, the
# load level reached, and the oldest values the truth check saw (every run is truth
# checked: truth_mismatches must be 0).
#
# usage: bench/interest.sh [--bots N] [--duration S] [--build DIR]
set -euo pipefail
cd "$(dirname "$0")/.."

bots=200
duration=20
build=build-release
while [[ $# -gt 0 ]]; do
  case "$1" in
    --bots) bots=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    *) echo "interest.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
server_bin=$build/server/zone/zone-server
sim_bin=$build/client-sim/client-sim
for b in "$server_bin" "$sim_bin"; do
  [[ -x $b ]] || { echo "interest.sh: $b not built (run: make release)" >&2; exit 2; }
done
work=$(mktemp -d)
export ZONE_ADMIN_TOKEN=interest-bench-token-0123456789
server_pid=""
cleanup() { [[ -n $server_pid ]] && kill "$server_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

# run NAME SCENARIO zone-server args...
run() {
  local name=$1 scenario=$2
  shift 2
  "$server_bin" --config configs/zone.yaml --bind 127.0.0.1 --port 0 --admin-port 0 \
    --set debug.truth=true --set admin.token_env=ZONE_ADMIN_TOKEN "$@" \
    >"$work/$name.server.log" 2>&1 &
  server_pid=$!
  local port admin
  for _ in $(seq 100); do
    port=$(grep -oP 'listening on udp 127\.0\.0\.1:\K\d+' "$work/$name.server.log" || true)
    admin=$(grep -oP 'admin endpoint on http://127\.0\.0\.1:\K\d+' "$work/$name.server.log" || true)
    [[ -n $port && -n $admin ]] && break
    sleep 0.1
  done
  "$sim_bin" --server "127.0.0.1:$port" --bots "$bots" --ramp 500 --duration "$duration" \
    --scenario "$scenario" --seed 7 --threads 2 --truth "127.0.0.1:$admin" \
    --summary-json "$work/$name.summary.json" -q >"$work/$name.sim.log" 2>&1 || true
  curl -s -H "Authorization: Bearer $ZONE_ADMIN_TOKEN" "http://127.0.0.1:$admin/metrics" \
    >"$work/$name.metrics"
  kill "$server_pid"
  wait "$server_pid" 2>/dev/null || true
  server_pid=""
  python3 - "$work/$name" "$name" "$bots" "$duration" <<'EOF'
import json, re, sys
base, name, bots, duration = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
m = open(base + ".metrics").read()
def val(key):
    r = re.search(r"^" + re.escape(key) + r" ([-0-9.e+]+)$", m, re.M)
    return float(r.group(1)) if r else float("nan")
def quantile(q):
    buckets = [(float("inf") if le == "+Inf" else float(le), float(c)) for le, c in
               re.findall(r'^zone_tick_duration_seconds_bucket\{le="([^"]+)"\} (\S+)$', m, re.M)]
    total = buckets[-1][1]
    for le, c in buckets:
        if c >= q * total:
            return le
s = json.load(open(base + ".summary.json"))
ticks = val("zone_tick_duration_seconds_count")
out = {
    "run": name,
    "bytes_per_client_s": val("zone_replication_snapshot_bytes_total") / bots / (ticks / 20.0),
    "tick_mean_ms": 1000 * val("zone_tick_duration_seconds_sum") / ticks,
    "tick_p99_ms_le": 1000 * quantile(0.99),
    "overruns": val("zone_tick_overruns_total"),
    "ticks": ticks,
    "load_level_max": val("zone_interest_load_level_max"),
    "truth_checks": s["truth_checks"],
    "truth_mismatches": s["truth_mismatches"],
    "protocol_violations": s["protocol_violations"],
    "oldest_values_ticks": s["truth_max_staleness_ticks"],
    "bots_in_party_peak": s["bots_in_party_peak"],
    "bots_in_guild_peak": s["bots_in_guild_peak"],
    "truth_party_checks": s["truth_party_checks"],
    "truth_coarse_checks": s["truth_coarse_checks"],
    "static_objects_sent_per_client": val("zone_static_objects_sent_total") / bots,
    "static_collisions": val("zone_static_collisions_total"),
    "static_mismatches": s["static_mismatches"],
}
print(json.dumps(out))
EOF
}

hotspot=(--set world.max_x=600 --set world.max_y=600 --npcs 100)
ambient=(--set world.max_x=300 --set world.max_y=300 --npcs 400)
overload=(--set world.max_x=200 --set world.max_y=200 --npcs 100
  --set network.client_bandwidth=64000 --set debug.simulated_load_ns_per_record=60000
  --set interest.load_hold_ticks=10 --set interest.load_smoothing_ticks=10)
{
  run hotspot-off hotspot "${hotspot[@]}"
  run hotspot-on hotspot "${hotspot[@]}" --set interest.tiers=true --set interest.crowd_threshold=24
  run overload-off wander "${overload[@]}"
  run overload-on wander "${overload[@]}" --set interest.tiers=true --set interest.load_adaptive=true
  run party-off party "${hotspot[@]}" --set party.enabled=false --set guild.enabled=false
  run party-on party "${hotspot[@]}"
  run precision-off wander "${ambient[@]}"
  run precision-on wander "${ambient[@]}" --set precision.npc_position_cm=10 \
    --set precision.npc_heading_bits=8 --set precision.engage_radius=10
  run static-off wander --npcs 300
  run static-on wander --npcs 300 --set static.map_file=configs/maps/sample.yaml \
    --set static.view_radius=100
} | tee "$work/results.jsonl"
python3 - "$work/results.jsonl" <<'EOF'
import json, sys
runs = {r["run"]: r for r in map(json.loads, open(sys.argv[1]))}
for s in ("hotspot", "overload", "party", "precision", "static"):
    off, on = runs[s + "-off"], runs[s + "-on"]
    print(f"{s}: bytes/client/s on/off = {on['bytes_per_client_s'] / off['bytes_per_client_s']:.3f}, "
          f"tick mean on/off = {on['tick_mean_ms'] / off['tick_mean_ms']:.3f}, "
          f"overruns {off['overruns']:.0f} -> {on['overruns']:.0f}")
EOF
