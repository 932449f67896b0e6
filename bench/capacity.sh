#!/usr/bin/env bash
# Capacity: how many clients one zone holds at 20 Hz on this machine, bots included.
#
# For each N (default 1000 2000 5000 8000): a fresh zone-server on configs/bench-1000.yaml
# with the world scaled so that density stays at the 1,000-player level (about 10
# entities in view), the bandwidth budget uncapped (nothing should be deferred), enough
# ENet hosts for N; then client-sim with N full bots (replicas and invariant checks) on
# the same machine: a ramp, a settle, and a steady window measured from the server's own
# /metrics. One JSON line per N:
#   players, bots_joined, tick p50/p99/max (ms, from the fine tick histogram: the upper
#   bound of the bucket holding the percentile), overruns, server and client-sim CPU (% of
#   one core), AOI and replication ms per tick, replication us per client per tick,
#   bytes/s per client (UDP payload incl. ENet headers), bytes per snapshot, updates/s,
#   deferred/s, forced/s, oldest deferral, RTT p99 from the bots, protocol violations.
#
# With --game (the sample game: configs/game/game.yaml and its Lua rules) and --scenario
# combat, the bots fight NPCs and each other: the line adds actions, events and chat per
# second, event bytes per client and the rules' time per tick.
#
# With --neighbour SHARE (0 to 1), a neighbour process (bench/cpu_neighbour.cpp) spins
# that share of one core (busy SHARE x 10 ms of every 10 ms) for the whole run: servers
# share machines, and the tick should slow in proportion to the CPU taken, not fall off a
# cliff. It is taken from DIR/bench/cpu-neighbour, else build-release/bench/cpu-neighbour.
#
# usage: bench/capacity.sh [--bots "1000 2000 5000 8000"] [--window S] [--build DIR]
#                          [--out FILE.jsonl] [--scenario NAME] [--game]
#                          [--neighbour SHARE] [--set KEY=VALUE ...]
set -euo pipefail
cd "$(dirname "$0")/.."

counts="1000 2000 5000 8000"
window=60
scenario=wander
build=build-release
out=""
neighbour=""
extra=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --bots) counts=$2; shift 2 ;;
    --window) window=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --set) extra+=(--set "$2"); shift 2 ;;
    --scenario) scenario=$2; shift 2 ;;
    --neighbour) neighbour=$2; shift 2 ;;
    --game) extra+=(--set game.data_file=configs/game/game.yaml --set game.scripts_dir=configs/game); shift ;;
    *) echo "capacity.sh: unknown argument '$1' (see the header of bench/capacity.sh)" >&2; exit 2 ;;
  esac
done
server_bin=$build/server/zone/zone-server
sim_bin=$build/client-sim/client-sim
for b in "$server_bin" "$sim_bin"; do
  [[ -x $b ]] || { echo "capacity.sh: $b not built (run: make release)" >&2; exit 2; }
done
neighbour_bin=""
if [[ -n $neighbour ]]; then
  for b in "$build/bench/cpu-neighbour" build-release/bench/cpu-neighbour; do
    [[ -x $b ]] && { neighbour_bin=$b; break; }
  done
  [[ -n $neighbour_bin ]] || { echo "capacity.sh: cpu-neighbour not built (run: make release)" >&2; exit 2; }
fi
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
neighbour_pid=""
if [[ -n $neighbour_bin ]]; then
  "$neighbour_bin" --share "$neighbour" &
  neighbour_pid=$!
fi

