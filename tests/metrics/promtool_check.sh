#!/usr/bin/env bash
# Checks that /metrics is valid Prometheus text format, with `promtool check metrics`,
# against a real zone-server carrying some traffic.
#   usage: promtool_check.sh ZONE_SERVER CLIENT_SIM REPO_DIR
# Exit 77 (skipped) when promtool is not installed (Debian package: prometheus).
set -euo pipefail
server_bin=$1 sim_bin=$2 repo=$3
command -v promtool >/dev/null || { echo "promtool not installed (apt-get install prometheus): skipped"; exit 77; }
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

"$server_bin" --config "$repo/configs/zone.yaml" --bind 127.0.0.1 --port 0 --admin-port 0 \
  --npcs 500 >"$work/server.log" 2>&1 &
for _ in $(seq 100); do
  port=$(grep -oP 'listening on udp 127\.0\.0\.1:\K[0-9]+' "$work/server.log" || true)
  admin=$(grep -oP 'admin endpoint on http://127\.0\.0\.1:\K[0-9]+' "$work/server.log" || true)
  [[ -n ${port:-} && -n ${admin:-} ]] && break
  sleep 0.1
done
[[ -n ${admin:-} ]] || { echo "FAIL: server did not start"; cat "$work/server.log"; exit 1; }
# Some players, so histograms and per-reason counters have data.
"$sim_bin" --server "127.0.0.1:$port" --bots 20 --duration 3 -q >"$work/sim.log" 2>&1

exec 3<>"/dev/tcp/127.0.0.1/$admin"
printf 'GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3
sed '1,/^\r$/d' <&3 >"$work/metrics.txt"
exec 3<&-
for name in zone_tick_duration_seconds_bucket zone_players zone_dropped_packets_total \
            zone_client_send_rate_bytes_per_second_count zone_config_reloads_total zone_build_info \
            zone_network_connects_refused_total zone_network_handshakes_expired_total \
            zone_network_handshakes_in_progress zone_sessions_evicted_silent_total; do
  grep -q "^$name" "$work/metrics.txt" || { echo "FAIL: $name missing from /metrics"; exit 1; }
done
if ! promtool check metrics <"$work/metrics.txt"; then
  echo "FAIL: promtool rejected /metrics"
  exit 1
fi
echo "promtool: /metrics OK ($(grep -vc '^#' "$work/metrics.txt") samples)"
