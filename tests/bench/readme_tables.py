#!/usr/bin/env python3
"""README's measured tables, printed as Markdown from Google Benchmark JSON output.

Each table is one subcommand; it reads the JSON files of one or more runs of the benchmark targets
(`--benchmark_format=json`; several files: each case takes its fastest run) and prints the table,
then a line saying when and on what the runs were made (the JSON's context). Which command
regenerates which table:

  performance   README.md, "Performance" (the targets table)
      build/tests/bench_event_queue --benchmark_repetitions=5 --benchmark_filter='Hold/100000$|StdPriorityQueue/100000$' --benchmark_format=json > queue.json
      build/tests/bench_network --benchmark_format=json > network.json
      build/tests/bench_collective --benchmark_filter=BM_Ring --benchmark_format=json > collective.json
      build/tests/bench_step --benchmark_filter='BM_GnmtStep/(128/2|2048/.)/' --benchmark_format=json > step.json
      python3 tests/bench/readme_tables.py performance queue.json network.json collective.json step.json
  scale         README.md, "Cost growth"
      build/tests/bench_scale --benchmark_filter=. --benchmark_format=json > scale.json
      python3 tests/bench/readme_tables.py scale scale.json [more.json ...]
  routing       topology/README.md, "Routing" (cost)
      build/tests/bench_routing --benchmark_format=json > routing.json
      python3 tests/bench/readme_tables.py routing routing.json

README.md's study table ("What hybridsim answers") and the line that times it are printed by
tests/bench/study_table.py, which runs the study itself (it is a timed scenario, not a benchmark).

The dated notes on past measurements (what a figure was before a change, on which machine and load)
are kept in tests/bench/MEASUREMENTS.md, not in the READMEs.
"""
import json
import sys


def load(paths):
    """Every benchmark run of the files, and their contexts."""
    runs, contexts = [], []
    for path in paths:
        with open(path) as f:
            data = json.load(f)
        contexts.append(data["context"])
        for run in data["benchmarks"]:
            if run.get("error_occurred"):
                continue
            if run.get("run_type") == "aggregate" and run.get("aggregate_name") != "median":
                continue
            runs.append(run)
    return runs, contexts


def seconds(run):
    scale = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}[run["time_unit"]]
    return run["real_time"] * scale, run["cpu_time"] * scale


def case_name(run):
    """The case's name without the suffixes Google Benchmark adds (/iterations:1, /real_time, ...)."""
    parts = run.get("run_name", run["name"]).split("/")
    return "/".join(p for p in parts if ":" not in p and p not in ("real_time", "manual_time"))


def fastest(runs, name):
    """The run of case `name` (a median aggregate stands for its repetitions) with the least wall time."""
    found = [r for r in runs if case_name(r) == name]
    medians = [r for r in found if r.get("aggregate_name") == "median"]
    found = medians or found
    return min(found, key=lambda r: seconds(r)[0]) if found else None


def duration(s):
    return f"{s:.2f} s" if s >= 1 else f"{s * 1e3:.0f} ms"


def fine_duration(s):
    """As duration, with two digits below 10 ms (a folded ring's fractions of a millisecond)."""
    return duration(s) if s >= 10e-3 else f"{s * 1e3:.2f} ms"


def memory(mb):
    return f"{mb / 1e3:.2f} GB" if mb >= 1000 else f"{mb:.0f} MB" if mb >= 10 else f"{mb:.1f} MB"


def millions(n):
    if n >= 1e9:
        return f"{n / 1e9:.2f} G"
    return f"{n / 1e6:.1f} M" if n >= 1e5 else f"{n / 1e3:.0f} k"


def context_line(contexts, what):
    c = contexts[0]
    loads = ", ".join(f"{ctx['load_avg'][0]:.1f}" for ctx in contexts if ctx.get("load_avg"))
    return (f"Measured {c['date'][:10]} on {c['num_cpus']} CPUs at {c['mhz_per_cpu']} MHz "
            f"({what}; load average at start: {loads or 'unknown'}).")


def table(header, rows):
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(row) + " |")


def cell(run, text):
    return "—" if run is None else text(run)


