#!/usr/bin/env bash
# `ringwire bench` against wrk as load generators: the same server (the race's ringwire
# binary, pinned to core 0), each generator pinned to core 1, taking turns, on /plaintext with
# 1 connection, 64 connections, and 64 connections pipelining 16 requests. Prints, per run,
# the requests/s each generator reports, its own CPU per request (user + system from
# /usr/bin/time), and the server's CPU per request (/proc/PID/stat).
# LOADGEN_HTTP2=1: over HTTP/2 with prior knowledge, `ringwire bench --http2` against
# h2load, 16 streams per connection in place of the pipeline.
#
#   bash bench/scripts/loadgen.sh            # LOADGEN_SECONDS=5 LOADGEN_ROUNDS=3
set -euo pipefail
cd "$(dirname "$0")/../.."
SECS=${LOADGEN_SECONDS:-5}
ROUNDS=${LOADGEN_ROUNDS:-3}
PORT=${LOADGEN_PORT:-18181}
URL=http://127.0.0.1:$PORT/plaintext
if [ "${LOADGEN_HTTP2:-0}" = 1 ]; then
    PEER=h2load PEER_PACKAGE=nghttp2-client H2=(--http2)
else
    PEER=wrk PEER_PACKAGE=wrk H2=()
fi
command -v $PEER >/dev/null \
    || { apt-get install -y -qq $PEER_PACKAGE || sudo apt-get install -y -qq $PEER_PACKAGE; }
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target}
cargo build --release -p ringwire >&2
# The race workspace keeps its own target dir (its peers stay out of the main one).
env -u CARGO_TARGET_DIR cargo build --release --manifest-path bench/race/Cargo.toml \
    --bin race-ringwire >&2
RINGWIRE=$CARGO_TARGET_DIR/release/ringwire
SERVER=bench/race/target/release/race-ringwire

taskset -c 0 "$SERVER" "127.0.0.1:$PORT" bench/race/www 2>/dev/null &
SERVER_PID=$!
trap 'kill $SERVER_PID 2>/dev/null || true' EXIT
for _ in $(seq 100); do curl -sf -o /dev/null "$URL" && break; sleep 0.1; done

ticks() { awk '{print $14 + $15}' "/proc/$SERVER_PID/stat"; }
hz=$(getconf CLK_TCK)

# run NAME CONNS DEPTH: one generator's run; prints a result line.
run() {
    local name=$1 conns=$2 depth=$3 out=/tmp/loadgen.$$ before after
    local cmd
    case $name in
        wrk) cmd=(wrk -t1 -c"$conns" -d"${SECS}s" --latency "$URL")
             [ "$depth" -gt 1 ] && cmd+=(-s bench/race/pipeline.lua -- "$depth") ;;
        h2load) cmd=(h2load -t1 -c"$conns" -m"$depth" -D"$SECS" "$URL") ;;
        ringwire) cmd=("$RINGWIRE" bench "${H2[@]}" -c "$conns" -p "$depth" -D "$SECS" "$URL") ;;
    esac
    before=$(ticks)
    /usr/bin/time -f '%U %S' -o "$out.time" taskset -c 1 "${cmd[@]}" >"$out"
    after=$(ticks)
    local requests
    case $name in
        wrk) requests=$(awk '/requests in/ {print $1}' "$out") ;;
        h2load) requests=$(awk '/^requests:/ {print $8}' "$out") ;;
        ringwire) requests=$(awk '/^  requests/ {print $2}' "$out") ;;
    esac
    read -r user sys <"$out.time"
    python3 - "$name" "$conns" "$depth" "$requests" "$user" "$sys" "$((after - before))" "$hz" "$SECS" <<'PY'
import sys
name, conns, depth, requests, user, sys_, ticks, hz, secs = sys.argv[1:]
n = int(requests)
print(f"{name:9} c={conns:>3} p={depth:>2}  {n / float(secs):>11,.0f} req/s  "
      f"generator {(float(user) + float(sys_)) * 1e6 / n:6.2f} us/req  "
      f"server {int(ticks) / int(hz) * 1e6 / n:6.2f} us/req")
PY
    rm -f "$out" "$out.time"
}

for round in $(seq "$ROUNDS"); do
    for shape in "1 1" "64 1" "64 16"; do
        set -- $shape
        if [ $((round % 2)) = 1 ]; then order="$PEER ringwire"; else order="ringwire $PEER"; fi
        for name in $order; do run "$name" "$1" "$2"; done
    done
done
