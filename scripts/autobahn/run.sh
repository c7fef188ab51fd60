#!/usr/bin/env bash
# Run the Autobahn|Testsuite (wstest) against a WebSocket server or client under test and summarise.
#
#   scripts/autobahn/run.sh client [CASES]   wstest fuzzingclient -> the server at $WS_URL
#   scripts/autobahn/run.sh server [CASES]   wstest fuzzingserver on 127.0.0.1:$WSTEST_PORT; $CLIENT_CMD
#                                            is started once it listens, with $WS_URL set to it
#
# CASES: comma list of case patterns (default '*', all 517 cases), e.g. the quick subset
#        '1.*,2.*,3.*,4.*,5.*,6.*,7.*,9.*,10.*' (301 cases; the alias 'quick' means that; 'all' means '*').
# Environment:
#   WS_URL        client mode: server under test (default ws://127.0.0.1:9001)
#   SERVER_CMD    client mode, optional: command that starts the server under test; started (own process
#                 group) before wstest, waited for on WS_URL's port, stopped afterwards
#   WSTEST_PORT   server mode: fuzzingserver port (default 9001), bound to 127.0.0.1
#   CLIENT_CMD    server mode, required: the client under test (bash -c); it must GET /getCaseCount, then
#                 /runCase?case=N&agent=A for N in 1..count, then /updateReports?agent=A
#   AGENT         agent name (client mode: the name in the report, default 'ringwire'; server mode: if set,
#                 only that agent's results are summarised)
#   EXCLUDE       comma list of case patterns to exclude
#   WSTEST_OPTIONS  JSON object for the fuzzingclient spec's "options" (e.g. {"failByDrop": false})
#   OUT           report root (default target/autobahn); reports go to $OUT/<mode>/ (emptied first)
#   EXPECTED      file to diff results.txt against (e.g. scripts/autobahn/expected-client.txt)
#   STRICT        1 (default): any FAILED/NON-STRICT/UNIMPLEMENTED case fails the run; 0 (only with
#                 EXPECTED): the run passes when the results match EXPECTED, known-bad cases included
#   RUN_TIMEOUT   seconds before wstest / the client is stopped (default 3600)
#   WSTEST        wstest launcher (default: what scripts/autobahn/install.sh prints; installs if needed)
# Exit status: 0 when every case is OK or INFORMATIONAL (and matches EXPECTED if given; with STRICT=0 a
# match with EXPECTED is enough), 1 otherwise,
# 2 on a harness error (no report, server/client did not start, ...).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mode=${1:-}
cases_arg=${2:-*}
case "$mode" in
    client|server) ;;
    *) echo "usage: $0 client|server [CASES]   (see the header of $0)" >&2; exit 2 ;;
esac
case "$cases_arg" in
    quick) cases_arg='1.*,2.*,3.*,4.*,5.*,6.*,7.*,9.*,10.*' ;;
    all) cases_arg='*' ;;
esac

log() { printf '[autobahn/run] %s\n' "$*" >&2; }

OUT=${OUT:-target/autobahn}
REPORT_DIR=$OUT/$mode
RUN_TIMEOUT=${RUN_TIMEOUT:-3600}
WSTEST=${WSTEST:-$("$HERE/install.sh")}
AB_BIN=$(dirname "$WSTEST")
PY_SUMMARY=$(command -v python3 || echo "$AB_BIN/python2.7")

mkdir -p "$REPORT_DIR"
REPORT_DIR=$(cd "$REPORT_DIR" && pwd)
# Only what wstest writes lives here: start from an empty directory so no stale case survives.
find "$REPORT_DIR" -mindepth 1 -maxdepth 1 \( -name '*.html' -o -name '*.json' -o -name '*.txt' -o -name '*.log' \) \
    -delete
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ringwire-autobahn.XXXXXX")

