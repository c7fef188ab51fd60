#!/usr/bin/env python3
"""The HTTP/2 server race's raw outputs to results: JSON and a Markdown table.

    python3 bench/scripts/h2race_report.py RAW_DIR OUT_DIR

RAW_DIR holds what bench/scripts/h2race.sh wrote: per server, load, path and
round one h2load output (`.txt`) and one `.meta` (the server's CPU clock ticks
and schedstat times when the warm-up ended and when h2load exited);
`machine.meta` and `lscpu.txt`. Writes OUT_DIR/results.json and
OUT_DIR/results.md.
"""

import json
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from race_report import read_meta  # noqa: E402  (the HTTP/1.1 race's .meta reader)

SERVERS = ["ringwire", "hyper-h2", "nginx", "nginx-nosendfile"]
LABELS = {
    "ringwire": "ringwire",
    "hyper-h2": "hyper",
    "nginx": "nginx",
    "nginx-nosendfile": "nginx, sendfile off",
}
SCENARIOS = ["c1m1", "c64m16"]
SCENARIO_LABELS = {
    "c1m1": "1 connection, 1 stream (`-c 1 -m 1`)",
    "c64m16": "64 connections x 16 streams (`-c 64 -m 16`)",
}
PATHS = ["/plaintext", "/index.html"]
MEDIAN_KEYS = ["rps", "cpu_us_per_request", "sched_cpu_us_per_request", "core_share", "runqueue_wait_share"]


def parse_h2load(text):
    """requests/s, request counts and failures, and the protocol, from h2load's summary."""
    m = re.search(r"^finished in ([\d.]+)(ms|s), ([\d.]+) req/s", text, re.M)
    if not m:
        raise ValueError("no 'finished in' line in h2load output")
    out = {
        # Warm-up included; the rate is over the measured duration only.
        "finished_seconds": float(m.group(1)) * (1e-3 if m.group(2) == "ms" else 1.0),
        "rps": float(m.group(3)),
    }
    m = re.search(
        r"^requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, "
        r"(\d+) errored, (\d+) timeout",
        text,
        re.M,
    )
    if not m:
        raise ValueError("no 'requests:' line in h2load output")
    keys = ["total", "started", "done", "succeeded", "failed", "errored", "timeout"]
    out.update({f"requests_{k}": int(v) for k, v in zip(keys, m.groups())})
    m = re.search(r"^status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx", text, re.M)
    out["non_2xx"] = sum(int(g) for g in m.groups()[1:]) if m else None
    m = re.search(r"^Application protocol: (\S+)", text, re.M)
    out["protocol"] = m.group(1) if m else None
    # Anything h2load printed besides its progress and summary: warnings, errors.
    summary = re.compile(
        r"^(starting benchmark|spawning thread|Warm-up |Main benchmark duration|progress: |"
        r"Stopped all clients|finished in|requests:|status codes:|traffic:|\s+min |time for|time to|"
        r"req/s |TLS Protocol|Cipher|Server Temp Key|Application protocol|\s|$)"
    )
    out["other_output"] = [line for line in text.splitlines() if not summary.match(line)]
    return out


def run_errors(run):
    """Failed, errored and timed-out requests, non-2xx answers, a bad exit or protocol."""
    n = run["requests_failed"] + run["requests_errored"] + run["requests_timeout"]
    n += run["non_2xx"] or 0
    return n


def collect(raw):
    runs = []
    for name in sorted(os.listdir(raw)):
        if not name.endswith(".meta") or name == "machine.meta":
            continue
        path = os.path.join(raw, name)
        meta = read_meta(path)
        with open(path[: -len(".meta")] + ".txt") as f:
            text = f.read()
        run = {
            "server": meta["server"],
            "scenario": meta["scenario"],
            "h2load_options": meta["h2load_options"],
            "path": meta["path"],
            "round": int(meta["round"]),
            "h2load_exit": int(meta["h2load_exit"]),
        }
        try:
            run.update(parse_h2load(text))
        except ValueError as e:
            run.update({"unparsed": str(e), "rps": None, "requests_succeeded": 0})
            runs.append(run)
            continue
        ticks = int(meta["ticks_after"]) - int(meta["ticks_before"])
        cpu_s = ticks / int(meta["clk_tck"])
        wall = float(meta["wall_seconds"])
        done = run["requests_done"]
        run.update(
            {
                "errors": run_errors(run),
                "cpu_ticks": ticks,
                "cpu_seconds": cpu_s,
                "wall_seconds": wall,
                "cpu_us_per_request": cpu_s * 1e6 / done if done else None,
                "sched_cpu_us_per_request": (
                    (int(meta["run_ns_after"]) - int(meta["run_ns_before"])) / 1e3 / done
                    if done
                    else None
                ),
                # How much of its one core the server used: below 1, the
                # client or the round trips set the pace.
                "core_share": cpu_s / wall,
                "runqueue_wait_share": (
                    (int(meta["wait_ns_after"]) - int(meta["wait_ns_before"])) / 1e9 / wall
                ),
            }
        )
        runs.append(run)
    machine = read_meta(os.path.join(raw, "machine.meta"))
    with open(os.path.join(raw, "lscpu.txt")) as f:
        machine["lscpu"] = f.read().rstrip()
    return {"machine": machine, "medians": medians(runs), "runs": runs}


