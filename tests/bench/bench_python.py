#!/usr/bin/env python3
"""What calling hybridsim from Python costs against the command line, and what threads buy.

    PYTHONPATH=build/python python3 tests/bench/bench_python.py build/hybridsim [repetitions]

Prints, best of `repetitions` (default 3) for each:
- a one-GPU GNMT step and a 1,024-GPU GNMT DP step (128 DGX-1), each as `hybridsim run -q` (a
  process: start-up, reading, simulating, printing) and as `hybridsim.run` (in this process, the
  module imported once): the difference in per cent of the CLI's time;
- four 256-GPU steps (32 DGX-1: DP, and hybrid workers of 2, 4 and 8 GPUs) one after another, and
  the same four on 4 threads at once (the GIL is released while simulating): on 2 cores the threads
  should take about half the serial time.
"""
import concurrent.futures
import subprocess
import sys
import time

import hybridsim

SCENARIO = "scenarios/dgx1/gnmt-dp8.yaml"
CASES = {
    "1 GPU": {"parallelism": {"dp": 1}},
    "1,024 GPUs": {"cluster.nodes": 128, "parallelism": {"dp": 1024}},
}


def best(function, repetitions):
    times = []
    for _ in range(repetitions):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def cli_args(overlay):
    args = []
    for path, value in overlay.items():
        text = value if not isinstance(value, dict) else "{" + ", ".join(f"{k}: {v}" for k, v in value.items()) + "}"
        args += ["--set", f"{path}={text}"]
    return args


def main():
    tool = sys.argv[1] if len(sys.argv) > 1 else "build/hybridsim"
    repetitions = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    print("| case | CLI (s) | Python (s) | Python − CLI |")
    print("|---|---|---|---|")
    for name, overlay in CASES.items():
        command = [tool, "run", SCENARIO, "-q", "--set", "outputs.formats=[table]", *cli_args(overlay)]
        cli = best(lambda: subprocess.run(command, check=True, stdout=subprocess.DEVNULL), repetitions)
        python = best(lambda: hybridsim.run(SCENARIO, set=overlay), repetitions)
        print(f"| {name} | {cli:.3f} | {python:.3f} | {100 * (python - cli) / cli:+.1f}% |")

    overlays = [{"cluster.nodes": 32, "parallelism": {"dp": 256 // mp, "mp": mp}} for mp in (1, 2, 4, 8)]
    serial = best(lambda: [hybridsim.run(SCENARIO, set=o) for o in overlays], repetitions)
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        threaded = best(lambda: list(pool.map(lambda o: hybridsim.run(SCENARIO, set=o), overlays)), repetitions)
    print(f"\nfour 256-GPU steps: one after another {serial:.3f} s, on 4 threads {threaded:.3f} s "
          f"({serial / threaded:.2f}× faster)")


if __name__ == "__main__":
    main()
