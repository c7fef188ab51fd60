#!/usr/bin/env bash
# The same HTTP/1.1 answer served over two I/O drivers (`bench/src/bin/plaintext.rs`):
# ringwire-io's io_uring driver and tokio's readiness, each on one thread pinned to core 0,
# loaded by `ringwire bench` from core 1 with 1 connection, 64 connections, and 64
# connections pipelining 16 requests. Prints requests/s and the server's CPU per request
# (utime + stime from /proc over the timed run, divided by the requests answered). The
# drivers alternate, and their order flips every round (ABBA).
#
#   bench/scripts/drivers.sh [ROUNDS] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-3} seconds=${2:-4}
target=${CARGO_TARGET_DIR:-target}
cargo build --quiet --release -p ringwire --bin ringwire -p ringwire-bench --bin plaintext
plaintext=$target/release/plaintext ringwire=$target/release/ringwire
port=18090

run() { # driver load...
    local driver=$1 pid t0 t1 out reqs
    shift
    # The last server's listener may outlive it a moment (io_uring closes it asynchronously).
    while (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do sleep 0.1; done
    taskset -c 0 "$plaintext" --driver "$driver" --addr "127.0.0.1:$port" >/dev/null &
    pid=$!
    for _ in $(seq 50); do
        (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
        sleep 0.1
    done
    local load=(taskset -c 1 "$ringwire" bench "$@" "http://127.0.0.1:$port/plaintext")
    "${load[@]}" -D 1 >/dev/null 2>&1
    t0=$(awk '{print $14 + $15}' "/proc/$pid/stat")
    out=$("${load[@]}" -D "$seconds" 2>&1)
    t1=$(awk '{print $14 + $15}' "/proc/$pid/stat")
    kill "$pid"
    wait "$pid" 2>/dev/null || true
    reqs=$(awk '/^ *requests/ {print $2; exit}' <<<"$out")
    # Clock ticks are 10 ms: microseconds per request.
    printf '%-5s %-12s %9d req/s %7s us of server CPU per request\n' "$driver" "$*" \
        "$((reqs / seconds))" "$(echo "scale=2; ($t1 - $t0) * 10000 / $reqs" | bc)"
}

for round in $(seq "$rounds"); do
    order=(uring tokio)
    ((round % 2 == 0)) && order=(tokio uring)
    echo "round $round ($(date -u +%H:%M:%S) UTC)"
    for load in "-c 1" "-c 64" "-c 64 -p 16"; do
        for driver in "${order[@]}"; do
            # shellcheck disable=SC2086
            run "$driver" $load
        done
    done
done
