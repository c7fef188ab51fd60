#!/usr/bin/env bash
# The HTTP/2 server race: ringwire, hyper (race-hyper-h2) and nginx, all in
# cleartext HTTP/2 with prior knowledge (h2c), each pinned to core 0 with h2load
# pinned to core 1; the model is race.sh (HTTP/1.1 with wrk), whose pieces it
# shares through race_lib.sh.
#
#   bash bench/scripts/h2race.sh           # everything: about 9 minutes
#
# H2RACE_ROUNDS rounds (default 3), each starting every server afresh in turn;
# the report takes each figure's median over the rounds. For each server, on
# /plaintext (13 bytes) and /index.html (151-byte file): `h2load -c 1 -m 1`
# (one connection, one stream at a time) and `h2load -c 64 -m 16` (64
# connections, 16 concurrent streams each), one h2load thread, for
# H2RACE_SECONDS (`-D`, default 10) after a 1 s warm-up (`--warm-up-time`).
# Per run: h2load's requests/s ("finished in ..., N req/s"), its failed,
# errored and timed-out requests and non-2xx answers, and the server's CPU
# time per request: utime + stime of all its threads (and of nginx's worker)
# from /proc/PID/stat, read when the warm-up ends and when h2load exits, over
# the requests h2load counted in that window; also how long the server waited
# for a CPU (schedstat; a noise gauge). Every answer is checked first with
# `curl --http2-prior-knowledge` (status, HTTP/2, body).
#
# The servers: the race's `race-ringwire` (h2c is on by default in
# ringwire-server), `race-hyper-h2` (hyper's http2 server, its defaults) and
# nginx with `listen 127.0.0.1:PORT http2;` (nginx.conf.in, the HTTP/1.1
# race's configuration, with `http2` on the listener; its HTTP/2 settings at
# their defaults). nginx-nosendfile is that nginx with `sendfile off`: in
# h2c, nginx 1.22 with sendfile on answered /index.html on one connection at
# ~22 requests/s, 44 ms each (a delayed-ACK-like stall; `tcp_nopush off` did
# not help, `sendfile off` gave ~11,000/s), so both are raced rather than
# only the stalling configuration.
#
# Raw outputs go to docs/race-h2/raw/, the results to docs/race-h2/results.json
# and docs/race-h2/results.md (bench/scripts/h2race_report.py).
#
# Environment: H2RACE_SECONDS, H2RACE_ROUNDS, H2RACE_WARMUP (1), H2RACE_NICE
# (-10), H2RACE_SERVERS ("ringwire hyper-h2 nginx nginx-nosendfile"), H2RACE_PORT (18081),
# H2RACE_OUT (docs/race-h2), CARGO_TARGET_DIR (bench/race/target).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
RACE=$ROOT/bench/race
WWW=$RACE/www
DURATION=${H2RACE_SECONDS:-10}
ROUNDS=${H2RACE_ROUNDS:-3}
WARMUP=${H2RACE_WARMUP:-1}
NICE=${H2RACE_NICE:--10}
SERVERS=${H2RACE_SERVERS:-ringwire hyper-h2 nginx nginx-nosendfile}
OUT=${H2RACE_OUT:-$ROOT/docs/race-h2}
PORT=${H2RACE_PORT:-18081}
ADDR=127.0.0.1:$PORT
SCHEME=http
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$RACE/target}
BIN=$CARGO_TARGET_DIR/release
# How it was run, for the report: the settings given, then the script.
COMMAND=""
for v in H2RACE_SECONDS H2RACE_ROUNDS H2RACE_WARMUP H2RACE_NICE H2RACE_SERVERS; do
    if [ -n "${!v:-}" ]; then COMMAND+="$v=$(printf %q "${!v}") "; fi
done
COMMAND+="bash bench/scripts/h2race.sh"

SERVER_CORE=0
CLIENT_CORE=1
# Scenario name: h2load's connections and concurrent streams per connection.
SCENARIOS="c1m1 c64m16"
declare -A LOAD=([c1m1]="-c 1 -m 1" [c64m16]="-c 64 -m 16")

RACE_TAG=h2race
# shellcheck source=bench/scripts/race_lib.sh
. "$ROOT/bench/scripts/race_lib.sh"

# --- what it needs -----------------------------------------------------------
install_missing h2load:nghttp2-client nginx:nginx-light taskset:util-linux curl:curl python3:python3
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
"$NGINX" -V 2>&1 | grep -q http_v2_module || die "$NGINX has no HTTP/2 module"
check_nice
[ "$(nproc)" -ge 2 ] || die "needs two cores (server on one, h2load on the other)"
[ "$(wc -c <"$WWW/index.html")" -eq 151 ] || die "$WWW/index.html must be 151 bytes"