def medians(runs):
    """One row per server, load and path: each figure's median over the rounds."""
    cells = {}
    for r in runs:
        cells.setdefault((r["server"], r["scenario"], r["path"]), []).append(r)
    out = []
    for (server, scenario, path), rs in sorted(cells.items()):
        row = {"server": server, "scenario": scenario, "path": path, "rounds": len(rs)}
        for key in MEDIAN_KEYS:
            vals = [r[key] for r in rs if r.get(key) is not None]
            row[key] = statistics.median(vals) if vals else None
        cpu = [r["cpu_us_per_request"] for r in rs if r.get("cpu_us_per_request") is not None]
        row["cpu_us_per_request_min"] = min(cpu) if cpu else None
        row["cpu_us_per_request_max"] = max(cpu) if cpu else None
        # Not hidden in a median: every failure of every round, and which runs.
        row["errors"] = sum(r.get("errors", 0) for r in rs)
        row["bad_runs"] = [
            r["round"]
            for r in rs
            if r.get("unparsed")
            or r.get("errors")
            or r["h2load_exit"] != 0
            or r.get("protocol") != "h2c"
        ]
        row["h2load_other_output"] = sorted({l for r in rs for l in r.get("other_output", [])})
        out.append(row)
    return out


def find(results, server, scenario, path):
    for r in results["medians"]:
        if (r["server"], r["scenario"], r["path"]) == (server, scenario, path):
            return r
    return None


def ratio(a, b, key):
    if not a or not b or a.get(key) is None or not b.get(key):
        return None
    return a[key] / b[key]


def fmt(v, spec):
    return "-" if v is None else format(v, spec)


