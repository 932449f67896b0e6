#!/usr/bin/env bash
# AOI versus broadcast with 1,000 players on one map (configs/bench-1000.yaml).
#
# Runs the zone server and client-sim twice on this machine, once with the AOI on and
# once with aoi.enabled=false (every client is sent every entity), and reports, from the
# server's own /metrics over a steady window:
#   - entity messages per second (spawns + delta updates + despawns sent to clients),
#   - packets per second and bandwidth out of the server (UDP payload incl. ENet headers),
#   - server CPU (user + system time of the zone-server process / wall time, one core = 100%),
#   - tick time and overruns,
#   - records held back by the budget per second, the longest wait of one, and each
#     entity's update rate as a client sees it (updates per second per entity in view),
#   - bytes per snapshot packet (payload) and ENet's share of each packet on the wire.
#
# The AOI run uses full bots (replicas and invariant checks, so its client_violations must
# be 0); the broadcast run uses light bots (see below).
#
# usage: bench/load.sh [--bots N] [--duration S] [--build DIR] [--out FILE.json]
set -euo pipefail
cd "$(dirname "$0")/.."

bots=1000
duration=30
build=build-release
out=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --bots) bots=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "load.sh: unknown argument '$1' (see the header of bench/load.sh)" >&2; exit 2 ;;
  esac
done
server_bin=$build/server/zone/zone-server
sim_bin=$build/client-sim/client-sim
for b in "$server_bin" "$sim_bin"; do
  [[ -x $b ]] || { echo "load.sh: $b not built (run: make release)" >&2; exit 2; }
done
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

# GET a path from the admin endpoint with bash's /dev/tcp (no curl needed).
http_get() {
  local port=$1 path=$2
  exec 3<>"/dev/tcp/127.0.0.1/$port"
  printf 'GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' "$path" >&3
  sed '1,/^\r$/d' <&3
  exec 3<&-
}
metric() {  # metric FILE NAME -> value (sum over label sets)
  awk -v n="$2" '$1 == n || index($1, n "{") == 1 { s += $2 } END { printf "%.0f", s }' "$1"
}
cpu_ticks() {  # user + system clock ticks of a process
  awk '{ print $14 + $15 }' "/proc/$1/stat"
}

