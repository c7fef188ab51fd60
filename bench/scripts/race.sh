#!/usr/bin/env bash
# The side-by-side HTTP server race (issue 4): ringwire, hyper, actix-web,
# may_minihttp and nginx, each pinned to core 0 with wrk pinned to core 1.
#
#   bash bench/scripts/race.sh            # everything: about 6 minutes
#
# RACE_ROUNDS rounds (default 3), each starting every server afresh in turn;
# the report takes each figure's median over the rounds. For each server: 1 connection, 64 keep-alive connections and 64 connections
# pipelining 16 requests, on /plaintext (13 bytes) and /index.html (151-byte
# file), RACE_SECONDS each (default 10). Per run: wrk's requests/s and p50/p99
# latency, and the server's CPU time per request from /proc/PID/stat (utime +
# stime of all its threads, and of its children for nginx's worker), and how
# long it waited for a CPU (/proc/PID/task/*/schedstat; a noise gauge). The
# server, wrk and the idle client run at `nice -n RACE_NICE` (-10) so that
# other work on the machine disturbs them less. Then the
# server's RSS per idle keep-alive connection at RACE_IDLE_COUNT (10,000)
# connections, each answered once. Raw outputs go to docs/race/raw/, the
# collected results to docs/race/results.json, and bench/scripts/race_report.py
# writes docs/race/results.md and docs/race/race.svg from them.
#
# With RACE_TLS=1 the race runs over HTTPS (TLS 1.3, one self-signed P-256
# certificate made with `openssl req`): ringwire (OpenSSL backend; RACE_TLS_LIBRARY=rustls
# for its rustls one), hyper with tokio-rustls and nginx; results go to docs/race-tls.
#
# Environment: RACE_TLS, RACE_SECONDS, RACE_ROUNDS, RACE_NICE, RACE_SERVERS ("ringwire hyper actix may nginx"),
# RACE_IDLE_SERVERS (same list), RACE_IDLE_COUNT, RACE_PORT (18080),
# RACE_OUT (docs/race), CARGO_TARGET_DIR (bench/race/target).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
RACE=$ROOT/bench/race
WWW=$RACE/www
DURATION=${RACE_SECONDS:-10}
ROUNDS=${RACE_ROUNDS:-3}
NICE=${RACE_NICE:--10}
TLS=${RACE_TLS:-0}
if [ "$TLS" = 1 ]; then
    SCHEME=https
    SERVERS=${RACE_SERVERS:-ringwire hyper nginx}
    IDLE_SERVERS=${RACE_IDLE_SERVERS:-}
    OUT=${RACE_OUT:-$ROOT/docs/race-tls}
else
    SCHEME=http
    SERVERS=${RACE_SERVERS:-ringwire hyper actix may nginx}
    IDLE_SERVERS=${RACE_IDLE_SERVERS:-ringwire hyper actix may nginx}
    OUT=${RACE_OUT:-$ROOT/docs/race}
fi
IDLE_COUNT=${RACE_IDLE_COUNT:-10000}
PORT=${RACE_PORT:-18080}
ADDR=127.0.0.1:$PORT
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$RACE/target}
BIN=$CARGO_TARGET_DIR/release

SERVER_CORE=0
CLIENT_CORE=1
CONNS=64
DEPTH=16

RACE_TAG=race
# shellcheck source=bench/scripts/race_lib.sh
. "$ROOT/bench/scripts/race_lib.sh"

# --- what it needs -----------------------------------------------------------
install_missing wrk:wrk nginx:nginx-light taskset:util-linux curl:curl python3:python3
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
check_nice
[ "$(nproc)" -ge 2 ] || die "needs two cores (server on one, wrk on the other)"
[ "$(wc -c <"$WWW/index.html")" -eq 151 ] || die "$WWW/index.html must be 151 bytes"

say "building bench/race (release)"
cargo build --release --manifest-path "$RACE/Cargo.toml" --bins >&2

# Each idle connection costs the server one descriptor and the client one.
ulimit -n "$(ulimit -Hn)"
[ "$(ulimit -n)" = unlimited ] || [ "$(ulimit -n)" -gt $((IDLE_COUNT + 1000)) ] \
    || die "the open-file limit $(ulimit -n) is too low for $IDLE_COUNT connections"
