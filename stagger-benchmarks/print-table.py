#!/usr/bin/env python3
"""Prints JMH JSON results (-rf json) as one table per benchmark group.

A benchmark method is named scenario_variant (happyPath_stagger); its group is the class and the
scenario. Each row shows ns/op (with JMH's 99.9 % error), B/op (gc.alloc.rate.norm, needs
-prof gc) and how the row compares with Stagger in the same group: an anchor library as
"Resilience4j 8.3x Stagger" (its time divided by Stagger's), the direct call as Stagger's
overhead over it in ns. Then the performance targets, each marked met or not met in this run.

Usage: print-table.py target/jmh.json
"""
import json
import math
import sys

NAMES = {
    "direct": "direct call",
    "stagger": "Stagger",
    "staggerDeadline": "Stagger, with deadline",
    "staggerFallback": "Stagger, with fallback",
    "staggerWithoutBudget": "Stagger, withoutBudget()",
    "staggerFramed": "Stagger, frames kept",
    "staggerConsecutive": "Stagger, consecutive mode",
    "staggerThrottle": "Stagger adaptive throttle",
    "resilience4j": "Resilience4j",
    "resilience4jCount": "Resilience4j count window",
    "resilience4jTime": "Resilience4j time window",
    "failsafe": "Failsafe",
    "springRetry": "Spring Retry",
    "spring7": "Spring 7 core.retry",
    "spring7Retryable": "Spring 7 @Retryable",
    "resilience4jAnnotation": "Resilience4j @Retry",
}


def number(value):
    try:
        x = float(value)
    except (TypeError, ValueError):
        return math.nan
    return x


def fmt_ns(score, error):
    text = f"{score:.2f}" if math.isnan(error) else f"{score:.2f} ± {error:.2f}"
    return f"{text:>18}"


def fmt_bytes(b):
    if math.isnan(b):
        return "n/a"
    if b < 0.01:
        return "0"
    return f"{b:.0f}" if b >= 10 else f"{b:.2f}"


def load(path):
    with open(path) as f:
        runs = json.load(f)
    groups = {}
    for run in runs:
        qualified_class, method = run["benchmark"].rsplit(".", 1)
        cls = qualified_class.rsplit(".", 1)[-1]
        scenario, _, variant = method.partition("_")
        primary = run["primaryMetric"]
        alloc = run.get("secondaryMetrics", {}).get("gc.alloc.rate.norm", {})
        row = {
            "variant": variant or method,
            "ns": number(primary["score"]),
            "error": number(primary.get("scoreError")),
            "unit": primary.get("scoreUnit", ""),
            "bytes": number(alloc.get("score")),
            "threads": run.get("threads", 1),
        }
        groups.setdefault((cls, scenario), []).append(row)
    return groups


def order(row):
    """The baseline first, then Stagger, then the other libraries by name."""
    rank = {"direct": 0, "stagger": 1, "staggerDeadline": 1.5, "staggerFallback": 1.6,
            "staggerWithoutBudget": 1.2, "staggerFramed": 1.3}.get(row["variant"], 2)
    return rank, NAMES.get(row["variant"], row["variant"]).lower()


def comparison(row, stagger):
    if stagger is None or row is stagger:
        return ""
    if row["variant"] == "direct":
        return f"Stagger {stagger['ns'] - row['ns']:+.2f} ns over a direct call"
    ratio = row["ns"] / stagger["ns"] if stagger["ns"] > 0 else math.inf
    return f"{NAMES.get(row['variant'], row['variant'])} {ratio:.1f}x Stagger"


def print_tables(groups):
    for (cls, scenario), rows in groups.items():
        threads = rows[0]["threads"]
        title = f"{cls}.{scenario}" + (f"  ({threads} threads, one shared instance)" if threads > 1 else "")
        print()
        print(title)
        stagger = next((r for r in rows if r["variant"] == "stagger"), None)
        print(f"  {'':28} {'ns/op':>18} {'B/op':>8}   {'vs Stagger' if stagger else ''}".rstrip())
        for r in sorted(rows, key=order):
            name = NAMES.get(r["variant"], r["variant"])
            print(f"  {name:28} {fmt_ns(r['ns'], r['error'])} {fmt_bytes(r['bytes']):>8}   {comparison(r, stagger)}".rstrip())


def find(groups, cls, scenario, variant):
    for r in groups.get((cls, scenario), []):
        if r["variant"] == variant:
            return r
    return None


def verdict(ok):
    return "met" if ok else "NOT MET"


def print_targets(groups):
    lines = []
    direct = find(groups, "RetryBenchmark", "happyPath", "direct")
    stagger = find(groups, "RetryBenchmark", "happyPath", "stagger")
    if direct and stagger:
        over = stagger["ns"] - direct["ns"]
        lines.append(f"Retry happy path <= 3 ns over a direct call: {over:+.2f} ns -> {verdict(over <= 3)}")
    if stagger:
        lines.append(f"Retry happy path 0 B/op: {fmt_bytes(stagger['bytes'])} -> {verdict(stagger['bytes'] < 0.01)}")
    deadline = find(groups, "RetryBenchmark", "happyPath", "staggerDeadline")
    if deadline and stagger:
        extra = deadline["ns"] - stagger["ns"]
        lines.append(f"Retry happy path with a deadline reads no OS clock (< 10 ns over no deadline; "
                     f"one read is ~28 ns): {extra:+.2f} ns -> {verdict(extra < 10)}")
    if deadline:
        lines.append(f"Retry happy path with a deadline 0 B/op: {fmt_bytes(deadline['bytes'])} -> "
                     f"{verdict(deadline['bytes'] < 0.01)}")
    one = find(groups, "CircuitBreakerBenchmark", "closedOneThread", "stagger")
    if one:
        lines.append(f"Breaker closed, 1 thread, <= 15 ns: {one['ns']:.2f} ns -> {verdict(one['ns'] <= 15)}")
        lines.append(f"Breaker closed, 1 thread, 0 B/op: {fmt_bytes(one['bytes'])} -> {verdict(one['bytes'] < 0.01)}")
    two = find(groups, "CircuitBreakerBenchmark", "closedTwoThreads", "stagger")
    anchors = [r for r in (find(groups, "CircuitBreakerBenchmark", "closedTwoThreads", v)
                           for v in ("resilience4jCount", "resilience4jTime")) if r]
    if two and anchors:
        fastest = min(anchors, key=lambda r: r["ns"])
        share = two["ns"] / fastest["ns"]
        lines.append(f"Breaker closed, 2 threads, <= 1/10 of Resilience4j's time (its faster window, "
                     f"{fastest['ns']:.1f} ns): {two['ns']:.2f} ns = {share:.3f} -> {verdict(share <= 0.1)}")
    if lines:
        print()
        print("Targets, this run:")
        for line in lines:
            print("  " + line)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: print-table.py JMH_JSON")
    groups = load(sys.argv[1])
    if not groups:
        sys.exit("no results in " + sys.argv[1])
    print_tables(groups)
    print_targets(groups)


if __name__ == "__main__":
    main()
