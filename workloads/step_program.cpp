#include "workloads/step_program.h"

#include <algorithm>
#include <map>
#include <string>

#include "sim/error.h"

namespace hybridsim::workloads {

std::string_view phase_name(Phase phase) {
  switch (phase) {
    case Phase::Forward: return "forward";
    case Phase::Backward: return "backward";
    case Phase::Optimizer: return "optimizer";
  }
  return "?";
}

namespace {

using sim::Task;

// A model-parallel edge of one worker: op u's output is needed on MP rank `to` (≠ its own rank).
struct Pair {
  std::uint32_t op;
  int from;  // MP rank holding op
  int to;    // MP rank of the consumers
  std::uint32_t last_backward_consumer = 0;  // on `to`, in backward order: sends the gradient
};

// A data-parallel gradient collective of one MP rank, triggered after `trigger`'s backward.
struct DpCollective {
  CollectiveRole role;
  sim::Bytes size;  // per worker: bucket bytes, or sparse bytes one worker contributes
  std::uint32_t trigger;
  int bucket;
};

std::vector<std::size_t> positions(const std::vector<std::uint32_t>& order, std::size_t n) {
  std::vector<std::size_t> pos(n, 0);
  for (std::size_t i = 0; i < order.size(); ++i) pos[order[i]] = i;
  return pos;
}

}  // namespace

StepProgram build_step_program(const Profile& profile, const MpPlacement& placement,
                               const WorkerMapping& mapping, int gpu_count,
                               const StepOptions& options) {
  const int dp = mapping.dp;
  const int mp = mapping.mp;
  const std::size_t n = profile.ops.size();
  if (placement.mp != mp || placement.gpu_of_op.size() != n)
    throw InternalError("placement does not match the mapping's mp or the profile's ops");
  const auto& gpu_of = placement.gpu_of_op;
  const OpOrder order = order_ops(profile, placement, options.mp_transfer_estimate);

  StepProgram out;
  out.dp = dp;
  out.mp = mp;
  out.global_batch = profile.meta.batch_per_gpu * dp;
  out.gpus.resize(static_cast<std::size_t>(gpu_count));
  out.worker_of_gpu.assign(static_cast<std::size_t>(gpu_count), -1);
  out.mp_rank_of_gpu.assign(static_cast<std::size_t>(gpu_count), -1);

  // Kernel labels: op v's forward kernels from label_base[v], then its backward kernels.
  std::vector<std::uint32_t> label_base(n);
  for (std::uint32_t v = 0; v < n; ++v) {
    label_base[v] = static_cast<std::uint32_t>(out.labels.size());
    for (std::uint32_t k = 0; k < profile.ops[v].forward.size(); ++k)
      out.labels.push_back({v, Phase::Forward, k});
    for (std::uint32_t k = 0; k < profile.ops[v].backward.size(); ++k)
      out.labels.push_back({v, Phase::Backward, k});
  }
  const auto optimizer_label = static_cast<std::uint32_t>(out.labels.size());
  out.labels.push_back({0, Phase::Optimizer, 0});

  // Model-parallel pairs (the same for every worker), and for each op the pairs it produces.
  std::vector<Pair> pairs;
  std::vector<std::vector<std::size_t>> pairs_of_op(n);
  std::map<std::pair<std::uint32_t, int>, std::size_t> pair_index;
  for (std::uint32_t v = 0; v < n; ++v) {
    for (const std::uint32_t u : profile.ops[v].inputs) {
      const int to = static_cast<int>(gpu_of[v]);
      if (gpu_of[u] == gpu_of[v] || pair_index.count({u, to})) continue;
      pair_index[{u, to}] = pairs.size();
      pairs_of_op[u].push_back(pairs.size());
      pairs.push_back(Pair{u, static_cast<int>(gpu_of[u]), to, v});
    }
  }
  // Each op's position in its GPU's forward and backward order (the same for every worker).
  std::vector<std::vector<std::size_t>> fwd_pos(static_cast<std::size_t>(mp)), bpos(static_cast<std::size_t>(mp));
  for (int k = 0; k < mp; ++k) {
    fwd_pos[static_cast<std::size_t>(k)] = positions(order.forward[static_cast<std::size_t>(k)], n);
    bpos[static_cast<std::size_t>(k)] = positions(order.backward[static_cast<std::size_t>(k)], n);
  }
  for (std::uint32_t v = 0; v < n; ++v)
    for (const std::uint32_t u : profile.ops[v].inputs) {
      if (gpu_of[u] == gpu_of[v]) continue;
      Pair& p = pairs[pair_index.at({u, static_cast<int>(gpu_of[v])})];
      const auto& pos = bpos[gpu_of[v]];
      if (pos[v] > pos[p.last_backward_consumer]) p.last_backward_consumer = v;
    }
  // Ops after whose backward a pair's gradient is ready, per op.
  std::vector<std::vector<std::size_t>> gradient_pairs_after(n);
  for (std::size_t p = 0; p < pairs.size(); ++p) gradient_pairs_after[pairs[p].last_backward_consumer].push_back(p);

  // Data-parallel gradient collectives per MP rank, in the order backward produces them.
  std::vector<std::vector<DpCollective>> dp_colls(static_cast<std::size_t>(mp));
  std::vector<std::vector<std::size_t>> dp_after(n);  // op → indices into dp_colls[gpu_of[op]]
  if (dp > 1) {
    const bool recorded = options.recorded_buckets && profile.has_recorded_buckets();
    for (int k = 0; k < mp; ++k) {
      auto& colls = dp_colls[static_cast<std::size_t>(k)];
      sim::Bytes pending;
      std::uint32_t last = 0;
      int buckets = 0;
      auto close_bucket = [&] {
        if (pending.count() == 0) return;
        dp_after[last].push_back(colls.size());
        colls.push_back({CollectiveRole::GradientAllReduce, pending, last, buckets++});
        pending = sim::Bytes();
      };
      for (const std::uint32_t v : order.backward[static_cast<std::size_t>(k)]) {
        const Op& op = profile.ops[v];
        if (op.exchange == GradientExchange::DenseAllReduce && recorded && !op.buckets.empty()) {
          for (const sim::Bytes bucket : op.buckets) {  // exactly as recorded, after this op's backward
            dp_after[v].push_back(colls.size());
            colls.push_back({CollectiveRole::GradientAllReduce, bucket, v, buckets++});
          }
        } else if (op.exchange == GradientExchange::DenseAllReduce) {
          pending += op.gradient_bytes;
          last = v;
          if (pending >= options.bucket_size) close_bucket();
        } else if (op.exchange == GradientExchange::SparseAllGather) {
          dp_after[v].push_back(colls.size());
          colls.push_back({CollectiveRole::GradientAllGather, op.sparse_bytes_per_worker, v, -1});
        }
      }
      close_bucket();
    }
  }
  // Global indices of the shared data-parallel collectives.
  std::vector<std::vector<std::uint32_t>> dp_index(static_cast<std::size_t>(mp));
  for (int k = 0; k < mp; ++k) {
    for (const DpCollective& c : dp_colls[static_cast<std::size_t>(k)]) {
      dp_index[static_cast<std::size_t>(k)].push_back(static_cast<std::uint32_t>(out.collectives.size()));
      CollectiveSpec spec;
      spec.role = c.role;
      spec.members = mapping.dp_group(k);
      spec.op_index = c.trigger;
      spec.bucket = c.bucket;
      spec.mp_rank = k;
      if (c.role == CollectiveRole::GradientAllReduce) {
        spec.op = sim::CollectiveOp::AllReduce;
        spec.size = c.size;
      } else {
        spec.op = sim::CollectiveOp::AllGather;  // every worker's rows end up on every worker
        spec.size = sim::Bytes::of(c.size.count() * dp);
      }
      out.collectives.push_back(std::move(spec));
    }
  }

  // Optimizer work per MP rank: the parameters it updates after the exchange, each op rounded
  // like Profile::optimizer_time, so one GPU's step equals Profile::step_time_1gpu exactly.
  std::vector<sim::Time> update_time(static_cast<std::size_t>(mp));
  for (std::uint32_t v = 0; v < n; ++v)
    if (profile.ops[v].has_gradient())
      update_time[gpu_of[v]] += profile.optimizer.update_time(profile.ops[v].update_bytes(dp));

  std::uint32_t next_event = 0;
  for (int w = 0; w < dp; ++w) {
    const auto& gpus = mapping.gpu_rank[static_cast<std::size_t>(w)];
    auto gpu = [&](int k) { return gpus[static_cast<std::size_t>(k)]; };
    // Events of this worker.
    std::vector<std::uint32_t> fwd_done(n, 0);
    for (std::uint32_t v = 0; v < n; ++v)
      if (!pairs_of_op[v].empty()) fwd_done[v] = next_event++;
    std::vector<std::uint32_t> act_recv(pairs.size()), grad_ready(pairs.size()), grad_recv(pairs.size());
    for (std::size_t p = 0; p < pairs.size(); ++p) {
      act_recv[p] = next_event++;
      grad_ready[p] = next_event++;
      grad_recv[p] = next_event++;
    }
    std::vector<std::vector<std::uint32_t>> dp_ready(static_cast<std::size_t>(mp));
    std::vector<std::uint32_t> comm_done(static_cast<std::size_t>(mp));
    for (int k = 0; k < mp; ++k) {
      for (std::size_t i = 0; i < dp_colls[static_cast<std::size_t>(k)].size(); ++i)
        dp_ready[static_cast<std::size_t>(k)].push_back(next_event++);
      comm_done[static_cast<std::size_t>(k)] = next_event++;
    }
    // This worker's point-to-point transfers.
    std::vector<std::uint32_t> act_coll(pairs.size()), grad_coll(pairs.size());
    for (std::size_t p = 0; p < pairs.size(); ++p) {
      const Pair& pr = pairs[p];
      const sim::Bytes bytes = profile.ops[pr.op].activation_bytes;
      act_coll[p] = static_cast<std::uint32_t>(out.collectives.size());
      out.collectives.push_back({CollectiveRole::Activation, sim::CollectiveOp::Broadcast, bytes,
                                 {gpu(pr.from), gpu(pr.to)}, pr.op, -1, pr.from});
      grad_coll[p] = static_cast<std::uint32_t>(out.collectives.size());
      out.collectives.push_back({CollectiveRole::ActivationGradient, sim::CollectiveOp::Broadcast,
                                 bytes, {gpu(pr.to), gpu(pr.from)}, pr.op, -1, pr.to});
    }

    for (int k = 0; k < mp; ++k) {
      const auto ku = static_cast<std::size_t>(k);
      sim::GpuProgram& prog = out.gpus[static_cast<std::size_t>(gpu(k))];
      out.worker_of_gpu[static_cast<std::size_t>(gpu(k))] = w;
      out.mp_rank_of_gpu[static_cast<std::size_t>(gpu(k))] = k;
      const auto g = static_cast<std::size_t>(gpu(k));
      prog.compute_scale = options.compute_scale *
                           (g < options.gpu_compute_scale.size() ? options.gpu_compute_scale[g] : 1.0);
      sim::StreamProgram compute{"compute", {}};
      std::vector<bool> waited(pairs.size(), false);
      for (const std::uint32_t v : order.forward[ku]) {
        for (const std::uint32_t u : profile.ops[v].inputs) {
          if (gpu_of[u] == gpu_of[v]) continue;
          const std::size_t p = pair_index.at({u, k});
          if (!waited[p]) compute.tasks.push_back(Task::wait(act_recv[p]));
          waited[p] = true;
        }
        for (std::uint32_t i = 0; i < profile.ops[v].forward.size(); ++i) {
          const Kernel& kernel = profile.ops[v].forward[i];
          compute.tasks.push_back(Task::kernel(kernel.duration, label_base[v] + i, kernel.idle_before));
        }
        if (!pairs_of_op[v].empty()) compute.tasks.push_back(Task::record(fwd_done[v]));
      }
      for (const std::uint32_t v : order.backward[ku]) {
        for (const std::size_t p : pairs_of_op[v]) compute.tasks.push_back(Task::wait(grad_recv[p]));
        const auto nf = static_cast<std::uint32_t>(profile.ops[v].forward.size());
        for (std::uint32_t i = 0; i < profile.ops[v].backward.size(); ++i) {
          const Kernel& kernel = profile.ops[v].backward[i];
          compute.tasks.push_back(Task::kernel(kernel.duration, label_base[v] + nf + i, kernel.idle_before));
        }
        for (const std::size_t p : gradient_pairs_after[v]) compute.tasks.push_back(Task::record(grad_ready[p]));
        for (const std::size_t i : dp_after[v]) compute.tasks.push_back(Task::record(dp_ready[ku][i]));
      }
      if (!dp_colls[ku].empty()) compute.tasks.push_back(Task::wait(comm_done[ku]));
      const sim::Time update = update_time[ku];
      const sim::Time optimizer_idle = profile.optimizer.idle_before;  // kept launch gaps
      if (update > sim::Time::zero() || optimizer_idle > sim::Time::zero())
        compute.tasks.push_back(Task::kernel(update, optimizer_label, optimizer_idle));
      prog.streams.push_back(std::move(compute));

      if (!dp_colls[ku].empty()) {
        sim::StreamProgram comm{"communication", {}};
        for (std::size_t i = 0; i < dp_colls[ku].size(); ++i) {
          comm.tasks.push_back(Task::wait(dp_ready[ku][i]));
          comm.tasks.push_back(Task::collective(dp_index[ku][i], static_cast<std::uint32_t>(w)));
        }
        comm.tasks.push_back(Task::record(comm_done[ku]));
        prog.streams.push_back(std::move(comm));
      }
      // One send and one receive stream per peer, in the order the data becomes ready: activations
      // in the sender's forward order, then gradients in its backward order.
      for (int peer = 0; peer < mp; ++peer) {
        if (peer == k) continue;
        const auto& fpos = fwd_pos[ku];
        const auto& own_bpos = bpos[ku];
        std::vector<std::pair<std::size_t, std::size_t>> acts, grads;  // (position, pair)
        for (std::size_t p = 0; p < pairs.size(); ++p) {
          if (pairs[p].from == k && pairs[p].to == peer) acts.push_back({fpos[pairs[p].op], p});
          if (pairs[p].to == k && pairs[p].from == peer)
            grads.push_back({own_bpos[pairs[p].last_backward_consumer], p});
        }
        std::sort(acts.begin(), acts.end());
        std::sort(grads.begin(), grads.end());
        if (!acts.empty() || !grads.empty()) {
          sim::StreamProgram send{"send→GPU" + std::to_string(gpu(peer)), {}};
          for (const auto& [pos, p] : acts) {
            send.tasks.push_back(Task::wait(fwd_done[pairs[p].op]));
            send.tasks.push_back(Task::collective(act_coll[p], 0));
          }
          for (const auto& [pos, p] : grads) {
            send.tasks.push_back(Task::wait(grad_ready[p]));
            send.tasks.push_back(Task::collective(grad_coll[p], 0));
          }
          prog.streams.push_back(std::move(send));
        }
      }
      for (int peer = 0; peer < mp; ++peer) {
        if (peer == k) continue;
        const auto& fpos = fwd_pos[static_cast<std::size_t>(peer)];
        const auto& peer_bpos = bpos[static_cast<std::size_t>(peer)];
        std::vector<std::pair<std::size_t, std::size_t>> acts, grads;
        for (std::size_t p = 0; p < pairs.size(); ++p) {
          if (pairs[p].from == peer && pairs[p].to == k) acts.push_back({fpos[pairs[p].op], p});
          if (pairs[p].to == peer && pairs[p].from == k)
            grads.push_back({peer_bpos[pairs[p].last_backward_consumer], p});
        }
        std::sort(acts.begin(), acts.end());
        std::sort(grads.begin(), grads.end());
        if (acts.empty() && grads.empty()) continue;
        sim::StreamProgram recv{"recv←GPU" + std::to_string(gpu(peer)), {}};
        for (const auto& [pos, p] : acts) {
          recv.tasks.push_back(Task::collective(act_coll[p], 1));
          recv.tasks.push_back(Task::record(act_recv[p]));
        }
        for (const auto& [pos, p] : grads) {
          recv.tasks.push_back(Task::collective(grad_coll[p], 1));
          recv.tasks.push_back(Task::record(grad_recv[p]));
        }
        prog.streams.push_back(std::move(recv));
      }
    }
  }
  out.event_count = next_event;
  return out;
}

}  // namespace hybridsim::workloads
