#!/usr/bin/env bash
# Restart: how long a zone holding N characters takes to have them all back after a crash,
# with the character store in SQLite and in PostgreSQL.
#
# For each backend: a fresh zone-server on configs/bench-1000.yaml (world scaled so that
# density stays at the 1,000-player level, bandwidth uncapped, a checkpoint every 5 s)
# and client-sim with N light bots that rejoin (--rejoin: a bot whose session the zone
# ended logs in again, after a pause of 0.5-1.5 s). Once every player is in and has been
# checkpointed (twice the players' number of saves since the last one came in), the zone is SIGKILLed (--signal TERM: stopped cleanly, which saves every
# player as it leaves and tells the bots) and started again at once on the same ports and
# store. One JSON line per backend, times in seconds:
#   start_to_listen     the new process's start until it listens (store opened, schema)
#   kill_to_first_back  the kill until the first character is restored (the bots notice
#                       a killed zone by their 5 s time-out; a stopped one tells them)
#   first_to_all_back   the first restored character until all N are (logins and store
#                       loads, the bots' pauses spread over a second)
#   kill_to_all_back    the whole outage as a player sees it
#   restores_per_s      N / first_to_all_back
#   load_ms_mean        the store's mean time to load one character (its own metric)
#
# usage: bench/restart.sh [--players 5000] [--backend "sqlite postgres"] [--signal KILL|TERM]
#                         [--build DIR] [--keep (the logs: the folder is named at the end)]
#                         [--set KEY=VALUE ...]
# PostgreSQL: a throwaway server from scripts/pg-throwaway.sh (Debian's postgresql).
set -euo pipefail
cd "$(dirname "$0")/.."

players=5000
backends="sqlite postgres"
signal=KILL
build=build-release
keep=0
extra=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --players) players=$2; shift 2 ;;
    --backend) backends=$2; shift 2 ;;
    --signal) signal=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    --set) extra+=(--set "$2"); shift 2 ;;
    *) echo "restart.sh: unknown argument '$1' (see the header of bench/restart.sh)" >&2; exit 2 ;;
  esac
done
[[ $signal == KILL || $signal == TERM ]] || { echo "restart.sh: --signal KILL or TERM" >&2; exit 2; }
server_bin=$build/server/zone/zone-server
sim_bin=$build/client-sim/client-sim
for b in "$server_bin" "$sim_bin"; do
  [[ -x $b ]] || { echo "restart.sh: $b not built (run: make release)" >&2; exit 2; }
