#!/usr/bin/env bash
# Server CPU per HTTP/2 request of two `ringwire` builds, alternated: each serves the demo
# site on one thread pinned to core 0 while `ringwire bench --http2` (the second build's)
# loads it from core 1, GET /hello and a 1,000-byte POST to it (answered 405). CPU is the
# server's utime + stime from /proc over the timed run, divided by the requests answered.
# The order flips every round (ABBA): on this machine whichever build runs second in a pair
# measured up to 20% more, either way round.
#
#   bench/scripts/serve_ab.sh BEFORE_BINARY AFTER_BINARY [ROUNDS]
#
# AB_DIR=DIR AB_PATHS="/a /b": serve DIR instead of the demo site and GET each path
# (no POST), for answers of other sizes. AB_LOAD: the load's connections and streams
# (default "-c 8 -p 8"). AB_HTTP1=1: HTTP/1.1 keep-alive instead (-p pipelines).
# AB_UNIX=1: over a Unix socket (`serve --unix`, `bench --unix-socket`) instead of TCP.
set -euo pipefail
before=$1 after=$2 rounds=${3:-3}
body=$(head -c 1000 /dev/zero | tr '\0' x)
dir=${AB_DIR:-}
read -r -a paths <<<"${AB_PATHS:-/hello}"
read -r -a shape <<<"${AB_LOAD:--c 8 -p 8}"
proto=(--http2)
[ "${AB_HTTP1:-0}" = 1 ] && proto=()

run() { # binary method path
    local bin=$1 method=$2 path=$3 err pid port out t0 t1 reqs
    err=$(mktemp)
    local listen=(--addr 127.0.0.1:0) sock=
    if [ "${AB_UNIX:-0}" = 1 ]; then
        sock=$(mktemp -u /tmp/serve_ab.XXXXXX.sock)
        listen=(--unix "$sock")
    fi
    taskset -c 0 "$bin" serve ${dir:+"$dir"} "${listen[@]}" --threads 1 2>"$err" >/dev/null &
    pid=$!
    port=
    for _ in $(seq 50); do
        if [ -n "$sock" ]; then
            [ -S "$sock" ] && port=80 && break
        else
            port=$(grep -o "127.0.0.1:[0-9]*" "$err" | head -1 | cut -d: -f2) && [ -n "$port" ] && break
        fi
        sleep 0.1
    done
    local load=(taskset -c 1 "$after" bench "${proto[@]}" "${shape[@]}" ${sock:+--unix-socket "$sock"})
    [ "$method" = POST ] && load+=(-X POST -d "$body")
    "${load[@]}" -D 1 "http://127.0.0.1:$port$path" >/dev/null 2>&1
    t0=$(awk '{print $14 + $15}' "/proc/$pid/stat")
    out=$("${load[@]}" -D 4 "http://127.0.0.1:$port$path" 2>&1)
    t1=$(awk '{print $14 + $15}' "/proc/$pid/stat")
    kill "$pid"
    wait "$pid" 2>/dev/null || true
    rm -f "$err"
    reqs=$(awk '/^ *requests/ {print $2; exit}' <<<"$out")
    # Clock ticks are 10 ms: microseconds per request.
    printf '%s %s %s: %s requests, %s us of server CPU each\n' "$bin" "$method" "$path" "$reqs" \
        "$(echo "scale=2; ($t1 - $t0) * 10000 / $reqs" | bc)"
}

cases=()
for path in "${paths[@]}"; do cases+=("GET $path"); done
[ -z "$dir" ] && cases+=("POST /hello")
for round in $(seq "$rounds"); do
    for case in "${cases[@]}"; do
        read -r method path <<<"$case"
        if ((round % 2)); then
            run "$before" "$method" "$path"
            run "$after" "$method" "$path"
        else
            run "$after" "$method" "$path"
            run "$before" "$method" "$path"
        fi
    done
done
