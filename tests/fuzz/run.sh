#!/usr/bin/env bash
# Runs each libFuzzer target for a while, starting from its committed seed corpus.
#
#   run.sh BUILD_DIR SECONDS [TARGET...]  (client_packet snapshot_part config; default all)
#
# The targets run side by side, as many at a time as there are cores (FUZZ_JOBS overrides
# it), each on one core for SECONDS.
#
# New inputs that reach new code go to BUILD_DIR/fuzz-corpus/TARGET (kept between runs,
# never in the source tree); a crash, leak, timeout or violated property is written to
# BUILD_DIR/fuzz-artifacts/ and fails the run. Prints one summary line per target
# (executions, coverage, corpus size) and exits non-zero if any target found something.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [[ $# -lt 2 ]]; then
  echo "usage: run.sh BUILD_DIR SECONDS [TARGET...]" >&2
  exit 2
fi
build=$(cd "$1" && pwd); seconds=$2; shift 2
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(client_packet snapshot_part config)

declare -A extra=(
  [client_packet]="-max_len=4096"
  [snapshot_part]="-max_len=4096 -dict=$here/snapshot_part.dict"
  [config]="-max_len=16384 -dict=$here/config.dict"
)
mkdir -p "$build/fuzz-artifacts"
for t in "${targets[@]}"; do
  bin="$build/tests/fuzz/fuzz_$t"
  [[ -x $bin ]] || { echo "run.sh: $bin not built (make fuzz builds it)" >&2; exit 2; }
done
jobs=${FUZZ_JOBS:-$(nproc)}
if ! [[ $jobs =~ ^[1-9][0-9]*$ ]]; then
  echo "run.sh: FUZZ_JOBS must be a whole number >= 1 (targets run at once), got '$jobs'" >&2
  exit 2
fi

fuzz_one() {  # fuzz_one TARGET: runs it, prints its summary line; fails if it found something
  local t=$1 bin="$build/tests/fuzz/fuzz_$1" work="$build/fuzz-corpus/$1" log="$build/fuzz-$1.log"
  local start result execs cov corpus
  mkdir -p "$work"
  start=$(date +%s)
  # shellcheck disable=SC2086
  if "$bin" ${extra[$t]} -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
       -print_final_stats=1 -artifact_prefix="$build/fuzz-artifacts/$t-" \
       "$work" "$here/corpus/$t" >"$log" 2>&1; then
    result=ok
  else
    result=FAILED
  fi
  execs=$(grep -oP 'stat::number_of_executed_units:\s*\K[0-9]+' "$log" | tail -1 || true)
  cov=$(grep -oP '\bcov: \K[0-9]+' "$log" | tail -1 || true)
  corpus=$(find "$work" -type f | wc -l)
  echo "fuzz $t: $result in $(( $(date +%s) - start )) s, ${execs:-?} executions," \
       "coverage ${cov:-?} edges, work corpus $corpus inputs (log: $log)"
  if [[ $result != ok ]]; then
    grep -E 'ERROR|violated|SUMMARY|Test unit written|artifact' "$log" | head -20 || true
    return 1
  fi
}

status=0
running=0
for t in "${targets[@]}"; do
  if (( running >= jobs )); then
    wait -n || status=1
    running=$((running - 1))
  fi
  fuzz_one "$t" &
  running=$((running + 1))
done
while (( running > 0 )); do
  wait -n || status=1
  running=$((running - 1))
done
exit $status
