"""The scenario's sections as typed values, with the YAML's names (scenarios/README.md's key table;
workloads/README.md, "Transformers"): cluster (and its links), workload (and workload.model),
parallelism, pipeline, communication, training, variability and simulation. Each value becomes the
`--set` overlays of the fields it sets (None: left as the scenario has it; DEFAULT: the key removed,
its default again, as `--set path=null`), so

    hybridsim.run("scenarios/dgx1/gnmt-dp8.yaml",
                  communication=hybridsim.Communication(algorithm="ring", bucket_size="50 MB"),
                  training=hybridsim.Training(global_batch=2048))

is `hybridsim run ... --set communication.algorithm=ring --set communication.bucket_size="50 MB"
--set training.global_batch=2048`; the library checks every value as it checks the file's, and its
refusal quotes the value as written (`communication=Communication(bucket_size='0 B'):
communication.bucket_size: got "0 B" ...`). model("llama3-8b") is a named model's workload.model
fields as the library has them, models() the names.
"""
from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any, List, Optional, Tuple, Union

from . import _hybridsim as _native


class _Default:
    """`hybridsim.DEFAULT`: the value that removes a key, so that the scenario takes the key's default
    (the command line's `--set parallelism.dp=null`), as a section's field (`Parallelism(dp=DEFAULT)`)
    and as a `set=` value alike. None is not that: a section's field None is not given (the scenario's
    value stays), and `set={'parallelism.dp': None}`, which read both ways, is refused."""
    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "hybridsim.DEFAULT"

    def __reduce__(self):
        return "DEFAULT"


DEFAULT = _Default()


def _scalar(value) -> str:
    if value is DEFAULT:
        return "null"  # removes the key: its default again
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple, Mapping)):
        return json.dumps(value if isinstance(value, Mapping) else list(value))  # JSON is YAML flow syntax
    return str(value)


class _Section:
    """A YAML section's fields as overlays: `section.field=value` for each field not None."""
    _section = ""

    def overlays(self) -> List[str]:
        return [text for text, _ in self.spelled_overlays()]

    def spelled_overlays(self, section: Optional[str] = None) -> List[Tuple[str, str]]:
        """Each overlay with the way the caller wrote it, which its refusals quote:
        ("parallelism.tp=0", "parallelism=Parallelism(tp=0)"). `section`: where a nested section
        sits (cluster.links.nvlink for Links' nvlink=Link(...)); its own by default."""
        section = section or self._section
        keyword = section.rsplit(".", 1)[-1]  # run()'s keyword, or the parent's field

        def spelled(inner: str) -> str:
            return f"{keyword}={type(self).__name__}({inner})"

        out = []
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if value is None:
                continue
            if isinstance(value, _Section):
                out += [(text, spelled(inner))
                        for text, inner in value.spelled_overlays(f"{section}.{field.name}")]
            else:
                out.append((f"{section}.{field.name}={_scalar(value)}", spelled(f"{field.name}={value!r}")))
        return out


# Sizes, rates and times are texts with their units ("25 MB", "100 Gb/s", "700 ns"), as in the file.

@dataclasses.dataclass(frozen=True)
class Link(_Section):
    """One link kind of cluster.links: bandwidth per link and direction, latency per hop."""
    bandwidth: Optional[str] = None
    latency: Optional[str] = None


@dataclasses.dataclass(frozen=True)
class Links(_Section):
    """cluster.links: per link kind, overrides of the preset's bandwidth and latency."""
    _section = "cluster.links"
    nvlink: Optional[Link] = None
    nvswitch: Optional[Link] = None
    pcie: Optional[Link] = None
    cpu: Optional[Link] = None
    infiniband: Optional[Link] = None
    generic: Optional[Link] = None


@dataclasses.dataclass(frozen=True)
class Cluster(_Section):
    """cluster: a preset ("dgx1-v100", ...) or a topology file; nodes joined by an InfiniBand fabric
    ("fat-tree" | "rail-optimized", oversubscription, leaf_radix, spines); gpus_per_node and
    gpu_memory ("32 GiB") "auto" or a value; links=Links(nvlink=Link(bandwidth="50 GB/s"))."""
    _section = "cluster"
    preset: Optional[str] = None
    topology: Optional[str] = None
    nodes: Optional[int] = None
    gpus_per_node: Union[None, int, str] = None
    fabric: Optional[str] = None
    oversubscription: Optional[float] = None
    leaf_radix: Optional[int] = None
    spines: Union[None, int, str] = None
    gpu_memory: Optional[str] = None
    links: Optional[Links] = None


@dataclasses.dataclass(frozen=True)
class Model(_Section):
    """workload.model: a transformer's architecture (with workload.network "transformer"), or the
    facts of a named model (`model("llama3-8b")`). ffn: "gelu" | "swiglu"; attention: "flash" |
    "unfused"; experts, top_k, capacity_factor make a mixture of experts."""
    _section = "workload.model"
    layers: Optional[int] = None
    hidden: Optional[int] = None
    heads: Optional[int] = None
    kv_heads: Optional[int] = None
    ffn_hidden: Optional[int] = None
    ffn: Optional[str] = None
    vocab: Optional[int] = None
    sequence: Optional[int] = None
    experts: Optional[int] = None
    top_k: Optional[int] = None
    capacity_factor: Optional[float] = None
    attention: Optional[str] = None
    layers_simulated: Optional[int] = None


