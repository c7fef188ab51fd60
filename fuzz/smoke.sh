#!/usr/bin/env bash
# Fuzz smoke run (CI calls this; see docs/fuzzing.md).
#
# Builds every cargo-fuzz target, replays the saved inputs in fuzz/regressions/<target>/, then
# fuzzes each target for FUZZ_SECONDS seconds (default 20). Exits non-zero if a build fails or
# any target crashes, panics, hangs (-timeout per input) or leaks; every target still runs, and
# a summary names the ones that failed. Works from any directory.
#
# Environment:
#   FUZZ_SECONDS     seconds per target (default 20)
#   FUZZ_TOOLCHAIN   rustup toolchain with -Zsanitizer support (default nightly)
#   FUZZ_TARGETS     space-separated subset of targets (default: all, from `cargo fuzz list`)
#   FUZZ_VERBOSE=1   stream libFuzzer's full output instead of a per-target summary
#   CARGO_TARGET_DIR if set, fuzz builds go to "$CARGO_TARGET_DIR-fuzz" (sanitizer flags would
#                    otherwise invalidate the workspace's build cache); else fuzz/target.
set -euo pipefail

FUZZ_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$FUZZ_DIR"

secs="${FUZZ_SECONDS:-20}"
if ! [[ "$secs" =~ ^[1-9][0-9]*$ ]]; then
    echo "smoke.sh: FUZZ_SECONDS must be a positive integer, got '$secs'" >&2
    exit 2
fi
toolchain="${FUZZ_TOOLCHAIN:-nightly}"
if [[ -n "${CARGO_TARGET_DIR:-}" ]]; then
    export CARGO_TARGET_DIR="${CARGO_TARGET_DIR%/}-fuzz"
fi

fuzz() { cargo "+$toolchain" fuzz "$@"; }

# The useful part of a failed run's log: the panic or sanitizer report, the saved input, the end.
explain() {
    grep -E -A6 "panicked at|==ERROR: |ERROR: libFuzzer" "$1" | head -n 40 || true
    grep -E "Test unit written to|artifact_prefix|Reproduce with|cargo fuzz (run|tmin)" "$1" || true
    echo "--- last lines:"
    tail -n 15 "$1"
}

if ! cargo "+$toolchain" --version >/dev/null 2>&1; then
    echo "smoke.sh: toolchain '$toolchain' is missing (rustup toolchain install $toolchain)" >&2
    exit 2
fi
if ! command -v cargo-fuzz >/dev/null 2>&1; then
    echo "smoke.sh: cargo-fuzz is not installed (cargo install cargo-fuzz --locked)" >&2
    exit 2
fi

if [[ -n "${FUZZ_TARGETS:-}" ]]; then
    read -r -a targets <<<"$FUZZ_TARGETS"
else
    mapfile -t targets < <(fuzz list --fuzz-dir "$FUZZ_DIR")
fi
if [[ ${#targets[@]} -eq 0 ]]; then
    echo "smoke.sh: no fuzz targets found" >&2
    exit 2
fi

echo "=== fuzz smoke: building ${targets[*]} (toolchain $toolchain)"
fuzz build --fuzz-dir "$FUZZ_DIR"

logdir="$(mktemp -d "${TMPDIR:-/tmp}/ringwire-fuzz-smoke.XXXXXX")"
failed=()

for target in "${targets[@]}"; do
    log="$logdir/$target.log"

    # Saved crash inputs first: each must now pass.
    regressions=()
    if [[ -d "regressions/$target" ]]; then
        mapfile -t regressions < <(find "regressions/$target" -type f ! -name '*.md' | sort)
    fi
    if [[ ${#regressions[@]} -gt 0 ]]; then
        echo "=== fuzz smoke: $target: replaying ${#regressions[@]} regression input(s)"
        if ! fuzz run --fuzz-dir "$FUZZ_DIR" "$target" "${regressions[@]}" -- -runs=1 \
            >"$log.regressions" 2>&1; then
            echo "!!! fuzz smoke: $target: a regression input fails again ($log.regressions):"
            explain "$log.regressions"
            failed+=("$target (regressions)")
            continue
        fi
    fi

    # New units go to corpus/<target> (gitignored); seeds/<target> is read-only input.
    mkdir -p "corpus/$target"
    corpora=("corpus/$target")
    [[ -d "seeds/$target" ]] && corpora+=("seeds/$target")

    echo "=== fuzz smoke: $target: fuzzing for ${secs}s"
    args=(run --fuzz-dir "$FUZZ_DIR" "$target" "${corpora[@]}" --
        "-max_total_time=$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1)
    status=0
    if [[ "${FUZZ_VERBOSE:-0}" == 1 ]]; then
        fuzz "${args[@]}" 2>&1 | tee "$log" || status=$?
    else
        fuzz "${args[@]}" >"$log" 2>&1 || status=$?
    fi
    if [[ $status -ne 0 ]]; then
        echo "!!! fuzz smoke: $target FAILED (exit $status); full log: $log"
        explain "$log"
        failed+=("$target")
    else
        # libFuzzer's final stats: executions, exec/s, corpus growth, peak RSS.
        grep -E '^(Done [0-9]+ runs|stat::(number_of_executed_units|average_exec_per_sec|new_units_added|peak_rss_mb))' "$log" |
            sed "s/^/    $target: /" || true
    fi
done

if [[ ${#failed[@]} -gt 0 ]]; then
    echo "=== fuzz smoke: FAILED: ${failed[*]} (logs in $logdir; crash inputs in $FUZZ_DIR/artifacts/)"
    exit 1
fi
echo "=== fuzz smoke: all ${#targets[@]} targets passed (${secs}s each)"
rm -rf "$logdir"