http_get() {  # port path
  exec 3<>"/dev/tcp/127.0.0.1/$1"
  printf 'GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' "$2" >&3
  sed '1,/^\r$/d' <&3
  exec 3<&-
}
metric() {  # FILE NAME -> value (sum over label sets)
  awk -v n="$2" '$1 == n || index($1, n "{") == 1 { s += $2 } END { printf "%.6f", s }' "$1"
}
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
# Percentile of the tick histogram between two scrapes: the upper bound (ms) of the bucket
# that holds it.
tick_percentile() {  # FILE0 FILE1 Q
  awk -v q="$3" '
    FNR == NR && /^zone_tick_duration_seconds_bucket/ { match($0, /le="[^"]*"/); le = substr($0, RSTART + 4, RLENGTH - 5); b0[le] = $2; next }
    /^zone_tick_duration_seconds_bucket/ { match($0, /le="[^"]*"/); le = substr($0, RSTART + 4, RLENGTH - 5); order[++n] = le; d[le] = $2 - b0[le] }
    END { total = d["+Inf"]; if (total == 0) { print 0; exit }
          for (i = 1; i <= n; ++i) if (d[order[i]] >= q * total) { v = order[i]; print (v == "+Inf" ? "inf" : v * 1000); exit } }' "$1" "$2"
}

run_one() {
  local n=$1
  local side; side=$(awk -v n="$n" 'BEGIN { printf "%.1f", 530 * sqrt(n / 1000) }')
  local hosts=$(( (n + 100 + 3275) / 3276 )); (( hosts < 2 )) && hosts=2
  local log=$work/server-$n.log
  "$server_bin" --config configs/bench-1000.yaml --bind 127.0.0.1 --port 0 --admin-port 0 \
    --set world.max_x="$side" --set world.max_y="$side" --set players.max_players=$(( n + 100 )) \
    --set network.client_bandwidth=100000000 --set network.timeout_ms=60000 \
    --set threads.network="$hosts" "${extra[@]}" >"$log" 2>&1 &
  local pid=$!
  local port="" admin=""
  for _ in $(seq 100); do
    port=$(grep -oP 'listening on udp 127\.0\.0\.1:\K[0-9]+' "$log" || true)
    admin=$(grep -oP 'admin endpoint on http://127\.0\.0\.1:\K[0-9]+' "$log" || true)
    [[ -n $port && -n $admin ]] && break
    sleep 0.1
  done
  if [[ -z $port || -z $admin ]]; then
    # The start-up lines are logged at info; ask for them at warn-level runs too.
    echo "capacity.sh: server did not start:" >&2; cat "$log" >&2; exit 1
  fi
  local ramp=1000
  local settle=$(( n / ramp + 8 ))
  local duration=$(( settle + window + 4 ))
  "$sim_bin" --server "127.0.0.1:$port" --bots "$n" --ramp "$ramp" --duration "$duration" \
    --scenario "$scenario" --seed 1 --summary-json "$work/sim-$n.json" -q >"$work/sim-$n.log" 2>&1 &
  local sim=$!
  sleep "$settle"
  http_get "$admin" /metrics >"$work/m0"
  local c0; c0=$(cpu_ticks "$pid"); local s0; s0=$(cpu_ticks "$sim"); local t0; t0=$(date +%s.%N)
  sleep "$window"
  http_get "$admin" /metrics >"$work/m1"
  local c1; c1=$(cpu_ticks "$pid"); local s1; s1=$(cpu_ticks "$sim"); local t1; t1=$(date +%s.%N)
  wait "$sim" || true
  kill -TERM "$pid"; wait "$pid" || true

  local d; d=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
  delta() { awk -v a="$(metric "$work/m0" "$1")" -v b="$(metric "$work/m1" "$1")" 'BEGIN { printf "%.6f", b - a }'; }
  local ticks; ticks=$(delta zone_ticks_total)
  local p50; p50=$(tick_percentile "$work/m0" "$work/m1" 0.5)
  local p99; p99=$(tick_percentile "$work/m0" "$work/m1" 0.99)
  local max; max=$(tick_percentile "$work/m0" "$work/m1" 1.0)
  local players; players=$(metric "$work/m1" zone_players)
  local j="$work/sim-$n.json"
  local joined; joined=$(grep -oP '"bots_connected": \K[0-9]+' "$j" || echo 0)
  local violations; violations=$(grep -oP '"protocol_violations": \K[0-9]+' "$j" || echo -1)
  local rtt99; rtt99=$(grep -A3 '"rtt_ms"' "$j" | grep -oP '"p99": \K[0-9.]+' || echo -1)
  local hz; hz=$(getconf CLK_TCK)
  awk -v n="$n" -v players="$players" -v joined="$joined" -v d="$d" -v ticks="$ticks" \
      -v p50="$p50" -v p99="$p99" -v max="$max" -v over="$(delta zone_tick_overruns_total)" \
      -v cpu="$(( c1 - c0 ))" -v simcpu="$(( s1 - s0 ))" -v hz="$hz" \
      -v aoi="$(delta zone_aoi_update_duration_seconds_sum)" \
      -v rep="$(delta zone_replication_duration_seconds_sum)" \
      -v sent="$(delta zone_network_sent_bytes_total)" \
      -v snaps="$(delta zone_replication_snapshots_total)" \
      -v snapbytes="$(delta zone_replication_snapshot_bytes_total)" \
      -v updates="$(delta zone_replication_updates_total)" \
      -v deferred="$(delta zone_replication_deferred_total)" \
      -v forced="$(delta zone_replication_forced_total)" \
      -v oldest="$(metric "$work/m1" zone_replication_oldest_deferral_ticks)" \
      -v wait="$(delta zone_network_send_wait_seconds_total)" \
      -v hosts="$(metric "$work/m1" zone_network_hosts)" -v workers="$(metric "$work/m1" zone_replication_workers)" \
      -v actions="$(delta 'zone_actions_total{status="ok"}')" \
      -v refused="$(awk '/^zone_actions_total\{/ && !/status="ok"/ { s += $2 } END { print s + 0 }' "$work/m1")" \
      -v events="$(delta zone_events_total)" -v deliveries="$(delta zone_event_deliveries_total)" \
      -v eventbytes="$(delta zone_event_bytes_total)" -v rules="$(delta zone_script_seconds_total)" \
      -v rtt99="$rtt99" -v violations="$violations" 'BEGIN {
    t = ticks > 0 ? ticks : 1; p = players > 0 ? players : 1
    printf "{\"bots\":%d,\"players\":%d,\"bots_joined\":%d,\"window_s\":%.1f,\"ticks_per_s\":%.2f,", n, players, joined, d, ticks / d
    printf "\"tick_ms\":{\"p50\":%s,\"p99\":%s,\"max\":%s},\"overruns\":%d,", p50, p99, max, over
    printf "\"server_cpu_percent\":%.1f,\"client_sim_cpu_percent\":%.1f,", 100 * cpu / hz / d, 100 * simcpu / hz / d
    printf "\"aoi_ms_per_tick\":%.3f,\"replication_ms_per_tick\":%.3f,\"replication_us_per_client_tick\":%.3f,", 1000 * aoi / t, 1000 * rep / t, 1e6 * rep / t / p
    printf "\"send_wait_ms_per_tick\":%.3f,", 1000 * wait / t
    printf "\"bytes_per_client_per_s\":%.0f,\"bytes_per_snapshot\":%.1f,", sent / d / p, (snaps > 0 ? snapbytes / snaps : 0)
    printf "\"updates_per_s\":%.0f,\"deferred_per_s\":%.1f,\"forced_per_s\":%.1f,\"oldest_deferral_ticks\":%d,", updates / d, deferred / d, forced / d, oldest
    printf "\"actions_ok_per_s\":%.0f,\"actions_refused_total\":%d,\"events_per_s\":%.0f,\"event_deliveries_per_s\":%.0f,", actions / d, refused, events / d, deliveries / d
    printf "\"event_bytes_per_client_per_s\":%.0f,\"rules_ms_per_tick\":%.3f,", eventbytes / d / p, 1000 * rules / t
    printf "\"rtt_p99_ms\":%s,\"protocol_violations\":%d,\"network_hosts\":%d,\"replication_workers\":%d}\n", rtt99, violations, hosts, workers
  }'
}

echo "capacity.sh: $(nproc) cores, $(lscpu | grep -m1 'Model name' | sed 's/.*: *//'), window ${window}s, neighbour ${neighbour:-none}, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
results=()
for n in $counts; do
  line=$(run_one "$n")
  echo "$line"
  results+=("$line")
done
if [[ -n $out ]]; then printf '%s\n' "${results[@]}" >"$out"; fi
# The neighbour reports the share of a core it had (on stderr).
if [[ -n $neighbour_pid ]]; then kill -TERM "$neighbour_pid"; wait "$neighbour_pid" || true; fi
