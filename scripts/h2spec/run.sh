#!/usr/bin/env bash
# h2spec (HTTP/2 conformance, RFC 9113 and RFC 7541) against `ringwire serve`, all 146 cases
# in strict mode, over TLS (ALPN h2) and over cleartext (prior knowledge). About 10 seconds
# once built.
#
#   scripts/h2spec/run.sh
#
# h2spec is installed from the Go module proxy into $H2SPEC_DIR (default
# ~/.cache/ringwire/h2spec) the first time. Fails on any failed case except those listed in
# scripts/h2spec/expected-failures.txt, and on a listed case that passes (keep the list true).
set -euo pipefail
cd "$(dirname "$0")/../.."
here=scripts/h2spec
version=v2.2.1
dir=${H2SPEC_DIR:-$HOME/.cache/ringwire/h2spec}
h2spec="$dir/$version/h2spec"
if [[ ! -x $h2spec ]]; then
    echo "installing h2spec $version"
    # Tagged before Go modules: the proxy knows it as +incompatible.
    GOBIN="$dir/$version" go install "github.com/summerwind/h2spec/cmd/h2spec@$version+incompatible"
fi
target=${CARGO_TARGET_DIR:-target}
cargo build --release -q -p ringwire
out=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$out"' EXIT

# Starts `ringwire serve` with the given flags on a free port, which it leaves in `port`.
# (Not run in a command substitution: its subshell would keep the server's pid from the
# trap, and the server would outlive the script.)
serve() {
    local log="$out/serve-$1.log"
    shift
    "$target/release/ringwire" serve --addr 127.0.0.1:0 --threads 1 "$@" >"$log" 2>&1 &
    pids+=($!)
    for _ in $(seq 100); do
        port=$(grep -oE '127\.0\.0\.1:[0-9]+' "$log" | head -1 | cut -d: -f2 || true)
        [[ -n $port ]] && return
        sleep 0.1
    done
    echo "ringwire serve did not start: $(cat "$log")" >&2
    return 1
}

status=0
check() {
    local name=$1
    shift
    "$h2spec" --strict --timeout 2 --junit-report "$out/$name.xml" "$@" >"$out/$name.txt" 2>&1 || true
    tail -n 1 "$out/$name.txt" | sed "s/^/$name: /"
    python3 - "$out/$name.xml" "$name" "$here/expected-failures.txt" <<'PY' || status=1
import sys, xml.etree.ElementTree as ET
report, name, expected_file = sys.argv[1:]
expected = {
    line.split(None, 1)[1].strip()
    for line in open(expected_file)
    if line.strip() and not line.startswith("#") and line.split()[0] == name
}
cases = [c for c in ET.parse(report).getroot().iter("testcase")]
failed = {f"{c.get('package')}/{c.get('classname')}" for c in cases if c.find("failure") is not None or c.find("error") is not None}
if not cases:
    sys.exit(f"{name}: no test ran")
bad = False
for case in sorted(failed - expected):
    print(f"{name}: FAILED {case}"); bad = True
for case in sorted(expected - failed):
    print(f"{name}: expected to fail but passed (update the list): {case}"); bad = True
sys.exit(1 if bad else 0)
PY
}

serve tls --self-signed
check tls -t -k -p "$port"
serve h2c
check h2c -p "$port"
if ((status)); then
    echo "h2spec: see the reports above; full output:"
    cat "$out"/*.txt
fi
exit $status