def markdown(results):
    m = results["machine"]
    lines = [
        "# HTTP/2 server race: results",
        "",
        f"Run {m.get('date', '?')} with `{m.get('command', '?')}` on {m.get('cpu_model', '?')} "
        f"({m.get('cpus', '?')} CPUs); server pinned to core 0, `h2load -t 1` to core 1, "
        f"both at `nice {m.get('nice', 0)}`. {m.get('h2load', 'h2load')}, nginx "
        f"{m.get('nginx', '?')}, {m.get('rustc', 'rustc')}, Linux {m.get('kernel', '?')}; "
        f"ringwire at `{m.get('ringwire', '?')}`.",
        f"Load before: `{m.get('load_before', '?').strip()}`; after: "
        f"`{m.get('load_after', '?').strip()}` (the machine's 2 cores are shared with other work).",
        "",
        f"All cleartext HTTP/2 with prior knowledge (h2c). Each run: {m.get('warmup_seconds', '?')} s "
        f"of warm-up, then {m.get('seconds', '?')} s measured (`h2load -D`). Each figure is the "
        f"median of {m.get('rounds', 1)} rounds (every server restarted each round). requests/s is "
        "h2load's (\"finished in ..., N req/s\"). CPU is the server's utime + stime (all threads; "
        "nginx: master and worker) from `/proc/PID/stat`, read when the warm-up ended and when "
        "h2load exited, divided by the requests h2load completed in that window; the range is its "
        "lowest and highest over the rounds. \"Core\" is that CPU time over the window's wall "
        "time (below 100%: the server was not the bottleneck); \"waited\" is the share of the "
        "window the server's threads were runnable without a CPU (`schedstat`; disturbance from "
        "other work). \"Errors\" sums h2load's failed, errored and timed-out requests and "
        "non-2xx answers over all rounds.",
        "",
        "Servers: `race-ringwire` (ringwire-server, h2c on by default, `ServerConfig` defaults, "
        "`/index.html` from `StaticFiles`); `race-hyper-h2` (hyper 1.x "
        "`server::conn::http2` with its default settings on a current-thread tokio runtime, "
        "`/index.html` from memory); nginx with `listen ... http2` (one worker, the HTTP/1.1 "
        "race's configuration, HTTP/2 settings at their defaults, `/index.html` from disk "
        "through its open-file cache), and the same nginx with `sendfile off` (\"nginx, "
        "sendfile off\"): with sendfile on, nginx's h2c answers of the file stall ~44 ms each "
        "on a single connection. The summary's nginx is the first, the race's configuration; "
        "the tables below give both.",
        "",
        "## Summary",
        "",
        "| load | path | ringwire req/s | hyper req/s | nginx req/s | ringwire / hyper "
        "| ringwire / nginx | ringwire CPU µs/req | hyper CPU µs/req | nginx CPU µs/req "
        "| ringwire / hyper | ringwire / nginx |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for scenario in SCENARIOS:
        for path in PATHS:
            rw, hy, ng = (find(results, s, scenario, path) for s in SERVERS[:3])
            if not any((rw, hy, ng)):
                continue
            rps = [fmt(r and r["rps"], ",.0f") for r in (rw, hy, ng)]
            cpu = [fmt(r and r["cpu_us_per_request"], ".2f") for r in (rw, hy, ng)]
            lines.append(
                f"| `{results_options(results, scenario)}` | `{path}` | {' | '.join(rps)} | "
                f"{fmt(ratio(rw, hy, 'rps'), '.2f')} | {fmt(ratio(rw, ng, 'rps'), '.2f')} | "
                f"{' | '.join(cpu)} | {fmt(ratio(rw, hy, 'cpu_us_per_request'), '.2f')} | "
                f"{fmt(ratio(rw, ng, 'cpu_us_per_request'), '.2f')} |"
            )
    lines += [
        "",
        "Ratios above 1 for requests/s and below 1 for CPU per request are in ringwire's favour.",
        "",
    ]
    for scenario in SCENARIOS:
        for path in PATHS:
            rows = [r for r in (find(results, s, scenario, path) for s in SERVERS) if r]
            if not rows:
                continue
            lines += [
                f"### {SCENARIO_LABELS[scenario]}, `{path}`",
                "",
                "| server | requests/s | CPU µs/request (range) | schedstat CPU µs/request | core "
                "| waited | errors | runs with problems |",
                "|---|---:|---:|---:|---:|---:|---:|---|",
            ]
            for r in sorted(rows, key=lambda r: -(r["rps"] or 0)):
                lines.append(
                    f"| {LABELS.get(r['server'], r['server'])} | {fmt(r['rps'], ',.0f')} | "
                    f"{fmt(r['cpu_us_per_request'], '.2f')} "
                    f"({fmt(r['cpu_us_per_request_min'], '.2f')}-"
                    f"{fmt(r['cpu_us_per_request_max'], '.2f')}) | "
                    f"{fmt(r['sched_cpu_us_per_request'], '.2f')} | "
                    f"{fmt(r['core_share'], '.0%')} | {fmt(r['runqueue_wait_share'], '.0%')} | "
                    f"{r['errors']} | "
                    f"{', '.join(f'round {n}' for n in r['bad_runs']) or 'none'} |"
                )
            lines.append("")
    other = {
        (r["server"], r["scenario"], r["path"]): r["h2load_other_output"]
        for r in results["medians"]
        if r["h2load_other_output"]
    }
    lines += ["### h2load's other output (warnings, errors)", ""]
    if other:
        for (server, scenario, path), out in sorted(other.items()):
            lines.append(f"- {server}, `{scenario}`, `{path}`: " + "; ".join(f"`{l}`" for l in out))
    else:
        lines.append("None: every run printed only its progress and summary.")
    lines += ["", "Machine:", "", "```", m.get("lscpu", ""), "```", ""]
    return "\n".join(lines)


def results_options(results, scenario):
    for r in results["runs"]:
        if r["scenario"] == scenario:
            return "h2load " + r["h2load_options"]
    return scenario


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    raw, out = sys.argv[1], sys.argv[2]
    results = collect(raw)
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(results, f, indent=1, ensure_ascii=False)
        f.write("\n")
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write(markdown(results))


if __name__ == "__main__":
    main()
