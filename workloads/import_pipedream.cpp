// PipeDream graph → profile: topological order (ties by node number), the optional correction of
// forward synchronization overhead and backward leaks, and the report.
#include "workloads/import_pipedream.h"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <queue>
#include <sstream>

#include "sim/error.h"

namespace hybridsim::workloads {

namespace {

std::string default_network(const std::string& source) {
  std::string stem = std::filesystem::path(source).filename().string();
  for (const char* suffix : {".txt", "_graph"}) {
    if (stem.ends_with(suffix)) stem.resize(stem.size() - std::string_view(suffix).size());
  }
  return stem.empty() ? "pipedream" : stem;
}

// Node indices (into graph.nodes) in topological order, ties by node number.
std::vector<std::size_t> topological_order(const PipeDreamGraph& g,
                                           const std::map<int, std::size_t>& index_of,
                                           std::vector<std::vector<std::size_t>>& preds) {
  const std::size_t n = g.nodes.size();
  std::vector<std::vector<std::size_t>> succs(n);
  std::vector<int> missing(n, 0);
  preds.assign(n, {});
  for (const auto& [from, to] : g.edges) {
    const std::size_t a = index_of.at(from), b = index_of.at(to);
    succs[a].push_back(b);
    preds[b].push_back(a);
    ++missing[b];
  }
  using Entry = std::pair<int, std::size_t>;  // (node id, index)
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> ready;
  for (std::size_t i = 0; i < n; ++i)
    if (missing[i] == 0) ready.push({g.nodes[i].id, i});
  std::vector<std::size_t> order;
  while (!ready.empty()) {
    const std::size_t i = ready.top().second;
    ready.pop();
    order.push_back(i);
    for (const std::size_t s : succs[i])
      if (--missing[s] == 0) ready.push({g.nodes[s].id, s});
  }
  if (order.size() != n) {
    std::string cycle;
    int listed = 0;
    for (std::size_t i = 0; i < n && listed < 8; ++i) {
      if (missing[i] == 0) continue;
      cycle += (listed++ ? ", node" : "node") + std::to_string(g.nodes[i].id) + " (line " +
               std::to_string(g.nodes[i].line) + ")";
    }
    throw InputError(g.source + ": the edges form a cycle through " + cycle +
                     (n - order.size() > 8 ? ", ..." : ""));
  }
  return order;
}

// Spreads `total` over the weights, exactly: cumulative rounding, so the parts sum to `total`.
std::vector<sim::Time> apportion(sim::Time total, const std::vector<sim::Time>& weights) {
  __int128 sum = 0;
  for (const auto w : weights) sum += w.ps();
  std::vector<sim::Time> parts;
  __int128 cumulative = 0, given = 0;
  for (const auto w : weights) {
    cumulative += w.ps();
    const __int128 upto = static_cast<__int128>(total.ps()) * cumulative / sum;
    parts.push_back(sim::Time::ps(static_cast<std::int64_t>(upto - given)));
    given = upto;
  }
  return parts;
}

std::string fixed(double v, int digits) {
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(digits);
  s << v;
  return s.str();
}

}  // namespace

PipeDreamImport import_pipedream(const PipeDreamGraph& g, const PipeDreamOptions& o) {
  if (o.batch < 1) throw InputError("--batch must be at least 1");
  if (o.units_per_step < 0) throw InputError("--units-per-step must be positive");
  if (o.correction && (o.correction->sync_overhead < sim::Time::zero() ||
                       o.correction->min_forward < sim::Time::zero()))
    throw InputError("--sync-overhead and --min-forward must not be negative");
  std::map<int, std::size_t> index_of;
  for (std::size_t i = 0; i < g.nodes.size(); ++i) index_of.emplace(g.nodes[i].id, i);
  std::vector<std::vector<std::size_t>> preds;
  const std::vector<std::size_t> order = topological_order(g, index_of, preds);

  PipeDreamImport result;
  PipeDreamImportReport& r = result.report;
  r.nodes = static_cast<int>(g.nodes.size());
  r.edges = static_cast<int>(g.edges.size());
  const std::size_t n = g.nodes.size();
  std::vector<sim::Time> fwd(n), bwd(n);
  for (std::size_t i = 0; i < n; ++i) {
    const PipeDreamNode& node = g.nodes[i];
    if (node.is_input()) {
      ++r.input_nodes;
      r.input_time += node.forward + node.backward;
      continue;
    }
    fwd[i] = node.forward;
    bwd[i] = node.backward;
    r.forward_recorded += node.forward;
    r.backward_recorded += node.backward;
  }

  if (o.correction) {
    const PipeDreamCorrection& c = *o.correction;
    for (std::size_t i = 0; i < n; ++i) {
      if (g.nodes[i].is_input() || fwd[i] <= c.min_forward) continue;
      const sim::Time reduced = fwd[i] - c.sync_overhead;
      if (reduced < c.min_forward) ++r.floored;
      fwd[i] = max(c.min_forward, reduced);
    }
    if (c.redistribute_backward) {
      // Runs of neighbours: chains u → v where u has one consumer and v one producer (data-source
      // nodes left out), followed in topological order.
      std::vector<std::vector<std::size_t>> succs(n), real_preds(n);
      for (std::size_t v = 0; v < n; ++v) {
        if (g.nodes[v].is_input()) continue;
        for (const std::size_t u : preds[v]) {
          if (g.nodes[u].is_input()) continue;
          succs[u].push_back(v);
          real_preds[v].push_back(u);
        }
      }
      auto linked = [&](std::size_t u, std::size_t v) {
        return succs[u].size() == 1 && succs[u][0] == v && real_preds[v].size() == 1;
      };
      for (const std::size_t start : order) {
        if (g.nodes[start].is_input()) continue;
        if (real_preds[start].size() == 1 && linked(real_preds[start][0], start)) continue;
        std::vector<std::size_t> run{start};
        while (succs[run.back()].size() == 1 && linked(run.back(), succs[run.back()][0]))
          run.push_back(succs[run.back()][0]);
        if (run.size() < 2) continue;
        std::vector<sim::Time> weights;
        sim::Time total, weight_sum;
        for (const std::size_t i : run) {
          weights.push_back(fwd[i]);
          weight_sum += fwd[i];
          total += bwd[i];
        }
        if (weight_sum <= sim::Time::zero()) continue;
        const auto parts = apportion(total, weights);
        for (std::size_t k = 0; k < run.size(); ++k) bwd[run[k]] = parts[k];
        ++r.runs;
        r.longest_run = std::max(r.longest_run, static_cast<int>(run.size()));
      }
    }
  }

  Profile& p = result.profile;
  p.meta.network = o.network.empty() ? default_network(g.source) : o.network;
  p.meta.gpu = o.gpu;
  p.meta.precision = o.precision;
  p.meta.batch_per_gpu = o.batch;
  p.meta.throughput_unit = o.throughput_unit;
  p.meta.units_per_step = o.units_per_step > 0 ? o.units_per_step : o.batch;
  p.meta.source = "PipeDream profiler graph " + std::filesystem::path(g.source).filename().string();
  p.meta.notes = std::string("imported by hybridsim import pipedream; input nodes' time (data loading) "
                             "dropped; ") +
                 (o.correction ? "corrected: " + sim::format_time(o.correction->sync_overhead) +
                                     " synchronization removed per forward module (floor " +
                                     sim::format_time(o.correction->min_forward) + ")" +
                                     (o.correction->redistribute_backward
                                          ? ", backward spread over runs of neighbours by forward time"
                                          : "")
                               : std::string("times as recorded (forward includes a synchronize per "
                                             "module; backward leaks between neighbours)"));
  p.optimizer = o.optimizer;
  std::vector<std::uint32_t> op_of(n);
  for (const std::size_t i : order) {
    const PipeDreamNode& node = g.nodes[i];
    op_of[i] = static_cast<std::uint32_t>(p.ops.size());
    Op op;
    op.name = "node" + std::to_string(node.id);
    op.layer = op.name;
    for (const std::size_t u : preds[i]) op.inputs.push_back(op_of[u]);
    std::sort(op.inputs.begin(), op.inputs.end());
    const std::string type = node.module_type();
    if (fwd[i] > sim::Time::zero()) op.forward.push_back({type, fwd[i]});
    if (bwd[i] > sim::Time::zero()) op.backward.push_back({type + "_grad", bwd[i]});
    op.activation_bytes = node.activation;
    op.gradient_bytes = node.parameters;
    if (node.parameters.count() > 0) op.exchange = GradientExchange::DenseAllReduce;
    r.forward += fwd[i];
    r.backward += bwd[i];
    p.ops.push_back(std::move(op));
  }
  r.overhead_removed = r.forward_recorded - r.forward;
  if (r.input_nodes > 0)
    r.notes.push_back(std::to_string(r.input_nodes) + " input node(s): " + sim::format_time(r.input_time) +
                      " of recorded time (loading the batch) not kept as compute");
  validate_profile(p);
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
