#!/bin/sh
# Agones health for zone-server: the sidecar container of deploy/agones/*.yaml, built as
# the agones-health stage of deploy/Dockerfile (docs/deployment.md).
#
# Agones offers a game server once it calls the SDK's Ready(), and counts it healthy while
# it calls Health() at least once every spec.health.periodSeconds. zone-server has no
# Agones SDK built in; it answers GET /healthz on its admin endpoint (200 while its tick
# loop completes ticks, 503 once it stalls). This loop turns the one into the other
# through the REST API of the Agones SDK server, on localhost in the same pod:
#   1. it waits until /healthz answers 200 (the zone has started and ticks);
#   2. POST /ready, retried until the SDK server answers (it may start after this);
#   3. every HEALTH_INTERVAL seconds, POST /health when /healthz answers 200, and nothing
#      when it does not: a stalled or dead zone stops the pings, and Agones marks the
#      game server Unhealthy after spec.health.failureThreshold periods without one.
# SIGTERM or SIGINT ends it at once, with exit code 0. It logs changes only, to stderr.
#
# Environment:
#   AGONES_SDK_HTTP_PORT  the SDK server's REST port (Agones sets it in every container of
#                         the pod; 9358 when unset)
#   ZONE_HEALTH_URL       the zone's /healthz (http://127.0.0.1:7780/healthz when unset)
#   HEALTH_INTERVAL       seconds between two checks, below spec.health.periodSeconds
#                         (2 when unset; fractions such as 0.2 are accepted)
set -u

sdk="http://127.0.0.1:${AGONES_SDK_HTTP_PORT:-9358}"
zone="${ZONE_HEALTH_URL:-http://127.0.0.1:7780/healthz}"
interval="${HEALTH_INTERVAL:-2}"

stopping=0
sleeper=""
stop() {
  stopping=1
  if [ -n "$sleeper" ]; then kill "$sleeper" 2>/dev/null; fi
}
trap stop TERM INT

log() { echo "agones-health: $*" >&2; }

# A signal's trap runs only once the foreground command ends, but it interrupts `wait`:
# sleeping in the background and waiting for it lets SIGTERM end a pause at once.
pause() {
  sleep "$interval" &
  sleeper=$!
  wait "$sleeper"
  sleeper=""
}

zone_healthy() { curl -fsS -m 1 -o /dev/null "$zone" 2>/dev/null; }

# POST /ready or /health with the empty JSON object the SDK's REST API expects.
sdk_post() {
  curl -fsS -m 2 -o /dev/null -X POST -H 'Content-Type: application/json' -d '{}' \
    "$sdk/$1" 2>/dev/null
}

log "waiting for $zone to answer 200"
while [ "$stopping" = 0 ] && ! zone_healthy; do pause; done
[ "$stopping" = 0 ] && log "zone healthy; marking the game server Ready at $sdk/ready"
while [ "$stopping" = 0 ] && ! sdk_post ready; do pause; done
[ "$stopping" = 0 ] && log "Ready; health pings every $interval s while $zone answers 200"

state=pinging
while [ "$stopping" = 0 ]; do
  if ! zone_healthy; then
    [ "$state" = zone_failing ] || log "$zone does not answer 200: pings stopped"
    state=zone_failing
  elif ! sdk_post health; then
    [ "$state" = sdk_failing ] || log "$sdk/health failed; retrying"
    state=sdk_failing
  else
    [ "$state" = pinging ] || log "pinging again"
    state=pinging
  fi
  [ "$stopping" = 0 ] && pause
done
log "stopping"
exit 0
