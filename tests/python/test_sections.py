"""The scenario's sections typed (hybridsim/sections.py) beyond the transformer's: the data-parallel
keys (communication: algorithm, protocol, DDP's buckets and copies, exchange; gradient accumulation
by training.global_batch), the cluster and its links, variability and simulation. A typed value is
the `set=` overlay of the same key: the same step, and the same refusal, located by how it was
written (ScenarioError.given) and the key refused (ScenarioError.field)."""
import dataclasses
import re

import pytest

import hybridsim

GNMT_DP8 = "scenarios/dgx1/gnmt-dp8.yaml"

# Each key of scenarios/README.md's table under these sections is a field of its typed section (a
# mapping's own keys, such as training.efficiency.e_min or workload.gpu_speeds[].gpu, are its value).
TYPED = {"cluster": hybridsim.Cluster, "workload": hybridsim.Workload, "workload.model": hybridsim.Model,
         "parallelism": hybridsim.Parallelism, "pipeline": hybridsim.Pipeline,
         "communication": hybridsim.Communication, "training": hybridsim.Training,
         "variability": hybridsim.Variability, "simulation": hybridsim.Simulation,
         "cluster.links": hybridsim.Links}


def test_every_key_of_the_sections_is_a_typed_field():
    with open("scenarios/README.md", encoding="utf-8") as f:
        keys = set(re.findall(r"^\| `([a-z_.\[\]]+)`", f.read(), re.M))
    assert len(keys) > 100  # the table was read
    fields = {section: {f.name for f in dataclasses.fields(cls)} for section, cls in TYPED.items()}
    missing = []
    for key in sorted(keys):
        if "[" in key:
            continue
        if key.startswith("cluster.links.") and key.count(".") == 3:  # cluster.links.nvlink.bandwidth
            if key.rsplit(".", 1)[1] not in {f.name for f in dataclasses.fields(hybridsim.Link)}:
                missing.append(key)
            continue
        section, _, name = key.rpartition(".")
        if section in TYPED and name not in fields[section]:
            missing.append(key)
    # Main typed the transformer's keys alone: every communication key, workload.batch_per_worker,
    # parallelism.placement, training.efficiency, variability.*, simulation.*, cluster.* went through set=.
    assert missing == []
    assert len(keys & {"communication." + f.name for f in dataclasses.fields(hybridsim.Communication)}) == 13


def test_data_parallel_sections_run_the_step_their_overlays_run():
    # GNMT dp 8 on one DGX-1, with the data-parallel keys typed: rings, 50 MB buckets without DDP's
    # copies, four micro-batches a step (128 pairs x 8 workers x 4 = 4,096) exchanged after the last.
    typed = hybridsim.run(GNMT_DP8, training=hybridsim.Training(global_batch=4096),
                          communication=hybridsim.Communication(algorithm="ring", bucket_size="50 MB",
                                                                gradient_copies="off",
                                                                exchange="last-micro-batch"))
    plain = hybridsim.run(GNMT_DP8, set={"training.global_batch": 4096, "communication.algorithm": "ring",
                                         "communication.bucket_size": "50 MB",
                                         "communication.gradient_copies": "off",
                                         "communication.exchange": "last-micro-batch"})
    default = hybridsim.run(GNMT_DP8)
    assert typed.step_time_ps == plain.step_time_ps
    assert typed.json == plain.json
    assert typed.global_batch == 4096 and default.global_batch == 1024
    assert typed.step_time_ps != default.step_time_ps  # the fields were not dropped
    assert typed.critical.gradient_copies_ms == 0 < default.critical.gradient_copies_ms


def test_cluster_variability_and_simulation_sections_run_their_overlays():
    # Two DGX-1 joined by 200 Gb/s InfiniBand, dp 16, two steps with 5% kernel jitter.
    typed = hybridsim.run(GNMT_DP8, cluster=hybridsim.Cluster(
                              nodes=2, links=hybridsim.Links(infiniband=hybridsim.Link(bandwidth="200 Gb/s"))),
                          parallelism=hybridsim.Parallelism(dp=16),
                          variability=hybridsim.Variability(steps=2, kernel_jitter=0.05),
                          simulation=hybridsim.Simulation(max_events=10**9))
    plain = hybridsim.run(GNMT_DP8, set=["cluster.nodes=2", "cluster.links.infiniband.bandwidth=200 Gb/s",
                                         "parallelism.dp=16", "variability.steps=2",
                                         "variability.kernel_jitter=0.05", "simulation.max_events=1000000000"])
    assert typed.json == plain.json
    assert (typed.gpus, typed.steps) == (16, 2)


def test_a_bad_typed_value_is_refused_as_its_overlay_naming_the_field():
    with pytest.raises(hybridsim.ScenarioError) as typed:
        hybridsim.run(GNMT_DP8, communication=hybridsim.Communication(bucket_size="0 B"))
    with pytest.raises(hybridsim.ScenarioError) as plain:
        hybridsim.run(GNMT_DP8, set={"communication.bucket_size": "0 B"})
    assert typed.value.given == "communication=Communication(bucket_size='0 B')"
    assert plain.value.given == "set={'communication.bucket_size': '0 B'}"
    for e in (typed.value, plain.value):
        assert e.field == "communication.bucket_size" and e.file is None
    # The same refusal after the caller's words.
    assert typed.value.message[len(typed.value.given):] == plain.value.message[len(plain.value.given):]
    assert 'communication.bucket_size: got "0 B"' in typed.value.message
    # Nested sections are quoted nested, and name the whole path.
    with pytest.raises(hybridsim.ScenarioError) as link:
        hybridsim.run(GNMT_DP8, cluster=hybridsim.Cluster(links=hybridsim.Links(nvlink=hybridsim.Link(bandwidth="0 GB/s"))))
    assert link.value.given == "cluster=Cluster(links=Links(nvlink=Link(bandwidth='0 GB/s')))"
    assert link.value.field == "cluster.links.nvlink.bandwidth"
    # An unknown choice, as the file's.
    with pytest.raises(hybridsim.ScenarioError, match="did you mean 'ring'") as choice:
        hybridsim.run(GNMT_DP8, communication=hybridsim.Communication(algorithm="rung"))
    assert choice.value.field == "communication.algorithm"


def test_a_section_of_another_type_is_a_type_error():
    with pytest.raises(TypeError, match=r"communication=Training\(.*expected a hybridsim.Communication"):
        hybridsim.run(GNMT_DP8, communication=hybridsim.Training())


def test_a_file_refusal_keeps_its_location():
    text = "cluster: {preset: dgx1-v100}\nworkload: {network: gnmt}\ncommunication: {bucket_size: 0 B}\n"
    with pytest.raises(hybridsim.ScenarioError) as e:
        hybridsim.run(text)
    assert (e.value.file, e.value.line, e.value.field, e.value.given) == ("<text>", 3, "communication.bucket_size",
                                                                         None)