done
work=$(mktemp -d)
chmod 755 "$work"  # PostgreSQL's own user runs the throwaway server in here
pg_dir=""
cleanup() {
  kill $(jobs -p) 2>/dev/null || true
  [[ -n $pg_dir ]] && bash scripts/pg-throwaway.sh destroy "$pg_dir" >/dev/null 2>&1 || true
  if (( keep )); then echo "restart.sh: logs kept in $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT

http_get() {  # port path
  exec 3<>"/dev/tcp/127.0.0.1/$1"
  printf 'GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' "$2" >&3
  sed '1,/^\r$/d' <&3
  exec 3<&-
}
metric() {  # PORT NAME -> value, or -1 when the endpoint does not answer
  local text
  text=$(http_get "$1" /metrics 2>/dev/null) || { echo -1; return; }
  awk -v n="$2" '$1 == n { v = $2 } END { print (v == "" ? -1 : v) }' <<<"$text"
}
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

side=$(awk -v n="$players" 'BEGIN { printf "%.1f", 530 * sqrt(n / 1000) }')
hosts=$(( (players + 100 + 3275) / 3276 )); (( hosts < 2 )) && hosts=2

zone_pid=""
start_zone() {  # LOG PORT ADMIN_PORT STORE_ARGS... ; sets zone_pid
  local log=$1 port=$2 admin=$3; shift 3
  "$server_bin" --config configs/bench-1000.yaml --bind 127.0.0.1 --port "$port" \
    --admin-port "$admin" --set world.max_x="$side" --set world.max_y="$side" \
    --set players.max_players=$(( players + 100 )) --set network.client_bandwidth=100000000 \
    --set threads.network="$hosts" --set persist.checkpoint_seconds=5 "${extra[@]}" "$@" \
    >"$log" 2>&1 &
  zone_pid=$!
}
wait_listening() {  # LOG -> "port admin"
  local port="" admin=""
  for _ in $(seq 600); do
    port=$(grep -oP 'listening on udp 127\.0\.0\.1:\K[0-9]+' "$1" || true)
    admin=$(grep -oP 'admin endpoint on http://127\.0\.0\.1:\K[0-9]+' "$1" || true)
    [[ -n $port && -n $admin ]] && { echo "$port $admin"; return; }
    sleep 0.05
  done
  echo "restart.sh: server did not start:" >&2; cat "$1" >&2; exit 1
}
wait_metric() {  # PORT NAME MIN SECONDS
  for _ in $(seq $(( $4 * 10 ))); do
    awk -v v="$(metric "$1" "$2")" -v m="$3" 'BEGIN { exit !(v >= m) }' && return 0
    sleep 0.1
  done
  echo "restart.sh: $2 did not reach $3 within $4 s" >&2; exit 1
}

run_one() {  # BACKEND
  local backend=$1 store=()
  if [[ $backend == postgres ]]; then
    pg_dir=$work/pg
    local conninfo; conninfo=$(bash scripts/pg-throwaway.sh start "$pg_dir")
    printf '%s\n' "$conninfo" >"$work/pg.conninfo"; chmod 600 "$work/pg.conninfo"
    store=(--set persist.backend=postgres --set persist.conninfo_file="$work/pg.conninfo")
  else
    store=(--set persist.backend=sqlite --set persist.path="$work/zone-$backend.sqlite3")
  fi
  start_zone "$work/first-$backend.log" 0 0 "${store[@]}"
  local pid=$zone_pid
  read -r port admin < <(wait_listening "$work/first-$backend.log")
  "$sim_bin" --server "127.0.0.1:$port" --bots "$players" --ramp 1000 --duration 3600 \
    --scenario wander --seed 1 --light --rejoin -q >"$work/sim-$backend.log" 2>&1 &
  local sim=$!
  wait_metric "$admin" zone_players "$players" 120
  # Every character checkpointed since all are in (twice over: the checkpoints are spread
  # over the interval), so that each has a row to come back from.
  local saved; saved=$(metric "$admin" zone_persist_saves_total)
  wait_metric "$admin" zone_persist_saves_total "$(awk -v s="$saved" -v n="$players" 'BEGIN { print s + 2 * n }')" 120
  kill -"$signal" "$pid"; wait "$pid" 2>/dev/null || true
  local t_kill; t_kill=$(now)
  start_zone "$work/second-$backend.log" "$port" "$admin" "${store[@]}"
  pid=$zone_pid
  wait_listening "$work/second-$backend.log" >/dev/null
  local t_listen; t_listen=$(now)
  local t_first="" restored=0
  while :; do
    restored=$(metric "$admin" zone_persist_logins_restored_total)
    [[ -z $t_first ]] && awk -v v="$restored" 'BEGIN { exit !(v > 0) }' && t_first=$(now)
    awk -v v="$restored" -v n="$players" 'BEGIN { exit !(v >= n) }' && break
    awk -v a="$t_kill" -v b="$(now)" 'BEGIN { exit !(b - a > 300) }' && {
      echo "restart.sh: only $restored of $players back after 300 s" >&2; exit 1; }
    sleep 0.1
  done
  local t_all; t_all=$(now)
  local loads; loads=$(metric "$admin" zone_persist_loads_total)
  local load_s; load_s=$(metric "$admin" zone_persist_load_seconds_total)
  kill -INT "$sim"; wait "$sim" 2>/dev/null || true
  kill -TERM "$pid"; wait "$pid" 2>/dev/null || true
  if [[ $backend == postgres ]]; then
    bash scripts/pg-throwaway.sh destroy "$pg_dir" >/dev/null 2>&1 || true
    pg_dir=""
  fi
  awk -v b="$backend" -v n="$players" -v sig="$signal" -v sl="$(since "$t_kill" "$t_listen")" \
      -v kf="$(since "$t_kill" "$t_first")" -v fa="$(since "$t_first" "$t_all")" \
      -v ka="$(since "$t_kill" "$t_all")" -v loads="$loads" -v load_s="$load_s" 'BEGIN {
    printf "{\"backend\":\"%s\",\"players\":%d,\"signal\":\"%s\",\"start_to_listen\":%s,", b, n, sig, sl
    printf "\"kill_to_first_back\":%s,\"first_to_all_back\":%s,\"kill_to_all_back\":%s,", kf, fa, ka
    printf "\"restores_per_s\":%.0f,\"load_ms_mean\":%.3f}\n", (fa > 0 ? n / fa : 0), (loads > 0 ? 1000 * load_s / loads : 0)
  }'
}

echo "restart.sh: $(nproc) cores, $(lscpu | grep -m1 'Model name' | sed 's/.*: *//'), $players players, SIG$signal" >&2
for b in $backends; do run_one "$b"; done
