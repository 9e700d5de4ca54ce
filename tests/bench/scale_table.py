#!/usr/bin/env python3
"""README's "Cost growth" table from bench_scale's JSON output.

    build/tests/bench_scale --benchmark_filter=. --benchmark_format=json > scale.json
    python3 tests/bench/scale_table.py scale.json

Prints a Markdown table, one row per GPU count: for the GNMT DP step (BM_DpStep) and the 1 GiB ring
all-reduce on DGX-1 machines (BM_DgxRingAllReduce), the wall time (the benchmark's real time: set-up
and simulation), the CPU time, the peak heap and the events and messages; then a line saying when
and on what the benchmark ran (the JSON's context). Several files (runs) may be given: each case's
row then shows the fastest of its runs, and the line says how many runs there were.
"""
import json
import sys

FAMILIES = {"BM_DpStep": "step", "BM_DgxRingAllReduce": "allreduce"}


def seconds(run):
    scale = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}[run["time_unit"]]
    return run["real_time"] * scale, run["cpu_time"] * scale


def duration(s):
    return f"{s:.2f} s" if s >= 1 else f"{s * 1e3:.0f} ms"


def memory(mb):
    return f"{mb / 1e3:.2f} GB" if mb >= 1000 else f"{mb:.0f} MB" if mb >= 10 else f"{mb:.1f} MB"


def millions(n):
    if n >= 1e9:
        return f"{n / 1e9:.2f} G"
    return f"{n / 1e6:.1f} M" if n >= 1e5 else f"{n / 1e3:.0f} k"


def main(paths):
    best = {}  # (family, gpus) -> the run with the least wall time
    contexts = []
    for path in paths:
        with open(path) as f:
            data = json.load(f)
        contexts.append(data["context"])
        for run in data["benchmarks"]:
            family = FAMILIES.get(run["name"].split("/")[0])
            if family is None or "error_occurred" in run and run["error_occurred"]:
                continue
            key = (family, int(run["gpus"]))
            if key not in best or seconds(run)[0] < seconds(best[key])[0]:
                best[key] = run
    gpus = sorted({g for _, g in best})
    print("| GPUs | DP step: wall | CPU | peak heap | events | messages | all-reduce: wall | CPU | peak heap | events | messages |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for g in gpus:
        cells = [f"{g:,}"]
        for family in ("step", "allreduce"):
            run = best.get((family, g))
            if run is None:
                cells += ["—"] * 5
                continue
            wall, cpu = seconds(run)
            cells += [duration(wall), duration(cpu), memory(run["peak_heap_mb"]), millions(run["events"]),
                      millions(run["messages"])]
        print("| " + " | ".join(cells) + " |")
    c = contexts[0]
    loads = ", ".join(" / ".join(f"{x:.1f}" for x in ctx.get("load_avg", [])[:1]) for ctx in contexts)
    print()
    print(f"Measured {c['date'][:10]} on {c['num_cpus']} CPUs at {c['mhz_per_cpu']} MHz "
          f"(best of {len(paths)} run{'s' if len(paths) > 1 else ''}; load average at start: {loads}).")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
