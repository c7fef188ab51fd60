#!/usr/bin/env python3
"""Turns criterion's estimates into the Markdown tables of docs/benchmarks.md.

Usage: summarize.py [CRITERION_DIR]   (default: $CARGO_TARGET_DIR/criterion or target/criterion)

Reads the median of each benchmark's latest run (`new/estimates.json`), so run it right after
one `cargo bench`: then every table comes from that one run. Each table is printed only when
its benchmarks have results (`--bench frames --bench ring` for the first two, `--bench http1`
for the HTTP/1.1 ones).
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
    if not any(root.glob("frames-*")):
        return
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


# HTTP/1.1 (benches/http1.rs). Criterion turns the `/` of a group name into `_` on disk.
# (request, bytes)
HTTP1_PARSE = [("short", 68), ("techempower", 164), ("browser", 691)]
# (workload, request bytes, reads per request, goal in ns)
HTTP1_RECV = [("small_whole", 164, 1, 80), ("1k_whole", 1024, 1, 250),
              ("1k_64b_chunks", 1024, 16, None), ("1k_4b_chunks", 1024, 256, 3000)]
# (body, payload bytes, chunks)
HTTP1_CHUNKED = [("16k_chunks", 1 << 20, 64), ("1b_chunks", 64 << 10, 64 << 10)]


def ratio(a, b):
    return f"{a / b:.2f}x" if a and b else "–"


def http1_tables(root: Path):
    if not any(root.glob("http1_*")):
        return
    print("### HTTP/1.1 parse, whole buffer: median time per request head\n")
    print("| request | bytes | ringwire | httparse | picohttpparser | ringwire / pico "
          "| ringwire / httparse | goal (≤ 1.0x pico, ≤ 0.7x httparse) |")
    print("|---|---|---|---|---|---|---|---|")
    for name, size in HTTP1_PARSE:
        group = f"http1_parse_{name}"
        rw, hp, pc = (median_ns(root, group, b)
                      for b in ["ringwire", "httparse", "picohttpparser"])
        met = "–"
        if rw and hp and pc:
            met = "met" if rw <= pc and rw <= 0.7 * hp else "**not met**"
        print(f"| {name} | {size} | {fmt(rw)} | {fmt(hp)} | {fmt(pc)} | {ratio(rw, pc)} "
              f"| {ratio(rw, hp)} | {met} |")
    print()

    print("### HTTP/1.1 receive: median time per request (reads + parse)\n")
    print("| workload | bytes | reads | ring | classic | classic / ring | drain ring "
          "| drain classic | ring − drain ring | classic − drain classic | goal (ring) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, size, reads, goal in HTTP1_RECV:
        group = f"http1_recv_{name}"
        ring, classic, dr, dc = (median_ns(root, group, b) for b in
                                 ["ring", "classic", "drain_ring", "drain_classic"])
        diff = lambda a, b: fmt(a - b) if a and b else "–"
        if goal is None:
            verdict = "(none)"
        elif ring is None:
            verdict = "–"
        else:
            verdict = (f"< {fmt(goal)}: " + ("met" if ring < goal else "**not met**"))
        print(f"| {name} | {size} | {reads} | {fmt(ring)} | {fmt(classic)} "
              f"| {ratio(classic, ring)} | {fmt(dr)} | {fmt(dc)} | {diff(ring, dr)} "
              f"| {diff(classic, dc)} | {verdict} |")
    print()

    print("### HTTP/1.1 chunked body, whole buffer: median time per body\n")
    print("| body | payload | chunks | ringwire | httparse | ringwire / httparse "
          "| ringwire ns/chunk | httparse ns/chunk | ringwire payload GB/s "
          "| httparse payload GB/s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, payload, chunks in HTTP1_CHUNKED:
        group = f"http1_chunked_{name}"
        rw, hp = (median_ns(root, group, b) for b in ["ringwire", "httparse"])
        per = lambda a: f"{a / chunks:.1f}" if a else "–"
        gbps = lambda a: f"{payload / a:.2f}" if a else "–"  # bytes per ns = GB/s
        kib = f"{payload >> 10} KiB" if payload < (1 << 20) else f"{payload >> 20} MiB"
        print(f"| {name} | {kib} | {chunks} | {fmt(rw)} | {fmt(hp)} | {ratio(rw, hp)} "
              f"| {per(rw)} | {per(hp)} | {gbps(rw)} | {gbps(hp)} |")
    print()


def main():
    if len(sys.argv) > 1:
        root = Path(sys.argv[1])
    else:
        root = Path(os.environ.get("CARGO_TARGET_DIR", "target")) / "criterion"
    frames_table(root)
    ring_table(root)
    http1_tables(root)


if __name__ == "__main__":
    main()