run_mode() {
  local mode=$1 sim_flags=$2; shift 2
  local log=$work/$mode-server.log
  "$server_bin" --config configs/bench-1000.yaml --bind 127.0.0.1 --port 0 --admin-port 0 \
    "$@" >"$log" 2>&1 &
  local pid=$!
  local port="" admin=""
  for _ in $(seq 100); do
    port=$(grep -oP 'listening on udp 127\.0\.0\.1:\K[0-9]+' "$log" || true)
    admin=$(grep -oP 'admin endpoint on http://127\.0\.0\.1:\K[0-9]+' "$log" || true)
    [[ -n $port && -n $admin ]] && break
    sleep 0.1
  done
  [[ -n $port && -n $admin ]] || { echo "load.sh: server did not start:" >&2; cat "$log" >&2; exit 1; }

  "$sim_bin" --server "127.0.0.1:$port" --bots "$bots" --ramp 500 --duration "$duration" \
    --scenario wander --seed 1 --summary-json "$work/$mode-sim.json" -q $sim_flags >"$work/$mode-sim.log" 2>&1 &
  local sim=$!
  # Measure a steady window: after the ramp and a settle, until shortly before the end.
  local settle=$(( bots / 500 + 5 ))
  local window=$(( duration - settle - 2 ))
  sleep "$settle"
  http_get "$admin" /metrics >"$work/$mode-m0"
  local c0; c0=$(cpu_ticks "$pid")
  local t0; t0=$(date +%s.%N)
  sleep "$window"
  http_get "$admin" /metrics >"$work/$mode-m1"
  local c1; c1=$(cpu_ticks "$pid")
  local t1; t1=$(date +%s.%N)
  wait "$sim" || true
  kill -TERM "$pid"; wait "$pid" || true

  local hz; hz=$(getconf CLK_TCK)
  local d; d=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
  local vals=()
  for n in zone_replication_spawns_total zone_replication_updates_total zone_replication_despawns_total \
           zone_network_sent_packets_total zone_network_sent_bytes_total zone_ticks_total \
           zone_tick_overruns_total zone_tick_duration_seconds_sum zone_tick_duration_seconds_count \
           zone_replication_deferred_total zone_replication_snapshot_parts_total \
           zone_replication_snapshot_bytes_total; do
    vals+=("$(( $(metric "$work/$mode-m1" $n) - $(metric "$work/$mode-m0" $n) ))")
  done
  local players; players=$(metric "$work/$mode-m1" zone_players)
  local violations; violations=$(grep -oP '"protocol_violations": \K[0-9]+' "$work/$mode-sim.json" || echo "?")
  local view; view=$(grep -oP '"entities_in_view_avg": \K[0-9.]+' "$work/$mode-sim.json" || echo "?")
  local oldest; oldest=$(metric "$work/$mode-m1" zone_replication_oldest_deferral_ticks)
  awk -v mode="$mode" -v d="$d" -v players="$players" -v hz="$hz" -v c0="$c0" -v c1="$c1" \
      -v sp="${vals[0]}" -v up="${vals[1]}" -v de="${vals[2]}" -v pk="${vals[3]}" -v by="${vals[4]}" \
      -v ticks="${vals[5]}" -v over="${vals[6]}" -v tsum="${vals[7]}" -v tcount="${vals[8]}" \
      -v deferred="${vals[9]}" -v parts="${vals[10]}" -v partbytes="${vals[11]}" -v oldest="$oldest" \
      -v view="$view" -v violations="$violations" 'BEGIN {
    msgs = (sp + up + de) / d; bps = by * 8 / d
    tick_ms = tcount > 0 ? 1000 * tsum / tcount : 0
    printf "{\"mode\":\"%s\",\"players\":%d,\"window_s\":%.1f,\"messages_per_s\":%.0f,", mode, players, d, msgs
    printf "\"packets_per_s\":%.0f,\"bandwidth_mbps\":%.2f,\"bytes_per_client_per_s\":%.0f,", pk / d, bps / 1e6, by / d / (players > 0 ? players : 1)
    printf "\"server_cpu_percent\":%.1f,\"tick_ms_mean\":%.2f,\"ticks_per_s\":%.1f,\"overruns\":%d,", 100 * (c1 - c0) / hz / d, tick_ms, ticks / d, over
    p = players > 0 ? players : 1
    printf "\"deferred_per_s\":%.1f,\"oldest_deferral_ticks\":%d,", deferred / d, oldest
    printf "\"updates_per_entity_in_view_per_s\":%.2f,", (view > 0 ? up / d / p / view : 0)
    printf "\"snapshot_payload_bytes_per_packet\":%.1f,\"wire_overhead_bytes_per_packet\":%.1f,", (parts > 0 ? partbytes / parts : 0), (pk > 0 ? (by - partbytes) / pk : 0)
    printf "\"entities_in_view_avg\":%s,\"client_violations\":%s}\n", view, violations
  }'
}

echo "load.sh: $bots bots, ${duration}s per mode, $(nproc) cores" >&2
aoi=$(run_mode aoi "")
echo "$aoi"
# Broadcast: the AOI off and no bandwidth budget, so every entity goes to every client.
# Its bots are light (they acknowledge without rebuilding replicas): full replicas of the
# whole world for 1,000 bots would saturate client-sim's core long before the server's.
broadcast=$(run_mode broadcast --light --set aoi.enabled=false --set network.client_bandwidth=100000000 \
  --set network.timeout_ms=60000)
echo "$broadcast"
if [[ -n $out ]]; then printf '%s\n%s\n' "$aoi" "$broadcast" >"$out"; fi

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0) printf "%.1fx (%.1f%% less)", b / a, 100 * (1 - a / b); else print "n/a" }'; }
field() { grep -oP "\"$2\":\K[0-9.]+" <<<"$1"; }
echo "messages/s:  aoi $(field "$aoi" messages_per_s)  broadcast $(field "$broadcast" messages_per_s)  cut $(ratio "$(field "$aoi" messages_per_s)" "$(field "$broadcast" messages_per_s)")"
echo "bandwidth:   aoi $(field "$aoi" bandwidth_mbps) Mbps  broadcast $(field "$broadcast" bandwidth_mbps) Mbps  cut $(ratio "$(field "$aoi" bandwidth_mbps)" "$(field "$broadcast" bandwidth_mbps)")"
echo "server cpu:  aoi $(field "$aoi" server_cpu_percent)%  broadcast $(field "$broadcast" server_cpu_percent)%"
