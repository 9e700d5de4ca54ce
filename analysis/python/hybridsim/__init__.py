"""hybridsim from Python: the simulator of multi-GPU training clusters, with the vocabulary of its
YAML scenarios (scenarios/README.md).

    import hybridsim
    r = hybridsim.run("scenarios/dgx1/gnmt-dp8.yaml", set={"parallelism": {"dp": 4, "mp": 2}})
    r.step_time_ms, r.units_per_second, r.time_to_train.hours
    df = hybridsim.sweep("scenarios/examples/dgx1-nvlink-sweep.yaml", jobs=2)   # results.csv

A scenario is a YAML file's path, YAML text (a string with a newline), or a dict with the keys of
the file; `set` overlays fields as `hybridsim run --set` does ({"cluster.nodes": 4} or
["cluster.nodes=4"]; {"cluster.nodes": DEFAULT} removes the key, as `=null`, and None is refused),
and run() and sweep() take the scenario's sections typed, by the YAML's names: cluster=Cluster(nodes=4), workload=Workload(network="llama3-70b", precision="bf16"),
training=Training(global_batch=4096, recompute="selective"), parallelism=Parallelism(tp=8, pp=8,
zero=1), pipeline=Pipeline(...), communication=Communication(algorithm="ring", bucket_size="50 MB"),
variability=Variability(...), simulation=Simulation(...) (hybridsim/sections.py; model("llama3-8b")
gives a named model's fields, models() the names). Bad input raises ScenarioError, whose message is
the command line's and whose file, line, column and field say where (given and field for a
refused overlay). Simulations release the GIL (threads run them in parallel)
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
from .sections import (DEFAULT, Cluster, Communication, Link, Links, Model, Parallelism, Pipeline, Simulation,
                       Training, Variability, Workload, model, models)

__all__ = [
    "run", "sweep", "study", "plan", "collective", "topology",
    "Cluster", "Links", "Link", "Model", "Workload", "Training", "Parallelism", "Pipeline", "Communication",
    "Variability", "Simulation", "model", "models", "DEFAULT",
    "RunResult", "GpuMetrics", "CriticalPath", "TimeToTrain", "PlanResult", "StudyResult", "Rows", "TopologyReport",
    "HybridsimError", "ScenarioError", "BudgetError", "InternalError",
]

Scenario = Union[str, os.PathLike, Mapping[str, Any]]
Overlay = Union[None, Mapping[str, Any], Iterable[str]]


class HybridsimError(Exception):
    """Any error hybridsim reports."""


class ScenarioError(HybridsimError, ValueError):
    """Bad input, located as the command line locates it: `file:line:column: field: what`.

    `file`, `line`, `column` and `field` are None where the message names no such place (an option);
    a YAML syntax error (`bad.yaml:3:20: invalid YAML: ...`) has its place and no field.
    A refused overlay (`set=`, a typed section) is located by how it was written instead: `given`
    is that text (`communication=Communication(bucket_size='0 B')`, `set={'dp': 0}`) and `field` the
    key the library refused (`communication.bucket_size`), as a file's refusal names them."""

    _located = re.compile(r"^(?P<file>[^\n]+?):(?P<line>\d+):(?P<column>\d+): (?:(?P<field>[^\s:]+): )?")
    _field = re.compile(r"(?P<field>[A-Za-z_][\w.\[\]-]*): ")

    def __init__(self, message: str, given: Iterable[str] = ()):
        super().__init__(message)
        self.message = message
        m = self._located.match(message)
        self.file = m.group("file") if m else None
        self.line = int(m.group("line")) if m else None
        self.column = int(m.group("column")) if m else None
        self.field = m.group("field") if m else None
        self.given = None
        # The caller's overlays, longest first (one may begin another): the message leads with the
        # one refused, as the command line's leads with its --set text.
        for text in sorted(given, key=len, reverse=True):
            if not m and message.startswith(text + ": "):
                f = self._field.match(message, len(text) + 2)
                self.given, self.field = text, f.group("field") if f else None
                break


class BudgetError(ScenarioError):
    """A simulation over its budget (simulation.max_events / max_memory): the message says by how much.

    `kind` is "events" or "memory"; `estimate` what the simulation would reach (events, or bytes);
    `limit` the cap it passed, in the same unit; `needed` a cap that passes whichever way it runs (the
    figure the message quotes after "raise it to"), or None where that is not known.
    """

    def __init__(self, message: str, given: Iterable[str] = (), kind: Optional[str] = None,
                 estimate: Optional[int] = None, limit: Optional[int] = None, needed: Optional[int] = None):
        super().__init__(message, given)
        self.kind, self.estimate, self.limit, self.needed = kind, estimate, limit, needed


class InternalError(HybridsimError, RuntimeError):
    """A broken invariant inside the simulator: a bug to report, not bad input."""


def _native_call(function: Callable, *args, given: Iterable[str] = (), **kwargs):
    """`given`: how the caller wrote the overlays, which a refusal leads with (ScenarioError.given)."""
    try:
        return function(*args, **kwargs)
    except _native.BudgetExceeded as e:
        raise BudgetError(str(e), given, getattr(e, "kind", None), getattr(e, "estimate", None),
                          getattr(e, "limit", None), getattr(e, "needed", None)) from None
    except _native.InputError as e:
        raise ScenarioError(str(e), given) from None
    except _native.InternalError as e:
        raise InternalError(str(e)) from None


