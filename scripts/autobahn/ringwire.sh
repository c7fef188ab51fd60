#!/usr/bin/env bash
# Autobahn against ringwire, both ways: wstest's fuzzingclient against `ringwire serve`'s
# /ws/echo, and its fuzzingserver against ringwire-ws's client (examples/autobahn_client).
#
#   scripts/autobahn/ringwire.sh [quick|all]     quick (default): cases 1-10, about a minute;
#                                                all: the 517 cases with compression, ~10 minutes
#
# Each side's results.txt is diffed against scripts/autobahn/expected-{client,server}-<set>.txt
# (regenerate with UPDATE=1 after a reviewed change). Fails on any FAILED, NON-STRICT or
# UNIMPLEMENTED case. Reports: target/autobahn/{client,server}/index.html.
set -euo pipefail
cd "$(dirname "$0")/../.."
set_name=${1:-quick}
target=${CARGO_TARGET_DIR:-target}
cargo build --release -q -p ringwire
cargo build --release -q -p ringwire-ws --features tokio --example autobahn_client
here=scripts/autobahn
status=0
run() {
    local mode=$1 expected="$here/expected-$1-$set_name.txt"
    local -a env=(OUT=target/autobahn)
    [[ -f "$expected" && -z "${UPDATE:-}" ]] && env+=(EXPECTED="$expected")
    if [[ $mode == client ]]; then
        env+=(WS_URL=ws://127.0.0.1:19201/ws/echo
              SERVER_CMD="exec $target/release/ringwire serve --addr 127.0.0.1:19201 --threads 1")
    else
        env+=(WSTEST_PORT=19202
              CLIENT_CMD="exec $target/release/examples/autobahn_client \"\$WS_URL\" ringwire")
    fi
    env "${env[@]}" bash "$here/run.sh" "$mode" "$set_name" || status=1
    if [[ -n "${UPDATE:-}" ]]; then
        cp "target/autobahn/$mode/results.txt" "$expected"
    fi
}
run client
run server
exit $status
