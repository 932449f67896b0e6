#!/usr/bin/env bash
# A throwaway PostgreSQL server on loopback, for the tests of the shared character store
# (tests/persist/pg_store_test.cpp) and its benchmark (bench/persist-bench --postgres):
# initdb into DIR, the server on 127.0.0.1:PORT with its unix socket in DIR, trust
# authentication for the user `zone` (loopback only, nothing else can reach it).
#
#   pg-throwaway.sh start DIR [PORT]  initdb (the first time) and start; prints the libpq
#                                     connection string. PORT: a free one below the
#                                     ephemeral range when not given, then the one of
#                                     the last start.
#   pg-throwaway.sh stop DIR          stop (fast shutdown); DIR stays, start again later
#   pg-throwaway.sh destroy DIR       stop at once and remove DIR
#
# initdb and postgres refuse to run as root: as root (CI) they run as the `postgres`
# system user (the postgresql package makes it), and DIR is given to that user.
# PG_SERVER_OPTIONS adds server settings (e.g. "-c fsync=off" for tests, which check
# logic, not durability). Exit 77 when PostgreSQL is not installed (Debian package
# postgresql; scripts/install-deps.sh --tests installs it).
set -euo pipefail

command=${1:-}
dir=${2:-}
if [[ -z $command || -z $dir ]]; then
  echo "usage: $0 start|stop|destroy DIR [PORT]" >&2
  exit 2
fi

bindir=${PG_BINDIR:-}
if [[ -z $bindir ]]; then
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    if [[ -x $d/initdb && -x $d/pg_ctl ]]; then bindir=$d; break; fi
  done
fi
if [[ -z $bindir || ! -x $bindir/pg_ctl ]]; then
  echo "SKIPPED: PostgreSQL is not installed (Debian package postgresql;" \
    "scripts/install-deps.sh --tests installs it)" >&2
  exit 77
fi

as_owner=()
if [[ $(id -u) -eq 0 ]]; then
  as_owner=(runuser -u postgres --)
fi

case $command in
  start)
    mkdir -p "$dir"
    if [[ ${#as_owner[@]} -gt 0 ]]; then chown postgres: "$dir"; fi
    if [[ ! -e $dir/data/PG_VERSION ]]; then
      "${as_owner[@]}" "$bindir/initdb" -D "$dir/data" -A trust -U zone -E UTF8 --locale=C \
        --no-sync >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; exit 1; }
    fi
    port=${3:-}
    if [[ -z $port && -e $dir/port ]]; then port=$(cat "$dir/port"); fi
    # A port of our own choosing is taken below the kernel's ephemeral range: a port in
    # that range can be held by any outgoing connection (the tests make many), which a
    # probe does not see but bind() does. Another test can still take a free port between
    # the probe and the bind, so a chosen port that fails to bind is replaced, a few times.
    # A port given, or kept from the last start (a restart keeps its address), is not.
    chosen=0
    if [[ -z $port ]]; then chosen=1; fi
    ephemeral_low=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
    high=$((ephemeral_low - 1))
    if ((high < 11000)); then high=11000; fi
    attempts=1
    if ((chosen)); then attempts=5; fi
    started=0
    tried=" "
    for ((attempt = 1; attempt <= attempts; attempt++)); do
      if ((chosen)); then
        port=
        for p in $(shuf -i 10000-"$high" -n 50); do
          if [[ $tried == *" $p "* ]]; then continue; fi
          if ! (: </dev/tcp/127.0.0.1/"$p") 2>/dev/null; then port=$p; break; fi
        done
        if [[ -z $port ]]; then echo "no free loopback port found" >&2; exit 1; fi
      fi
      echo "$port" >"$dir/port"
      if ((chosen)) && [[ -e $dir/server.log ]]; then : >"$dir/server.log"; fi
      if "${as_owner[@]}" "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 -o \
        "-p $port -c listen_addresses=127.0.0.1 -c unix_socket_directories=$dir ${PG_SERVER_OPTIONS:-}" \
        start >/dev/null; then
        started=1
        break
      fi
      if ! grep -q "Address already in use" "$dir/server.log"; then break; fi
      tried+="$port "
      echo "port $port was taken before the server bound it; trying another" >&2
    done
    if ((!started)); then cat "$dir/server.log" >&2; exit 1; fi
    echo "host=127.0.0.1 port=$port user=zone dbname=postgres"
    ;;
  stop)
    "${as_owner[@]}" "$bindir/pg_ctl" -D "$dir/data" -m fast -w -t 60 stop >/dev/null
    ;;
  destroy)
    if [[ -e $dir/data/postmaster.pid ]]; then
      "${as_owner[@]}" "$bindir/pg_ctl" -D "$dir/data" -m immediate -w -t 60 stop \
        >/dev/null 2>&1 || true
    fi
    rm -rf "$dir"
    ;;
  *)
    echo "usage: $0 start|stop|destroy DIR [PORT]" >&2
    exit 2
    ;;
esac
