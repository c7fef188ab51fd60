#!/usr/bin/env python3
# Summarise an Autobahn|Testsuite report directory (index.json), for scripts/autobahn/run.sh.
#
#   summarise.py REPORT_DIR [--results FILE] [--expected FILE] [--agent NAME] [--expect-cases N]
#
# Prints one line per behavior count (OK, NON-STRICT, INFORMATIONAL, UNIMPLEMENTED, FAILED), writes
# FILE (default REPORT_DIR/results.txt) with one "case<TAB>behavior" line per case (natural case order),
# and exits 1 if any case is FAILED, NON-STRICT or UNIMPLEMENTED, if the results differ from --expected,
# or if fewer than --expect-cases cases were reported (a client that stopped half-way). With --lenient and
# --expected, known-bad cases recorded in the expected file do not fail the run. Python 2 and 3.
from __future__ import print_function

import argparse
import difflib
import io
import json
import os
import sys

BEHAVIORS = ["OK", "NON-STRICT", "INFORMATIONAL", "UNIMPLEMENTED", "FAILED"]
BAD = {"FAILED", "NON-STRICT", "UNIMPLEMENTED"}


def case_key(case_id):
    return [int(p) if p.isdigit() else p for p in case_id.split(".")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("report_dir")
    ap.add_argument("--results")
    ap.add_argument("--expected")
    ap.add_argument("--agent")
    ap.add_argument("--expect-cases", type=int, default=0)
    ap.add_argument("--lenient", action="store_true",
                    help="with --expected: bad cases that match the expected file do not fail the run")
    args = ap.parse_args()

    index_path = os.path.join(args.report_dir, "index.json")
    if not os.path.exists(index_path):
        print("autobahn: no report index at %s (did the run finish?)" % index_path)
        return 2
    with io.open(index_path, encoding="utf-8") as f:
        index = json.load(f)
    if not index:
        print("autobahn: %s lists no agent (no case was run)" % index_path)
        return 2
    agents = sorted(index)
    if args.agent:
        if args.agent not in index:
            print("autobahn: agent %r not in %s (has: %s)" % (args.agent, index_path, ", ".join(agents)))
            return 2
        agents = [args.agent]

    lines = []
    counts = dict((b, 0) for b in BEHAVIORS)
    close_counts = {}
    bad = []
    for agent in agents:
        prefix = "" if len(agents) == 1 else agent + "\t"
        for case_id in sorted(index[agent], key=case_key):
            entry = index[agent][case_id]
            behavior = entry.get("behavior", "?")
            counts[behavior] = counts.get(behavior, 0) + 1
            close = entry.get("behaviorClose", "?")
            close_counts[close] = close_counts.get(close, 0) + 1
            lines.append("%s%s\t%s\n" % (prefix, case_id, behavior))
            if behavior in BAD:
                bad.append("%s%s %s (close: %s, %s)" % (prefix, case_id, behavior, close, entry.get("reportfile", "")))

    total = len(lines)
    print("autobahn: %d cases, agent%s %s, report %s" % (
        total, "s" if len(agents) > 1 else "", ", ".join(agents), os.path.join(args.report_dir, "index.html")))
    for b in BEHAVIORS + sorted(set(counts) - set(BEHAVIORS)):
        print("  %-14s %d" % (b, counts.get(b, 0)))
    print("  closing behavior: " + ", ".join("%s %d" % kv for kv in sorted(close_counts.items())))

    results = args.results or os.path.join(args.report_dir, "results.txt")
    with io.open(results, "w", encoding="utf-8") as f:
        f.write(u"".join(lines))
    print("autobahn: results in %s" % results)

    status = 0
    if bad:
        print("autobahn: %d case(s) FAILED, NON-STRICT or UNIMPLEMENTED:" % len(bad))
        for line in bad[:50]:
            print("  " + line)
        if len(bad) > 50:
            print("  ... and %d more (see %s)" % (len(bad) - 50, results))
        status = 0 if (args.lenient and args.expected) else 1
    if args.expect_cases and total < args.expect_cases:
        print("autobahn: only %d of %d cases were reported" % (total, args.expect_cases))
        status = 1
    if args.expected:
        with io.open(args.expected, encoding="utf-8") as f:
            want = f.readlines()
        diff = list(difflib.unified_diff(want, lines, args.expected, results))
        if diff:
            print("autobahn: results differ from %s:" % args.expected)
            sys.stdout.write("".join(diff))
            status = 1
        else:
            print("autobahn: results match %s" % args.expected)
    if status == 0:
        print("autobahn: PASS")
    else:
        print("autobahn: FAIL")
    return status


if __name__ == "__main__":
    sys.exit(main())
