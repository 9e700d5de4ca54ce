#!/usr/bin/env python3
"""README's measured tables, printed as Markdown from Google Benchmark JSON output.

Each table is one subcommand; it reads the JSON files of one or more runs of the benchmark targets
(`--benchmark_format=json`; several files: the performance table gives each figure's range over them,
the others each case's fastest run) and prints the table,
then a line saying when and on what the runs were made (the JSON's context). Which command
regenerates which table:

  performance   README.md, "Performance" (the targets table; run each command twice or more, at the lowest
                load you see: each cell gives the range over the files, with the commit, date, load and
                whether the row's target is met)
      build/tests/bench_event_queue --benchmark_repetitions=5 --benchmark_filter='Hold/100000$|StdPriorityQueue/100000$' --benchmark_format=json > queue.json
      build/tests/bench_network --benchmark_format=json > network.json
      build/tests/bench_collective --benchmark_filter=BM_Ring --benchmark_format=json > collective.json
      for c in 128/2 2048/1 2048/2 2048/4; do build/tests/bench_step --benchmark_filter="BM_GnmtStep/$c/" --benchmark_format=json > step-${c%/*}-${c#*/}.json; done
      /usr/bin/time -v build/tests/bench_collective --benchmark_filter=BM_RingAllReduce/1024/
          (its "Maximum resident set size" is the 1,024-GPU row's peak memory, --collective-peak-mb)
      python3 tests/bench/readme_tables.py performance [--commit SHA] [--collective-peak-mb MB]
          queue.json network.json collective.json step-*.json [more runs' files ...]
        (a step's `peak_rss_mb` is its process's peak, so each case runs in a process of its own;
        the commit is HEAD's, short, unless --commit names the one the binaries were built from)
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
import os
import subprocess
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
            run["_context"] = data["context"]
            runs.append(run)
    return runs, contexts


def seconds(run):
    scale = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}[run["time_unit"]]
    return run["real_time"] * scale, run["cpu_time"] * scale


def case_name(run):
    """The case's name without the suffixes Google Benchmark adds (/iterations:1, /real_time, ...)."""
    parts = run.get("run_name", run["name"]).split("/")
    return "/".join(p for p in parts if ":" not in p and p not in ("real_time", "manual_time"))


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


def span(values, text):
    """`text` of the least and the greatest of `values`, as "a–b" (one figure where they print alike,
    the unit once where both have the same: "0.31–0.32 ms")."""
    low, high = text(min(values)), text(max(values))
    if low == high:
        return low
    number, _, unit = low.rpartition(" ")
    return f"{number}–{high}" if number and high.endswith(" " + unit) else f"{low}–{high}"


def head_commit():
    found = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                           cwd=os.path.dirname(os.path.abspath(__file__)))
    return found.stdout.strip() or "unknown commit"


def when(runs, commit):
    """A measured cell's tail: the commit, the dates and the 1-minute load averages of the runs'
    files, and where the figure's history is kept."""
    contexts = [r["_context"] for r in runs]
    dates = span([c["date"][:10] for c in contexts], str)
    loads = [c["load_avg"][0] for c in contexts if c.get("load_avg")]
    load = f"load {span(loads, lambda x: f'{x:.1f}')}" if loads else "load unknown"
    return f"{commit}, {dates}, {load}; history: tests/bench/MEASUREMENTS.md"


def option(args, name):
    """The value of `--name VALUE` in args (None if absent), and the args without it."""
    if name not in args:
        return None, args
    i = args.index(name)
    return args[i + 1], args[:i] + args[i + 2:]


def verdict(met, text):
    return f"**{'met' if met else 'not met'}**: {text}"


def cases(runs, name):
    """Every file's run of case `name` (a median aggregate stands for its file's repetitions)."""
    found = [r for r in runs if case_name(r) == name]
    medians = [r for r in found if r.get("aggregate_name") == "median"]
    return medians or found


def walls(found):
    return [seconds(r)[0] for r in found]


def mevents(x):
    return f"{x / 1e6:.1f}"


def queue_cell(runs, commit):
    """The hold model against a plain priority queue, each ratio from one file (the same run)."""
    queue, baseline = cases(runs, "BM_Hold/100000"), cases(runs, "BM_HoldStdPriorityQueue/100000")
    pairs = [(q, b) for q in queue for b in baseline if q["_context"] is b["_context"]]
    if not pairs:
        return "—"
    ratios = [q["events_per_second"] / b["events_per_second"] for q, b in pairs]
    return verdict(min(ratios) >= 5, (
        f"{span(ratios, lambda x: f'{x:.1f}')}× ({span([q['events_per_second'] for q, _ in pairs], mevents)} M "
        f"events/s against {span([b['events_per_second'] for _, b in pairs], mevents)} M, the medians of 5 in "
        f"each of {len(pairs)} runs); {when([q for q, _ in pairs], commit)}"))


