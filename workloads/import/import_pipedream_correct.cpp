// The PipeDream importer's order and correction steps: topological order (ties by node number),
// the recorded times, the forward synchronization overhead removed, and backward time spread over
// runs of neighbours.
#include <algorithm>
#include <functional>
#include <queue>

#include "sim/error.h"
#include "workloads/import/import_pipedream_detail.h"

namespace hybridsim::workloads::pipedream_detail {

std::map<int, std::size_t> index_of_nodes(const PipeDreamGraph& g) {
  std::map<int, std::size_t> index_of;
  for (std::size_t i = 0; i < g.nodes.size(); ++i) index_of.emplace(g.nodes[i].id, i);
  return index_of;
}

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

NodeTimes recorded_times(const PipeDreamGraph& g, PipeDreamImportReport& r) {
  const std::size_t n = g.nodes.size();
  NodeTimes t{std::vector<sim::Time>(n), std::vector<sim::Time>(n)};
  for (std::size_t i = 0; i < n; ++i) {
    const PipeDreamNode& node = g.nodes[i];
    if (node.is_input()) {
      ++r.input_nodes;
      r.input_time += node.forward + node.backward;
      continue;
    }
    t.forward[i] = node.forward;
    t.backward[i] = node.backward;
    r.forward_recorded += node.forward;
    r.backward_recorded += node.backward;
  }
  return t;
}

void correct_forward(const PipeDreamGraph& g, const PipeDreamCorrection& c, NodeTimes& t,
                     PipeDreamImportReport& r) {
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    if (g.nodes[i].is_input() || t.forward[i] <= c.min_forward) continue;
    const sim::Time reduced = t.forward[i] - c.sync_overhead;
    if (reduced < c.min_forward) ++r.floored;
    t.forward[i] = max(c.min_forward, reduced);
  }
}

std::vector<std::vector<std::size_t>> neighbour_runs(const PipeDreamGraph& g,
                                                     const std::vector<std::vector<std::size_t>>& preds,
                                                     const std::vector<std::size_t>& order) {
  const std::size_t n = g.nodes.size();
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
  std::vector<std::vector<std::size_t>> runs;
  for (const std::size_t start : order) {
    if (g.nodes[start].is_input()) continue;
    if (real_preds[start].size() == 1 && linked(real_preds[start][0], start)) continue;  // not a run's start
    std::vector<std::size_t> run{start};
    while (succs[run.back()].size() == 1 && linked(run.back(), succs[run.back()][0]))
      run.push_back(succs[run.back()][0]);
    if (run.size() >= 2) runs.push_back(std::move(run));
  }
  return runs;
}

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

void redistribute_backward(const std::vector<std::vector<std::size_t>>& runs, NodeTimes& t,
                           PipeDreamImportReport& r) {
  for (const auto& run : runs) {
    std::vector<sim::Time> weights;
    sim::Time total, weight_sum;
    for (const std::size_t i : run) {
      weights.push_back(t.forward[i]);
      weight_sum += t.forward[i];
      total += t.backward[i];
    }
    if (weight_sum <= sim::Time::zero()) continue;
    const auto parts = apportion(total, weights);
    for (std::size_t k = 0; k < run.size(); ++k) t.backward[run[k]] = parts[k];
    ++r.runs;
    r.longest_run = std::max(r.longest_run, static_cast<int>(run.size()));
  }
}

}  // namespace hybridsim::workloads::pipedream_detail
