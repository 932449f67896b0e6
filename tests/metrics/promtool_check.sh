#!/usr/bin/env bash
# Checks that /metrics is valid Prometheus text format, with `promtool check metrics`,
# against a real zone-server carrying some traffic, and against a zone of a world of
# zones (whose own families, ghosts, bus and handoff, only such a zone exports; its NATS
# server is not there: the zone starts anyway and exports them all the same).
#   usage: promtool_check.sh ZONE_SERVER CLIENT_SIM REPO_DIR
# Exit 77 (skipped) when promtool is not installed (Debian package: prometheus).
set -euo pipefail
server_bin=$1 sim_bin=$2 repo=$3
command -v promtool >/dev/null || { echo "promtool not installed (apt-get install prometheus): skipped"; exit 77; }
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

# start_zone LOG ARGS...: starts zone-server; sets $port and $admin from its log.
start_zone() {
  local log=$1
  shift
  "$server_bin" --config "$repo/configs/zone.yaml" --bind 127.0.0.1 --port 0 --admin-port 0 \
    "$@" >"$log" 2>&1 &
  port='' admin=''
  for _ in $(seq 100); do
    port=$(grep -oP 'listening on udp 127\.0\.0\.1:\K[0-9]+' "$log" || true)
    admin=$(grep -oP 'admin endpoint on http://127\.0\.0\.1:\K[0-9]+' "$log" || true)
    [[ -n ${port:-} && -n ${admin:-} ]] && break
    sleep 0.1
  done
  [[ -n ${admin:-} ]] || { echo "FAIL: server did not start"; cat "$log"; exit 1; }
}

# scrape FILE: the zone's /metrics (at $admin) into FILE.
scrape() {
  exec 3<>"/dev/tcp/127.0.0.1/$admin"
  printf 'GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3
  sed '1,/^\r$/d' <&3 >"$1"
  exec 3<&-
}

# check FILE NAME...: each NAME begins a line of FILE, and promtool accepts FILE.
check() {
  local file=$1
  shift
  for name in "$@"; do
    grep -q "^$name" "$file" || { echo "FAIL: $name missing from /metrics ($file)"; exit 1; }
  done
  if ! promtool check metrics <"$file"; then
    echo "FAIL: promtool rejected /metrics ($file)"
    exit 1
  fi
  echo "promtool: /metrics OK ($(grep -vc '^#' "$file") samples)"
}

start_zone "$work/server.log" --npcs 500
# Some players, so histograms and per-reason counters have data.
"$sim_bin" --server "127.0.0.1:$port" --bots 20 --duration 3 -q >"$work/sim.log" 2>&1
scrape "$work/metrics.txt"
check "$work/metrics.txt" zone_tick_duration_seconds_bucket zone_players zone_dropped_packets_total \
  zone_client_send_rate_bytes_per_second_count zone_config_reloads_total zone_build_info \
  zone_network_connects_refused_total zone_network_handshakes_expired_total \
  zone_network_handshakes_in_progress zone_sessions_evicted_silent_total

# West of a world of two zones, its NATS server at a port nobody listens on (1).
cat >"$work/world.yaml" <<'YAML'
nats:
  url: "nats://127.0.0.1:1"
  subject_prefix: "promtool"
zones:
  - name: west
    rect: {min_x: 0, min_y: 0, max_x: 500, max_y: 500}
    game: "127.0.0.1:0"
    admin: "127.0.0.1:0"
  - name: east
    rect: {min_x: 500, min_y: 0, max_x: 1000, max_y: 500}
    game: "127.0.0.1:0"
    admin: "127.0.0.1:0"
YAML
start_zone "$work/west.log" --world "$work/world.yaml" --zone west --npcs 100
# The world's families are published with the first ticks' metrics.
for _ in $(seq 50); do
  scrape "$work/west.txt"
  grep -q '^zone_bus_connected' "$work/west.txt" && break
  sleep 0.1
done
check "$work/west.txt" zone_ghosts zone_ghost_changes_total zone_bus_connected \
  zone_bus_lag_seconds_count zone_handoffs_out_total zone_arrivals_total
