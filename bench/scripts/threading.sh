#!/usr/bin/env bash
# Thread-per-core (SO_REUSEPORT, a current-thread runtime per thread) against
# one multi-threaded runtime, for `ringwire serve`: requests/s from wrk and the
# server's CPU time per request from /proc (steady on a noisy machine).
#
#   bash bench/scripts/threading.sh [SECONDS] [ROUNDS]
#
# Needs wrk (Debian package). Runs against 127.0.0.1 only; both modes take
# turns for ROUNDS rounds so that load from elsewhere hits both alike.
set -euo pipefail
cd "$(dirname "$0")/../.."
secs="${1:-5}"
rounds="${2:-3}"
threads="${THREADS:-2}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/ringwire/target}"
cargo build --release -q -p ringwire
bin="$CARGO_TARGET_DIR/release/ringwire"
ticks=$(getconf CLK_TCK)
port=18181

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

run_mode() {
    local mode=$1 conns=$2
    "$bin" serve --addr "127.0.0.1:$port" --threads "$threads" --runtime "$mode" 2>/dev/null &
    local pid=$!
    for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$port/hello" && break; sleep 0.1; done
    local before out after reqs
    before=$(cpu_ticks "$pid")
    out=$(wrk -t 2 -c "$conns" -d "${secs}s" "http://127.0.0.1:$port/hello")
    after=$(cpu_ticks "$pid")
    kill "$pid"; wait "$pid" 2>/dev/null || true
    reqs=$(awk '/requests in/ {print $1}' <<<"$out")
    awk -v m="$mode" -v c="$conns" -v r="$reqs" -v s="$secs" -v t=$((after - before)) -v hz="$ticks" \
        'BEGIN { printf "%-8s %4d conns  %9.0f req/s  %6.2f us CPU/request\n", m, c, r / s, t / hz * 1e6 / r }'
}

echo "# $(nproc) cores, $threads server threads, wrk -t 2, ${secs}s per run; $(uptime)"
for round in $(seq "$rounds"); do
    for conns in 64 256; do
        run_mode per-core "$conns"
        run_mode shared "$conns"
    done
done
