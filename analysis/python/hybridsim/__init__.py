"""hybridsim from Python: the simulator of multi-GPU training clusters, with the vocabulary of its
YAML scenarios (scenarios/README.md).

    import hybridsim
    r = hybridsim.run("scenarios/dgx1/gnmt-dp8.yaml", set={"parallelism": {"dp": 4, "mp": 2}})
    r.step_time_ms, r.units_per_second, r.time_to_train.hours
    df = hybridsim.sweep("scenarios/examples/dgx1-nvlink-sweep.yaml", jobs=2)   # results.csv

A scenario is a YAML file's path, YAML text (a string with a newline), or a dict with the keys of
the file; `set` overlays fields as `hybridsim run --set` does ({"cluster.nodes": 4} or
["cluster.nodes=4"]), and run() and sweep() take a transformer's fields typed, by the YAML's names:
workload=Workload(network="llama3-70b", precision="bf16"), training=Training(micro_batch=1,
recompute="selective"), parallelism=Parallelism(tp=8, pp=8, zero=1), pipeline=Pipeline(...)
(hybridsim/transformer.py; model("llama3-8b") gives a named model's fields, models() the names). Bad input raises ScenarioError, whose message is the command line's and whose
file, line, column and field say where. Simulations release the GIL (threads run them in parallel)
and stop on Ctrl-C with KeyboardInterrupt.
"""
from __future__ import annotations

import dataclasses
import io
import json
import os
import re
import sys
from typing import Any, Callable, Iterable, Mapping, Optional, Union

from . import _hybridsim as _native
from .transformer import Model, Pipeline, Parallelism, Training, Workload, model, models, overlays as _sections

__all__ = [
    "run", "sweep", "study", "plan", "collective", "topology",
    "Model", "Workload", "Training", "Parallelism", "Pipeline", "model", "models",
    "RunResult", "GpuMetrics", "CriticalPath", "TimeToTrain", "PlanResult", "StudyResult",
    "HybridsimError", "ScenarioError", "BudgetError", "InternalError",
]

Scenario = Union[str, os.PathLike, Mapping[str, Any]]
Overlay = Union[None, Mapping[str, Any], Iterable[str]]


class HybridsimError(Exception):
    """Any error hybridsim reports."""


class ScenarioError(HybridsimError, ValueError):
    """Bad input, located as the command line locates it: `file:line:column: field: what`.

    `file`, `line`, `column` and `field` are None where the message names no such place (an option,
    a --set text)."""

    _located = re.compile(r"^(?P<file>[^\n]+?):(?P<line>\d+):(?P<column>\d+): (?P<field>[^\s:]+): ")

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message
        m = self._located.match(message)
        self.file = m.group("file") if m else None
        self.line = int(m.group("line")) if m else None
        self.column = int(m.group("column")) if m else None
        self.field = m.group("field") if m else None


class BudgetError(ScenarioError):
    """A simulation over its budget (simulation.max_events / max_memory): the message says by how much."""


class InternalError(HybridsimError, RuntimeError):
    """A broken invariant inside the simulator: a bug to report, not bad input."""


def _native_call(function: Callable, *args, **kwargs):
    try:
        return function(*args, **kwargs)
    except _native.BudgetExceeded as e:
        raise BudgetError(str(e)) from None
    except _native.InputError as e:
        raise ScenarioError(str(e)) from None
    except _native.InternalError as e:
        raise InternalError(str(e)) from None


def _overlay_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, (Mapping, list, tuple)):
        return json.dumps(value)  # JSON is YAML flow syntax
    return str(value)


def _overlays(set: Overlay) -> list:
    if set is None:
        return []
    if isinstance(set, Mapping):
        return [f"{path}={_overlay_value(value)}" for path, value in set.items()]
    if isinstance(set, str):
        return [set]
    return [str(text) for text in set]


def _scenario(scenario: Scenario):
    """(path, text, base_dir): a file is read by the library; text and dicts are handed over."""
    if isinstance(scenario, Mapping):
        return "<dict>", json.dumps(scenario, indent=2), os.getcwd()
    if isinstance(scenario, os.PathLike):
        return os.fspath(scenario), None, "."
    if isinstance(scenario, str):
        if "\n" in scenario:
            return "<text>", scenario, os.getcwd()
        return scenario, None, "."
    raise TypeError(f"a scenario is a file path, YAML text or a dict, not {type(scenario).__name__}")


