#!/usr/bin/env python3
"""The server race's raw outputs to results: JSON, a Markdown table and an SVG chart.

    python3 bench/scripts/race_report.py RAW_DIR OUT_DIR

RAW_DIR holds what bench/scripts/race.sh wrote: one wrk output (`.txt`) and one
`.meta` (the server's CPU clock ticks before and after) per server, scenario and
path; `NAME-idle.meta` per idle-connection measurement; `machine.meta` and
`lscpu.txt`. Writes OUT_DIR/results.json, OUT_DIR/results.md and OUT_DIR/race.svg.
The SVG is written by hand: no plotting library needed.
"""

import json
import os
import re
import statistics
import sys
from html import escape

SERVERS = ["ringwire", "hyper", "actix", "may", "nginx"]
LABELS = {
    "ringwire": "ringwire",
    "hyper": "hyper",
    "actix": "actix-web",
    "may": "may_minihttp",
    "nginx": "nginx",
}
COLORS = {
    "ringwire": "#d62728",
    "hyper": "#1f77b4",
    "actix": "#2ca02c",
    "may": "#9467bd",
    "nginx": "#7f7f7f",
}
SCENARIOS = ["conn1", "conn64", "pipeline16"]
SCENARIO_LABELS = {
    "conn1": "1 connection",
    "conn64": "64 connections",
    "pipeline16": "64 conns x 16 pipelined",
}
PATHS = ["/plaintext", "/index.html"]
UNITS_US = {"us": 1.0, "ms": 1000.0, "s": 1_000_000.0}

# Goals from issue 4.
CPU_RATIO_GOAL = 0.8
IDLE_GOAL_BYTES = 1024


def read_meta(path):
    meta = {}
    with open(path) as f:
        for line in f:
            if "=" in line:
                key, value = line.rstrip("\n").split("=", 1)
                meta[key] = value
    return meta


def duration_us(text):
    m = re.fullmatch(r"([\d.]+)(us|ms|s)", text)
    if not m:
        raise ValueError(f"not a wrk duration: {text}")
    return float(m.group(1)) * UNITS_US[m.group(2)]