@dataclasses.dataclass(frozen=True)
class Workload(_Section):
    """workload: network is a built-in network ("gnmt", "llama3-8b", see `models()`) or
    "transformer" with `model`, or profile a profile file; precision: "fp32" | "tf32" | "fp16" |
    "bf16" | "amp" | "fp8"; gpu: the GPU whose cost model and memory price the step, "auto" | "v100"
    | "a100" | "a100-40gb" | "h100" | "h200"; batch_per_worker ("auto" or samples), compute_speed,
    gpu_speeds ([{"gpu": 3, "speed": 0.8}])."""
    _section = "workload"
    network: Optional[str] = None
    model: Optional[Model] = None
    precision: Optional[str] = None
    gpu: Optional[str] = None
    profile: Optional[str] = None
    batch_per_worker: Union[None, int, str] = None
    compute_speed: Optional[float] = None
    gpu_speeds: Optional[List[Mapping[str, Any]]] = None


@dataclasses.dataclass(frozen=True)
class Training(_Section):
    """training: sequences per GPU per micro-batch, samples per step (global_batch: gradient
    accumulation when it is a multiple of a micro-batch's), recompute: "none" | "selective" |
    "full"; and time to train: network (whose curve and dataset), efficiency (a variant name such
    as "optimistic" or the mapping: {"e_min": ..., "b_noise": ...} or {"table": [[batch, epochs], ...]}),
    dataset_samples."""
    _section = "training"
    micro_batch: Optional[int] = None
    global_batch: Union[None, int, str] = None
    recompute: Optional[str] = None
    network: Optional[str] = None
    efficiency: Union[None, str, Mapping[str, Any]] = None
    dataset_samples: Union[None, int, str] = None


@dataclasses.dataclass(frozen=True)
class Parallelism(_Section):
    """parallelism: dp replicas, mp (the 2017 networks' GPUs per worker, with placement: "auto" |
    "layers" | "stacks" | "branches" or rules [{"match": "enc.L*", "gpu": 1}], and mapping: "auto"
    or [[0, 3], [1, 2]]); tp (tensor), pp (pipeline stages), ep (expert, within dp), zero (0-3, or
    "fsdp"), sequence_parallel."""
    _section = "parallelism"
    dp: Optional[int] = None
    mp: Optional[int] = None
    tp: Optional[int] = None
    pp: Optional[int] = None
    ep: Optional[int] = None
    zero: Union[None, int, str] = None
    sequence_parallel: Optional[bool] = None
    placement: Union[None, str, List[Mapping[str, Any]]] = None
    mapping: Union[None, str, List[List[int]]] = None


@dataclasses.dataclass(frozen=True)
class Pipeline(_Section):
    """pipeline: schedule "1f1b" | "gpipe" | "interleaved", virtual_stages (interleaved), stages
    (layers per stage)."""
    _section = "pipeline"
    schedule: Optional[str] = None
    virtual_stages: Optional[int] = None
    stages: Optional[List[int]] = None


@dataclasses.dataclass(frozen=True)
class Communication(_Section):
    """communication: the gradient collectives and the network model. algorithm "auto" | "ring" |
    "tree" | "hierarchical"; protocol "auto" | "ll" | "ll128" | "simple" | "ideal"; channels ("auto"
    or 1-64); message_size, bucket_size (DDP's buckets, "25 MB"), reduction_bandwidth ("225 GB/s"
    or "off"); switching "cut-through" | "store-and-forward"; fast_path "auto" | "bounded" | "off";
    compute_contention and gradient_copies "on" | "off" (DDP's copies); ddp "torch" | "apex";
    exchange "every-micro-batch" | "last-micro-batch" (with gradient accumulation); pcie_only."""
    _section = "communication"
    algorithm: Optional[str] = None
    protocol: Optional[str] = None
    channels: Union[None, int, str] = None
    message_size: Optional[str] = None
    bucket_size: Optional[str] = None
    reduction_bandwidth: Optional[str] = None
    switching: Optional[str] = None
    fast_path: Optional[str] = None
    compute_contention: Optional[str] = None
    gradient_copies: Optional[str] = None
    ddp: Optional[str] = None
    exchange: Optional[str] = None
    pcie_only: Optional[bool] = None


@dataclasses.dataclass(frozen=True)
class Variability(_Section):
    """variability: steps, seed, kernel_jitter (a coefficient of variation), sequence_lengths
    "fixed" | "wmt16-en-de", batching "bucketed" | "random", length_buckets, trace_step "first" |
    "slowest" | a step number."""
    _section = "variability"
    steps: Optional[int] = None
    seed: Optional[int] = None
    kernel_jitter: Optional[float] = None
    sequence_lengths: Optional[str] = None
    batching: Optional[str] = None
    length_buckets: Optional[int] = None
    trace_step: Union[None, int, str] = None


@dataclasses.dataclass(frozen=True)
class Simulation(_Section):
    """simulation: a step's caps, max_events (a count or "unlimited") and max_memory ("8 GiB" or
    "unlimited"); model_threads for a folded step's tree models."""
    _section = "simulation"
    max_events: Union[None, int, str] = None
    max_memory: Optional[str] = None
    model_threads: Optional[int] = None


def models() -> List[str]:
    """The named models workload.network takes ("bert-large", "gpt3-175b", ..., "mixtral-8x7b")."""
    return list(_native.transformer_models())


def model(name: str) -> Model:
    """A named model's architecture, as the library has it (ValueError for an unknown name)."""
    try:
        return Model(**_native.transformer_model(name))
    except _native.InputError as e:
        raise ValueError(str(e)) from None


def overlays(*sections) -> List[str]:
    """The `--set` overlays of the sections given (None ones skipped)."""
    out = []
    for section in sections:
        if section is not None:
            out += section.overlays()
    return out
