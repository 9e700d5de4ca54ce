#!/usr/bin/env python3
"""README's hybrid-vs-DP study table, measured: runs the study under /usr/bin/time -v and prints the
sentence that times it and the Markdown table of its answer (README.md, "What hybridsim answers").

    python3 tests/bench/study_table.py [BUILD_DIR] [STUDY.yaml]
        (defaults: build, scenarios/study/hybrid-vs-dp.yaml; the report goes to a temporary folder)

The figures come from the run itself: wall time, user + system CPU and peak resident set from
/usr/bin/time -v, the steps from the study's own progress line, the load average before and after
(the 2-core machine is shared, so a wall time means little without it), and the table from the
report's headline.csv (the default curve at 1× InfiniBand) and the printed headline for the
durations (as the study rounds them) and for BigLSTM's answer with memory aside.
"""
import csv
import os
import re
import subprocess
import sys
import tempfile

PUBLISHED = "Pal et al. 2019"
NAMES = {"inception-v3": "Inception-V3", "gnmt": "GNMT", "biglstm": "BigLSTM"}


def run_study(build, study, out_dir):
    load_before = os.getloadavg()
    cmd = ["/usr/bin/time", "-v", os.path.join(build, "hybridsim"), "study", study, "--out", out_dir]
    done = subprocess.run(cmd, capture_output=True, text=True, check=True)
    load_after = os.getloadavg()
    timed = {}
    for line in done.stderr.splitlines():
        key, _, value = line.strip().partition(": ")
        timed[key] = value
    wall = 0.0
    for part in timed["Elapsed (wall clock) time (h:mm:ss or m:ss)"].split(":"):
        wall = wall * 60 + float(part)
    steps = re.search(r"study: (\d+) steps simulated", done.stderr)
    return {
        "stdout": done.stdout,
        "wall": wall,
        "user": float(timed["User time (seconds)"]),
        "system": float(timed["System time (seconds)"]),
        "peak_gb": int(timed["Maximum resident set size (kbytes)"]) * 1024 / 1e9,
        "steps": int(steps.group(1)) if steps else None,
        "load": (load_before[0], load_after[0]),
    }


def printed_durations(stdout):
    """Per network, the best DP's and best hybrid's times to train as the study prints them."""
    found = {}
    pattern = re.compile(r"^(\S+)\s+(?:\d+ GPUs (\S+ \S+)|none fits)\s+\d+ x \d+ (\S+ \S+)\s")
    for line in stdout.splitlines():
        m = pattern.match(line)
        if m:
            found[m.group(1)] = (m.group(2), m.group(3))
    return found


def memory_aside(stdout, network):
    """BigLSTM's answer were memory no limit, from the study's line saying so."""
    m = re.search(rf"^{re.escape(network)}: were memory no limit, best DP (\d+) GPUs (\S+ \S+), "
                  r"best hybrid .*: hybrid gain ([+-]\d+\.\d+%)", stdout, re.MULTILINE)
    return f"(memory aside: DP {int(m.group(1)):,} GPUs {m.group(2)}, {m.group(3)})" if m else "—"


def table(run, headline_csv):
    durations = printed_durations(run["stdout"])
    print("| network | best DP | best hybrid | gain over best DP | " + PUBLISHED + " |")
    print("|---|---|---|---|---|")
    with open(headline_csv) as f:
        for row in csv.DictReader(f):
            if row["variant"] != "default" or float(row["ib_factor"]) != 1.0:
                continue
            net = row["network"]
            dp_time, hybrid_time = durations.get(net, (None, "?"))
            if row["best_dp_gpus"]:
                best_dp = f"{int(row['best_dp_gpus']):,} GPUs, {dp_time}"
                gain = f"{float(row['gain_best']) * 100:+.1f}%"
            else:
                best_dp = "none fits in 16 GB"
                gain = memory_aside(run["stdout"], net)
            dp, mp, gpus = (int(row[k]) for k in ("best_hybrid_dp", "best_hybrid_mp", "best_hybrid_gpus"))
            hybrid = f"{dp:,} × {mp} ({gpus:,} GPUs), {hybrid_time}" if gpus != dp * mp or gpus >= 4096 \
                else f"{dp:,} × {mp}, {hybrid_time}"
            published = f"≥ {float(row['published_gain']) * 100:g}%" if row["published_gain"] else "—"
            print(f"| {NAMES.get(net, net)} | {best_dp} | {hybrid} | {gain} | {published} |")


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    study = sys.argv[2] if len(sys.argv) > 2 else "scenarios/study/hybrid-vs-dp.yaml"
    with tempfile.TemporaryDirectory() as out_dir:
        run = run_study(build, study, out_dir)
        steps = f"{run['steps']} steps, " if run["steps"] else ""
        cpu = run["user"] + run["system"]
        print(f"`{build}/hybridsim study {study}`: {steps}{run['wall']:.1f} s wall, {cpu:.1f} s of CPU "
              f"({run['user']:.1f} user, {run['system']:.1f} system) on {os.cpu_count()} CPUs, "
              f"{run['peak_gb']:.1f} GB peak; load average {run['load'][0]:.1f} before, "
              f"{run['load'][1]:.1f} after (measured by tests/bench/study_table.py)")
        print()
        table(run, os.path.join(out_dir, "headline.csv"))


if __name__ == "__main__":
    main()
