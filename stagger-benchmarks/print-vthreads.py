#!/usr/bin/env python3
"""Prints virtual-threads.sh results (JSON lines): one row per variant, the median of the runs with
the min-max spread, the platform pool's wall time as a multiple of the virtual threads', and the
pinning check (0 pinned events in every run, and the negative control seen in every run).

Usage: print-vthreads.py target/virtual-threads.jsonl
"""
import json
import math
import statistics
import sys


def fmt(values, digits=0):
    values = [v for v in values if not (isinstance(v, float) and math.isnan(v))]
    if not values:
        return "n/a"
    med, lo, hi = statistics.median(values), min(values), max(values)
    return f"{med:.{digits}f}" if lo == hi else f"{med:.{digits}f} ({lo:.{digits}f}-{hi:.{digits}f})"


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: print-vthreads.py VIRTUAL_THREADS_JSONL")
    variants, controls = {}, []
    with open(sys.argv[1]) as f:
        for line in f:
            if line.startswith("{"):
                r = json.loads(line)
                if r["variant"] == "control":
                    controls.append(r["pinnedEvents"])
                else:
                    variants.setdefault(r["variant"], []).append(r)
    if not variants:
        sys.exit("no results in " + sys.argv[1])
    calls = next(iter(variants.values()))[0]["calls"]
    print()
    print(f"{calls:,} calls, 3 attempts each with real waits; {len(controls)} run(s); median (min-max)")
    print(f"  {'variant':24} {'wall ms':>20} {'calls/s':>22} {'carriers':>9} {'threads':>8} "
          f"{'heap B/call in flight':>22} {'RSS MiB':>16} {'pinned':>7}")
    for name, runs in variants.items():
        print(f"  {name:24} {fmt([r['wallMillis'] for r in runs]):>20} "
              f"{fmt([r['calls'] / (r['wallMillis'] / 1000) for r in runs]):>22} "
              f"{max(r['peakCarriers'] for r in runs):>9} {max(r['peakPlatformThreads'] for r in runs):>8} "
              f"{(fmt([r['heapBytesPerCall'] for r in runs]) if name != 'platform pool' else 'n/a (see RSS)'):>22} "
              f"{fmt([r['rssBytesAtSnapshot'] / 1048576 for r in runs], 1):>16} "
              f"{sum(r['pinnedEvents'] for r in runs):>7}")
        bad = [r for r in runs if r["succeeded"] != r["calls"]]
        if bad:
            print(f"  !! {name}: not every call succeeded: {[(r['succeeded'], r['refused'], r['failed']) for r in bad]}")
    print("  (a virtual thread's stack is in the heap while it waits; a platform thread's is native: RSS)")
    virtual, platform = variants.get("virtual"), variants.get("platform pool")
    if virtual and platform:
        ratio = statistics.median(r["wallMillis"] for r in platform) / statistics.median(r["wallMillis"] for r in virtual)
        print(f"  platform pool wall time = {ratio:.1f}x virtual threads'")
    print()
    pinned = sum(r["pinnedEvents"] for runs in variants.values() for r in runs)
    seen = all(c > 0 for c in controls) and controls
    print(f"Goal: jdk.VirtualThreadPinned events = {pinned} -> {'met' if pinned == 0 else 'NOT MET'}"
          f"; negative control seen in {sum(1 for c in controls if c > 0)}/{len(controls)} runs"
          f"{'' if seen else ' (the recording missed pinning: the 0 proves nothing)'}")


if __name__ == "__main__":
    main()
