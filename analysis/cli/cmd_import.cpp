// `hybridsim import`: turns measured profiles into hybridsim profiles — `import kineto TRACE.json`
// (a PyTorch profiler trace) and `import pipedream GRAPH.txt` (PipeDream's profiler graph, optionally
// corrected) — and replays the result on one simulated GPU as a check against what was measured
// (the trace's iteration span, the graph's summed times). The profile goes to --out (written
// atomically) or to stdout; the report to stdout, or stderr when the profile is there.
#include <boost/program_options.hpp>
#include <filesystem>
#include <iostream>
#include <string>

#include "analysis/api/option_value.h"
#include "analysis/cli/commands.h"
#include "analysis/cli/parse_options.h"
#include "analysis/import/import_replay.h"
#include "analysis/import/read_progress.h"
#include "sim/error.h"
#include "workloads/gpu/cost_model.h"
#include "workloads/gpu/gpu.h"
#include "workloads/import/import_kineto.h"
#include "workloads/import/import_pipedream.h"

namespace po = boost::program_options;

namespace hybridsim::cli {

namespace {

constexpr const char* kUsage =
    "usage: hybridsim import kineto TRACE.json [--steps K] [--keep-gaps] [--out PROFILE] [options]\n"
    "       hybridsim import pipedream GRAPH.txt [--batch N] [--correct] [--out PROFILE] [options]\n"
    "(hybridsim import kineto --help, hybridsim import pipedream --help for the options)\n";

struct Common {
  std::string input, out, network, unit = "samples";
  std::int64_t batch = 1, units_per_step = 0;
};

void add_common(po::options_description& d, Common& c) {
  d.add_options()("help,h", "show this help")("out,o", po::value(&c.out),
                                              "write the profile here (atomically); default: stdout")(
      "network", po::value(&c.network), "the profile's network name; default: from the file name")(
      "batch,b", po::value(&c.batch)->default_value(1),
      "samples per GPU per step the input was measured with")(
      "unit", po::value(&c.unit)->default_value("samples"), "what throughput counts (images, tokens, ...)")(
      "units-per-step", po::value(&c.units_per_step)->default_value(0),
      "throughput units per step; 0: the batch")(
      "quiet,q", "no progress lines (a large file prints one on stderr every few seconds while read)");
}

// The input's size for progress lines; 0 (no lines) for a pipe or a missing file (the import says why).
std::int64_t file_bytes(const std::string& input) {
  std::error_code unknown;
  const auto size = std::filesystem::file_size(input, unknown);
  return unknown ? 0 : static_cast<std::int64_t>(size);
}

// Where progress lines go: stderr, or nowhere under --quiet (both formats alike).
std::ostream* progress_out(const po::variables_map& vm) { return vm.count("quiet") ? nullptr : &std::cerr; }

// The visible options plus the positional input file (required, not listed in --help).
po::variables_map parse(int argc, const char* const* argv, const po::options_description& d, Common& c) {
  po::options_description hidden;
  hidden.add_options()("input", po::value(&c.input), "the file to import");
  po::options_description all;
  all.add(d).add(hidden);
  po::positional_options_description positional;
  positional.add("input", 1);
  po::variables_map vm;
  refuse_empty_arguments(argc, argv, all);
  refuse_signed_arguments(argc, argv, all);
  try {
    po::store(
        po::command_line_parser(argc, argv).options(all).positional(positional).style(kOptionStyle).run(),
        vm);
  } catch (const po::invalid_option_value& e) {
    refuse_typed_value(argc, argv, all, e);
  }
  if (vm.count("help")) return vm;
  if (!vm.count("input"))
    throw InputError(std::string("no file to import given (hybridsim ") + "import " + argv[0] + " FILE ...)");
  refuse_empty_values(vm, all, positional);
  return vm;
}

int import_kineto_command(int argc, const char* const* argv) {
  Common c;
  workloads::KinetoImportOptions o;
  int device = -1;
  po::options_description d(
      "hybridsim import kineto TRACE.json [options]\n\n"
      "Imports a PyTorch profiler (Kineto) Chrome trace: whole iterations (ProfilerStep#N) of one\n"
      "GPU become a profile (ops, kernels, gradients from NCCL all-reduces or AccumulateGrad shapes,\n"
      "the optimizer's time), which is then replayed on one simulated GPU against the measured\n"
      "iteration span. The file is streamed, never loaded whole.\n\noptions");
  add_common(d, c);
  d.add_options()("steps,k", po::value(&o.steps)->default_value(0),
                  "how many iterations to average, the last complete ones; 0: all")(
      "keep-gaps",
      "keep CPU launch gaps (GPU idle) as idle time before the following kernel, so "
      "that one-GPU replay reproduces the measured span exactly")(
      "device", po::value(&device)->default_value(-1), "which GPU's activities; default: the lowest id");
  auto vm = parse(argc, argv, d, c);
  if (vm.count("help")) {
    std::cout << d << "\n";
    return 0;
  }
  po::notify(vm);
  o.keep_gaps = vm.count("keep-gaps") > 0;
  // -1 is the default's "the lowest id"; a negative id written would silently mean the same.
  if (given(vm, "device") && device < 0)
    throw InputError("--device " + std::to_string(device) +
                     ": expected a GPU id, 0 or more (leave the option out for the lowest id)");
  if (device >= 0) o.device = device;
  o.network = c.network;
  o.batch = c.batch;
  o.throughput_unit = c.unit;
  o.units_per_step = c.units_per_step;
  const workloads::KinetoImport imported = [&] {
    const std::int64_t bytes = file_bytes(c.input);
    analysis::ReadProgress lines(progress_out(vm), "import", bytes, workloads::kineto_import_passes(bytes));
    workloads::KinetoImportOptions told = o;
    told.passes_known = [&lines](int passes) { lines.set_passes(passes); };
    return workloads::import_kineto(c.input, told);
  }();
  // Fewer complete iterations than --steps asks to average would be averaged without a word.
  const auto found = static_cast<int>(imported.report.iterations.size());
  if (o.steps > found)
    throw InputError("--steps " + std::to_string(o.steps) + ": " + c.input + " has " + std::to_string(found) +
                     " complete iteration" + (found == 1 ? "" : "s") + " (ProfilerStep#N) of device " +
                     std::to_string(imported.report.device) + "; expected --steps " + std::to_string(found) +
                     " or less (0: all)");

  analysis::emit_imported_profile(imported.profile, analysis::kineto_replay_report(imported, o.keep_gaps),
                                  c.out);
  return 0;
}

int import_pipedream_command(int argc, const char* const* argv) {
  Common c;
  workloads::PipeDreamOptions o;
  workloads::PipeDreamCorrection correction;
  std::string sync = "0.25 ms", floor = "10 us", optimizer_time = "0 s";
  po::options_description d(
      "hybridsim import pipedream GRAPH.txt [options]\n\n"
      "Imports a PipeDream profiler graph (nodeN -- module -- forward_compute_time=..., ...; edges\n"
      "as tab-indented nodeA -- nodeB lines). --correct removes PipeDream's measurement artefacts:\n"
      "a per-module synchronization in forward times, backward time leaking between neighbours.\n"
      "The profile is then replayed on one simulated GPU against the graph's summed times.\n\noptions");
  add_common(d, c);
  d.add_options()("correct",
                  "subtract --sync-overhead from forward times and spread backward time "
                  "over runs of neighbours in proportion to forward time")(
      "sync-overhead", po::value(&sync)->default_value("0.25 ms"),
      "per-module forward overhead removed by --correct")(
      "min-forward", po::value(&floor)->default_value("10 us"), "floor of a corrected forward time")(
      "no-redistribute", "with --correct: leave backward times as recorded")(
      "gpu", po::value(&o.gpu)->default_value("unknown"), "the GPU the graph was profiled on")(
      "precision", po::value(&o.precision)->default_value("fp32"), "fp32, fp16, ...")(
      "optimizer", po::value(&o.optimizer.name)->default_value("none"), "the optimizer's name")(
      "optimizer-time-per-gib", po::value(&optimizer_time)->default_value("0 s"),
      "optimizer time per GiB of parameters (PipeDream does not measure it)");
  auto vm = parse(argc, argv, d, c);
  if (vm.count("help")) {
    std::cout << d << "\n";
    return 0;
  }
  for (const char* option : {"sync-overhead", "min-forward", "no-redistribute"})
    refuse_without(vm, option, "correct", "--correct");
  po::notify(vm);
  // The profile's metadata.precision: a name the loader and the memory model know, not free text.
  if (!workloads::find_precision(o.precision))
    throw InputError("--precision \"" + o.precision + "\": expected fp32, tf32, fp16, bf16, amp or fp8");
  // The profile's metadata.gpu: a GPU key, or a name as a trace records it ("Tesla V100-SXM2-16GB");
  // anything else would be kept as written and priced as an unknown GPU without a word.
  if (given(vm, "gpu") && workloads::find_gpu(o.gpu) == nullptr) workloads::gpu_by_key(o.gpu, "--gpu");
  o.network = c.network;
  o.batch = c.batch;
  o.throughput_unit = c.unit;
  o.units_per_step = c.units_per_step;
  o.optimizer.time_per_gib = api::parse_option("--optimizer-time-per-gib", optimizer_time, sim::parse_time);
  // A time per GiB with no optimizer named would price an update the profile calls "none".
  if (o.optimizer.name == "none" && o.optimizer.time_per_gib > sim::Time::zero())
    throw InputError("--optimizer-time-per-gib " + optimizer_time +
                     " needs --optimizer NAME (the optimizer it times; the profile would say none)");
  if (vm.count("correct")) {
    correction.sync_overhead = api::parse_option("--sync-overhead", sync, sim::parse_time);
    correction.min_forward = api::parse_option("--min-forward", floor, sim::parse_time);
    correction.redistribute_backward = vm.count("no-redistribute") == 0;
    o.correction = correction;
  }
  const auto imported = [&] {
    analysis::ReadProgress lines(progress_out(vm), "import", file_bytes(c.input));
    return workloads::import_pipedream(workloads::load_pipedream_graph(c.input), o);
  }();

  analysis::emit_imported_profile(
      imported.profile, analysis::pipedream_replay_report(imported, o.correction.has_value()), c.out);
  return 0;
}

}  // namespace

int import_command(int argc, const char* const* argv) {
  const std::string what = argc > 1 ? argv[1] : "";
  if (what == "kineto") return import_kineto_command(argc - 1, argv + 1);
  if (what == "pipedream") return import_pipedream_command(argc - 1, argv + 1);
  if (what == "--help" || what == "-h") {
    std::cout << kUsage;
    return 0;
  }
  std::cerr << (what.empty() ? std::string("hybridsim import: which format?\n")
                             : "hybridsim import: unknown format \"" + what + "\"\n")
            << kUsage;
  return 2;
}

}  // namespace hybridsim::cli
