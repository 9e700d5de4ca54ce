"""The transformer vocabulary of the scenarios as typed values, with the YAML's names
(workloads/README.md, "Transformers"; scenarios/README.md): workload.model's fields, the named models,
workload.precision and gpu, training.micro_batch / global_batch / recompute, parallelism.tp / pp / ep / zero /
sequence_parallel and pipeline.*. Each value becomes the `--set` overlays of the fields it sets (None:
left as the scenario has it), so

    hybridsim.run("scenarios/llm/llama3-8b-dgx-h100-tp8.yaml",
                  parallelism=hybridsim.Parallelism(tp=4, dp=2, zero=1),
                  training=hybridsim.Training(recompute="selective"))

is `hybridsim run ... --set parallelism.tp=4 --set parallelism.dp=2 --set parallelism.zero=1
--set training.recompute=selective`; the library checks every value as it checks the file's.
"""
from __future__ import annotations

import dataclasses
import json
from typing import List, Optional, Tuple, Union

from . import _hybridsim as _native


def _scalar(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return json.dumps(list(value))  # JSON is YAML flow syntax
    return str(value)


class _Section:
    """A YAML section's fields as overlays: `section.field=value` for each field not None."""
    _section = ""

    def overlays(self) -> List[str]:
        return [text for text, _ in self.spelled_overlays()]

    def spelled_overlays(self) -> List[Tuple[str, str]]:
        """Each overlay with the way the caller wrote it, which its refusals quote:
        ("parallelism.tp=0", "parallelism=Parallelism(tp=0)")."""
        keyword = self._section.rsplit(".", 1)[-1]  # run()'s keyword, or Workload's model=

        def spelled(inner: str) -> str:
            return f"{keyword}={type(self).__name__}({inner})"

        out = []
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if value is None:
                continue
            if isinstance(value, _Section):
                out += [(text, spelled(inner)) for text, inner in value.spelled_overlays()]
            else:
                out.append((f"{self._section}.{field.name}={_scalar(value)}", spelled(f"{field.name}={value!r}")))
        return out


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
    """workload: network is a named model ("llama3-8b", see `models()`) or "transformer" with
    `model`; precision: "fp32" | "tf32" | "fp16" | "bf16" | "amp" | "fp8"; gpu: the GPU whose cost
    model and memory price the step, "auto" | "v100" | "a100" | "a100-40gb" | "h100" | "h200"."""
    _section = "workload"
    network: Optional[str] = None
    model: Optional[Model] = None
    precision: Optional[str] = None
    gpu: Optional[str] = None


@dataclasses.dataclass(frozen=True)
class Training(_Section):
    """training: sequences per GPU per micro-batch, sequences per step, and recompute: "none" |
    "selective" | "full"."""
    _section = "training"
    micro_batch: Optional[int] = None
    global_batch: Optional[int] = None
    recompute: Optional[str] = None


@dataclasses.dataclass(frozen=True)
class Parallelism(_Section):
    """parallelism: dp replicas, tp (tensor), pp (pipeline stages), ep (expert, within dp), zero
    (0-3, or "fsdp"), sequence_parallel; mp is the 2017 networks' model parallelism."""
    _section = "parallelism"
    dp: Optional[int] = None
    mp: Optional[int] = None
    tp: Optional[int] = None
    pp: Optional[int] = None
    ep: Optional[int] = None
    zero: Union[None, int, str] = None
    sequence_parallel: Optional[bool] = None


@dataclasses.dataclass(frozen=True)
class Pipeline(_Section):
    """pipeline: schedule "1f1b" | "gpipe" | "interleaved", virtual_stages (interleaved), stages
    (layers per stage)."""
    _section = "pipeline"
    schedule: Optional[str] = None
    virtual_stages: Optional[int] = None
    stages: Optional[List[int]] = None


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