def network_cell(runs, commit):
    network = [r for r in runs if r["name"].startswith("BM_ThreeHopContention")]
    hops = [r["message_hops_per_second"] for r in network]
    return "—" if not hops else verdict(min(hops) >= 5e6, (
        f"{span(hops, mevents)} M message-hops/s ({len(network)} runs of its cases); {when(network, commit)}"))


def ring_cells(runs, commit, ring_peak):
    """The 1,024-GPU ring's cell (its peak memory given by hand: the JSON has none) and the 16,384's."""
    folded, full = cases(runs, "BM_RingAllReduce/1024/0"), cases(runs, "BM_RingAllReduce/1024/1")
    big = cases(runs, "BM_RingAllReduce/16384/0")
    peak = (f"{memory(float(ring_peak))} peak resident set (`/usr/bin/time -v`)" if ring_peak else
            "peak memory not given (`--collective-peak-mb`, from `/usr/bin/time -v`): not judged")
    ring_met = folded and max(walls(folded)) < 0.2 and (ring_peak is None or float(ring_peak) < 200)
    ring = "—" if not folded else verdict(ring_met, (
        f"{span(walls(folded), fine_duration)} folded and jumped (`BM_RingAllReduce/1024/0`, the default)"
        + (f", {span(walls(full), fine_duration)} message by message (`/1024/1`)" if full else "")
        + f" in {len(folded)} runs; {peak}; {when(folded + full, commit)}"))
    return ring, "—" if not big else verdict(max(walls(big)) < 2, (
        f"{span(walls(big), fine_duration)} in {len(big)} runs; {when(big, commit)}"))


def step_cell(runs, commit, keys, names=("",)):
    """GNMT steps of bench_step (one or two cases on one row): wall and peak RSS, each < 10 s, < 2 GB."""
    steps = [cases(runs, f"BM_GnmtStep/{k}") for k in keys]
    if not all(steps):
        return "—"
    found = [r for step in steps for r in step]
    met = max(walls(found)) < 10 and max(r["peak_rss_mb"] for r in found) < 2000
    text = "; ".join(f"{name}{span(walls(step), duration)} wall, "
                     f"{span([r['peak_rss_mb'] for r in step], memory)} peak" for name, step in zip(names, steps))
    return verdict(met, f"{text} ({len(steps[0])} runs); {when(found, commit)}")


def performance(args):
    """README's "Performance" table, its Google Benchmark rows: each measured cell is the range over
    the runs given, then whether the row's target is met by all of them, the commit, date and load."""
    commit, args = option(args, "--commit")
    commit = commit or head_commit()
    ring_peak, paths = option(args, "--collective-peak-mb")
    runs, contexts = load(paths)
    ring, big = ring_cells(runs, commit, ring_peak)
    rows = [
        ["event queue, hold model, N = 10^5",
         "`build/tests/bench_event_queue --benchmark_repetitions=5 --benchmark_filter='Hold'`",
         "≥ 5× a plain `std::priority_queue` in the same run", queue_cell(runs, commit)],
        ["1 M messages over a 3-hop route under contention", "`build/tests/bench_network`",
         "≥ 5 M message-hops/s", network_cell(runs, commit)],
        ["all-reduce of 1 GiB over 1024 GPUs, 50 GB/s ring, 256 KiB messages (8.4 M messages)",
         "`build/tests/bench_collective`", "< 0.2 s (issue 14), < 200 MB", ring],
        ["the same over 16,384 GPUs (537 M messages)", "same (`BM_RingAllReduce/16384/0`)", "< 2 s", big],
        ["one GNMT step, dp × mp = 512 × 2 on 128 DGX-1 nodes (1024 GPUs, EDR fat tree)",
         "`build/tests/bench_step --benchmark_filter=BM_GnmtStep/128/2`", "< 10 s, < 2 GB",
         step_cell(runs, commit, ["128/2"])],
        ["one GNMT step on 2,048 DGX-1 (16,384 GPUs), DP 16,384 × 1 and hybrid 8,192 × 2, ring, "
         "`fast_path: bounded` (the default)",
         "`build/tests/bench_step --benchmark_filter=BM_GnmtStep/2048/1/` (and `/2048/2/`)",
         "< 10 s, < 2 GB each (issue 14)", step_cell(runs, commit, ["2048/1", "2048/2"], ("DP ", "hybrid "))],
        ["the same, hybrid 4,096 × 4 (two stages' rings share each machine's NIC, folded together)",
         "`… --benchmark_filter=BM_GnmtStep/2048/4/`", "same", step_cell(runs, commit, ["2048/4"])],
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
