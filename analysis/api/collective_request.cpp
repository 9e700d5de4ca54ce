#include "analysis/api/collective_request.h"

#include <utility>

#include "analysis/api/fabric_options.h"
#include "analysis/api/request_platform.h"

#include "analysis/platform/platform.h"
#include "sim/budget.h"
#include "sim/error.h"
#include "sim/text.h"
#include "topology/gpu_list.h"

namespace hybridsim::api {

namespace {

// `parse(text)` for the field `name`: its InputError names the field as the request's user wrote it
// (`--min-bytes "lots": bad size ...`, `min_bytes='lots': bad size ...`).
template <typename Parse>
auto parse_field(const analysis::CollectiveOptionNames& n, const std::string& name, const std::string& text,
                 Parse parse) -> decltype(parse(text)) {
  try {
    return parse(text);
  } catch (const InputError& e) {
    throw InputError((n.python ? n.said(name, text) : name + " \"" + text + "\"") + ": " + e.what());
  }
}

sim::SimulationLimits parse_limits(const CollectiveRequest& r) {
  const analysis::CollectiveOptionNames& n = r.names;
  sim::SimulationLimits limits;
  limits.max_events = parse_field(n, n.max_events, r.max_events, sim::parse_events_cap);
  limits.max_memory = parse_field(n, n.max_sim_memory, r.max_sim_memory, sim::parse_memory_cap);
  return limits;
}

analysis::CollectiveSweepOptions sweep_options(const CollectiveRequest& r, int gpu_count,
                                               sim::Bandwidth auto_reduction) {
  const analysis::CollectiveOptionNames& n = r.names;
  analysis::CollectiveSweepOptions o;
  o.names = n;
  o.op = parse_field(n, n.op, r.op, sim::parse_collective_op);
  if (r.reduction_given && o.op != sim::CollectiveOp::AllReduce && o.op != sim::CollectiveOp::ReduceScatter)
    throw InputError(n.said(n.reduction, r.reduction) + " needs " + n.said(n.op, "allreduce") + " or " +
                     n.said(n.op, "reducescatter") + " (got " + n.said(n.op, r.op) + ")");
  o.gpus = r.gpus.empty() ? topology::parse_gpu_list("0-" + std::to_string(gpu_count - 1))
                          : parse_field(n, n.gpus, r.gpus, topology::parse_gpu_list);
  topology::check_gpus_exist(o.gpus, gpu_count);
  // "a collective needs at least 2 GPUs" named neither the list given nor the topology.
  if (const std::string why = analysis::too_few_gpus(o.gpus.size(), !r.gpus.empty(), n); !why.empty())
    throw InputError(
        (r.gpus.empty() ? "the topology " + r.topology + " has " : n.said(n.gpus, r.gpus) + ": ") + why);
  o.comm.algorithm = parse_field(n, n.algorithm, r.algorithm, workloads::parse_algorithm);
  o.comm.protocol = parse_field(n, n.protocol, r.protocol, workloads::parse_protocol_option);
  if (r.channels < 0)
    throw InputError(n.said_number(n.channels, std::to_string(r.channels)) +
                     ": expected 0 (automatic) or positive");
  if (r.channels > 0) o.comm.channels = r.channels;
  o.comm.pcie_only = r.pcie_only;
  o.collective.message_size = parse_field(n, n.message_size, r.message_size, sim::parse_bytes);
  if (o.collective.message_size.count() <= 0)
    throw InputError(n.said(n.message_size, r.message_size) + ": expected a size above 0 B");
  // The scenario key's words (communication.reduction_bandwidth: auto, off or a rate): "off" was
  // refused here as a bad unit, where only "0 B/s" turned the reduction off.
  o.collective.reduction_bandwidth = r.reduction == "auto" ? auto_reduction
                                     : r.reduction == "off"
                                         ? sim::Bandwidth()
                                         : parse_field(n, n.reduction, r.reduction, sim::parse_bandwidth);
  o.collective.fast_path = parse_field(n, n.fast_path, r.fast_path, sim::parse_fast_path);
  o.limits = parse_limits(r);
  o.min_bytes = parse_field(n, n.min_bytes, r.min_bytes, sim::parse_bytes);
  o.max_bytes = parse_field(n, n.max_bytes, r.max_bytes, sim::parse_bytes);
  o.step_factor = r.step_factor;
  o.progress = r.progress;
  return o;
}

}  // namespace

CollectiveReport collective(const CollectiveRequest& request) {
  topology::ClusterSpec spec;
  spec.nodes = request.nodes;
  if (request.gpus_per_node != 0) spec.gpus_per_node = request.gpus_per_node;
  const analysis::OptionSpelling spelling =
      request.names.python ? analysis::OptionSpelling::python() : analysis::OptionSpelling::command_line();
  // The fabric topology takes (it ran every cluster collective on a full-bisection fat tree).
  apply_fabric_options(spec, fabric_options_of(request), spelling);
  std::vector<std::string> notes;
  const topology::Topology topo =
      load_request_platform(request.topology, spec, spelling, "topology", request.on_note, notes);
  const analysis::CollectiveSweepOptions o =
      sweep_options(request, static_cast<int>(topo.gpus().size()),
                    analysis::platform_reduction_bandwidth(request.topology));
  topology::check_gpus_span_machines(topo, o.gpus, request.nodes,
                                     {.gpus = o.names.gpus,
                                      .nodes = o.names.nodes,
                                      .separator = o.names.python ? "=" : " ",
                                      .quoted_list = o.names.python});
  CollectiveReport report{.rows = analysis::run_collective_sweep(topo, o), .notes = std::move(notes)};
  workloads::CommPlanner planner(topo, o.comm);
  const std::size_t used_channels = planner.ring_channels(o.gpus).size();
  // An all-to-all runs as direct sends on no channel: its title said "auto/auto, 6 channels".
  const bool direct = o.op == sim::CollectiveOp::AllToAll;
  report.title =
      std::string(sim::collective_op_name(o.op)) + " over " + std::to_string(o.gpus.size()) + " GPUs of " +
      topo.name() + ", " +
      (direct ? std::string("point-to-point") : std::string(workloads::algorithm_name(o.comm.algorithm))) +
      "/" + workloads::protocol_option_name(o.comm.protocol) + ", " +
      (direct ? std::string() : std::to_string(used_channels) + " channels, ") +
      sim::format_bytes(o.collective.message_size) + " messages";
  // "--message-size 1 GiB" over sizes up to 256 MiB showed "1 GiB messages" in the title, as if some
  // message were that large: no chunk is cut at all, and the title says so.
  if (o.collective.message_size > o.max_bytes)
    report.title += " (above the largest size, " + sim::format_bytes(o.max_bytes) + ": no chunk is cut)";
  if (const std::string note = analysis::collective_sizes(o).note; !note.empty()) report.title += "; " + note;
  return report;
}

}  // namespace hybridsim::api