@dataclasses.dataclass(frozen=True)
class GpuMetrics:
    """One GPU over the step (or the mean of all), in milliseconds: compute includes the gradient
    copies and the slowdown from communication beside kernels."""
    gpu: int
    finish_ms: float
    compute_ms: float
    compute_slowed_ms: float
    gradient_copies_ms: float
    communication_ms: float
    exposed_communication_ms: float
    idle_ms: float
    kernels: int
    # The step's parts on this GPU, each taking what the ones before it left (run's "step parts"):
    # compute minus optimizer, TP communication, EP communication, pipeline bubble, DP
    # communication exposed.
    optimizer_ms: float
    tp_communication_ms: float
    ep_communication_ms: float
    pipeline_bubble_ms: float
    dp_communication_exposed_ms: float


@dataclasses.dataclass(frozen=True)
class CriticalPath:
    """The chain of work that ended the step; its parts add up to the step time."""
    compute_ms: float
    compute_slowed_ms: float
    gradient_copies_ms: float
    optimizer_ms: float
    gradient_communication_ms: float
    model_parallel_transfers_ms: float
    launch_gaps_ms: float
    tensor_parallel_communication_ms: float
    expert_parallel_communication_ms: float
    gpus_visited: int
    gpu_changes: int


@dataclasses.dataclass(frozen=True)
class TimeToTrain:
    """Step time × steps per epoch × epochs to the quality target at this global batch."""
    seconds: float
    epochs: float
    steps_per_epoch: float  # a whole number, or under 1 when the global batch is over the dataset
    total_steps: float
    extrapolated: bool
    efficiency: str

    @property
    def hours(self) -> float:
        return self.seconds / 3600.0


class RunResult:
    """One simulated step of a scenario, with the figures `hybridsim run` prints.

    `table` is what it prints, `json` the text of its summary.json and `to_dict()` that parsed."""

    def __init__(self, figures: dict, request: dict):
        self._figures = figures
        self._request = request
        self.dp: int = figures["dp"]
        self.mp: int = figures["mp"]
        self.gpus: int = figures["gpus"]
        self.global_batch: int = figures["global_batch"]
        self.step_time_ps: int = figures["step_time_ps"]
        self.p95_step_time_ps: int = figures["p95_step_time_ps"]
        self.steps: int = figures["steps"]
        self.samples_per_second: float = figures["samples_per_second"]
        self.units_per_second: float = figures["units_per_second"]
        self.unit: str = figures["unit"]
        self.mean = GpuMetrics(**figures["mean"])
        self.critical = GpuMetrics(**figures["critical"])
        self.per_gpu = [GpuMetrics(**g) for g in figures["per_gpu"]]
        self.critical_path = CriticalPath(**figures["critical_path"])
        ttt = figures["time_to_train"]
        self.time_to_train: Optional[TimeToTrain] = TimeToTrain(**ttt) if ttt is not None else None
        self.fits_memory: bool = figures["fits_memory"]
        self.peak_memory_bytes: int = figures["peak_memory_bytes"]
        self.memory_capacity_bytes: Optional[int] = figures["memory_capacity_bytes"]
        self.events: int = figures["events"]
        self.messages: int = figures["messages"]
        self.collectives: int = figures["collectives"]
        self.strategy: str = figures["strategy"]
        self.table: str = figures["table"]
        self.json: str = figures["json"]
        self.written: Optional[str] = figures["written"]
        self.trace_path: Optional[str] = figures["trace"]
        # What the run left out of the scenario (the notes `hybridsim run` prints on stderr): a
        # sweep block not run, fabric keys on one machine. The native call returned them; they were
        # dropped here.
        self.notes: list = figures["notes"]

    @property
    def step_time_ms(self) -> float:
        return self.step_time_ps * 1e-9

    @property
    def step_time_us(self) -> float:
        return self.step_time_ps * 1e-6

    def to_dict(self) -> dict:
        """summary.json, parsed."""
        return json.loads(self.json)

    def trace(self, path: Union[str, os.PathLike], detail: str = "kernels", gpus: str = "",
              window: str = "", gzip: bool = False, step: str = "") -> str:
        """Writes a Chrome/Perfetto trace of this step (simulated again: the same inputs give the same
        step) and returns its path, as `hybridsim run --trace`; step as trace_step of run()."""
        request = dict(self._request, trace=os.fspath(path), trace_detail=detail, trace_gpus=gpus,
                       trace_window=window, trace_gzip=gzip, trace_step=str(step), out=None,
                       write_outputs=False)
        figures = _native_call(_native.run, **request)
        return figures["trace"]

    def __repr__(self) -> str:
        return (f"RunResult(dp={self.dp}, mp={self.mp}, gpus={self.gpus}, step_time_ms={self.step_time_ms:.3f}, "
                f"units_per_second={self.units_per_second:.1f} {self.unit})")


