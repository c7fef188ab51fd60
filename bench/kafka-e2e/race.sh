#!/usr/bin/env bash
# End to end against a real broker: every client produces RECORDS records of SIZE bytes to a
# fresh topic, then fetches RECORDS records from one filled topic; RUNS rounds, the clients in
# a rotating order each round. Prints each run's JSON line, then medians per client and op.
#
#   bench/kafka-e2e/race.sh            (RECORDS=1000000 SIZE=100 RUNS=5 CLIENTS="...")
#
# Uses the broker scripts/kafka/broker.sh runs, starting one (and stopping it after) if none.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
broker="$here/../../scripts/kafka/broker.sh"
records="${RECORDS:-1000000}"
size="${SIZE:-100}"
runs="${RUNS:-5}"
read -r -a clients <<<"${CLIENTS:-ringwire ringwire_bulk rskafka rdkafka kafka_protocol}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/ringwire/target-kafka-e2e}"

cargo build --release --manifest-path "$here/Cargo.toml" >&2
bin="$CARGO_TARGET_DIR/release/kafka-e2e"

started=""
if ! bootstrap="$(bash "$broker" status 2>/dev/null)"; then
    bootstrap="$(bash "$broker" start)"
    started=1
fi
trap '[[ -n "$started" ]] && bash "$broker" stop' EXIT

results="$(mktemp)"
run() {
    RUST_BACKTRACE=0 "$bin" "$@" --bootstrap "$bootstrap" --records "$records" --size "$size" \
        2> >(grep -v -e '^%' -e 'WARN' >&2) | tee -a "$results"
}

stamp="$(date +%s)"
filled="e2e-fetch-$stamp"
"$bin" create --bootstrap "$bootstrap" --topic "$filled"
"$bin" kafka_protocol produce --bootstrap "$bootstrap" --topic "$filled" --records "$records" \
    --size "$size" >/dev/null

for ((round = 0; round < runs; round++)); do
    for ((i = 0; i < ${#clients[@]}; i++)); do
        client="${clients[(i + round) % ${#clients[@]}]}"
        topic="e2e-$client-$stamp-$round"
        "$bin" create --bootstrap "$bootstrap" --topic "$topic"
        run "$client" produce --topic "$topic"
    done
    for ((i = 0; i < ${#clients[@]}; i++)); do
        client="${clients[(i + round) % ${#clients[@]}]}"
        run "$client" fetch --topic "$filled"
    done
done

python3 - "$results" <<'PY'
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1]) if line.startswith("{")]
print("\n| op | client | runs | median wall s | records/s | median client CPU s | CPU µs per 1000 records |")
print("|---|---|---|---|---|---|---|")
for op in ("produce", "fetch"):
    for client in dict.fromkeys(r["client"] for r in rows):
        mine = [r for r in rows if r["op"] == op and r["client"] == client]
        if not mine:
            continue
        wall = statistics.median(r["secs"] for r in mine)
        cpu = statistics.median(r["cpu_secs"] for r in mine)
        n = mine[0]["records"]
        print(f"| {op} | {client} | {len(mine)} | {wall:.3f} | {n / wall / 1e6:.2f} M | {cpu:.3f} | {cpu / n * 1e9:.0f} |")
PY
rm -f "$results"