CLK_TCK=$(getconf CLK_TCK)
WORK=$(mktemp -d /tmp/ringwire-race.XXXXXX)
RAW=$OUT/raw
mkdir -p "$OUT" "$RAW"
rm -f "$RAW"/*.txt "$RAW"/*.meta

SERVER_PID=""
IDLE_PID=""
# curl (which checks the answers and probes the port) trusts the race's certificate.
CURL=(curl -s)
NGINX_LISTEN=""
if [ "$TLS" = 1 ]; then
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
        -subj /CN=localhost -addext subjectAltName=IP:127.0.0.1 \
        -keyout "$WORK/key.pem" -out "$WORK/cert.pem" 2>/dev/null
    export RACE_TLS_CERT=$WORK/cert.pem RACE_TLS_KEY=$WORK/key.pem
    CURL+=(--cacert "$WORK/cert.pem")
    NGINX_LISTEN=" ssl"
fi
cleanup() {
    [ -n "$IDLE_PID" ] && kill "$IDLE_PID" 2>/dev/null || true
    [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT

# start_server, stop_server, cpu_ticks, sched_ns, check_answers: race_lib.sh.

# --- the race ----------------------------------------------------------------
run_wrk() {
    local name=$1 scenario=$2 path=$3 round=$4
    local tag=$name-$scenario-$path-r$round
    local args=(-t1 -d"${DURATION}s" --latency --timeout 5s)
    case $scenario in
        conn1) args+=(-c1) ;;
        conn64) args+=(-c$CONNS) ;;
        pipeline16) args+=(-c$CONNS -s "$RACE/pipeline.lua") ;;
    esac
    local url="$SCHEME://$ADDR/$path"
    local before after start end sched_before sched_after
    before=$(cpu_ticks)
    sched_before=$(sched_ns)
    start=$(date +%s.%N)
    if [ "$scenario" = pipeline16 ]; then
        on_client wrk "${args[@]}" "$url" -- $DEPTH >"$RAW/$tag.txt"
    else
        on_client wrk "${args[@]}" "$url" >"$RAW/$tag.txt"
    fi
    end=$(date +%s.%N)
    after=$(cpu_ticks)
    sched_after=$(sched_ns)
    cat >"$RAW/$tag.meta" <<EOF
server=$name
scenario=$scenario
path=/$path
round=$round
run_ns_before=${sched_before% *}
run_ns_after=${sched_after% *}
wait_ns_before=${sched_before#* }
wait_ns_after=${sched_after#* }
ticks_before=$before
ticks_after=$after
clk_tck=$CLK_TCK
wall_seconds=$(python3 -c "print(round($end - $start, 3))")
EOF
    say "$tag: $(grep 'Requests/sec' "$RAW/$tag.txt"), cpu ticks $((after - before))"
}

LOAD_BEFORE=$(uptime)
for round in $(seq "$ROUNDS"); do
    for name in $SERVERS; do
        say "--- round $round: $name"
        start_server "$name"
        check_answers "$name"
        # Warm up: caches, the file cache, the allocator's arenas.
        on_client wrk -t1 -c$CONNS -d1s "$SCHEME://$ADDR/plaintext" >/dev/null
        on_client wrk -t1 -c$CONNS -d1s "$SCHEME://$ADDR/index.html" >/dev/null
        for scenario in conn1 conn64 pipeline16; do
            for path in plaintext index.html; do
                run_wrk "$name" "$scenario" "$path" "$round"
            done
        done
        stop_server
    done
done

# --- memory per idle connection ---------------------------------------------
for name in $IDLE_SERVERS; do
    say "--- $name: $IDLE_COUNT idle keep-alive connections"
    start_server "$name"
    "${CURL[@]}" -o /dev/null -o /dev/null "$SCHEME://$ADDR/plaintext" "$SCHEME://$ADDR/plaintext"
    sleep 1
    pid=$(conn_pid)
    rss_before=$(vmrss_kib "$pid")
    fds_before=$(ls "/proc/$pid/fd" | wc -l)
    # bash sets IDLE_PID; `exec` makes it race-idle's own pid.
    coproc IDLE { exec nice -n "$NICE" taskset -c $CLIENT_CORE "$BIN/race-idle" "$ADDR" "$IDLE_COUNT" /plaintext; }
    ready=""
    read -r -t 300 ready <&"${IDLE[0]}" || true
    [ "$ready" = "ready $IDLE_COUNT" ] || die "$name: the idle client said '$ready'"
    sleep 2
    rss_after=$(vmrss_kib "$pid")
    fds_after=$(ls "/proc/$pid/fd" | wc -l)
    eval "exec ${IDLE[1]}>&-"
    wait "$IDLE_PID" || die "$name: the idle client failed"
    IDLE_PID=""
    cat >"$RAW/$name-idle.meta" <<EOF
server=$name
connections=$IDLE_COUNT
rss_before_kib=$rss_before
rss_after_kib=$rss_after
fds_before=$fds_before
fds_after=$fds_after
EOF
    say "$name: VmRSS $rss_before -> $rss_after KiB, fds $fds_before -> $fds_after"
    stop_server
done
LOAD_AFTER=$(uptime)

cat >"$RAW/machine.meta" <<EOF
date=$(date -u +%Y-%m-%dT%H:%M:%SZ)
load_before=$LOAD_BEFORE
load_after=$LOAD_AFTER
seconds=$DURATION
rounds=$ROUNDS
scheme=$SCHEME
nice=$NICE
kernel=$(uname -r)
wrk=$(wrk -v 2>&1 | head -n1 | cut -d' ' -f1-2)
nginx=$("$NGINX" -v 2>&1 | cut -d' ' -f3)
rustc=$(rustc --version)
ringwire=$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)
EOF
lscpu | head -n 20 >"$RAW/lscpu.txt"

python3 "$ROOT/bench/scripts/race_report.py" "$RAW" "$OUT"
say "results: $OUT/results.json, $OUT/results.md, $OUT/race.svg"