pids=()
cleanup() {
    local rc=$?
    for pid in "${pids[@]}"; do
        # Each background job runs in its own process group (setsid): stop the group, then the leader.
        kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    done
    for pid in "${pids[@]}"; do
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL -- "-$pid" 2>/dev/null || true
    done
    rm -rf "$WORK"
    exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# JSON lists from comma lists (no dependency on jq).
json_list() {
    local IFS=, out="" item
    set -f  # '*' is a case pattern, not a file glob
    for item in $1; do
        item=${item//[[:space:]]/}
        [ -n "$item" ] && out+="${out:+, }\"$item\""
    done
    set +f
    echo "[$out]"
}
CASES_JSON=$(json_list "$cases_arg")
EXCLUDE_JSON=$(json_list "${EXCLUDE:-}")
OPTIONS_JSON=${WSTEST_OPTIONS:-'{}'}

# How many cases the spec selects (to catch a client or server that stopped half-way).
expected_count() {
    "$AB_BIN/python2.7" -c '
import json, sys
from autobahntestsuite.case import Cases, CaseCategories, CaseSubCategories, CaseSetname, CaseBasename
from autobahntestsuite.caseset import CaseSet
cs = CaseSet(CaseSetname, CaseBasename, Cases, CaseCategories, CaseSubCategories)
print(len(cs.parseSpecCases(json.load(open(sys.argv[1])))))' "$1"
}

wait_port() { # host port seconds pid-to-watch
    local host=$1 port=$2 deadline=$(( $(date +%s) + $3 )) pid=${4:-}
    while [ "$(date +%s)" -lt "$deadline" ]; do
        if (exec 3<>"/dev/tcp/$host/$port") 2>/dev/null; then return 0; fi
        if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then return 1; fi
        sleep 0.1
    done
    return 1
}

start_bg() { # logfile cmd... ; echoes the pid of a new process group
    local logf=$1; shift
    setsid "$@" >"$logf" 2>&1 </dev/null &
    echo $!
}

started=$(date +%s)
if [ "$mode" = client ]; then
    WS_URL=${WS_URL:-ws://127.0.0.1:9001}
    AGENT=${AGENT:-ringwire}
    cat >"$WORK/fuzzingclient.json" <<EOF
{
   "outdir": "$REPORT_DIR",
   "servers": [{"agent": "$AGENT", "url": "$WS_URL"}],
   "options": $OPTIONS_JSON,
   "cases": $CASES_JSON,
   "exclude-cases": $EXCLUDE_JSON,
   "exclude-agent-cases": {}
}
EOF
    cp "$WORK/fuzzingclient.json" "$REPORT_DIR/spec.json"
    ncases=$(expected_count "$WORK/fuzzingclient.json")
    if [ -n "${SERVER_CMD:-}" ]; then
        hostport=${WS_URL#*://}; hostport=${hostport%%/*}
        host=${hostport%:*}; port=${hostport##*:}
        [ "$host" = "$hostport" ] && port=80
        export WS_URL
        spid=$(start_bg "$REPORT_DIR/server.log" bash -c "$SERVER_CMD")
        pids+=("$spid")
        log "server under test: pid $spid: $SERVER_CMD"
        if ! wait_port "$host" "$port" 30 "$spid"; then
            log "the server under test is not listening on $host:$port (log: $REPORT_DIR/server.log)"
            tail -n 20 "$REPORT_DIR/server.log" >&2 || true
            exit 2
        fi
    fi
    log "wstest fuzzingclient -> $WS_URL: $ncases cases ($cases_arg${EXCLUDE:+ minus $EXCLUDE}), reports in $REPORT_DIR"
    ( cd "$WORK" && timeout -k 10 "$RUN_TIMEOUT" "$WSTEST" -m fuzzingclient -s "$WORK/fuzzingclient.json" ) \
        >"$REPORT_DIR/wstest.log" 2>&1 || log "wstest exited with status $? (log: $REPORT_DIR/wstest.log)"
else
    WSTEST_PORT=${WSTEST_PORT:-9001}
    if [ -z "${CLIENT_CMD:-}" ]; then log "server mode needs CLIENT_CMD (the client under test)"; exit 2; fi
    export WS_URL="ws://127.0.0.1:$WSTEST_PORT"
    cat >"$WORK/fuzzingserver.json" <<EOF
{
   "url": "$WS_URL",
   "outdir": "$REPORT_DIR",
   "cases": $CASES_JSON,
   "exclude-cases": $EXCLUDE_JSON,
   "exclude-agent-cases": {}
}
EOF
    cp "$WORK/fuzzingserver.json" "$REPORT_DIR/spec.json"
    ncases=$(expected_count "$WORK/fuzzingserver.json")
    if (exec 3<>"/dev/tcp/127.0.0.1/$WSTEST_PORT") 2>/dev/null; then
        log "port $WSTEST_PORT is already in use: set WSTEST_PORT"; exit 2
    fi
    # -u 0: no embedded web server (it would take port 8080).
    wpid=$(cd "$WORK" && start_bg "$REPORT_DIR/wstest.log" timeout -k 10 "$RUN_TIMEOUT" \
        "$WSTEST" -m fuzzingserver -s "$WORK/fuzzingserver.json" -u 0)
    pids+=("$wpid")
    if ! wait_port 127.0.0.1 "$WSTEST_PORT" 60 "$wpid"; then
        log "wstest fuzzingserver did not start (log: $REPORT_DIR/wstest.log)"
        tail -n 20 "$REPORT_DIR/wstest.log" >&2 || true
        exit 2
    fi
    log "wstest fuzzingserver on $WS_URL (pid $wpid): $ncases cases ($cases_arg${EXCLUDE:+ minus $EXCLUDE})"
    log "client under test: $CLIENT_CMD"
    crc=0
    timeout -k 10 "$RUN_TIMEOUT" bash -c "$CLIENT_CMD" >"$REPORT_DIR/client.log" 2>&1 </dev/null || crc=$?
    [ "$crc" -eq 0 ] || log "the client under test exited with status $crc (log: $REPORT_DIR/client.log)"
    # /updateReports writes index.json; give it a moment if the client did not wait for the answer.
    for _ in $(seq 100); do [ -s "$REPORT_DIR/index.json" ] && break; sleep 0.1; done
fi
elapsed=$(( $(date +%s) - started ))
log "$mode run took ${elapsed} s"
echo "$elapsed" >"$REPORT_DIR/elapsed.txt"

args=("$REPORT_DIR" --expect-cases "$ncases")
[ -n "${EXPECTED:-}" ] && args+=(--expected "$EXPECTED")
[ -n "${EXPECTED:-}" ] && [ "${STRICT:-1}" = 0 ] && args+=(--lenient)
[ "$mode" = server ] && [ -n "${AGENT:-}" ] && args+=(--agent "$AGENT")
src=0
"$PY_SUMMARY" "$HERE/summarise.py" "${args[@]}" || src=$?
exit "$src"
