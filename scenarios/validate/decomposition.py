#!/usr/bin/env python3
"""Per-micro-batch decomposition of the GNMT multi-GPU validation cases (gnmt-multi-gpu.yaml):
for each case, `hybridsim run` of its scenario with its --set overrides, and the critical GPU's step
split into forward/backward kernels (the meter's reading and its error from
`hybridsim validate --format csv`), the optimizer update, gradient copies, kernels slowed by
communication, exposed communication and host gaps, each per micro-batch (step / micro-batches).
The optimizer's time comes from two one-GPU runs of the same machine and precision (1 and 2
micro-batches: their difference is one micro-batch of kernels, the rest the update). The cases run
with per-GPU kernel jitter (variability.kernel_jitter), so a step waits for its slowest rank: the
"slowest rank" column is the step less every other column (on one GPU: the drawn factors' mean).
Usage: scenarios/validate/decomposition.py [path/to/hybridsim]   (prints a Markdown table)"""
import json, re, subprocess, sys

exe = sys.argv[1] if len(sys.argv) > 1 else "./build/hybridsim"
text = open("scenarios/validate/gnmt-multi-gpu.yaml").read()
cases = re.findall(r"- name: (.*?)\n.*?set: \[(.*?)\]\n.*?published: (\d+)", text, re.S)


def run(sets):
    args = [exe, "run", "scenarios/dgx1/gnmt-dp8.yaml", "-q", "--format", "json", "--out", "/tmp/hybridsim-decomposition"]
    for s in sets:
        args += ["--set", s]
    return json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)


def with_set(sets, key, value):
    return [s for s in sets if not s.startswith(key + "=")] + [key + "=" + value]


import csv, io
out = subprocess.run([exe, "validate", "--format", "csv"], capture_output=True, text=True).stdout
meter = {row["case"]: row for row in csv.DictReader(io.StringIO(out))}
updates = {}
print("| case | published | simulated (meter) | error | tokens / time | micro-batches | per micro-batch (ms): kernels | optimizer | "
      "gradient copies | slowed by comm. | exposed comm. | host gaps | slowest rank | step per micro-batch |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for name, sets_text, published in cases:
    sets = [s.strip().strip('"') for s in sets_text.split('", "')]
    key = tuple(s for s in sets if not s.startswith(("parallelism=", "training.global_batch=")))
    if key not in updates:
        one = [with_set(with_set(sets, "parallelism", "{dp: 1}"), "training.global_batch", str(128 * a))
               for a in (1, 2)]
        c1, c2 = (run(s)["critical"]["compute_us"] for s in one)
        updates[key] = (c2 - c1, 2 * c1 - c2)  # one micro-batch of kernels, the update
    kernels, update = updates[key]
    r = run(sets)
    c = r["critical"]
    a = r["global_batch"] // (128 * r["dp"])
    ms = lambda us: f"{us / 1000 / a:.1f}"
    m = meter[name]
    parts = ("gradient_copies_us", "compute_slowed_us", "exposed_communication_us", "idle_us")
    slowest = r["step_time_us"] - kernels * a - update - sum(c[k] for k in parts)
    print(f"| {name} | {int(published):,} | {float(m['simulated']):,.0f} | {100 * float(m['error']):+.1f}% | "
          f"{r['units_per_second']:,.0f} | {a} | {ms(kernels * a)} | {ms(update)} | "
          f"{ms(c['gradient_copies_us'])} | {ms(c['compute_slowed_us'])} | {ms(c['exposed_communication_us'])} | "
          f"{ms(c['idle_us'])} | {ms(slowest)} | {ms(r['step_time_us'])} |")
