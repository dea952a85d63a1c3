#!/usr/bin/env python3
"""Prints the median of several JMH runs (-rf json files of the same benchmarks), one block per
benchmark group: ns/op as the median with (min..max) and the number of runs, B/op, and each row's
time as a multiple of Stagger's in its group (ratio of the medians, with the per-run ratios' range).
The format of the benchmarks README's "Last measured" figures.

Usage: print-median.py run1.json run2.json run3.json
"""
import importlib.util
import os
import statistics
import sys

_spec = importlib.util.spec_from_file_location(
    "print_table", os.path.join(os.path.dirname(os.path.abspath(__file__)), "print-table.py"))
print_table = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(print_table)


def main():
    paths = sys.argv[1:]
    if len(paths) < 2:
        sys.exit("usage: print-median.py RUN1_JSON RUN2_JSON [...]")
    runs = [print_table.load(p) for p in paths]
    for key in runs[0]:
        cls, scenario = key
        per_variant = {}
        for groups in runs:
            for row in groups.get(key, []):
                per_variant.setdefault(row["variant"], []).append(row)
        stagger = per_variant.get("stagger")
        print(f"{cls} {scenario}")
        for variant in sorted(per_variant, key=lambda v: print_table.order({"variant": v})):
            rows = per_variant[variant]
            ns = [r["ns"] for r in rows]
            median = statistics.median(ns)
            alloc = statistics.median(r["bytes"] for r in rows)
            line = f"  {variant:24} {median:10.2f} ns ({min(ns):.2f}..{max(ns):.2f}) n={len(ns)} {alloc:8.1f} B"
            if stagger and variant != "stagger" and len(stagger) == len(rows):
                ratio = median / statistics.median(r["ns"] for r in stagger)
                per_run = [a["ns"] / b["ns"] for a, b in zip(rows, stagger)]
                line += f" ratio {ratio:.2f}x (per-run {min(per_run):.2f}..{max(per_run):.2f})"
            print(line)
        print()


if __name__ == "__main__":
    main()
