#!/usr/bin/env python3
"""Turns criterion's estimates into the Markdown tables of docs/benchmarks.md.

Usage: summarize.py [CRITERION_DIR]   (default: $CARGO_TARGET_DIR/criterion or target/criterion)

Reads the median of each benchmark's latest run (`new/estimates.json`), so run it right after
one `cargo bench` of both benches: then every table comes from that one run.
"""

import json
import os
import sys
from pathlib import Path

SIZES = [64, 4096]
COUNTS = [100, 1000]
DELIVERIES = ["whole", "chunk64", "chunk4"]


def median_ns(root: Path, group: str, bench: str):
    path = root / group / bench / "new" / "estimates.json"
    if not path.exists():
        return None
    return json.loads(path.read_text())["median"]["point_estimate"]


def fmt(ns):
    if ns is None:
        return "–"
    if ns >= 1e6:
        return f"{ns / 1e6:.2f} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.2f} µs"
    return f"{ns:.0f} ns"


def frames_table(root: Path):
    print("### Frames: median time per iteration (whole stream parsed)\n")
    print("| body | frames | delivery | ring (mirror) | ring (heap) | classic copy | classic direct "
          "| copy / ring | direct / ring | ring ns/frame | classic copy ns/frame "
          "| classic direct ns/frame |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for size in SIZES:
        for count in COUNTS:
            for delivery in DELIVERIES:
                group = f"frames-{size}B-x{count}-{delivery}"
                m = {b: median_ns(root, group, b) for b in [
                    "ring_mirror", "ring_heap", "classic_copy", "classic_direct"]}
                ring, copy, direct = m["ring_mirror"], m["classic_copy"], m["classic_direct"]
                ratio = lambda a: f"{a / ring:.2f}x" if a and ring else "–"
                per = lambda a: f"{a / count:.1f}" if a else "–"
                print(f"| {size} B | {count} | {delivery} | {fmt(ring)} | {fmt(m['ring_heap'])} "
                      f"| {fmt(copy)} | {fmt(direct)} | {ratio(copy)} | {ratio(direct)} "
                      f"| {per(ring)} | {per(copy)} | {per(direct)} |")
    # The chunking analysis (growth versus extra reads) needs paired measurements, which
    # criterion's one-after-another runs are not: see src/bin/interleaved.rs.
    print()


def ring_table(root: Path):
    group = root / "ring-create-destroy"
    if not group.exists():
        return
    print("### Ring lifecycle: median time per operation\n")
    print("| operation | mirrored 1 MiB | heap 1 MiB | mirrored 16 MiB | heap 16 MiB |")
    print("|---|---|---|---|---|")
    ops = [("create + destroy", "ring-create-destroy", "{b}-{s}"),
           ("pool take + give", "ring-pool", "take-give-{b}-{s}"),
           ("pool take + write 64 KiB + give", "ring-pool", "take-touch64K-give-{b}-{s}")]
    for label, grp, pat in ops:
        cells = [fmt(median_ns(root, grp, pat.format(b=b, s=s)))
                 for s in ["1MiB", "16MiB"] for b in ["mirrored", "heap"]]
        print(f"| {label} | " + " | ".join(cells) + " |")
    print()


def main():
    if len(sys.argv) > 1:
        root = Path(sys.argv[1])
    else:
        root = Path(os.environ.get("CARGO_TARGET_DIR", "target")) / "criterion"
    frames_table(root)
    ring_table(root)


if __name__ == "__main__":
    main()
