// The scenario table's part for the `variability`, `simulation`, `outputs` and `sweep` sections (how a run is
// simulated, what it writes, and the points of a sweep): a slice of the one declaration of every key, in
// table order. schema_table.cpp assembles the table from the parts; they are files of their own only to keep
// each a readable size. Internal to scenarios/loader.
#pragma once
#include "scenarios/loader/schema_keys_common_parts.h"

namespace hybridsim::scenarios::schema_keys {

inline constexpr ScenarioKey kRun[] = {
    {{.path = "variability",
      .kind = K::Section,
      .help = "What makes the workers of a synchronous step differ (workloads/README.md, "
              "\"Variability\"): several steps are simulated, each with its own draws, and the run "
              "reports their mean and p95 step time."}},
    {{.path = "variability.steps",
      .kind = K::Integer,
      .default_text = "1",
      .min = 1,
      .max = 10000,
      .help = "Steps to simulate; the step time reported is their mean (throughput and time to "
              "train follow it), with p95, min and max."},
     bind<Member<&Scenario::variability, &workloads::Variability::steps>>()},
    {{.path = "variability.seed",
      .kind = K::Integer,
      .default_text = "1",
      .min = 0,
      .max = 9e15,
      .help = "Seeds every draw; the same seed gives the same bytes."},
     bind<Member<&Scenario::variability, &workloads::Variability::seed>>()},
    {{.path = "variability.kernel_jitter",
      .kind = K::Number,
      .default_text = "0",
      .min = 0,
      .max = 1,
      .help = "Coefficient of variation of a log-normal factor of mean 1, drawn per GPU per step "
              "and applied to all its kernels (0.05: a 5% noisy cluster); 0 is off."},
     bind<Member<&Scenario::variability, &workloads::Variability::kernel_jitter>>()},
    {{.path = "variability.sequence_lengths",
      .kind = K::Choice,
      .default_text = "fixed",
      .choices = "fixed|wmt16-en-de",
      .help = "fixed: the profile's lengths; wmt16-en-de: each worker's batch is padded to its "
              "longest pair, lengths drawn from WMT16 En-De (47.9 tokens per pair on average, at "
              "most 50 per side); for encoder-decoder profiles (gnmt)."},
     bind<Member<&Scenario::variability, &workloads::Variability::lengths>>()},
    {{.path = "variability.batching",
      .kind = K::Choice,
      .default_text = "bucketed",
      .choices = "bucketed|random",
      .help = "How batches are formed from the lengths: bucketed, as NVIDIA's GNMT sampler (pairs "
              "binned by length; all workers of a step draw from one bin), or random."},
     bind<Member<&Scenario::variability, &workloads::Variability::batching>>()},
    {{.path = "variability.length_buckets",
      .kind = K::Integer,
      .default_text = "5",
      .min = 1,
      .max = 50,
      .help = "Bins of the bucketed sampler (NVIDIA's default 5: widths of 10 tokens)."},
     bind<Member<&Scenario::variability, &workloads::Variability::length_buckets>>()},
    {{.path = "variability.trace_step",
      .kind = K::Integer,
      .default_text = "first",
      .words = "first|slowest",
      .min = 1,
      .max = 10000,
      .help = "Which step a trace (outputs.trace, or hybridsim run --trace) shows, as hybridsim run "
              "--trace-step, which overrides it: first, slowest (every step simulated untraced "
              "first, then the slowest again, traced) or a step number up to variability.steps. "
              "Refused where no trace is written (no outputs.trace, no --trace)."},
     bind_unless_default<Member<&Scenario::trace_step>, TraceStepCodec>()},

    {{.path = "simulation",
      .kind = K::Section,
      .help = "Caps on what simulating one step may take, checked before the work (README.md, \"Limits\"): "
              "the events it would process and the memory its state would hold, estimated before the "
              "step starts and again as a collective starts in full; and the threads it may use."}},
    {{.path = "simulation.max_events",
      .kind = K::Integer,
      .default_fn = [] { return std::to_string(sim::kDefaultMaxEvents); },
      .words = "unlimited",
      .min = 0,
      .max = static_cast<double>(sim::kLargestEventsCap),
      .help = "Events one step may simulate (the default, 2000000000, is about 7 minutes at the 5 "
              "million events a second measured on this machine); 0 or unlimited: no cap. Also "
              "--max-events. communication.fast_path: auto keeps most rings far below it."},
     bind_unless_default<Member<&Scenario::simulation, &sim::SimulationLimits::max_events>>()},
    {{.path = "simulation.max_memory",
      .kind = K::Size,
      .default_fn = [] { return sim::format_bytes(sim::Bytes::of(sim::kDefaultMaxMemory)); },
      .words = "unlimited",
      .min = 0,
      .help = "Memory one step's simulation state may hold: per-rank and per-route state of its "
              "collectives and their messages in flight at once; 0 B or unlimited: no cap. Also "
              "--max-sim-memory."},
     bind_unless_default<Member<&Scenario::simulation, &sim::SimulationLimits::max_memory>>()},
    {{.path = "simulation.model_threads",
      .kind = K::Integer,
      .default_text = "0",
      .min = 0,
      .max = 64,
      .help = "Threads for a folded step's tree model runs (NCCL trees under fast_path: bounded), "
              "computed ahead of need; the same results whatever the number. 0: min(2, the machine's "
              "hardware threads); 1: only the simulation's own. Sweeps and studies that run points "
              "on several threads use 1. Also --model-threads."},
     bind_unless_default<Member<&Scenario::simulation, &sim::SimulationLimits::model_threads>>()},

    {{.path = "outputs", .kind = K::Section, .help = "What a run writes."}},
    {{.path = "outputs.directory",
      .kind = K::Path,
      .default_text = "auto",
      .words = "auto",
      .help = "Where files go, relative to the current directory; auto: out/<scenario file name>."},
     read_by(bind<Member<&Scenario::outputs, &OutputSettings::directory>>(), read_output_directory)},
    {{.path = "outputs.formats",
      .kind = K::List,
      .default_text = "[table]",
      .type_doc = "a list of table, json, csv",
      .help = "Result formats."},
     bind<Member<&Scenario::outputs, &OutputSettings::formats>, FormatsCodec>()},
    {{.path = "outputs.formats[]",
      .kind = K::Choice,
      .choices = "table|json|csv",
      .help = "table: printed and saved as text; json and csv: saved."}},
    {{.path = "outputs.trace",
      .kind = K::Section,
      .help = "A Chrome/Perfetto trace of the step (of every point, in a sweep); absent: no "
              "trace."},
     {.read = read_trace_section}},
    {{.path = "outputs.trace.file",
      .kind = K::Path,
      .default_text = "trace.json",
      .help = "Relative to outputs.directory (or --out). A sweep writes one trace per point, the "
              "point's index before the extension: trace-0.json, trace-1.json, ..."},
     bind<TraceMember<&TraceSettings::file>, Value, has_trace>()},
    {{.path = "outputs.trace.detail",
      .kind = K::Choice,
      .default_text = "kernels",
      .choices = "kernels|steps|messages",
      .help = "kernels: kernels, collectives and transfers per GPU stream, link utilization; steps: "
              "also each ring step inside its collective; messages: also every message on every "
              "link (large)."},
     bind<TraceMember<&TraceSettings::detail>, Value, has_trace>()},
    {{.path = "outputs.trace.gpus",
      .kind = K::Text,
      .default_text = "classes",
      .words = "classes|all",
      .type_doc = "classes, all or GPU ranks such as \"0-7\" or \"0,2,4-7\"",
      .help = "Which GPUs' tracks to keep, as hybridsim run --trace-gpus; classes: where the step "
              "folds onto one GPU per class of alike GPUs, those GPUs (each named with how many it "
              "stands for) and the critical GPU, else every GPU; all: every GPU, simulated in full."},
     bind<TraceMember<&TraceSettings::gpus>, GpuListCodec, has_trace>()},
    {{.path = "outputs.trace.window",
      .kind = K::Text,
      .default_text = "all",
      .words = "all",
      .type_doc = "all or \"START:END\" times such as \"0 ms:50 ms\"",
      .help = "Keep only events in [START, END); slices crossing it are clipped."},
     bind<TraceMember<&TraceSettings::window>, WindowCodec, has_trace>()},
    {{.path = "outputs.trace.gzip",
      .kind = K::Boolean,
      .default_text = "false",
      .help = "Compress the trace; .gz is added to a file name that lacks it (a name ending in .gz "
              "is compressed anyway)."},
     bind<TraceMember<&TraceSettings::gzip>, Value, has_trace>()},

    {{.path = "sweep",
      .kind = K::Section,
      .help = "Run the scenario at several values of some fields; each point is the scenario with "
              "the point's values set as by --set."},
     {.read = read_if_present}},
    {{.path = "sweep.mode",
      .kind = K::Choice,
      .default_text = "product",
      .choices = "product|zip",
      .help = "product: every combination, the last parameter varying fastest; zip: the i-th values "
              "of all parameters together (equal lengths)."},
     bind<Member<&Scenario::sweep, &SweepSettings::mode>, Value, has_sweep>()},
    {{.path = "sweep.parameters",
      .kind = K::List,
      .required = true,
      .type_doc = "a list of {path, values}",
      .help = "The fields to vary, at least one."},
     {.read = read_sweep_parameters, .write = write_sweep_parameters}},
    {{.path = "sweep.parameters[]", .kind = K::Section, .help = "One varied field."}},
    {{.path = "sweep.parameters[].path",
      .kind = K::Text,
      .required = true,
      .help = "A field path as for --set (cluster.links.nvlink.bandwidth, parallelism); not in "
              "sweep, not overlapping another parameter's path, and not one that changes no point's "
              "result: name, outputs (outputs.trace.* may vary), simulation."}},
    {{.path = "sweep.parameters[].values",
      .kind = K::List,
      .required = true,
      .type_doc = "a list of values",
      .help = "Values in order; each is any YAML value valid at that path (a mapping too)."}},
    {{.path = "sweep.parameters[].values[]",
      .kind = K::Any,
      .type_doc = "a value for that path",
      .help = "One value."}},
};

}  // namespace hybridsim::scenarios::schema_keys