def _progress_printer(line: dict) -> None:
    print(f"  simulating {line['what']}: {line['simulated_ms']:.1f} ms simulated, "
          f"{line['events'] / 1e6:.1f} M events, {line['wall_seconds']:.0f} s", file=sys.stderr)


def run(scenario: Scenario, set: Overlay = None, *, out: Union[None, str, os.PathLike] = None,
        trace: Union[None, str, os.PathLike] = None, trace_detail: Optional[str] = None, trace_gpus: str = "",
        trace_window: str = "", trace_gzip: bool = False, trace_step: Union[str, int] = "",
        progress: Union[None, bool, Callable[[dict], None]] = None, workload: Optional[Workload] = None,
        training: Optional[Training] = None, parallelism: Optional[Parallelism] = None,
        pipeline: Optional[Pipeline] = None) -> RunResult:
    """Simulates one training step of the scenario and projects time to train (`hybridsim run`).

    out: also write the scenario's output files there (summary.json, ...), as `--out`.
    trace: write a Chrome/Perfetto trace there (`--trace`, with its detail, GPUs, window and gzip);
    trace_detail None (the default) is "kernels". Each trace_* given without trace is refused, by the
    command line's rule.
    trace_step: which step of a variability run it shows, "first", "slowest" or a number from 1
    (`--trace-step`); "" (the default): the scenario's variability.trace_step.
    progress: True prints the command line's progress lines on stderr; a callable receives each as a
    dict (what, simulated_ms, events, wall_seconds). Ctrl-C stops the step either way.
    workload, training, parallelism, pipeline: a transformer's fields (hybridsim/transformer.py),
    overlaid after `set`."""
    path, text, base_dir = _scenario(scenario)
    callback = _progress_printer if progress is True else (progress or None)
    overlays = _overlays(set) + _sections(workload, training, parallelism, pipeline)
    request = dict(path=path, text=text, set=overlays, base_dir=base_dir,
                   out=None if out is None else os.fspath(out), write_outputs=out is not None,
                   trace=None if trace is None else os.fspath(trace), trace_detail=trace_detail,
                   trace_gpus=trace_gpus, trace_window=trace_window, trace_gzip=trace_gzip,
                   trace_step=str(trace_step), progress=callback)
    figures = _native_call(_native.run, **request)
    request["progress"] = None
    return RunResult(figures, request)


def _table(csv_text: str, **attrs):
    """A pandas DataFrame of a CSV text (a list of dicts where pandas is absent); the text itself and
    `attrs` ride along in DataFrame.attrs."""
    try:
        import pandas
    except ImportError:
        import csv
        return list(csv.DictReader(io.StringIO(csv_text)))
    frame = pandas.read_csv(io.StringIO(csv_text), keep_default_na=False)
    frame.attrs.update(attrs, csv=csv_text)
    return frame


def sweep(scenario: Scenario, set: Overlay = None, *, jobs: int = 0, out: Union[None, str, os.PathLike] = None,
          resume: bool = False, progress: bool = False, workload: Optional[Workload] = None,
          training: Optional[Training] = None, parallelism: Optional[Parallelism] = None,
          pipeline: Optional[Pipeline] = None):
    """Runs every point of the scenario's sweep: block (`hybridsim sweep`) and returns results.csv as a
    pandas DataFrame (attrs: csv, the file's text; directory; plot), or a list of dicts without pandas.
    The output files are written as the command line writes them (to `out` or outputs.directory);
    workload, training, parallelism, pipeline as run()'s."""
    path, text, base_dir = _scenario(scenario)
    overlays = _overlays(set) + _sections(workload, training, parallelism, pipeline)
    result = _native_call(_native.sweep, path, text, overlays, base_dir,
                          None if out is None else os.fspath(out), jobs, resume, progress)
    return _table(result["csv"], directory=result["directory"], plot=result["plot"], notes=result["notes"])


