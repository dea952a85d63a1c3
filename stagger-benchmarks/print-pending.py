#!/usr/bin/env python3
"""Prints pending-retries.sh results (JSON lines) as one table per size.

Each row is a library: bytes held per pending call, ns to create one (first attempt failed, wait
scheduled), bytes still held per call after cancelling them all, each the median of the runs with
the min-max spread. Ratios compare with Resilience4j (the anchor the goals are stated against).
Then the scale goals at the largest size, marked met or NOT MET, and the classes
Stagger keeps per pending call.

Usage: print-pending.py target/pending.jsonl
"""
import json
import statistics
import sys

NAMES = {"stagger": "Stagger", "resilience4j": "Resilience4j", "failsafe": "Failsafe"}
ORDER = ["stagger", "resilience4j", "failsafe"]


def load(path):
    rows = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                r = json.loads(line)
                rows.setdefault((r["calls"], r["library"]), []).append(r)
    return rows


def stat(runs, key):
    values = [r[key] for r in runs]
    return statistics.median(values), min(values), max(values)


def fmt(triple, digits=0):
    med, lo, hi = triple
    if lo == hi:
        return f"{med:.{digits}f}"
    return f"{med:.{digits}f} ({lo:.{digits}f}-{hi:.{digits}f})"


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: print-pending.py PENDING_JSONL")
    rows = load(sys.argv[1])
    if not rows:
        sys.exit("no results in " + sys.argv[1])
    sizes = sorted({n for n, _ in rows})
    for n in sizes:
        runs = len(rows.get((n, "stagger"), []))
        print()
        print(f"{n:,} pending calls ({runs} run{'s' if runs != 1 else ''} each; median (min-max))")
        print(f"  {'':14} {'B/call':>18} {'ns/call':>22} {'CPU ns/call':>22} {'B/call after cancel':>22}"
              f"   vs Resilience4j (bytes, time, CPU)")
        anchor = rows.get((n, "resilience4j"))
        for lib in ORDER:
            if (n, lib) not in rows:
                continue
            r = rows[(n, lib)]
            held, ns, after = stat(r, "heldBytesPerCall"), stat(r, "scheduleNanosPerCall"), stat(r, "heldBytesPerCallAfterCancel")
            cpu = stat(r, "scheduleCpuNanosPerCall") if all("scheduleCpuNanosPerCall" in x for x in r) else (0, 0, 0)
            vs = ""
            if anchor and lib != "resilience4j":
                vs = f"{held[0] / stat(anchor, 'heldBytesPerCall')[0]:.2f}x, {ns[0] / stat(anchor, 'scheduleNanosPerCall')[0]:.2f}x"
                if cpu[0] > 0 and all("scheduleCpuNanosPerCall" in x for x in anchor):
                    vs += f", {cpu[0] / stat(anchor, 'scheduleCpuNanosPerCall')[0]:.2f}x"
            print(f"  {NAMES[lib]:14} {fmt(held):>18} {fmt(ns):>22} {fmt(cpu):>22} {fmt(after):>22}   {vs}")
            not_pending = [x for x in r if x["pending"] != n or x["attempts"] != n]
            if not_pending:
                print(f"  !! {NAMES[lib]}: a run had calls that were not pending or retried early: "
                      f"{[(x['pending'], x['attempts']) for x in not_pending]}")

    n = sizes[-1]
    s, a = rows.get((n, "stagger")), rows.get((n, "resilience4j"))
    if s and a:
        held, ns, after = stat(s, "heldBytesPerCall")[0], stat(s, "scheduleNanosPerCall")[0], stat(s, "heldBytesPerCallAfterCancel")[0]
        a_held, a_ns = stat(a, "heldBytesPerCall")[0], stat(a, "scheduleNanosPerCall")[0]
        verdict = lambda ok: "met" if ok else "NOT MET"
        print()
        print(f"Goals at {n:,} pending calls, this run:")
        print(f"  <= 150 B per pending call: {held:.0f} B -> {verdict(held <= 150)}")
        print(f"  <= 0.65x Resilience4j's bytes: {held / a_held:.2f}x -> {verdict(held <= 0.65 * a_held)}")
        print(f"  scheduling <= 0.5x Resilience4j's cost: {ns / a_ns:.2f}x -> {verdict(ns <= 0.5 * a_ns)}")
        if all("scheduleCpuNanosPerCall" in x for x in s + a):
            cpu, a_cpu = stat(s, "scheduleCpuNanosPerCall")[0], stat(a, "scheduleCpuNanosPerCall")[0]
            print(f"    (cross-check, process CPU time: {cpu / a_cpu:.2f}x)")
        # What may stay: a timer queue's backing array, which never shrinks (4-8 B per call at its peak).
        print(f"  cancelling frees the calls at once (<= 16 B per call left): {after:.1f} B -> {verdict(after <= 16)}")
        print()
        print(f"What Stagger keeps per pending call at {n:,} (class histogram diff, first run):")
        for c in s[0].get("classes", []):
            print(f"  {c['bytesPerCall']:7.1f} B  {c['instancesPerCall']:5.2f} x  {c['class']}")


if __name__ == "__main__":
    main()