def parse_wrk(text):
    """requests, seconds, requests/s, p50 and p99 in µs, errors, from wrk --latency."""
    out = {}
    m = re.search(r"(\d+) requests in ([\d.]+)(us|ms|s|m),", text)
    if not m:
        raise ValueError("no request count in wrk output")
    out["requests"] = int(m.group(1))
    out["seconds"] = float(m.group(2)) * {"us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0}[m.group(3)]
    out["rps"] = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
    for pct in ("50", "99"):
        m = re.search(rf"^\s+{pct}(?:\.0+)?%\s+(\S+)", text, re.M)
        out[f"p{pct}_us"] = duration_us(m.group(1)) if m else None
    # wrk's histogram tops out with pipelined batches on a fast server and then
    # prints 0.00us for the tail: no figure rather than a wrong one.
    if out["p99_us"] is not None and out["p50_us"] is not None and out["p99_us"] < out["p50_us"]:
        out["p99_us"] = None
    m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    out["socket_errors"] = sum(int(g) for g in m.groups()) if m else 0
    m = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    out["non_2xx"] = int(m.group(1)) if m else 0
    return out


def collect(raw):
    runs, idle = [], []
    for name in sorted(os.listdir(raw)):
        path = os.path.join(raw, name)
        if name.endswith("-idle.meta"):
            meta = read_meta(path)
            n = int(meta["connections"])
            grown = (int(meta["rss_after_kib"]) - int(meta["rss_before_kib"])) * 1024
            idle.append(
                {
                    "server": meta["server"],
                    "connections": n,
                    "rss_before_kib": int(meta["rss_before_kib"]),
                    "rss_after_kib": int(meta["rss_after_kib"]),
                    "bytes_per_connection": grown / n,
                    "fds_per_connection": (int(meta["fds_after"]) - int(meta["fds_before"])) / n,
                }
            )
        elif name.endswith(".meta") and name not in ("machine.meta",):
            meta = read_meta(path)
            with open(path[: -len(".meta")] + ".txt") as f:
                wrk = parse_wrk(f.read())
            ticks = int(meta["ticks_after"]) - int(meta["ticks_before"])
            cpu_s = ticks / int(meta["clk_tck"])
            wall = float(meta["wall_seconds"])
            run = {
                "server": meta["server"],
                "scenario": meta["scenario"],
                "path": meta["path"],
                "round": int(meta.get("round", 1)),
                **wrk,
                "cpu_ticks": ticks,
                "cpu_seconds": cpu_s,
                "wall_seconds": wall,
                "cpu_us_per_request": cpu_s * 1e6 / wrk["requests"] if wrk["requests"] else None,
                # How much of its one core the server used: below 1, something
                # else (the client, the machine) set the pace.
                "core_share": cpu_s / wall,
            }
            if "run_ns_after" in meta:
                run["sched_cpu_us_per_request"] = (
                    (int(meta["run_ns_after"]) - int(meta["run_ns_before"])) / 1e3 / wrk["requests"]
                    if wrk["requests"]
                    else None
                )
                # Time the server's threads spent runnable but not running.
                run["runqueue_wait_share"] = (
                    (int(meta["wait_ns_after"]) - int(meta["wait_ns_before"])) / 1e9 / wall
                )
            runs.append(run)
    headers = {}
    for server in SERVERS:
        for p in PATHS:
            f = os.path.join(raw, f"{server}-{p.lstrip('/')}.headers.txt")
            if os.path.exists(f):
                with open(f, newline="") as fh:
                    text = fh.read()
                headers.setdefault(server, {})[p] = {
                    "head_bytes": len(text.encode()),
                    "head": text.replace("\r\n", "\n").strip(),
                }
    machine = read_meta(os.path.join(raw, "machine.meta"))
    with open(os.path.join(raw, "lscpu.txt")) as f:
        machine["lscpu"] = f.read().rstrip()
    return {
        "machine": machine,
        "medians": medians(runs),
        "runs": runs,
        "idle": idle,
        "headers": headers,
    }


MEDIAN_KEYS = [
    "rps",
    "p50_us",
    "p99_us",
    "cpu_us_per_request",
    "sched_cpu_us_per_request",
    "runqueue_wait_share",
    "core_share",
]


def medians(runs):
    """One row per server, scenario and path: the median of each figure over the rounds."""
    cells = {}
    for r in runs:
        cells.setdefault((r["server"], r["scenario"], r["path"]), []).append(r)
    out = []
    for (server, scenario, path), rs in sorted(cells.items()):
        row = {"server": server, "scenario": scenario, "path": path, "rounds": len(rs)}
        for key in MEDIAN_KEYS:
            vals = [r[key] for r in rs if r.get(key) is not None]
            row[key] = statistics.median(vals) if vals else None
        cpu = [r["cpu_us_per_request"] for r in rs if r["cpu_us_per_request"] is not None]
        row["cpu_us_per_request_min"] = min(cpu) if cpu else None
        row["cpu_us_per_request_max"] = max(cpu) if cpu else None
        row["errors"] = sum(r["socket_errors"] + r["non_2xx"] for r in rs)
        out.append(row)
    return out


def find(results, server, scenario, path):
    for r in results["medians"]:
        if (r["server"], r["scenario"], r["path"]) == (server, scenario, path):
            return r
    return None


def fmt_us(us):
    if us is None:
        return "-"
    if us >= 1000:
        return f"{us / 1000:.2f} ms"
    return f"{us:.0f} µs"


def verdicts(results):
    """Per scenario and path: ringwire against the best peer on each measure."""
    out = []
    for scenario in SCENARIOS:
        for path in PATHS:
            rw = find(results, "ringwire", scenario, path)
            peers = [find(results, s, scenario, path) for s in SERVERS if s != "ringwire"]
            peers = [p for p in peers if p]
            if not rw or not peers:
                continue
            best_rps = max(peers, key=lambda r: r["rps"])
            best_cpu = min(peers, key=lambda r: r["cpu_us_per_request"])
            rps_ratio = rw["rps"] / best_rps["rps"]
            cpu_ratio = rw["cpu_us_per_request"] / best_cpu["cpu_us_per_request"]
            out.append(
                {
                    "scenario": scenario,
                    "path": path,
                    "best_rps_peer": best_rps["server"],
                    "rps_ratio": rps_ratio,
                    "best_cpu_peer": best_cpu["server"],
                    "cpu_ratio": cpu_ratio,
                    "rps_goal_met": rps_ratio > 1.0,
                    "cpu_goal_met": cpu_ratio <= CPU_RATIO_GOAL,
                }
            )
    return out


def markdown(results):
    m = results["machine"]
    lines = [
        "# Server race (issue 4): results",
        "",
        f"Run {m.get('date', '?')}, {m.get('seconds', '?')} s per run, server pinned to core 0 and "
        f"`wrk -t1` to core 1; {m.get('wrk', 'wrk')}, nginx {m.get('nginx', '?')}, "
        f"{m.get('rustc', 'rustc')}, Linux {m.get('kernel', '?')}; ringwire at "
        f"`{m.get('ringwire', '?')}`.",
        f"Load before: `{m.get('load_before', '?').strip()}`; after: `{m.get('load_after', '?').strip()}`.",
        "",
        f"Each figure is the median of {m.get('rounds', 1)} rounds (every server restarted each "
        f"round); server, wrk and client at `nice {m.get('nice', 0)}`. "
        "CPU is the server's utime + stime (all threads; nginx: master and worker) over the "
        "run, divided by the requests wrk completed; the range is its lowest and highest over "
        "the rounds. \"Waited\" is the share of the run the server's threads spent runnable but "
        "without a CPU (`schedstat`): the disturbance from other work on the machine. Ratios "
        "are each figure over the best one (highest requests/s, lowest CPU per request) in its "
        "table. \"Core\" is the server's CPU time over the run's wall time: below 100% the "
        "server was not the bottleneck.",
        "",
    ]
    for scenario in SCENARIOS:
        for path in PATHS:
            rows = [find(results, s, scenario, path) for s in SERVERS]
            rows = [r for r in rows if r]
            if not rows:
                continue
            best_rps = max(rows, key=lambda r: r["rps"])["rps"]
            best_cpu = min(rows, key=lambda r: r["cpu_us_per_request"])["cpu_us_per_request"]
            lines += [
                f"### {SCENARIO_LABELS[scenario]}, `{path}`",
                "",
                "| server | requests/s | x best | p50 | p99 | CPU µs/request (range) | x best "
                "| core | waited | errors |",
                "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
            ]
            for r in sorted(rows, key=lambda r: -r["rps"]):
                waited = r.get("runqueue_wait_share")
                lines.append(
                    f"| {LABELS[r['server']]} | {r['rps']:,.0f} | {r['rps'] / best_rps:.2f} | "
                    f"{fmt_us(r['p50_us'])} | {fmt_us(r['p99_us'])} | "
                    f"{r['cpu_us_per_request']:.2f} ({r['cpu_us_per_request_min']:.2f}-"
                    f"{r['cpu_us_per_request_max']:.2f}) | "
                    f"{r['cpu_us_per_request'] / best_cpu:.2f} | {r['core_share']:.0%} | "
                    f"{'-' if waited is None else f'{waited:.0%}'} | {r['errors']} |"
                )
            lines.append("")
    v = verdicts(results)
    if v:
        lines += [
            "### Goals: ringwire against the best peer",
            "",
            "| scenario | path | requests/s: ringwire / best peer | ahead? | CPU/request: ringwire / best peer | ≤ 0.8? |",
            "|---|---|---:|---|---:|---|",
        ]
        for g in v:
            lines.append(
                f"| {SCENARIO_LABELS[g['scenario']]} | `{g['path']}` | "
                f"{g['rps_ratio']:.2f} ({LABELS[g['best_rps_peer']]}) | "
                f"{'yes' if g['rps_goal_met'] else 'no'} | "
                f"{g['cpu_ratio']:.2f} ({LABELS[g['best_cpu_peer']]}) | "
                f"{'yes' if g['cpu_goal_met'] else 'no'} |"
            )
        lines.append("")
    if results["idle"]:
        lines += [
            "### Memory per idle keep-alive connection",
            "",
            "| server | connections | VmRSS before → after | bytes per connection | fds per connection |",
            "|---|---:|---:|---:|---:|",
        ]
        order = {s: i for i, s in enumerate(SERVERS)}
        for r in sorted(results["idle"], key=lambda r: order.get(r["server"], 99)):
            lines.append(
                f"| {LABELS[r['server']]} | {r['connections']:,} | "
                f"{r['rss_before_kib']:,} → {r['rss_after_kib']:,} KiB | "
                f"{r['bytes_per_connection']:,.0f} | {r['fds_per_connection']:.2f} |"
            )
        lines += ["", f"Goal: at most {IDLE_GOAL_BYTES} bytes per idle connection.", ""]
    if results["headers"]:
        lines += [
            "### Response heads (`/plaintext`)",
            "",
            "| server | head bytes | head |",
            "|---|---:|---|",
        ]
        for server in SERVERS:
            h = results["headers"].get(server, {}).get("/plaintext")
            if h:
                head = escape(h["head"]).replace("\n", "<br>")
                lines.append(f"| {LABELS[server]} | {h['head_bytes']} | {head} |")
        lines.append("")
    lines += ["Machine:", "", "```", m.get("lscpu", ""), "```", ""]
    return "\n".join(lines)


def svg_chart(results):
    """Two grouped bar charts: requests/s and CPU µs per request, per scenario and path."""
    groups = [(s, p) for s in SCENARIOS for p in PATHS]
    servers = [s for s in SERVERS if any(r["server"] == s for r in results["runs"])]
    width, panel_h, top, left, right = 1000, 300, 60, 80, 20
    gap = 70
    height = top + 2 * panel_h + 2 * gap + 40
    plot_w = width - left - right
    group_w = plot_w / len(groups)
    bar_w = group_w * 0.8 / max(len(servers), 1)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{width / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">'
        "HTTP/1.1 server race, one core each (issue 4): medians of "
        f"{escape(str(results['machine'].get('rounds', 1)))} rounds</text>",
    ]
    # Legend.
    x = left
    for s in servers:
        out.append(f'<rect x="{x}" y="34" width="12" height="12" fill="{COLORS[s]}"/>')
        out.append(f'<text x="{x + 16}" y="44">{escape(LABELS[s])}</text>')
        x += 120

    def panel(y0, key, title, fmt):
        vals = [
            r[key] for r in results["medians"] if r[key] is not None and r["server"] in servers
        ]
        vmax = max(vals) if vals else 1.0
        step = nice_step(vmax / 5)
        ymax = step * (int(vmax / step) + 1)
        out.append(f'<text x="{left}" y="{y0 - 8}" font-size="13" font-weight="bold">{escape(title)}</text>')
        k = 0
        while k * step <= ymax + 1e-9:
            v = k * step
            y = y0 + panel_h - v / ymax * panel_h
            out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{width - right}" y2="{y:.1f}" stroke="#ddd"/>')
            out.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{fmt(v)}</text>')
            k += 1
        for gi, (scenario, path) in enumerate(groups):
            gx = left + gi * group_w + group_w * 0.1
            for si, s in enumerate(servers):
                r = find(results, s, scenario, path)
                if not r or r[key] is None:
                    continue
                h = r[key] / ymax * panel_h
                bx = gx + si * bar_w
                out.append(
                    f'<rect x="{bx:.1f}" y="{y0 + panel_h - h:.1f}" width="{bar_w - 1:.1f}" '
                    f'height="{h:.1f}" fill="{COLORS[s]}"><title>{escape(LABELS[s])}, '
                    f"{escape(SCENARIO_LABELS[scenario])}, {escape(path)}: {fmt(r[key])}</title></rect>"
                )
            cx = left + gi * group_w + group_w / 2
            out.append(
                f'<text x="{cx:.1f}" y="{y0 + panel_h + 14}" text-anchor="middle">'
                f"{escape(SCENARIO_LABELS[scenario])}</text>"
            )
            out.append(
                f'<text x="{cx:.1f}" y="{y0 + panel_h + 27}" text-anchor="middle" fill="#555">{escape(path)}</text>'
            )
        out.append(
            f'<line x1="{left}" y1="{y0 + panel_h}" x2="{width - right}" y2="{y0 + panel_h}" stroke="black"/>'
        )

    def fmt_rps(v):
        return f"{v / 1000:.0f}k" if v >= 1000 else f"{v:.0f}"

    def fmt_cpu(v):
        return f"{v:.1f}" if v < 10 else f"{v:.0f}"

    panel(top + 20, "rps", "Requests per second (higher is better)", fmt_rps)
    panel(top + 20 + panel_h + gap, "cpu_us_per_request", "Server CPU µs per request (lower is better)", fmt_cpu)
    out.append("</svg>")
    return "\n".join(out) + "\n"


def nice_step(raw):
    if raw <= 0:
        return 1.0
    mag = 10 ** int(f"{raw:e}".split("e")[1])
    for m in (1, 2, 2.5, 5, 10):
        if raw <= m * mag:
            return m * mag
    return 10 * mag


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    raw, out = sys.argv[1], sys.argv[2]
    results = collect(raw)
    results["goals"] = verdicts(results)
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(results, f, indent=1, ensure_ascii=False)
        f.write("\n")
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write(markdown(results))
    with open(os.path.join(out, "race.svg"), "w") as f:
        f.write(svg_chart(results))


if __name__ == "__main__":
    main()
