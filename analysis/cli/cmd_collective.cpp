// `hybridsim collective`: nccl-tests for the simulator — one collective over a set of GPUs of a
// preset or custom topology, at sizes from --min-bytes to --max-bytes, as a table (size, count, time,
// algbw, busbw), CSV or JSON.
#include <boost/program_options.hpp>
#include <filesystem>
#include <iostream>
#include <string>

#include "analysis/cli/commands.h"
#include "analysis/cli/parse_options.h"
#include "analysis/collective/collective_report.h"
#include "analysis/collective/collective_sweep.h"
#include "analysis/platform/platform.h"
#include "sim/error.h"
#include "sim/text.h"
#include "topology/gpu_list.h"
#include "topology/preset_registry.h"

namespace po = boost::program_options;

namespace hybridsim::cli {

namespace {

// The command line as given, before it is parsed into units and choices.
struct CollectiveArgs {
  std::string topology, gpus, op = "allreduce", algorithm = "auto", format = "table";
  std::string protocol = "auto", fast_path = "auto";
  std::string max_events = std::to_string(sim::kDefaultMaxEvents);
  std::string max_sim_memory = sim::format_bytes(sim::Bytes::of(sim::kDefaultMaxMemory));
  std::string message_size = sim::format_bytes(sim::CollectiveConfig{}.message_size);
  std::string min_bytes = "8 B", max_bytes = "256 MiB";
  std::string reduction = sim::format_bandwidth(sim::CollectiveConfig{}.reduction_bandwidth);
  int nodes = 1;
  int gpus_per_node = 0;
  int channels = 0;
  double step_factor = 2.0;
};

po::options_description collective_options(CollectiveArgs& a) {
  po::options_description options(
      "hybridsim collective --topology PRESET-or-FILE --op OP [options]\n\n"
      "Simulates one collective at a range of sizes and prints nccl-tests columns:\n"
      "algbw = size / time, busbw = algbw x 2(n-1)/n (all-reduce), x (n-1)/n (reduce-scatter,\n"
      "all-gather), x 1 (broadcast). GB/s are 10^9 bytes per second.\n\noptions");
  options.add_options()("help,h", "show this help")(
      "topology,t", po::value(&a.topology)->required(),
      ("a preset (" + topology::preset_name_list() + ") or a topology YAML file").c_str())(
      "nodes,n", po::value(&a.nodes)->default_value(1), "machines (a cluster joined by InfiniBand)")(
      "gpus-per-node", po::value(&a.gpus_per_node)->default_value(0),
      "GPUs per machine for presets that allow it (ideal-ring, fully-connected, nvswitch, dgx2, "
      "pcie-server); 0 = the preset's")(
      "gpus,g", po::value(&a.gpus),
      "GPU ranks and ranges, e.g. 0-3 (the first four) or 0,1,4-7; default: all")(
      "op,o", po::value(&a.op)->default_value("allreduce"),
      "allreduce | reducescatter | allgather | broadcast")(
      "algorithm,a", po::value(&a.algorithm)->default_value("auto"),
      "auto (NCCL's choice per size) | ring | tree | hierarchical (tree, hierarchical: all-reduce only)")(
      "protocol,p", po::value(&a.protocol)->default_value("auto"),
      "auto (NCCL's choice per size) | ll | ll128 | simple | ideal (links at line rate, only their "
      "latencies: the alpha-beta ring)")(
      "channels,c", po::value(&a.channels)->default_value(0),
      "rings in parallel; 0 = as NCCL would (one per NIC across machines)")(
      "message-size", po::value(&a.message_size)->default_value(a.message_size),
      "largest message a chunk travels as")(
      "reduction-bandwidth", po::value(&a.reduction)->default_value(a.reduction),
      "rate of the element-wise add at a receiving rank; 0 B/s turns it off")(
      "min-bytes,b", po::value(&a.min_bytes)->default_value("8 B"), "smallest size")(
      "max-bytes,e", po::value(&a.max_bytes)->default_value("256 MiB"), "largest size")(
      "step-factor,f", po::value(&a.step_factor)->default_value(2.0), "size multiplier between rows")(
      "pcie-only", "keep rings off NVLink/NVSwitch")(
      "fast-path", po::value(&a.fast_path)->default_value("auto"),
      "auto: fold a ring onto representative ranks where that is exact | bounded: also within 0.1% "
      "when chunks differ in size | off: every rank message by message (sim/README.md, Folding)")(
      "max-events", po::value(&a.max_events)->default_value(a.max_events),
      "cap on the events one size may simulate (about 7 minutes at the default); 0 or unlimited = none")(
      "max-sim-memory", po::value(&a.max_sim_memory)->default_value(a.max_sim_memory),
      "cap on one size's simulation state; 0 B or unlimited = none")(
      "format", po::value(&a.format)->default_value("table"), "table | csv | json");
  return options;
}

sim::SimulationLimits parse_limits(const CollectiveArgs& a) {
  sim::SimulationLimits limits;
  if (a.max_events == "unlimited") {
    limits.max_events = 0;
  } else if (const auto events = sim::parse_whole<std::uint64_t>(a.max_events)) {
    limits.max_events = *events;
  } else {
    throw InputError("--max-events \"" + a.max_events +
                     "\": expected a whole number of events (0 or unlimited: no limit)");
  }
  limits.max_memory = a.max_sim_memory == "unlimited" || a.max_sim_memory == "0"
                          ? 0
                          : sim::parse_bytes(a.max_sim_memory).count();
  return limits;
}

analysis::CollectiveSweepOptions sweep_options(const CollectiveArgs& a, const po::variables_map& vm,
                                               int gpu_count) {
  analysis::CollectiveSweepOptions o;
  o.op = sim::parse_collective_op(a.op);
  o.gpus = a.gpus.empty() ? topology::parse_gpu_list("0-" + std::to_string(gpu_count - 1))
                          : topology::parse_gpu_list(a.gpus);
  topology::check_gpus_exist(o.gpus, gpu_count);
  o.comm.algorithm = workloads::parse_algorithm(a.algorithm);
  o.comm.protocol = workloads::parse_protocol_option(a.protocol);
  if (a.channels < 0) throw InputError("--channels must be 0 (automatic) or positive");
  if (a.channels > 0) o.comm.channels = a.channels;
  o.comm.pcie_only = vm.count("pcie-only") > 0;
  o.collective.message_size = sim::parse_bytes(a.message_size);
  if (o.collective.message_size.count() <= 0) throw InputError("--message-size must be positive");
  o.collective.reduction_bandwidth = sim::parse_bandwidth(a.reduction);
  o.collective.fast_path = sim::parse_fast_path(a.fast_path);
  o.limits = parse_limits(a);
  o.min_bytes = sim::parse_bytes(a.min_bytes);
  o.max_bytes = sim::parse_bytes(a.max_bytes);
  o.step_factor = a.step_factor;
  return o;
}

}  // namespace

int collective_command(int argc, const char* const* argv) {
  CollectiveArgs a;
  po::options_description options = collective_options(a);
  po::variables_map vm;
  if (!parse_options(argc, argv, options, {}, vm)) return 0;
  if (a.format != "table" && a.format != "csv" && a.format != "json")
    throw InputError("--format must be table, csv or json (got \"" + a.format + "\")");

  topology::ClusterSpec spec;
  spec.nodes = a.nodes;
  if (a.gpus_per_node != 0) spec.gpus_per_node = a.gpus_per_node;
  const topology::Topology topo = analysis::load_platform(a.topology, spec);
  const analysis::CollectiveSweepOptions o = sweep_options(a, vm, static_cast<int>(topo.gpus().size()));
  const auto rows = analysis::run_collective_sweep(topo, o);

  workloads::CommPlanner planner(topo, o.comm);
  const std::size_t used_channels = planner.ring_channels(o.gpus).size();
  const std::string title = std::string(sim::collective_op_name(o.op)) + " over " +
                            std::to_string(o.gpus.size()) + " GPUs of " + topo.name() + ", " +
                            std::string(workloads::algorithm_name(o.comm.algorithm)) + "/" +
                            workloads::protocol_option_name(o.comm.protocol) + ", " +
                            std::to_string(used_channels) + " channels, " +
                            sim::format_bytes(o.collective.message_size) + " messages";
  if (a.format == "csv") std::cout << analysis::collective_csv(rows);
  else if (a.format == "json") std::cout << analysis::collective_json(rows, title);
  else std::cout << analysis::collective_table(rows, title);
  return 0;
}

}  // namespace hybridsim::cli
