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

int collective_command(int argc, const char* const* argv) {
  po::options_description options(
      "hybridsim collective --topology PRESET-or-FILE --op OP [options]\n\n"
      "Simulates one collective at a range of sizes and prints nccl-tests columns:\n"
      "algbw = size / time, busbw = algbw x 2(n-1)/n (all-reduce), x (n-1)/n (reduce-scatter,\n"
      "all-gather), x 1 (broadcast). GB/s are 10^9 bytes per second.\n\noptions");
  std::string topology_arg, gpus_arg, op_arg = "allreduce", algorithm_arg = "auto", format = "table";
  std::string protocol_arg = "auto", fast_path = "auto";
  std::string max_events = std::to_string(sim::kDefaultMaxEvents);
  std::string max_sim_memory = sim::format_bytes(sim::Bytes::of(sim::kDefaultMaxMemory));
  std::string message_size = sim::format_bytes(sim::CollectiveConfig{}.message_size);
  std::string min_bytes = "8 B", max_bytes = "256 MiB";
  std::string reduction = sim::format_bandwidth(sim::CollectiveConfig{}.reduction_bandwidth);
  int nodes = 1;
  int gpus_per_node = 0;
  int channels = 0;
  double step_factor = 2.0;
  options.add_options()("help,h", "show this help")(
      "topology,t", po::value(&topology_arg)->required(),
      ("a preset (" + topology::preset_name_list() + ") or a topology YAML file").c_str())(
      "nodes,n", po::value(&nodes)->default_value(1), "machines (a cluster joined by InfiniBand)")(
      "gpus-per-node", po::value(&gpus_per_node)->default_value(0),
      "GPUs per machine for presets that allow it (ideal-ring, fully-connected, nvswitch, dgx2, "
      "pcie-server); 0 = the preset's")(
      "gpus,g", po::value(&gpus_arg), "GPU ranks and ranges, e.g. 0-3 (the first four) or 0,1,4-7; default: all")(
      "op,o", po::value(&op_arg)->default_value("allreduce"),
      "allreduce | reducescatter | allgather | broadcast")(
      "algorithm,a", po::value(&algorithm_arg)->default_value("auto"),
      "auto (NCCL's choice per size) | ring | tree | hierarchical (tree, hierarchical: all-reduce only)")(
      "protocol,p", po::value(&protocol_arg)->default_value("auto"),
      "auto (NCCL's choice per size) | ll | ll128 | simple | ideal (links at line rate, only their "
      "latencies: the alpha-beta ring)")(
      "channels,c", po::value(&channels)->default_value(0), "rings in parallel; 0 = as NCCL would (one per NIC across machines)")(
      "message-size", po::value(&message_size)->default_value(message_size), "largest message a chunk travels as")(
      "reduction-bandwidth", po::value(&reduction)->default_value(reduction),
      "rate of the element-wise add at a receiving rank; 0 B/s turns it off")(
      "min-bytes,b", po::value(&min_bytes)->default_value("8 B"), "smallest size")(
      "max-bytes,e", po::value(&max_bytes)->default_value("256 MiB"), "largest size")(
      "step-factor,f", po::value(&step_factor)->default_value(2.0), "size multiplier between rows")(
      "pcie-only", "keep rings off NVLink/NVSwitch")(
      "fast-path", po::value(&fast_path)->default_value("auto"),
      "auto: fold a ring onto representative ranks where that is exact | bounded: also within 0.1% "
      "when chunks differ in size | off: every rank message by message (sim/README.md, Folding)")(
      "max-events", po::value(&max_events)->default_value(max_events),
      "cap on the events one size may simulate (about 7 minutes at the default); 0 or unlimited = none")(
      "max-sim-memory", po::value(&max_sim_memory)->default_value(max_sim_memory),
      "cap on one size's simulation state; 0 B or unlimited = none")(
      "format", po::value(&format)->default_value("table"), "table | csv | json");
  po::variables_map vm;
  if (!parse_options(argc, argv, options, {}, vm)) return 0;
  if (format != "table" && format != "csv" && format != "json")
    throw InputError("--format must be table, csv or json (got \"" + format + "\")");

  topology::ClusterSpec spec;
  spec.nodes = nodes;
  if (gpus_per_node != 0) spec.gpus_per_node = gpus_per_node;
  const topology::Topology topo = analysis::load_platform(topology_arg, spec);
  const int gpu_count = static_cast<int>(topo.gpus().size());
  analysis::CollectiveSweepOptions o;
  o.op = sim::parse_collective_op(op_arg);
  o.gpus = gpus_arg.empty() ? topology::parse_gpu_list("0-" + std::to_string(gpu_count - 1))
                            : topology::parse_gpu_list(gpus_arg);
  topology::check_gpus_exist(o.gpus, gpu_count);
  o.comm.algorithm = workloads::parse_algorithm(algorithm_arg);
  o.comm.protocol = workloads::parse_protocol_option(protocol_arg);
  if (channels < 0) throw InputError("--channels must be 0 (automatic) or positive");
  if (channels > 0) o.comm.channels = channels;
  o.comm.pcie_only = vm.count("pcie-only") > 0;
  o.collective.message_size = sim::parse_bytes(message_size);
  if (o.collective.message_size.count() <= 0) throw InputError("--message-size must be positive");
  o.collective.reduction_bandwidth = sim::parse_bandwidth(reduction);
  o.collective.fast_path = sim::parse_fast_path(fast_path);
  if (max_events == "unlimited") {
    o.limits.max_events = 0;
  } else if (const auto events = sim::parse_whole<std::uint64_t>(max_events)) {
    o.limits.max_events = *events;
  } else {
    throw InputError("--max-events \"" + max_events + "\": expected a whole number of events (0 or unlimited: no limit)");
  }
  o.limits.max_memory =
      max_sim_memory == "unlimited" || max_sim_memory == "0" ? 0 : sim::parse_bytes(max_sim_memory).count();
  o.min_bytes = sim::parse_bytes(min_bytes);
  o.max_bytes = sim::parse_bytes(max_bytes);
  o.step_factor = step_factor;
  const auto rows = analysis::run_collective_sweep(topo, o);

  workloads::CommPlanner planner(topo, o.comm);
  const std::size_t used_channels = planner.ring_channels(o.gpus).size();
  const std::string title = std::string(sim::collective_op_name(o.op)) + " over " +
                            std::to_string(o.gpus.size()) + " GPUs of " + topo.name() + ", " +
                            std::string(workloads::algorithm_name(o.comm.algorithm)) + "/" +
                            workloads::protocol_option_name(o.comm.protocol) + ", " +
                            std::to_string(used_channels) + " channels, " +
                            sim::format_bytes(o.collective.message_size) + " messages";
  if (format == "csv") std::cout << analysis::collective_csv(rows);
  else if (format == "json") std::cout << analysis::collective_json(rows, title);
  else std::cout << analysis::collective_table(rows, title);
  return 0;
}

}  // namespace hybridsim::cli