say "building bench/race (release)"
cargo build --release --manifest-path "$RACE/Cargo.toml" --bins >&2

ulimit -n "$(ulimit -Hn)"
CLK_TCK=$(getconf CLK_TCK)
WORK=$(mktemp -d /tmp/ringwire-h2race.XXXXXX)
RAW=$OUT/raw
mkdir -p "$OUT" "$RAW"
rm -f "$RAW"/*.txt "$RAW"/*.meta

SERVER_PID=""
H2LOAD_PID=""
# curl checks the answers and probes the port in HTTP/2 from the first byte.
CURL=(curl -s --http2-prior-knowledge)
NGINX_LISTEN=" http2"
cleanup() {
    [ -n "$H2LOAD_PID" ] && kill "$H2LOAD_PID" 2>/dev/null || true
    [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT

# check_answers (race_lib.sh), and that curl spoke HTTP/2.
check_h2_answers() {
    local name=$1 path
    check_answers "$name"
    for path in plaintext index.html; do
        head -n1 "$RAW/$name-$path.headers.txt" | grep -q '^HTTP/2 200' \
            || die "$name: GET /$path was not answered in HTTP/2"
    done
}

# --- the race ----------------------------------------------------------------
run_h2load() {
    local name=$1 scenario=$2 path=$3 round=$4
    local tag=$name-$scenario-$path-r$round
    local url="$SCHEME://$ADDR/$path"
    local before after start end sched_before sched_after rc
    # shellcheck disable=SC2086 # LOAD holds h2load's options, split on purpose.
    nice -n "$NICE" taskset -c $CLIENT_CORE h2load -t 1 ${LOAD[$scenario]} -D "$DURATION" --warm-up-time "$WARMUP" "$url" \
        >"$RAW/$tag.txt" 2>&1 &
    H2LOAD_PID=$!
    # The measured window opens when the warm-up ends (h2load starts its clock
    # once its connections are up: a few ms on loopback) ...
    sleep "$WARMUP"
    before=$(cpu_ticks)
    sched_before=$(sched_ns)
    start=$(date +%s.%N)
    rc=0
    wait "$H2LOAD_PID" || rc=$?
    H2LOAD_PID=""
    # ... and closes when h2load has finished.
    end=$(date +%s.%N)
    after=$(cpu_ticks)
    sched_after=$(sched_ns)
    kill -0 "$SERVER_PID" 2>/dev/null || die "$name exited during $tag: $(tail -n5 "$WORK/server.log")"
    cat >"$RAW/$tag.meta" <<EOF
server=$name
scenario=$scenario
h2load_options=${LOAD[$scenario]}
path=/$path
round=$round
h2load_exit=$rc
run_ns_before=${sched_before% *}
run_ns_after=${sched_after% *}
wait_ns_before=${sched_before#* }
wait_ns_after=${sched_after#* }
ticks_before=$before
ticks_after=$after
clk_tck=$CLK_TCK
wall_seconds=$(python3 -c "print(round($end - $start, 3))")
EOF
    say "$tag: $(grep -m1 '^finished in' "$RAW/$tag.txt" || echo 'no result'), $(grep -m1 '^requests:' "$RAW/$tag.txt" || true); cpu ticks $((after - before)); exit $rc"
}

LOAD_BEFORE=$(uptime)
for round in $(seq "$ROUNDS"); do
    for name in $SERVERS; do
        say "--- round $round: $name"
        start_server "$name"
        check_h2_answers "$name"
        for scenario in $SCENARIOS; do
            for path in plaintext index.html; do
                run_h2load "$name" "$scenario" "$path" "$round"
            done
        done
        stop_server
    done
done
LOAD_AFTER=$(uptime)

cat >"$RAW/machine.meta" <<EOF
date=$(date -u +%Y-%m-%dT%H:%M:%SZ)
command=$COMMAND
cpu_model=$(lscpu | sed -n 's/^Model name: *//p' | head -n1)
cpus=$(nproc)
load_before=$LOAD_BEFORE
load_after=$LOAD_AFTER
seconds=$DURATION
warmup_seconds=$WARMUP
rounds=$ROUNDS
nice=$NICE
kernel=$(uname -r)
h2load=$(h2load --version 2>&1 | head -n1)
nginx=$("$NGINX" -v 2>&1 | cut -d' ' -f3)
curl=$(curl --version | head -n1 | cut -d' ' -f1-2)
rustc=$(rustc --version)
ringwire=$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)
EOF
lscpu | head -n 20 >"$RAW/lscpu.txt"

python3 "$ROOT/bench/scripts/h2race_report.py" "$RAW" "$OUT"
say "results: $OUT/results.json, $OUT/results.md"
