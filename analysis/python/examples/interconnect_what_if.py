"""What would faster NVLink or InfiniBand buy GNMT on 16 DGX-1 (128 V100), as data parallelism alone
and as hybrid workers of 2 GPUs? A sweep from Python, plotted with matplotlib.

What it shows (the printed table gives the figures): InfiniBand below 100 Gb/s lengthens both
strategies' steps, as the gradient all-reduce between machines no longer hides behind backward, and
the hybrid's by more; slow NVLink (10 GB/s) costs the hybrid more than DP (its activations cross
NVLink between the two GPUs of a worker as well as its gradients); past 100 Gb/s and 25 GB/s neither
gains. The hybrid's steps are shorter,
but its global batch is half DP's, so time to train (right) weighs its faster steps against DP's
fewer steps per epoch, which cost DP more epochs.

    PYTHONPATH=build/python python3 analysis/python/examples/interconnect_what_if.py [out.png]

Without matplotlib (apt-get install python3-matplotlib) it prints the table it would plot.
"""
import sys

import hybridsim

# The scenario as a dict: the keys of a scenario file (scenarios/README.md), units as strings.
scenario = {
    "name": "GNMT on 16 DGX-1: NVLink and InfiniBand what-if",
    "cluster": {"preset": "dgx1-v100", "nodes": 16},
    "workload": {"network": "gnmt"},
    "parallelism": {"dp": 128},
    "outputs": {"directory": "out/python-interconnect", "formats": ["table"]},
    "sweep": {
        "mode": "product",
        "parameters": [
            {"path": "parallelism", "values": [{"dp": 128, "mp": 1}, {"dp": 64, "mp": 2}]},
            {"path": "cluster.links.nvlink.bandwidth", "values": ["10 GB/s", "25 GB/s", "50 GB/s"]},
            {"path": "cluster.links.infiniband.bandwidth", "values": ["25 Gb/s", "100 Gb/s", "400 Gb/s"]},
        ],
    },
}

results = hybridsim.sweep(scenario, jobs=2)
results["strategy"] = [f"dp {dp} × mp {mp}" for dp, mp in zip(results["dp"], results["mp"])]
columns = ["strategy", "cluster.links.nvlink.bandwidth", "cluster.links.infiniband.bandwidth",
           "step_time_ms", "time_to_train_hours"]
print(results[columns].to_string(index=False))

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit(0)

figure, (step, train) = plt.subplots(1, 2, figsize=(11, 4))
for (strategy, ib), rows in results.groupby(["strategy", "cluster.links.infiniband.bandwidth"], sort=False):
    nvlink = [float(v.split()[0]) for v in rows["cluster.links.nvlink.bandwidth"]]
    step.plot(nvlink, rows["step_time_ms"], marker="o", label=f"{strategy}, IB {ib}")
    train.plot(nvlink, rows["time_to_train_hours"], marker="o", label=f"{strategy}, IB {ib}")
step.set(xlabel="NVLink bandwidth per link (GB/s)", ylabel="step time (ms)", title="one step")
train.set(xlabel="NVLink bandwidth per link (GB/s)", ylabel="time to train (h)", title="to 24.0 BLEU")
train.legend(fontsize=7)
figure.tight_layout()
figure.savefig(sys.argv[1] if len(sys.argv) > 1 else "interconnect_what_if.png", dpi=120)
