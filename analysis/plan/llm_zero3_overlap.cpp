#include "analysis/plan/llm_zero3_overlap.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "workloads/memory/transformer_memory.h"

namespace hybridsim::analysis {
namespace {

// One op of the step in the compute stream's order: its GEMMs' seconds and its gather's and
// reduce-scatter's seconds at full rate (0 where it gathers nothing).
struct Point {
  double compute = 0, gather = 0, scatter = 0;
};

// The ops forward, then backward in reverse, of one micro-batch.
std::vector<Point> points_of(const LlmSetting& s, const LlmLayout& l, const LlmMachine& mc) {
  const workloads::TransformerModel& m = s.model;
  const int expert_group = workloads::expert_replicas(l.dp, l.ep);
  const auto seconds = [&](std::int64_t parameters, bool experts) {
    const int n = experts ? expert_group : l.dp;
    if (n <= 1) return 0.0;
    return static_cast<double>(parameters * s.value_bytes) * (n - 1) / n / llm_dp_rate(l, mc, experts);
  };
  const LlmLayerSeconds layer = llm_layer_seconds(s, l, mc);
  const LlmEndSeconds ends = llm_end_seconds(s, l, mc);
  struct Op {
    double forward, backward, moved;
    bool experts;
  };
  std::vector<Op> ops{{ends.embedding_forward, ends.embedding_backward,
                       seconds(workloads::embedding_parameters_per_rank(m, l.tp), false), false}};
  for (std::int64_t i = 0; i < m.layers; ++i) {
    if (!m.is_moe()) {
      ops.push_back({layer.attention_forward + layer.mlp_forward,
                     layer.attention_backward + layer.mlp_backward,
                     seconds(workloads::layer_parameters_per_rank(m, l.tp, l.ep), false), false});
      continue;
    }
    ops.push_back({layer.attention_forward, layer.attention_backward,
                   seconds(workloads::layer_shared_parameters_per_rank(m, l.tp), false), false});
    ops.push_back({layer.mlp_forward, layer.mlp_backward,
                   seconds(workloads::layer_expert_parameters(m) / l.ep / l.tp, true), true});
  }
  ops.push_back({ends.head_forward, ends.head_backward,
                 seconds(workloads::head_parameters_per_rank(m, l.tp), false), false});
  std::vector<Point> out;
  for (const Op& o : ops) out.push_back({o.forward, o.moved, 0});
  for (auto o = ops.rbegin(); o != ops.rend(); ++o) out.push_back({o->backward, o->moved, o->moved});
  // An op that gathers nothing is no point: its compute joins the one before it (the gather after
  // it was issued when that one started).
  std::vector<Point> merged;
  for (const Point& p : out) {
    if (p.gather == 0 && !merged.empty()) {
      merged.back().compute += p.compute;
      merged.back().scatter += p.scatter;
    } else {
      merged.push_back(p);
    }
  }
  return merged;
}

// How long a window is and the reduce-scatter work left after it: the gather `g` and the queued
// scatters `r` share the links equally until one is done, then the other runs alone.
struct Window {
  double gathered = 0, left = 0;
};
Window share(double g, double r, double compute) {
  const double gathered = g + std::min(g, r);
  const double end = std::max(compute, gathered);
  const double left = r > g ? std::max(0.0, r - g - (end - 2 * g)) : 0.0;
  return {gathered, left};
}

}  // namespace

double zero3_exposed_seconds(const LlmSetting& s, const LlmLayout& l, const LlmMachine& mc) {
  const std::vector<Point> points = points_of(s, l, mc);
  if (points.empty()) return 0;
  // The first op's gather waits for nothing; each later one runs beside the op before it, the next
  // micro-batch's first beside this one's last (its embedding's backward).
  double exposed = points.front().gather, queued = 0;
  const std::int64_t m = l.micro_batches();
  for (std::int64_t k = 0; k < m; ++k)
    for (std::size_t j = 0; j < points.size(); ++j) {
      const bool last = k + 1 == m && j + 1 == points.size();
      const double next = last ? 0.0 : points[(j + 1) % points.size()].gather;
      const Window w = share(next, queued, points[j].compute);
      exposed += std::max(0.0, w.gathered - points[j].compute);
      queued = w.left + points[j].scatter;
    }
  // The last reduce-scatters after the last backward, alone: the optimizer needs them.
  return exposed + queued;
}

}  // namespace hybridsim::analysis
