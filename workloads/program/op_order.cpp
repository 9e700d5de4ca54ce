#include "workloads/program/op_order.h"

#include <functional>
#include <queue>
#include <tuple>

namespace hybridsim::workloads {

namespace {

// One pass of list scheduling over a DAG given as predecessor lists (preds[v] all precede v).
// Returns, per GPU, the ops in the order they start.
std::vector<std::vector<std::uint32_t>> list_schedule(
    const std::vector<std::vector<std::uint32_t>>& preds,
    const std::vector<std::vector<std::uint32_t>>& succs, const std::vector<std::uint32_t>& gpu_of,
    const std::vector<std::int64_t>& duration, const std::vector<std::int64_t>& transfer, int mp,
    bool charge_successor) {
  const std::size_t n = preds.size();
  std::vector<std::int64_t> ready(n, 0), finish(n, 0);
  std::vector<std::size_t> missing(n);
  // Per GPU: candidates keyed by (ready time, op index) — deterministic ties.
  using Key = std::pair<std::int64_t, std::uint32_t>;
  std::vector<std::priority_queue<Key, std::vector<Key>, std::greater<Key>>> candidates(
      static_cast<std::size_t>(mp));
  for (std::uint32_t v = 0; v < n; ++v) {
    missing[v] = preds[v].size();
    if (missing[v] == 0) candidates[gpu_of[v]].push({0, v});
  }
  std::vector<std::int64_t> free_at(static_cast<std::size_t>(mp), 0);
  std::vector<std::vector<std::uint32_t>> order(static_cast<std::size_t>(mp));
  for (std::size_t done = 0; done < n; ++done) {
    // The GPU whose best candidate starts first.
    int best = -1;
    std::tuple<std::int64_t, std::uint32_t> best_key{0, 0};
    for (int g = 0; g < mp; ++g) {
      auto& c = candidates[static_cast<std::size_t>(g)];
      if (c.empty()) continue;
      const std::tuple<std::int64_t, std::uint32_t> key{
          std::max(c.top().first, free_at[static_cast<std::size_t>(g)]), c.top().second};
      if (best < 0 || key < best_key) {
        best = g;
        best_key = key;
      }
    }
    if (best < 0) break;  // cannot happen for a DAG
    auto& c = candidates[static_cast<std::size_t>(best)];
    const std::uint32_t v = c.top().second;
    c.pop();
    const std::int64_t start = std::get<0>(best_key);
    finish[v] = start + duration[v];
    free_at[static_cast<std::size_t>(best)] = finish[v];
    order[static_cast<std::size_t>(best)].push_back(v);
    for (const std::uint32_t s : succs[v]) {
      // An edge carries the producer's activation (forward) or its gradient (backward, where the
      // producer is the successor in the reversed graph).
      const std::int64_t bytes_time = charge_successor ? transfer[s] : transfer[v];
      const std::int64_t arrive = finish[v] + (gpu_of[s] != gpu_of[v] ? bytes_time : 0);
      ready[s] = std::max(ready[s], arrive);
      if (--missing[s] == 0) candidates[gpu_of[s]].push({ready[s], s});
    }
  }
  return order;
}

}  // namespace

OpOrder order_ops(const Profile& profile, const MpPlacement& placement,
                  sim::Bandwidth transfer_bandwidth) {
  const std::size_t n = profile.ops.size();
  std::vector<std::vector<std::uint32_t>> inputs(n), consumers(n);
  std::vector<std::int64_t> fwd(n), bwd(n), transfer(n);
  for (std::uint32_t v = 0; v < n; ++v) {
    const Op& op = profile.ops[v];
    for (const std::uint32_t u : op.inputs) {
      inputs[v].push_back(u);
      consumers[u].push_back(v);
    }
    fwd[v] = op.forward_time().ps();
    bwd[v] = op.backward_time().ps();
    transfer[v] = transfer_bandwidth.bytes_per_second() > 0
                      ? sim::transfer_time(op.activation_bytes, transfer_bandwidth).ps()
                      : 0;
  }
  OpOrder out;
  out.forward =
      list_schedule(inputs, consumers, placement.gpu_of_op, fwd, transfer, placement.mp, false);
  // Backward: the reversed graph (consumers first); the same bytes flow back as gradients.
  out.backward =
      list_schedule(consumers, inputs, placement.gpu_of_op, bwd, transfer, placement.mp, true);
  return out;
}

}  // namespace hybridsim::workloads
