// PipeDream graph → profile: the driver over the steps of import_pipedream_detail.h (the order and
// the correction are in import_pipedream_correct.cpp), the profile's ops and metadata, the report.
#include "workloads/import/import_pipedream.h"

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "sim/error.h"
#include "workloads/import/import_pipedream_detail.h"
#include "workloads/import/import_units.h"
#include "workloads/profile/profile_io.h"

namespace hybridsim::workloads {

namespace {

std::string fixed(double v, int digits) {
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(digits);
  s << v;
  return s.str();
}

}  // namespace

namespace pipedream_detail {

void check_options(const PipeDreamOptions& o) {
  if (o.batch < 1) throw InputError("--batch must be at least 1");
  check_throughput_units(o.throughput_unit, o.units_per_step, o.batch);
  if (o.correction && (o.correction->sync_overhead < sim::Time::zero() ||
                       o.correction->min_forward < sim::Time::zero()))
    throw InputError("--sync-overhead and --min-forward must not be negative");
}

std::string default_network(const std::string& source) {
  std::string stem = std::filesystem::path(source).filename().string();
  for (const char* suffix : {".txt", "_graph"}) {
    if (stem.ends_with(suffix)) stem.resize(stem.size() - std::string_view(suffix).size());
  }
  return stem.empty() ? "pipedream" : stem;
}

ProfileMetadata pipedream_metadata(const PipeDreamGraph& g, const PipeDreamOptions& o) {
  ProfileMetadata m;
  m.network = o.network.empty() ? default_network(g.source) : o.network;
  m.gpu = o.gpu;
  m.precision = o.precision;
  m.batch_per_gpu = o.batch;
  m.throughput_unit = o.throughput_unit;
  m.units_per_step = o.units_per_step > 0 ? o.units_per_step : o.batch;
  m.source = "PipeDream profiler graph " + std::filesystem::path(g.source).filename().string();
  m.notes =
      std::string("imported by hybridsim import pipedream; input nodes' time (data loading) dropped; ") +
      (o.correction ? "corrected: " + sim::format_time(o.correction->sync_overhead) +
                          " synchronization removed per forward module (floor " +
                          sim::format_time(o.correction->min_forward) + ")" +
                          (o.correction->redistribute_backward
                               ? ", backward spread over runs of neighbours by forward time"
                               : "")
                    : std::string("times as recorded (forward includes a synchronize per "
                                  "module; backward leaks between neighbours)"));
  return m;
}

std::vector<Op> pipedream_ops(const PipeDreamGraph& g, const std::vector<std::size_t>& order,
                              const std::vector<std::vector<std::size_t>>& preds, const NodeTimes& t,
                              PipeDreamImportReport& r) {
  std::vector<Op> ops;
  std::vector<std::uint32_t> op_of(g.nodes.size());
  for (const std::size_t i : order) {
    const PipeDreamNode& node = g.nodes[i];
    op_of[i] = static_cast<std::uint32_t>(ops.size());
    Op op;
    op.name = "node" + std::to_string(node.id);
    op.layer = op.name;
    for (const std::size_t u : preds[i]) op.inputs.push_back(op_of[u]);
    std::sort(op.inputs.begin(), op.inputs.end());
    const std::string type = node.module_type();
    if (t.forward[i] > sim::Time::zero()) op.forward.push_back({type, t.forward[i]});
    if (t.backward[i] > sim::Time::zero()) op.backward.push_back({type + "_grad", t.backward[i]});
    op.activation_bytes = node.activation;
    op.gradient_bytes = node.parameters;
    if (node.parameters.count() > 0) op.exchange = GradientExchange::DenseAllReduce;
    r.forward += t.forward[i];
    r.backward += t.backward[i];
    ops.push_back(std::move(op));
  }
  return ops;
}

}  // namespace pipedream_detail

PipeDreamImport import_pipedream(const PipeDreamGraph& g, const PipeDreamOptions& o) {
  using namespace pipedream_detail;
  check_options(o);
  std::vector<std::vector<std::size_t>> preds;
  const std::vector<std::size_t> order = topological_order(g, index_of_nodes(g), preds);
  PipeDreamImport result;
  PipeDreamImportReport& r = result.report;
  r.nodes = static_cast<int>(g.nodes.size());
  r.edges = static_cast<int>(g.edges.size());
  NodeTimes times = recorded_times(g, r);
  if (o.correction) {
    correct_forward(g, *o.correction, times, r);
    if (o.correction->redistribute_backward) redistribute_backward(neighbour_runs(g, preds, order), times, r);
  }
  Profile& p = result.profile;
  p.meta = pipedream_metadata(g, o);
  p.optimizer = o.optimizer;
  p.ops = pipedream_ops(g, order, preds, times, r);
  r.overhead_removed = r.forward_recorded - r.forward;
  if (r.input_nodes > 0)
    r.notes.push_back(std::to_string(r.input_nodes) + " input node(s): " + sim::format_time(r.input_time) +
                      " of recorded time (loading the batch) not kept as compute");
  validate_profile(p);
  if (p.step_time_1gpu() == sim::Time::zero())
    throw InputError(
        g.source + ": every node's forward_compute_time and backward_compute_time is 0 and " +
        "there is no optimizer time: " + std::string(kNoTimeStep) +
        "; expected a graph with compute times above 0 ms, or --optimizer-time-per-gib above 0 s");
  return result;
}

std::string describe_pipedream_import(const PipeDreamImport& import) {
  const PipeDreamImportReport& r = import.report;
  const Profile& p = import.profile;
  std::ostringstream out;
  auto rate = [&](sim::Time step) {
    return step > sim::Time::zero()
               ? fixed(static_cast<double>(p.meta.units_per_step) / step.to_seconds(), 1) + " " +
                     p.meta.throughput_unit + "/s"
               : std::string("-");
  };
  const sim::Time recorded = r.forward_recorded + r.backward_recorded + p.optimizer_time(1);
  out << "PipeDream graph " << p.meta.source.substr(p.meta.source.rfind(' ') + 1) << ": " << r.nodes
      << " nodes, " << r.edges << " edges, " << p.ops.size() << " ops\n";
  out << "  recorded:  forward " << sim::format_time(r.forward_recorded) << ", backward "
      << sim::format_time(r.backward_recorded) << ", step " << sim::format_time(recorded) << " = "
      << rate(recorded) << " at " << p.meta.units_per_step << " " << p.meta.throughput_unit << "\n";
  out << "  profile:   forward " << sim::format_time(r.forward) << ", backward "
      << sim::format_time(r.backward) << ", optimizer " << sim::format_time(p.optimizer_time(1))
      << ", step " << sim::format_time(p.step_time_1gpu()) << " = " << rate(p.step_time_1gpu()) << "\n";
  if (r.overhead_removed > sim::Time::zero() || r.runs > 0) {
    out << "  corrected: " << sim::format_time(r.overhead_removed) << " of forward synchronization removed ("
        << r.floored << " modules at the floor); backward spread over " << r.runs
        << " runs of neighbours (longest " << r.longest_run << " nodes), total kept\n";
  }
  out << "  parameters: " << sim::human_bytes(p.parameter_bytes()) << " (dense all-reduce)\n";
  for (const auto& note : r.notes) out << "  note: " << note << "\n";
  return out.str();
}

}  // namespace hybridsim::workloads