@dataclasses.dataclass(frozen=True)
class StudyResult:
    printed: str    # the headline table `hybridsim study` prints
    directory: str  # the report folder


def study(study_file: Union[str, os.PathLike], *, out: Union[None, str, os.PathLike] = None,
          threads: Optional[int] = None, plots: bool = True, ib_sensitivity: bool = True,
          memory: Optional[str] = None, max_events: str = "", max_sim_memory: str = "",
          progress: bool = False) -> StudyResult:
    """The hybrid-vs-DP study of a study file (`hybridsim study`): writes its report folder.
    max_events, max_sim_memory: each step's caps (`--max-events`, `--max-sim-memory`; "" the default)."""
    result = _native_call(_native.study, os.fspath(study_file), None if out is None else os.fspath(out),
                          threads, plots, ib_sensitivity, memory, str(max_events), max_sim_memory, progress)
    return StudyResult(**result)


@dataclasses.dataclass(frozen=True)
class PlanResult:
    printed: str  # what `hybridsim plan` prints
    ranked: list  # best first: a dict per configuration (label, dp, mp, step_time_ps, ...)


def plan(model: str, gpus: int = 8, *, cluster: str = "dgx1-v100", objective: str = "time-to-train",
         variant: str = "default", ib_bandwidth: Optional[str] = None, memory: Optional[str] = None,
         show_unfit: bool = False, threads: int = 0, top: int = 5, max_events: str = "",
         max_sim_memory: str = "", progress: bool = False) -> PlanResult:
    """The fastest dp × mp, placement, buckets and algorithm for a model on `gpus` GPUs (`hybridsim plan`);
    max_events, max_sim_memory: each step's caps (`--max-events`, `--max-sim-memory`; "" the default)."""
    options = _native.PlanOptions()
    options.model, options.gpus, options.cluster, options.objective = model, gpus, cluster, objective
    options.variant, options.ib_bandwidth, options.memory = variant, ib_bandwidth, memory
    options.show_unfit, options.threads = show_unfit, threads
    options.max_events, options.max_sim_memory = str(max_events), max_sim_memory
    return PlanResult(**_native_call(_native.plan, options, top, progress))


def collective(topology: str, *, op: str = "allreduce", nodes: int = 1, gpus: str = "", **options):
    """nccl-tests for the simulator (`hybridsim collective`): a DataFrame of its CSV columns (attrs:
    csv, title, table, json). Other options by their command-line names with underscores:
    algorithm, protocol, channels, min_bytes="8 B", max_bytes="256 MiB", step_factor, message_size,
    reduction, fast_path, pcie_only, gpus_per_node, max_events, max_sim_memory."""
    request = _native.CollectiveRequest()
    request.topology, request.op, request.nodes, request.gpus = topology, op, nodes, gpus
    for name, value in options.items():
        if not hasattr(request, name):
            raise TypeError(f"collective() got an unexpected option {name!r}")
        setattr(request, name, value)
    result = _native_call(_native.collective, request)
    return _table(result["csv"], title=result["title"], table=result["table"], json=result["json"])


def topology(preset_or_file: str, *, nodes: int = 1, gpus_per_node: int = 0, fabric: str = "fat-tree",
             oversubscription: float = 1.0, route: Optional[tuple] = None, rings: bool = False,
             pcie_only: bool = False, dot: Union[None, str, os.PathLike] = None) -> str:
    """Devices, links, per-GPU bandwidth, and on request a route and the rings (`hybridsim topology`)."""
    request = _native.TopologyRequest()
    request.topology, request.nodes, request.gpus_per_node = preset_or_file, nodes, gpus_per_node
    request.fabric, request.oversubscription, request.route = fabric, oversubscription, route
    request.rings, request.pcie_only = rings, pcie_only
    request.dot = None if dot is None else os.fspath(dot)
    return _native_call(_native.topology, request)
