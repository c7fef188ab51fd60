#!/usr/bin/env bash
# Server CPU per connection behind HAProxy (TCP mode), with and without the PROXY protocol
# header: one `ringwire serve --threads 1` without the flag and one with it, both pinned to
# core 0; HAProxy on core 1 forwards to the first plainly and to the second with
# `send-proxy` (v1) or `send-proxy-v2`; `ringwire bench -H 'connection: close'` on core 1
# makes every request a new connection (the header's worst case). CPU is the server's
# utime + stime from /proc over the timed run, divided by the requests answered; the order
# runs plain, v1, v2, v2, v1, plain each round.
#
#   bench/scripts/proxy_header.sh [RINGWIRE_BINARY] [ROUNDS] [SECONDS]
set -euo pipefail
bin=${1:-${CARGO_TARGET_DIR:-target}/release/ringwire}
rounds=${2:-2} seconds=${3:-8}
dir=$(mktemp -d)
taskset -c 0 "$bin" serve --addr 127.0.0.1:18001 --threads 1 2>/dev/null &
plain=$!
taskset -c 0 "$bin" serve --addr 127.0.0.1:18002 --threads 1 --proxy-protocol 2>/dev/null &
proxied=$!
cat >"$dir/haproxy.cfg" <<CFG
global
  maxconn 4000
defaults
  mode tcp
  timeout connect 5s
  timeout client 30s
  timeout server 30s
frontend plain
  bind 127.0.0.1:18011
  default_backend plain
backend plain
  server s 127.0.0.1:18001
frontend v1
  bind 127.0.0.1:18012
  default_backend v1
backend v1
  server s 127.0.0.1:18002 send-proxy
frontend v2
  bind 127.0.0.1:18013
  default_backend v2
backend v2
  server s 127.0.0.1:18002 send-proxy-v2
CFG
taskset -c 1 /usr/sbin/haproxy -db -f "$dir/haproxy.cfg" >"$dir/haproxy.log" 2>&1 &
haproxy=$!
trap 'kill $plain $proxied $haproxy 2>/dev/null; rm -rf "$dir"' EXIT
sleep 1
ticks=$(getconf CLK_TCK)
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
run() { # name port server-pid
    local before after answered
    before=$(cpu "$3")
    answered=$(taskset -c 1 "$bin" bench -c 4 -D "$seconds" -H 'connection: close' --json \
        "http://127.0.0.1:$2/hello" 2>/dev/null |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["answered"])')
    after=$(cpu "$3")
    python3 -c "import sys; n = $answered; sys.exit('no answers through HAProxy') if n == 0 else \
print('$1', n, 'connections', round(($after - $before) * 1e6 / $ticks / n, 2), 'µs server CPU each')"
}
for _ in $(seq "$rounds"); do
    run plain 18011 $plain
    run v1 18012 $proxied
    run v2 18013 $proxied
    run v2 18013 $proxied
    run v1 18012 $proxied
    run plain 18011 $plain
done
