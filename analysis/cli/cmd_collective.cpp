// `hybridsim collective`: nccl-tests for the simulator — one collective over a set of GPUs of a
// preset or custom topology, at sizes from --min-bytes to --max-bytes, as a table (size, count, time,
// algbw, busbw), CSV or JSON.
#include <boost/program_options.hpp>
#include <iostream>
#include <string>

#include "analysis/api/collective_request.h"
#include "analysis/cli/commands.h"
#include "analysis/cli/parse_options.h"
#include "analysis/collective/collective_report.h"
#include "sim/collective.h"
#include "sim/error.h"
#include "sim/text.h"
#include "topology/preset_registry.h"

namespace po = boost::program_options;

namespace hybridsim::cli {

namespace {

// The command line as given, in the words of api::CollectiveRequest, plus the output format.
struct CollectiveArgs : api::CollectiveRequest {
  std::string format = "table";
};

po::options_description collective_options(CollectiveArgs& a) {
  po::options_description options(
      "hybridsim collective --topology PRESET-or-FILE --op OP [options]\n\n"
      "Simulates one collective at a range of sizes and prints nccl-tests columns:\n"
      "count = floats a rank (reduce-scatter, all-gather, all-to-all) or of the buffer (all-reduce,\n"
      "broadcast), algbw = size / time, busbw = algbw x 2(n-1)/n (all-reduce), x (n-1)/n (reduce-scatter,\n"
      "all-gather, all-to-all), x 1 (broadcast). GB/s are 10^9 bytes per second.\n\noptions");
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
      "allreduce | reducescatter | allgather | broadcast | alltoall")(
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
      "rate of the element-wise add at a receiving rank; auto: a quarter of the preset's GPU's HBM "
      "peak (V100 225 GB/s, A100 80GB 509.75, H100 837.5; a topology file's: the V100's); off (or 0 "
      "B/s) turns it off; --protocol ideal's alpha-beta ring adds it too (ideal links, not ideal "
      "adds)")("min-bytes,b", po::value(&a.min_bytes)->default_value("8 B"), "smallest size")(
      "max-bytes,e", po::value(&a.max_bytes)->default_value("256 MiB"), "largest size")(
      "step-factor,f", po::value(&a.step_factor)->default_value(2.0), "size multiplier between rows")(
      "pcie-only", "keep rings off NVLink/NVSwitch")(
      "fabric", po::value<std::string>(),
      "cluster fabric, with --nodes N > 1: fat-tree (default) or rail-optimized")(
      "oversubscription", po::value<double>(),
      "leaf uplink oversubscription, with --nodes N > 1 (default 1)")(
      "fast-path", po::value(&a.fast_path)->default_value("bounded"),
      "auto: fold a ring onto representative ranks where that is exact | bounded: also within 0.1% "
      "when chunks differ in size | off: every rank message by message (sim/README.md, Folding)")(
      "max-events", po::value(&a.max_events)->default_value(a.max_events),
      "cap on the events one size may simulate (about 7 minutes at the default); 0 or unlimited = none")(
      "max-sim-memory", po::value(&a.max_sim_memory)->default_value(a.max_sim_memory),
      "cap on one size's simulation state; 0 B or unlimited = none")(
      "format", po::value(&a.format)->default_value("table"), "table | csv | json")(
      "quiet,q", "no progress lines (a long sweep of sizes prints one on stderr every few seconds)");
  return options;
}

}  // namespace

int collective_command(int argc, const char* const* argv) {
  CollectiveArgs a;
  po::options_description options = collective_options(a);
  po::variables_map vm;
  if (!parse_options(argc, argv, options, {}, vm)) return 0;
  if (a.format != "table" && a.format != "csv" && a.format != "json")
    throw InputError("--format must be table, csv or json (got \"" + a.format + "\")");

  // All-gather and broadcast add nothing up: a reduction rate would be ignored.
  const sim::CollectiveOp op = sim::parse_collective_op(a.op);
  if (given(vm, "reduction-bandwidth") && op != sim::CollectiveOp::AllReduce &&
      op != sim::CollectiveOp::ReduceScatter)
    throw InputError("--reduction-bandwidth needs --op allreduce or --op reducescatter (got --op " + a.op +
                     ")");
  a.reduction_given = given(vm, "reduction-bandwidth");
  a.pcie_only = vm.count("pcie-only") > 0;
  if (given(vm, "fabric")) a.fabric = vm["fabric"].as<std::string>();
  if (given(vm, "oversubscription")) a.oversubscription = vm["oversubscription"].as<double>();
  if (vm.count("quiet") == 0) a.progress = &std::cerr;
  a.on_note = [](const std::string& note) { std::cerr << "hybridsim collective: note: " << note << "\n"; };
  const api::CollectiveReport r = api::collective(a);
  if (a.format == "csv") std::cout << analysis::collective_csv(r.rows);
  else if (a.format == "json") std::cout << analysis::collective_json(r.rows, r.title);
  else std::cout << analysis::collective_table(r.rows, r.title);
  return 0;
}

}  // namespace hybridsim::cli