# Keywords of a wrong type are refused here, naming the keyword as the library's refusals do
# (`plan(): gpus='x': expected a whole number of GPUs (an int)`), with TypeError as Python's own
# functions raise; a value of the right type the library cannot use is its ScenarioError
# (`memory='lots': bad size ...`). pybind11's TypeError listed the native signatures instead.
_INT_RANGE = range(-2**31, 2**31)  # the library's int: a value past it failed as pybind11's TypeError


def _whole(function: str, keyword: str, value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{function}(): {keyword}={value!r}: expected {what} (an int)")
    if value not in _INT_RANGE:
        raise ScenarioError(f"{keyword}={value}: far beyond any limit; expected {what}")
    return value


def _number(function: str, keyword: str, value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{function}(): {keyword}={value!r}: expected {what} (a number)")
    return float(value)


def _flag(function: str, keyword: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{function}(): {keyword}={value!r}: expected True or False")
    return value


def _text(function: str, keyword: str, value: Any, what: str, optional: bool = False) -> Optional[str]:
    """A str (or None where `optional`); an empty one is refused as the command line refuses an
    empty option (an unset variable would otherwise mean "the default")."""
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise TypeError(f"{function}(): {keyword}={value!r}: expected {what} (a str"
                        f"{', or None' if optional else ''})")
    if value == "":
        raise ScenarioError(f"{keyword}='' is empty; expected {what}" + (" or None" if optional else ""))
    return value


def _path(function: str, keyword: str, value: Any, what: str) -> Optional[str]:
    """A file or folder: a str or os.PathLike, not empty; None: not given."""
    if value is None:
        return None
    if not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"{function}(): {keyword}={value!r}: expected {what} (a str or os.PathLike, or None)")
    text = os.fspath(value)
    if text == "":
        raise ScenarioError(f"{keyword}='' is empty; expected {what} or None")
    return _no_nul(keyword, text, what)


def _no_nul(keyword: str, text: str, what: str) -> str:
    """A path as the library reads it, a C string: cut at a NUL, another file would be read (Python's
    open() raises "embedded null byte")."""
    if "\0" in text:
        raise ScenarioError(f"{keyword}={text!r}: a path with a NUL character; expected {what}")
    return text


def _yaml_plain(value: Any, function: str, where: str) -> Any:
    """`value` with only what YAML writes (str, int, float, bool, None, dicts and lists; a path as its
    text, a tuple as a list); anything else is a TypeError naming where it sits (`scenario['a']['b']`),
    where json.dumps would say only "Object of type Decimal is not JSON serializable"."""
    if value is None or isinstance(value, (str, int, float)):
        return value
    if value is DEFAULT:
        return None  # inside a mapping, YAML's null: the key absent
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, Mapping):
        return {k: _yaml_plain(v, function, f"{where}[{k!r}]") for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_yaml_plain(v, function, f"{where}[{i}]") for i, v in enumerate(value)]
    raise TypeError(f"{function}(): {where}: a {type(value).__name__} is not a value a scenario holds; "
                    "expected a str (with its unit, '25 GB/s'), an int, a float, a bool, None, a dict or a list")


def _overlay_value(value: Any, function: str, spelled: str, path: str) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is DEFAULT:
        return "null"  # removes the key; an empty text is refused (an unset shell variable)
    if value is None:
        # A section's field None is "not given" (Parallelism(dp=None) keeps the file's dp), where the
        # command line's null removes the key: set={'parallelism.dp': None} read both ways (dp 1 from a
        # script's unset option, where its author meant the file's 8). Said, not guessed.
        raise ScenarioError(f"{spelled}: {path}: None could mean the scenario's value (a section's field "
                            f"None leaves it) or the key's default (--set {path}=null); expected "
                            f"set={{{path!r}: hybridsim.DEFAULT}} to remove the key (its default again), "
                            "or the key left out to keep the scenario's value", [spelled])
    if isinstance(value, (Mapping, list, tuple)):
        return json.dumps(_yaml_plain(value, function, f"{spelled}: "))  # JSON is YAML flow syntax
    return str(value)


def _overlays(function: str, set: Overlay) -> list:
    """(text, how the caller wrote it) for each overlay: ("cluster.nodes=4", "set={'cluster.nodes': 4}").
    The library's refusals quote the second, in the caller's words (the command line's quote --set)."""
    if set is None:
        return []
    if isinstance(set, Mapping):
        out = []
        for path, value in set.items():
            if not isinstance(path, str):
                raise TypeError(f"{function}(): set={{{path!r}: {value!r}}}: expected field paths such as "
                                "'cluster.nodes' (str keys)")
            spelled = f"set={{{path!r}: {value!r}}}"
            out.append((f"{path}={_overlay_value(value, function, spelled, path)}", spelled))
        return out
    if isinstance(set, str):
        texts = [(set, f"set={set!r}")]
    elif isinstance(set, Iterable):
        texts = [(text, f"set[{i}]={text!r}") for i, text in enumerate(set)]
    else:
        raise TypeError(f"{function}(): set={set!r}: expected a dict of field paths and values, "
                        "'path=value' texts, or None")
    for text, spelled in texts:
        if not isinstance(text, str):
            raise TypeError(f"{function}(): {spelled}: expected a 'path=value' text (a str)")
        if "=" not in text:
            raise ScenarioError(f"{spelled}: expected path=value, e.g. set={{'cluster.nodes': 4}} or "
                                "set=['cluster.nodes=4']")
    return texts


_SECTIONS = {"cluster": Cluster, "workload": Workload, "training": Training, "parallelism": Parallelism,
             "pipeline": Pipeline, "communication": Communication, "variability": Variability,
             "simulation": Simulation}


def _section_overlays(function: str, **sections) -> list:
    """The overlays of run()'s and sweep()'s typed sections, as _overlays's (None: not given), in
    _SECTIONS' order."""
    out = []
    for keyword in _SECTIONS:
        value = sections.pop(keyword, None)
        if value is None:
            continue
        if not isinstance(value, _SECTIONS[keyword]):
            raise TypeError(f"{function}(): {keyword}={value!r}: expected a hybridsim."
                            f"{_SECTIONS[keyword].__name__} (or None)")
        out += value.spelled_overlays()
    return out


# The command line's shorthands of run and sweep (`--memory "32 GiB"` is `--set cluster.gpu_memory=...`),
# by the names study() and plan() give the same options.
_SHORTHANDS = {"memory": "cluster.gpu_memory", "max_events": "simulation.max_events",
               "max_sim_memory": "simulation.max_memory", "model_threads": "simulation.model_threads"}


def _shorthand_overlays(function: str, **given) -> list:
    """The overlays of run()'s and sweep()'s memory, max_events, max_sim_memory and model_threads, as
    _overlays's, quoted as written (`memory='lots': cluster.gpu_memory: ...`); None: not given, ''
    refused as the command line refuses `--memory ""`."""
    out = []
    for keyword, path in _SHORTHANDS.items():
        value = given.pop(keyword, None)
        if value is None:
            continue
        if keyword in ("max_events", "model_threads") and isinstance(value, int) and not isinstance(value, bool):
            text = str(value)
        elif keyword == "max_events" or keyword == "model_threads":
            if isinstance(value, bool) or not isinstance(value, str):
                raise TypeError(f"{function}(): {keyword}={value!r}: expected a whole number (an int"
                                f"{', or a str such as unlimited' if keyword == 'max_events' else ''}), or None")
            text = _text(function, keyword, value, "a whole number")
        else:
            text = _text(function, keyword, value, "a size such as '32 GiB'", optional=True)
        if keyword in _CAPS:
            _check_cap(keyword, text, value)
        out.append((f"{path}={text}", f"{keyword}={value!r}"))
    return out


# The caps every function takes, read by the library's one rule (as `--max-events` on every command).
_CAPS = ("max_events", "max_sim_memory")


def _check_cap(keyword: str, text: str, value: Any) -> None:
    """`text` of a cap refused in the command line's words, led by the keyword as written: an int
    unquoted (max_events=1000000000000000001), a str quoted."""
    _native_call(_native.check_cap, keyword, text, f"{keyword}={value!r}")


def _scenario(scenario: Scenario, function: str):
    """(path, text, base_dir): a file is read by the library; text and dicts are handed over."""
    if isinstance(scenario, Mapping):
        return "<dict>", json.dumps(_yaml_plain(scenario, function, "scenario"), indent=2), os.getcwd()
    if isinstance(scenario, os.PathLike):
        return _no_nul("scenario", os.fspath(scenario), "a scenario file"), None, "."
    if isinstance(scenario, str):
        if "\n" in scenario:
            return "<text>", scenario, os.getcwd()
        return _no_nul("scenario", scenario, "a scenario file"), None, "."
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
        # GPUs of one data-parallel worker, as results.csv's mp: a 2017 network's model-parallel
        # ranks, a transformer's tp × pp (dp × mp = gpus), as summary.json's "mp". tp, pp, ep and zero
        # are a transformer's, None for a 2017 network.
        self.mp: int = figures["mp"]
        self.tp: Optional[int] = figures["tp"]
        self.pp: Optional[int] = figures["pp"]
        self.ep: Optional[int] = figures["ep"]
        self.zero: Optional[int] = figures["zero"]
        self.gpus: int = figures["gpus"]
        self.global_batch: int = figures["global_batch"]
        self.step_time_ps: int = figures["step_time_ps"]
        self.p95_step_time_ps: int = figures["p95_step_time_ps"]
        self.steps: int = figures["steps"]
        # In how many of the steps the critical GPU (critical.gpu, the one last most often) was last:
        # the run's "critical GPU 3 (in 7 of 10 steps)", summary.json's "critical_gpu_steps".
        self.critical_gpu_steps: int = figures["critical_gpu_steps"]
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
        # A layer-slice (workload.model.layers_simulated): the figures above are the slice's; these
        # say what the whole model needs a GPU and whether it fits. None where every layer runs
        # (whole_model_fits also where the capacity is unknown).
        self.layers_simulated: Optional[int] = figures["layers_simulated"]
        self.layers: Optional[int] = figures["layers"]
        self.whole_model_peak_bytes: Optional[int] = figures["whole_model_peak_bytes"]
        self.whole_model_fits: Optional[bool] = figures["whole_model_fits"]
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

    # The table's "model FLOPs" line (a transformer's; None for a 2017 network): summary.json's
    # model_tflops_per_gpu and mfu (a fraction), read from it, as the command line's summary.csv has
    # them; before hunt12 only to_dict() had them.
    @property
    def model_tflops_per_gpu(self) -> Optional[float]:
        return self.to_dict().get("model_tflops_per_gpu")

    @property
    def mfu(self) -> Optional[float]:
        return self.to_dict().get("mfu")

    def trace(self, path: Union[str, os.PathLike], detail: str = "kernels", gpus: Optional[str] = None,
              window: Optional[str] = None, gzip: bool = False, step: Union[None, str, int] = None) -> str:
        """Writes a Chrome/Perfetto trace of this step (simulated again: the same inputs give the same
        step) and returns its path, as `hybridsim run --trace`; gpus, window, step as run()'s
        trace_gpus, trace_window, trace_step (None: not given; '' refused, as an empty option)."""
        path = _path("trace", "path", path, "a file for the trace")
        if path is None:
            raise TypeError("trace(): path=None: expected a file for the trace (a str or os.PathLike)")
        gpus, window, step = _trace_keywords("trace", ("gpus", gpus), ("window", window), ("step", step))
        request = dict(self._request, trace=path, trace_detail=detail, trace_gpus=gpus,
                       trace_window=window, trace_gzip=_flag("trace", "gzip", gzip), trace_step=step, out=None,
                       write_outputs=False)
        figures = _native_call(_native.run, given=request["set_spelled"], **request)
        return figures["trace"]

    def __repr__(self) -> str:
        return (f"RunResult(dp={self.dp}, mp={self.mp}, gpus={self.gpus}, step_time_ms={self.step_time_ms:.3f}, "
                f"units_per_second={self.units_per_second:.1f} {self.unit})")


def _trace_keywords(function: str, gpus: tuple, window: tuple, step: tuple) -> tuple:
    """The texts of a trace's gpus, window and step keywords ((keyword, value) each) for the native
    call, "" where None (not given). An empty text is refused, as the command line refuses
    `--trace-gpus ""`: it meant "not given" here, so an unset variable traced every class of GPUs."""
    gpus = _text(function, gpus[0], gpus[1], "GPU ranks such as '0-7', 'all' or 'classes'", optional=True)
    window = _text(function, window[0], window[1], "a time span such as '2 ms:5 ms'", optional=True)
    keyword, value = step
    if isinstance(value, bool) or not isinstance(value, (str, int, type(None))):
        raise TypeError(f"{function}(): {keyword}={value!r}: expected 'first', 'slowest' or a step number "
                        "(an int), or None")
    if isinstance(value, str):
        value = _text(function, keyword, value, "'first', 'slowest' or a step number")
    return gpus or "", window or "", "" if value is None else str(value)


def _progress_printer(line: dict) -> None:
    print(f"  simulating {line['what']}: {line['simulated_ms']:.1f} ms simulated, "
          f"{line['events'] / 1e6:.1f} M events, {line['wall_seconds']:.0f} s", file=sys.stderr)


def run(scenario: Scenario, set: Overlay = None, *, out: Union[None, str, os.PathLike] = None,
        trace: Union[None, str, os.PathLike] = None, trace_detail: Optional[str] = None,
        trace_gpus: Optional[str] = None, trace_window: Optional[str] = None, trace_gzip: bool = False,
        trace_step: Union[None, str, int] = None,
        progress: Union[None, bool, Callable[[dict], None]] = None, memory: Optional[str] = None,
        max_events: Union[None, int, str] = None, max_sim_memory: Optional[str] = None,
        model_threads: Optional[int] = None, cluster: Optional[Cluster] = None,
        workload: Optional[Workload] = None, training: Optional[Training] = None,
        parallelism: Optional[Parallelism] = None, pipeline: Optional[Pipeline] = None,
        communication: Optional[Communication] = None, variability: Optional[Variability] = None,
        simulation: Optional[Simulation] = None) -> RunResult:
    """Simulates one training step of the scenario and projects time to train (`hybridsim run`).

    out: also write the scenario's output files there (summary.json, ...), as `--out`.
    trace: write a Chrome/Perfetto trace there (`--trace`, with its detail, GPUs, window and gzip);
    trace_detail None (the default) is "kernels". Each trace_* given without trace is refused, by the
    command line's rule.
    trace_step: which step of a variability run it shows, "first", "slowest" or a number from 1
    (`--trace-step`); None (the default): the scenario's variability.trace_step. An empty trace_gpus,
    trace_window or trace_step is refused, as the command line refuses an empty option.
    progress: True prints the command line's progress lines on stderr; a callable receives each as a
    dict (what, simulated_ms, events, wall_seconds). Ctrl-C stops the step either way.
    memory, max_events, max_sim_memory, model_threads: the command line's shorthands (`--memory`, ...)
    of cluster.gpu_memory and simulation.max_events, max_memory, model_threads.
    cluster, workload, training, parallelism, pipeline, communication, variability, simulation: the
    scenario's sections typed (hybridsim/sections.py), overlaid after `set`."""
    path, text, base_dir = _scenario(scenario, "run")
    if not (progress is None or isinstance(progress, bool) or callable(progress)):
        raise TypeError(f"run(): progress={progress!r}: expected True, False, None or a callable")
    callback = _progress_printer if progress is True else (progress or None)
    overlays = _overlays("run", set) + _shorthand_overlays(
        "run", memory=memory, max_events=max_events, max_sim_memory=max_sim_memory,
        model_threads=model_threads) + _section_overlays(
        "run", cluster=cluster, workload=workload, training=training, parallelism=parallelism, pipeline=pipeline,
        communication=communication, variability=variability, simulation=simulation)
    out = _path("run", "out", out, "a folder for the outputs")
    trace = _path("run", "trace", trace, "a file for the trace")
    trace_detail = _text("run", "trace_detail", trace_detail, "kernels, steps or messages", optional=True)
    trace_gpus, trace_window, trace_step = _trace_keywords(
        "run", ("trace_gpus", trace_gpus), ("trace_window", trace_window), ("trace_step", trace_step))
    _flag("run", "trace_gzip", trace_gzip)
    request = dict(path=path, text=text, set=[o for o, _ in overlays],
                   set_spelled=[spelled for _, spelled in overlays], base_dir=base_dir,
                   out=out, write_outputs=out is not None, trace=trace, trace_detail=trace_detail,
                   trace_gpus=trace_gpus, trace_window=trace_window, trace_gzip=trace_gzip,
                   trace_step=trace_step, progress=callback)
    figures = _native_call(_native.run, given=request["set_spelled"], **request)
    request["progress"] = None
    return RunResult(figures, request)


class Rows(list):
    """The rows of a CSV text as dicts, where pandas is absent, with `attrs` as a DataFrame has them
    (a plain list dropped the notes, title and directory, so sweep's "nothing to resume" and
    collective's title were out of reach without pandas)."""

    def __init__(self, rows, attrs: dict):
        super().__init__(rows)
        self.attrs = attrs


# results.csv's columns of text, and of numbers with a fractional part, for those whose fields can all
# be empty (a sweep of 2017 networks: tp to zero; no training model: epochs to extrapolated; every
# point simulated: not_simulated), where the fields cannot tell (analysis/sweep/sweep_table.cpp).
_TEXT_COLUMNS = frozenset({"label", "unit", "extrapolated", "fits_memory", "whole_model_fits", "not_simulated"})
_REAL_COLUMNS = frozenset({"epochs", "time_to_train_hours"})
_WHOLE = re.compile(r"[+-]?[0-9]+")


def _typed_columns(frame, pandas):
    """Gives the columns with empty fields the type of their other fields: read with
    keep_default_na=False (so that text such as "NA" or "null" stays text), a column with one empty
    field was text throughout, and a sweep's step_time_ms or tp could not be summed or compared. Whole
    numbers become pandas' nullable Int64 (empty: <NA>), other numbers float64 (empty: NaN); text with
    empty fields stays text ("")."""
    for column in frame.columns:
        values = frame[column]
        if values.dtype != object or column in _TEXT_COLUMNS:
            continue
        empty = values == ""
        if not empty.any():
            continue  # text in every field: pandas has typed numbers already
        filled = values[~empty]
        if pandas.to_numeric(filled, errors="coerce").isna().any():
            continue  # text, some fields empty
        if column not in _REAL_COLUMNS and all(_WHOLE.fullmatch(v) for v in filled):
            frame[column] = pandas.array([pandas.NA if e else int(v) for v, e in zip(values, empty)],
                                         dtype="Int64")
        else:
            frame[column] = pandas.to_numeric(values.mask(empty, None), errors="raise").astype("float64")
    return frame


def _table(csv_text: str, **attrs):
    """A pandas DataFrame of a CSV text (a Rows list of dicts where pandas is absent, every field its
    text); the text itself and `attrs` ride along in `.attrs`. Empty fields are missing numbers in a
    numeric column (_typed_columns), "" in a text one."""
    try:
        import pandas
    except ImportError:
        import csv
        return Rows(csv.DictReader(io.StringIO(csv_text)), dict(attrs, csv=csv_text))
    frame = _typed_columns(pandas.read_csv(io.StringIO(csv_text), keep_default_na=False), pandas)
    frame.attrs.update(attrs, csv=csv_text)
    return frame


def sweep(scenario: Scenario, set: Overlay = None, *, jobs: int = 0, out: Union[None, str, os.PathLike] = None,
          resume: bool = False, progress: bool = False, memory: Optional[str] = None,
          max_events: Union[None, int, str] = None, max_sim_memory: Optional[str] = None,
          model_threads: Optional[int] = None, cluster: Optional[Cluster] = None,
          workload: Optional[Workload] = None, training: Optional[Training] = None,
          parallelism: Optional[Parallelism] = None, pipeline: Optional[Pipeline] = None,
          communication: Optional[Communication] = None, variability: Optional[Variability] = None,
          simulation: Optional[Simulation] = None):
    """Runs every point of the scenario's sweep: block (`hybridsim sweep`) and returns results.csv as a
    pandas DataFrame (attrs: csv, the file's text; directory; plot), or a list of dicts without pandas.
    The output files are written as the command line writes them (to `out` or outputs.directory);
    memory, max_events, max_sim_memory, model_threads and cluster, workload, training, parallelism,
    pipeline, communication, variability, simulation as run()'s, for every point."""
    path, text, base_dir = _scenario(scenario, "sweep")
    overlays = _overlays("sweep", set) + _shorthand_overlays(
        "sweep", memory=memory, max_events=max_events, max_sim_memory=max_sim_memory,
        model_threads=model_threads) + _section_overlays(
        "sweep", cluster=cluster, workload=workload, training=training, parallelism=parallelism, pipeline=pipeline,
        communication=communication, variability=variability, simulation=simulation)
    jobs = _whole("sweep", "jobs", jobs, "points at once, 0 for all cores")
    out = _path("sweep", "out", out, "a folder for the results")
    resume, progress = _flag("sweep", "resume", resume), _flag("sweep", "progress", progress)
    given = [spelled for _, spelled in overlays]
    result = _native_call(_native.sweep, path, text, [o for o, _ in overlays], given, base_dir, out, jobs, resume,
                          progress, given=given)
    return _table(result["csv"], directory=result["directory"], plot=result["plot"], notes=result["notes"])


def _limits(function: str, max_events: Any, max_sim_memory: Any) -> tuple:
    """max_events as an int or its text ("unlimited"), max_sim_memory as a size's text; None the
    default ("" to the native call). An empty text is refused, as `--max-events ""` is: it meant the
    default here, so an unset variable lifted nothing it was meant to."""
    if isinstance(max_events, bool) or not isinstance(max_events, (int, str, type(None))):
        raise TypeError(f"{function}(): max_events={max_events!r}: expected a whole number of events "
                        "(an int, or 'unlimited'; None the default)")
    if isinstance(max_events, str):
        _text(function, "max_events", max_events, "a whole number of events or 'unlimited'")
    if max_events is not None:
        _check_cap("max_events", str(max_events), max_events)
    max_sim_memory = _text(function, "max_sim_memory", max_sim_memory, "a size such as '8 GiB' or 'unlimited'",
                           optional=True)
    if max_sim_memory:
        _check_cap("max_sim_memory", max_sim_memory, max_sim_memory)
    return ("" if max_events is None else str(max_events)), max_sim_memory or ""


@dataclasses.dataclass(frozen=True)
class StudyResult:
    printed: str    # the headline table `hybridsim study` prints
    directory: str  # the report folder


def study(study_file: Union[str, os.PathLike], *, out: Union[None, str, os.PathLike] = None,
          threads: Optional[int] = None, plots: bool = True, ib_sensitivity: bool = True,
          memory: Optional[str] = None, max_events: Union[None, int, str] = None,
          max_sim_memory: Optional[str] = None, progress: bool = False) -> StudyResult:
    """The hybrid-vs-DP study of a study file (`hybridsim study`): writes its report folder.
    max_events, max_sim_memory: each step's caps (`--max-events`, `--max-sim-memory`; None the default)."""
    study_file = _path("study", "study_file", study_file, "a study file")
    if study_file is None:
        raise TypeError("study(): study_file=None: expected a study file (a str or os.PathLike)")
    out = _path("study", "out", out, "a folder for the report")
    if threads is not None:
        _whole("study", "threads", threads, "simulations at once, 0 for all cores, None for the file's")
    plots, ib_sensitivity = _flag("study", "plots", plots), _flag("study", "ib_sensitivity", ib_sensitivity)
    memory = _text("study", "memory", memory, "each GPU's memory such as '32 GiB'", optional=True)
    max_events, max_sim_memory = _limits("study", max_events, max_sim_memory)
    progress = _flag("study", "progress", progress)
    result = _native_call(_native.study, study_file, out, threads, plots, ib_sensitivity, memory, max_events,
                          max_sim_memory, progress)
    return StudyResult(**result)


@dataclasses.dataclass(frozen=True)
class PlanResult:
    printed: str  # what `hybridsim plan` prints
    ranked: list  # best first: a dict per configuration (label, dp, mp, step_time_ps, ...) simulated
    not_simulated: list  # labels of the configurations not simulated (past their caps): not ranked
    # A transformer's layouts kept to their closed form (over the candidates' budget, or past the
    # best `simulate` by the estimate), best estimate first, listed apart: never ranked with `ranked`.
    # Their rows have the same keys, `simulated` False and `step_time_ps` None. Empty for the 2017
    # networks, whose unsimulated configurations have no estimate row.
    estimated: list = dataclasses.field(default_factory=list)


# The 2017 networks' options, which the transformer planner has no use for, and the transformer
# planner's, which the 2017 networks' has none for: refused, not ignored, as the command line does.
_PLAN_2017_ONLY = ("objective", "variant", "show_unfit")
_PLAN_TRANSFORMER_ONLY = ("gpu", "global_batch", "critical_batch", "simulate")


def plan(model: str, gpus: int = 8, *, cluster: Optional[str] = None, objective: Optional[str] = None,
         variant: Optional[str] = None, ib_bandwidth: Optional[str] = None, memory: Optional[str] = None,
         show_unfit: Optional[bool] = None, gpu: Optional[str] = None, global_batch: Optional[int] = None,
         critical_batch: Union[None, int, float] = None, simulate: Optional[int] = None, threads: int = 0,
         top: int = 5, max_events: Union[None, int, str] = None, max_sim_memory: Optional[str] = None,
         progress: bool = False) -> PlanResult:
    """The fastest configurations of a model on `gpus` GPUs (`hybridsim plan`), with the command line's
    options as keywords.

    The 2017 networks (gnmt, inception-v3, biglstm, or a profile file): dp × mp, placement, buckets and
    algorithm on `cluster` (default 'dgx1-v100'), ranked by `objective` ('time-to-train', the default,
    or 'throughput') under the efficiency curve `variant` ('default'); `show_unfit` ranks those that do
    not fit too.
    A named transformer (gpt3-175b, llama3-70b, mixtral-8x7b, ...; transformer_models()): dp, tp, pp,
    ep, sequence parallelism, micro-batch, recompute, ZeRO and the pipeline's schedule, on `gpu`
    ('a100-80gb', 'a100', 'a100-40gb', 'h100', 'h200') and its DGX/HGX machine unless `cluster` says,
    at `global_batch` sequences a step (None: the model's published batch), ranked by tokens/s, or by
    time to train with `critical_batch` (Kaplan's critical batch in tokens); the best `simulate` (8) by
    the closed-form estimate are simulated (0: all that fit), the rest are in `estimated`.
    max_events, max_sim_memory: each candidate's caps (`--max-events`, `--max-sim-memory`; None the
    default: 2e8 events a 2017 candidate, past it in not_simulated; 2e7 a transformer's, past it kept
    to its closed form in `estimated`)."""
    model = _text("plan", "model", model, "gnmt, inception-v3, biglstm, a profile file or a transformer")
    gpus = _whole("plan", "gpus", gpus, "a whole number of GPUs")
    cluster = _text("plan", "cluster", cluster, "a machine preset such as 'dgx1-v100'", optional=True)
    ib_bandwidth = _text("plan", "ib_bandwidth", ib_bandwidth, "a rate such as '200 Gb/s'", optional=True)
    memory = _text("plan", "memory", memory, "each GPU's memory such as '32 GiB'", optional=True)
    threads = _whole("plan", "threads", threads, "simulations at once, 0 for all cores")
    top = _whole("plan", "top", top, "configurations to print")
    if top < 1:
        raise ScenarioError(f"top={top}: expected at least 1 configuration to print")
    max_events, max_sim_memory = _limits("plan", max_events, max_sim_memory)
    progress = _flag("plan", "progress", progress)
    given = dict(objective=objective, variant=variant, show_unfit=show_unfit, gpu=gpu,
                 global_batch=global_batch, critical_batch=critical_batch, simulate=simulate)
    if _native.is_llm_plan_model(model):
        for keyword in _PLAN_2017_ONLY:
            if given[keyword] is not None:
                raise ScenarioError(f"{keyword}={given[keyword]!r}: not for a transformer ({model}): it is "
                                    "ranked by tokens/s, or by time to train with critical_batch=TOKENS, "
                                    "over the layouts that fit")
        options = _native.LlmPlanOptions()
        options.model, options.gpus, options.cluster = model, gpus, cluster or ""
        options.gpu = _text("plan", "gpu", gpu, "a GPU such as 'h100'", optional=True) or ""
        if global_batch is not None:
            if isinstance(global_batch, bool) or not isinstance(global_batch, int):
                raise TypeError(f"plan(): global_batch={global_batch!r}: expected sequences a step (an int)")
            if not -2**63 <= global_batch < 2**63:
                raise ScenarioError(f"global_batch={global_batch}: far beyond any limit; expected sequences a step")
            options.global_batch = global_batch
        if critical_batch is not None:
            options.critical_batch = _number("plan", "critical_batch", critical_batch, "tokens")
        if simulate is not None:
            options.simulate = _whole("plan", "simulate", simulate, "candidates to simulate, 0 for all")
        options.ib_bandwidth, options.memory, options.threads = ib_bandwidth, memory, threads
        options.max_events, options.max_sim_memory = max_events, max_sim_memory
        return PlanResult(**_native_call(_native.plan_llm, options, top, progress))
    options = _native.PlanOptions()
    options.model, options.gpus, options.cluster = model, gpus, cluster or "dgx1-v100"
    if any(given[keyword] is not None for keyword in _PLAN_TRANSFORMER_ONLY):
        _native_call(_native.check_plan_model, options)  # a misspelt transformer's name first
    for keyword in _PLAN_TRANSFORMER_ONLY:
        if given[keyword] is not None:
            raise ScenarioError(f"{keyword}={given[keyword]!r}: transformers only (model='gpt3-175b', "
                                f"'llama3-70b', ...); {model} takes "
                                + ("cluster=" if keyword == "gpu" else "none"))
    objective = _text("plan", "objective", "time-to-train" if objective is None else objective,
                      "'time-to-train' or 'throughput'")
    variant = _text("plan", "variant", "default" if variant is None else variant,
                    "a statistical-efficiency curve variant such as 'default'")
    show_unfit = _flag("plan", "show_unfit", False if show_unfit is None else show_unfit)
    options.objective, options.variant, options.ib_bandwidth, options.memory = objective, variant, ib_bandwidth, memory
    options.show_unfit, options.threads = show_unfit, threads
    options.max_events, options.max_sim_memory = max_events, max_sim_memory
    return PlanResult(**_native_call(_native.plan, options, top, progress))


def _collective_text(what: str):
    def check(keyword: str, value: Any) -> str:
        return _text("collective", keyword, value, what)
    return check


def _collective_events(keyword: str, value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise TypeError(f"collective(): {keyword}={value!r}: expected a whole number of events "
                        "(an int, or 'unlimited')")
    _check_cap(keyword, str(value), value)
    return str(value)


# collective()'s keywords, each with the check of its type (the library reads the values).
_COLLECTIVE_KEYWORDS = {
    "topology": _collective_text("a preset name such as 'dgx1-v100' or a topology YAML file"),
    "op": _collective_text("allreduce, reducescatter, allgather, broadcast or alltoall"),
    "nodes": lambda k, v: _whole("collective", k, v, "machines"),
    "gpus": _collective_text("GPU ranks such as '0-3,8' (None for every GPU)"),
    "gpus_per_node": lambda k, v: _whole("collective", k, v, "GPUs per machine, 0 for the preset's"),
    "algorithm": _collective_text("auto, ring, tree or hierarchical"),
    "protocol": _collective_text("auto, ll, ll128, simple or ideal"),
    "fast_path": _collective_text("auto, bounded or off"),
    "channels": lambda k, v: _whole("collective", k, v, "channels, 0 as NCCL would"),
    "pcie_only": lambda k, v: _flag("collective", k, v),
    "fabric": _collective_text("'fat-tree' or 'rail-optimized' (with nodes > 1)"),
    "oversubscription": lambda k, v: _number("collective", k, v, "a ratio of 1 or more (with nodes > 1)"),
    "message_size": _collective_text("a size such as '512 KiB'"),
    "reduction_bandwidth": _collective_text("a rate such as '100 GB/s', 'auto' (the GPU's HBM peak / 4) or 'off'"),
    "min_bytes": _collective_text("a size such as '8 B'"),
    "max_bytes": _collective_text("a size such as '256 MiB'"),
    "step_factor": lambda k, v: _number("collective", k, v, "a factor above 1"),
    "max_events": _collective_events,
    "max_sim_memory": _collective_text("a size such as '8 GiB', or 'unlimited'"),
}


def collective(topology: str, *, op: str = "allreduce", nodes: int = 1, gpus: Optional[str] = None, **options):
    """nccl-tests for the simulator (`hybridsim collective`): a DataFrame of its CSV columns (attrs:
    csv, title, table, json, notes: a topology file's links machines rarely have, the notes the
    command line prints on stderr). Other options by their command-line names with underscores:
    algorithm, protocol, channels, min_bytes="8 B", max_bytes="256 MiB", step_factor, message_size,
    reduction_bandwidth, fast_path, pcie_only, gpus_per_node, fabric, oversubscription, max_events, max_sim_memory."""
    request = _native.CollectiveRequest()
    given = dict(options, topology=topology, op=op, nodes=nodes)
    if gpus is not None:  # every GPU; gpus='' is refused, as `--gpus ""` is (it meant every GPU)
        given["gpus"] = gpus
    for name, value in given.items():
        if name not in _COLLECTIVE_KEYWORDS:
            raise TypeError(f"collective() got an unexpected option {name!r}")
        setattr(request, name, _COLLECTIVE_KEYWORDS[name](name, value))
    request.reduction_given = "reduction_bandwidth" in options  # refused beside an op that adds nothing up
    result = _native_call(_native.collective, request)
    return _table(result["csv"], title=result["title"], table=result["table"], json=result["json"],
                  notes=result["notes"])


class TopologyReport(str):
    """The report `hybridsim topology` prints, as a str, with `notes`: a topology file's links machines
    rarely have (an InfiniBand link inside a machine), the notes the command line prints on stderr, as
    run()'s RunResult.notes (empty for a preset)."""

    notes: list

    def __new__(cls, text: str, notes: Optional[list] = None):
        # notes=None: a copy or pickle makes the str first (str's __getnewargs__), then sets .notes.
        report = super().__new__(cls, text)
        report.notes = [] if notes is None else notes
        return report


def topology(preset_or_file: str, *, nodes: int = 1, gpus_per_node: int = 0, fabric: Optional[str] = None,
             oversubscription: Optional[float] = None, route: Optional[tuple] = None, rings: bool = False,
             pcie_only: bool = False, dot: Union[None, str, os.PathLike] = None) -> TopologyReport:
    """Devices, links, per-GPU bandwidth, and on request a route and the rings (`hybridsim topology`):
    the report text, a str whose `notes` are a topology file's notes (TopologyReport)."""
    preset_or_file = _text("topology", "preset_or_file", preset_or_file,
                           "a preset name such as 'dgx1-v100' or a topology YAML file")
    nodes = _whole("topology", "nodes", nodes, "machines")
    gpus_per_node = _whole("topology", "gpus_per_node", gpus_per_node, "GPUs per machine, 0 for the preset's")
    # None: the fabric's default (fat tree, full bisection); either given on one machine is refused.
    if fabric is not None:
        fabric = _text("topology", "fabric", fabric, "'fat-tree' or 'rail-optimized'")
    if oversubscription is not None:
        oversubscription = _number("topology", "oversubscription", oversubscription, "a ratio of 1 or more")
    if route is not None and (not isinstance(route, (tuple, list)) or len(route) != 2 or
                              any(isinstance(g, bool) or not isinstance(g, int) for g in route)):
        raise TypeError(f"topology(): route={route!r}: expected two GPU ranks such as (0, 5), or None")
    if route is not None and any(g not in _INT_RANGE for g in route):
        raise ScenarioError(f"route={tuple(route)!r}: far beyond any GPU; expected two GPU ranks such as (0, 5)")
    rings, pcie_only = _flag("topology", "rings", rings), _flag("topology", "pcie_only", pcie_only)
    dot = _path("topology", "dot", dot, "a Graphviz file to write")
    request = _native.TopologyRequest()
    request.topology, request.nodes, request.gpus_per_node = preset_or_file, nodes, gpus_per_node
    request.fabric, request.oversubscription = fabric, oversubscription
    request.route = None if route is None else tuple(route)
    request.rings, request.pcie_only, request.dot = rings, pcie_only, dot
    result = _native_call(_native.topology, request)
    return TopologyReport(result["text"], result["notes"])
