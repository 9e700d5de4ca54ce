// The worker-independent steps of build_step_program: labels, model-parallel edges, gradient
// collectives and optimizer times (workloads/program/step_program_parts.h).
#include <algorithm>

#include "sim/error.h"
#include "workloads/gpu/cost_model.h"
#include "workloads/program/step_program_parts.h"

namespace hybridsim::workloads::step_parts {

namespace {

std::vector<std::size_t> positions(const std::vector<std::uint32_t>& order, std::size_t n) {
  std::vector<std::size_t> pos(n, 0);
  for (std::size_t i = 0; i < order.size(); ++i) pos[order[i]] = i;
  return pos;
}

}  // namespace

KernelLabels label_kernels(const Profile& profile) {
  KernelLabels out;
  const std::size_t n = profile.ops.size();
  out.first_of_op.resize(n);
  for (std::uint32_t v = 0; v < n; ++v) {
    out.first_of_op[v] = static_cast<std::uint32_t>(out.labels.size());
    for (std::uint32_t k = 0; k < profile.ops[v].forward.size(); ++k)
      out.labels.push_back({v, Phase::Forward, k});
    for (std::uint32_t k = 0; k < profile.ops[v].backward.size(); ++k)
      out.labels.push_back({v, Phase::Backward, k});
  }
  out.optimizer = static_cast<std::uint32_t>(out.labels.size());
  out.labels.push_back({0, Phase::Optimizer, 0});
  return out;
}

MpEdges model_parallel_edges(const Profile& profile, const MpPlacement& placement, const OpOrder& order) {
  const std::size_t n = profile.ops.size();
  const auto& gpu_of = placement.gpu_of_op;
  MpEdges out;
  out.of_op.resize(n);
  out.gradient_after.resize(n);
  for (std::uint32_t v = 0; v < n; ++v)
    for (const std::uint32_t u : profile.ops[v].inputs) {
      const int to = static_cast<int>(gpu_of[v]);
      if (gpu_of[u] == gpu_of[v] || out.index.count({u, to})) continue;
      out.index[{u, to}] = out.edges.size();
      out.of_op[u].push_back(out.edges.size());
      out.edges.push_back(MpEdge{u, static_cast<int>(gpu_of[u]), to, v});
    }
  // The consumer whose backward runs last on the receiving GPU sends the gradient back.
  std::vector<std::vector<std::size_t>> bpos;
  for (const auto& b : order.backward) bpos.push_back(positions(b, n));
  for (std::uint32_t v = 0; v < n; ++v)
    for (const std::uint32_t u : profile.ops[v].inputs) {
      if (gpu_of[u] == gpu_of[v]) continue;
      MpEdge& e = out.edges[out.index.at({u, static_cast<int>(gpu_of[v])})];
      const auto& pos = bpos[gpu_of[v]];
      if (pos[v] > pos[e.last_backward_consumer]) e.last_backward_consumer = v;
    }
  for (std::size_t e = 0; e < out.edges.size(); ++e)
    out.gradient_after[out.edges[e].last_backward_consumer].push_back(e);
  return out;
}

std::vector<GradientCollective> gradient_collectives(const Profile& profile,
                                                     std::span<const std::uint32_t> backward_order,
                                                     const StepOptions& options) {
  const bool recorded = options.recorded_buckets && profile.has_recorded_buckets();
  std::vector<GradientCollective> out;
  sim::Bytes pending;
  std::uint32_t last = 0;
  int buckets = 0;
  auto close_bucket = [&] {
    if (pending.count() == 0) return;
    out.push_back({CollectiveRole::GradientAllReduce, pending, last, buckets++});
    pending = sim::Bytes();
  };
  for (const std::uint32_t v : backward_order) {
    const Op& op = profile.ops[v];
    if (op.exchange == GradientExchange::DenseAllReduce && recorded && !op.buckets.empty()) {
      for (const sim::Bytes bucket : op.buckets)  // exactly as recorded, after this op's backward
        out.push_back({CollectiveRole::GradientAllReduce, bucket, v, buckets++});
    } else if (op.exchange == GradientExchange::DenseAllReduce) {
      // Experts' gradients go over fewer replicas than the others: a bucket of their own.
      const bool own = std::ranges::find(options.ep.expert_ops, v) != options.ep.expert_ops.end();
      if (own) close_bucket();
      pending += op.gradient_bytes;
      last = v;
      if (own || pending >= options.bucket_size) close_bucket();
    } else if (op.exchange == GradientExchange::SparseAllGather) {
      out.push_back({CollectiveRole::GradientAllGather, op.sparse_bytes_per_worker, v, -1});
    }
  }
  close_bucket();
  return out;
}

std::vector<sim::Time> optimizer_times(const Profile& profile, const MpPlacement& placement, int dp) {
  std::vector<sim::Time> out(static_cast<std::size_t>(placement.mp));
  for (std::uint32_t v = 0; v < profile.ops.size(); ++v)
    if (profile.ops[v].has_gradient())
      out[placement.gpu_of_op[v]] += profile.optimizer.update_time(profile.ops[v].update_bytes(dp));
  return out;
}

std::vector<std::vector<GradientCopy>> gradient_copies(
    const std::vector<std::vector<GradientCollective>>& gradients,
    const std::vector<std::uint32_t>& first_collective, int dp, const Gpu& gpu, KernelLabels& labels,
    int passes) {
  if (passes < 2) throw InternalError("gradient copies: at least 2 passes (in and out)");
  const sim::Bandwidth bw = gpu_resources(gpu).memory_kernel_bandwidth;
  // Each pass reads once and writes once: 2 bytes of memory traffic per byte and pass.
  auto copy_time = [&](std::int64_t bytes, int n) {
    return max(kernel_launch_floor(), sim::transfer_time(sim::Bytes::of(2 * n * bytes), bw));
  };
  std::vector<std::vector<GradientCopy>> out(gradients.size());
  for (std::size_t k = 0; k < gradients.size(); ++k)
    for (std::size_t i = 0; i < gradients[k].size(); ++i) {
      const GradientCollective& c = gradients[k][i];
      const std::int64_t in = c.size.count();
      const std::int64_t back = c.role == CollectiveRole::GradientAllGather ? in * dp : in;
      const auto global = static_cast<std::uint32_t>(first_collective[k] + i);
      GradientCopy copy{copy_time(in, passes - 1), copy_time(back, 1),
                        static_cast<std::uint32_t>(labels.labels.size()),
                        static_cast<std::uint32_t>(labels.labels.size() + 1)};
      labels.labels.push_back({c.trigger, Phase::GradientCopyIn, global});
      labels.labels.push_back({c.trigger, Phase::GradientCopyOut, global});
      out[k].push_back(copy);
    }
  return out;
}

StepLayout lay_out_step(const Profile& profile, const MpPlacement& placement, int dp,
                        const StepOptions& options) {
  const std::size_t n = profile.ops.size();
  if (placement.gpu_of_op.size() != n) throw InternalError("placement does not match the profile's ops");
  StepLayout out;
  out.dp = dp;
  out.mp = placement.mp;
  out.order = order_ops(profile, placement, options.mp_transfer_estimate);
  for (int k = 0; k < out.mp; ++k) {
    out.forward_position.push_back(positions(out.order.forward[static_cast<std::size_t>(k)], n));
    out.backward_position.push_back(positions(out.order.backward[static_cast<std::size_t>(k)], n));
  }
  out.labels = label_kernels(profile);
  out.edges = model_parallel_edges(profile, placement, out.order);
  if (options.accumulation < 1 || (options.accumulation > 1 && out.mp > 1))
    throw InputError("gradient accumulation (" + std::to_string(options.accumulation) +
                     " micro-batches) is modelled only without model parallelism (mp = 1)");
  out.micro_batches = options.accumulation;
  out.rounds = dp > 1 && options.exchange_every_micro_batch ? options.accumulation : 1;
  out.gradients.resize(static_cast<std::size_t>(out.mp));
  out.gradients_after.assign(static_cast<std::size_t>(out.mp), std::vector<std::vector<std::size_t>>(n));
  if (dp > 1)
    for (int k = 0; k < out.mp; ++k) {
      const auto ku = static_cast<std::size_t>(k);
      const std::vector<GradientCollective> one =
          gradient_collectives(profile, out.order.backward[ku], options);
      for (std::size_t i = 0; i < one.size(); ++i) out.gradients_after[ku][one[i].trigger].push_back(i);
      for (int r = 0; r < out.rounds; ++r)
        out.gradients[ku].insert(out.gradients[ku].end(), one.begin(), one.end());
    }
  out.optimizer = optimizer_times(profile, placement, dp);
  const Gpu* gpu = find_gpu(profile.meta.gpu);
  if (dp > 1 && options.gradient_copies && gpu && !profile.has_recorded_buckets()) {
    std::vector<std::uint32_t> first;
    std::uint32_t next = 0;
    for (const auto& g : out.gradients) {
      first.push_back(next);
      next += static_cast<std::uint32_t>(g.size());
    }
    out.copies = gradient_copies(out.gradients, first, dp, *gpu, out.labels, options.copy_passes);
  }
  return out;
}

}  // namespace hybridsim::workloads::step_parts