def performance(paths):
    runs, contexts = load(paths)
    queue = fastest(runs, "BM_Hold/100000")
    baseline = fastest(runs, "BM_HoldStdPriorityQueue/100000")

    def queue_cell(_):
        q, b = queue["events_per_second"], baseline["events_per_second"] if baseline else None
        text = f"{q / 1e6:.1f} M events/s"
        return text + (f" against {b / 1e6:.2f} M ({q / b:.1f}×)" if b else "")

    network = [r for r in runs if r["name"].startswith("BM_ThreeHopContention")]
    hops = sorted(r["message_hops_per_second"] for r in network)
    steps = {k: fastest(runs, f"BM_GnmtStep/{k}") for k in ("128/2", "2048/1", "2048/2", "2048/4")}

    def step_cell(run):
        wall, cpu = seconds(run)
        return f"{duration(wall)} wall ({duration(cpu)} CPU), {memory(run['peak_rss_mb'])} peak"

    def ring(run):
        return fine_duration(seconds(run)[0])

    rows = [
        ["event queue, hold model, N = 10^5",
         "`build/tests/bench_event_queue --benchmark_repetitions=5 --benchmark_filter='Hold'`",
         "≥ 5× a plain `std::priority_queue` in the same run", cell(queue, queue_cell)],
        ["1 M messages over a 3-hop route under contention", "`build/tests/bench_network`",
         "≥ 5 M message-hops/s",
         f"{hops[0] / 1e6:.1f}–{hops[-1] / 1e6:.1f} M message-hops/s" if hops else "—"],
        ["all-reduce of 1 GiB over 1024 GPUs, 50 GB/s ring, 256 KiB messages (8.4 M messages)",
         "`build/tests/bench_collective`", "< 0.2 s (issue 14)",
         f"{cell(fastest(runs, 'BM_RingAllReduce/1024/0'), ring)} folded and jumped (`BM_RingAllReduce/1024/0`), "
         f"{cell(fastest(runs, 'BM_RingAllReduce/1024/1'), ring)} message by message (`/1024/1`)"],
        ["the same over 16,384 GPUs (537 M messages)", "same (`BM_RingAllReduce/16384/0`)", "< 2 s",
         cell(fastest(runs, "BM_RingAllReduce/16384/0"), ring)],
        ["one GNMT step, dp × mp = 512 × 2 on 128 DGX-1 nodes (1024 GPUs, EDR fat tree)",
         "`build/tests/bench_step --benchmark_filter=BM_GnmtStep/128/2`", "< 10 s, < 2 GB",
         cell(steps["128/2"], step_cell)],
        ["one GNMT step on 2,048 DGX-1 (16,384 GPUs), DP 16,384 × 1, ring, `fast_path: bounded`",
         "`build/tests/bench_step --benchmark_filter=BM_GnmtStep/2048/1/`", "< 10 s, < 2 GB (issue 14)",
         cell(steps["2048/1"], step_cell)],
        ["the same, hybrid 8,192 × 2", "`… --benchmark_filter=BM_GnmtStep/2048/2/`", "same",
         cell(steps["2048/2"], step_cell)],
        ["the same, hybrid 4,096 × 4 (two stages' rings share each machine's NIC, folded together)",
         "`… --benchmark_filter=BM_GnmtStep/2048/4/`", "same", cell(steps["2048/4"], step_cell)],
    ]
    table(["benchmark", "command", "target", "measured"], rows)
    print()
    print(context_line(contexts, f"{len(paths)} file{'s' if len(paths) > 1 else ''}"))


def scale(paths):
    """README's "Cost growth": per GPU count, the GNMT DP step (BM_DpStep) and the 1 GiB ring
    all-reduce on DGX-1 machines (BM_DgxRingAllReduce): wall (real time: set-up and simulation), CPU,
    peak heap, events and messages; each case the fastest of the runs given."""
    families = {"BM_DpStep": "step", "BM_DgxRingAllReduce": "allreduce"}
    runs, contexts = load(paths)
    best = {}  # (family, gpus) -> the run with the least wall time
    for run in runs:
        family = families.get(run["name"].split("/")[0])
        if family is None:
            continue
        key = (family, int(run["gpus"]))
        if key not in best or seconds(run)[0] < seconds(best[key])[0]:
            best[key] = run
    rows = []
    for g in sorted({g for _, g in best}):
        cells = [f"{g:,}"]
        for family in ("step", "allreduce"):
            run = best.get((family, g))
            if run is None:
                cells += ["—"] * 5
                continue
            wall, cpu = seconds(run)
            cells += [duration(wall), duration(cpu), memory(run["peak_heap_mb"]), millions(run["events"]),
                      millions(run["messages"])]
        rows.append(cells)
    table(["GPUs", "DP step: wall", "CPU", "peak heap", "events", "messages", "all-reduce: wall", "CPU",
           "peak heap", "events", "messages"], rows)
    print()
    print(context_line(contexts, f"best of {len(paths)} run{'s' if len(paths) > 1 else ''}"))


def routing(paths):
    """topology/README.md's routing cost: CPU time of each bench_routing case."""
    runs, contexts = load(paths)
    what = {
        "BM_BuildCluster": "build the cluster",
        "BM_BuildAndRingRoutes": "build the cluster, search the rings and route every ring edge",
        "BM_RingRoutes": "search the rings and route every ring edge",
        "BM_TreeRoutes": "the rings and the double binary trees on them",
        "BM_CachedRouteLookup": "one cached route lookup",
    }
    rows = []
    for run in runs:
        family = run["name"].split("/")[0]
        if family not in what:
            continue
        _, cpu = seconds(run)
        routes = run.get("routes_computed")
        rows.append([f"`{run['name']}`", what[family], f"{int(routes):,}" if routes else "—",
                     f"{cpu * 1e9:.0f} ns" if cpu < 1e-6 else fine_duration(cpu)])
    table(["case", "what", "routes", "CPU"], rows)
    print()
    print(context_line(contexts, f"{len(paths)} file{'s' if len(paths) > 1 else ''}"))


TABLES = {"performance": performance, "scale": scale, "routing": routing}

if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in TABLES:
        sys.exit(__doc__)
    TABLES[sys.argv[1]](sys.argv[2:])
