// The per-worker steps of build_step_program: its events and each GPU's streams
// (workloads/program/step_program_parts.h).
#include <algorithm>
#include <string>

#include "workloads/program/step_program_parts.h"

namespace hybridsim::workloads::step_parts {

using sim::Task;

WorkerEvents allocate_worker_events(const StepLayout& layout, std::uint32_t& next_event) {
  WorkerEvents e;
  const std::size_t n = layout.edges.of_op.size();
  e.forward_done.assign(n, 0);
  for (std::uint32_t v = 0; v < n; ++v)
    if (!layout.edges.of_op[v].empty()) e.forward_done[v] = next_event++;
  const std::size_t edges = layout.edges.edges.size();
  e.activation_received.resize(edges);
  e.gradient_ready.resize(edges);
  e.gradient_received.resize(edges);
  for (std::size_t p = 0; p < edges; ++p) {
    e.activation_received[p] = next_event++;
    e.gradient_ready[p] = next_event++;
    e.gradient_received[p] = next_event++;
  }
  e.gradients_ready.resize(static_cast<std::size_t>(layout.mp));
  e.gradients_done.resize(static_cast<std::size_t>(layout.mp));
  for (std::size_t k = 0; k < static_cast<std::size_t>(layout.mp); ++k) {
    for (std::size_t i = 0; i < layout.gradients[k].size(); ++i) e.gradients_ready[k].push_back(next_event++);
    e.gradients_done[k] = next_event++;
  }
  e.round_done.resize(static_cast<std::size_t>(layout.mp));
  for (std::size_t k = 0; k < static_cast<std::size_t>(layout.mp); ++k)
    if (!layout.gradients[k].empty())
      for (int r = 0; r + 1 < layout.rounds; ++r) e.round_done[k].push_back(next_event++);
  return e;
}

namespace {

// A gradient copy: memory-bound, its work independent of the batch.
Task copy_kernel(sim::Time duration, std::uint32_t label) {
  return Task::kernel(duration, label, sim::Time::zero(), sim::KernelBound::Memory).fixed_work();
}

// Forward: each op's kernels after the activations it reads from other GPUs (each waited once).
void add_forward(const Profile& profile, const StepLayout& layout, const WorkerEvents& events, int k,
                 sim::StreamProgram& compute) {
  const auto ku = static_cast<std::size_t>(k);
  std::vector<bool> waited(layout.edges.edges.size(), false);
  for (const std::uint32_t v : layout.order.forward[ku]) {
    for (const std::uint32_t u : profile.ops[v].inputs) {
      const auto it = layout.edges.index.find({u, k});  // none when u runs on this GPU too
      if (it == layout.edges.index.end()) continue;
      if (!waited[it->second]) compute.tasks.push_back(Task::wait(events.activation_received[it->second]));
      waited[it->second] = true;
    }
    const std::uint32_t first = layout.labels.first_of_op[v];
    for (std::uint32_t i = 0; i < profile.ops[v].forward.size(); ++i) {
      const Kernel& kernel = profile.ops[v].forward[i];
      compute.tasks.push_back(Task::kernel(kernel.duration, first + i, kernel.idle_before, kernel.bound));
    }
    if (!layout.edges.of_op[v].empty()) compute.tasks.push_back(Task::record(events.forward_done[v]));
  }
}

// Backward: each op's kernels after the gradients of its outputs come back from other GPUs; then
// the gradients it makes ready (to send back, to exchange in `round`; none, for a micro-batch that
// only accumulates, when `round` is negative).
void add_backward(const Profile& profile, const StepLayout& layout, const WorkerEvents& events, int k,
                  int round, sim::StreamProgram& compute) {
  const auto ku = static_cast<std::size_t>(k);
  for (const std::uint32_t v : layout.order.backward[ku]) {
    for (const std::size_t p : layout.edges.of_op[v])
      compute.tasks.push_back(Task::wait(events.gradient_received[p]));
    const std::uint32_t first =
        layout.labels.first_of_op[v] + static_cast<std::uint32_t>(profile.ops[v].forward.size());
    for (std::uint32_t i = 0; i < profile.ops[v].backward.size(); ++i) {
      const Kernel& kernel = profile.ops[v].backward[i];
      compute.tasks.push_back(Task::kernel(kernel.duration, first + i, kernel.idle_before, kernel.bound));
    }
    for (const std::size_t p : layout.edges.gradient_after[v])
      compute.tasks.push_back(Task::record(events.gradient_ready[p]));
    if (round < 0) continue;
    const std::size_t per_round = layout.gradients[ku].size() / static_cast<std::size_t>(layout.rounds);
    for (std::size_t i : layout.gradients_after[ku][v]) {
      i += per_round * static_cast<std::size_t>(round);
      if (!layout.copies.empty())
        compute.tasks.push_back(copy_kernel(layout.copies[ku][i].in, layout.copies[ku][i].in_label));
      compute.tasks.push_back(Task::record(events.gradients_ready[ku][i]));
    }
  }
}

}  // namespace

sim::StreamProgram compute_stream(const Profile& profile, const StepLayout& layout,
                                  const WorkerEvents& events, int k) {
  const auto ku = static_cast<std::size_t>(k);
  sim::StreamProgram compute{"compute", {}};
  const std::size_t per_round = layout.gradients[ku].size() / static_cast<std::size_t>(layout.rounds);
  // Copies out of round r's buffers, after its collectives are done.
  auto copy_out = [&](int r) {
    if (layout.copies.empty()) return;
    for (std::size_t i = per_round * static_cast<std::size_t>(r);
         i < per_round * (static_cast<std::size_t>(r) + 1); ++i)
      compute.tasks.push_back(copy_kernel(layout.copies[ku][i].out, layout.copies[ku][i].out_label));
  };
  for (int m = 0; m < layout.micro_batches; ++m) {
    const bool last = m + 1 == layout.micro_batches;
    const int round = layout.rounds > 1 ? m : last ? 0 : -1;
    add_forward(profile, layout, events, k, compute);
    add_backward(profile, layout, events, k, round, compute);
    if (last || round < 0 || layout.gradients[ku].empty()) continue;
    compute.tasks.push_back(Task::wait(events.round_done[ku][static_cast<std::size_t>(m)]));
    copy_out(m);
  }
  if (!layout.gradients[ku].empty()) compute.tasks.push_back(Task::wait(events.gradients_done[ku]));
  copy_out(layout.rounds - 1);
  const sim::Time update = layout.optimizer[ku];
  const sim::Time optimizer_idle = profile.optimizer.idle_before;  // kept launch gaps
  if (update > sim::Time::zero() || optimizer_idle > sim::Time::zero())
    compute.tasks.push_back(  // memory-bound (a few passes over the parameters), not per sample
        Task::kernel(update, layout.labels.optimizer, optimizer_idle, sim::KernelBound::Memory).fixed_work());
  return compute;
}

std::optional<sim::StreamProgram> communication_stream(const StepLayout& layout, const WorkerEvents& events,
                                                       int k, std::uint32_t worker,
                                                       std::span<const std::uint32_t> collective) {
  const auto ku = static_cast<std::size_t>(k);
  if (layout.gradients[ku].empty()) return std::nullopt;
  sim::StreamProgram comm{"communication", {}};
  const std::size_t per_round = layout.gradients[ku].size() / static_cast<std::size_t>(layout.rounds);
  for (std::size_t i = 0; i < layout.gradients[ku].size(); ++i) {
    comm.tasks.push_back(Task::wait(events.gradients_ready[ku][i]));
    comm.tasks.push_back(Task::collective(collective[i], worker));
    if ((i + 1) % per_round == 0 && i + 1 < layout.gradients[ku].size())
      comm.tasks.push_back(Task::record(events.round_done[ku][(i + 1) / per_round - 1]));
  }
  comm.tasks.push_back(Task::record(events.gradients_done[ku]));
  return comm;
}

namespace {

// The edges from MP rank a to rank b as (position, edge), sorted two ways: by a's forward position
// of the producer (when the activation is ready to go a → b) and by b's backward position of the
// last consumer (when its gradient is ready to go back b → a).
struct EdgesBetween {
  std::vector<std::pair<std::size_t, std::size_t>> by_forward, by_backward;
};
EdgesBetween edges_between(const StepLayout& layout, int a, int b) {
  const auto& fpos = layout.forward_position[static_cast<std::size_t>(a)];
  const auto& bpos = layout.backward_position[static_cast<std::size_t>(b)];
  EdgesBetween out;
  for (std::size_t p = 0; p < layout.edges.edges.size(); ++p) {
    const MpEdge& e = layout.edges.edges[p];
    if (e.from != a || e.to != b) continue;
    out.by_forward.push_back({fpos[e.op], p});
    out.by_backward.push_back({bpos[e.last_backward_consumer], p});
  }
  std::sort(out.by_forward.begin(), out.by_forward.end());
  std::sort(out.by_backward.begin(), out.by_backward.end());
  return out;
}

// MP rank k's streams to (sending) or from (receiving) each peer: the activations going one way
// and the gradients coming back, each transfer a collective of two ranks (0 sends, 1 receives); a
// sender waits until the data is ready, a receiver records that it arrived.
std::vector<sim::StreamProgram> transfer_streams(const StepLayout& layout, const WorkerEvents& events, int k,
                                                 bool sending, std::span<const std::uint32_t> activation,
                                                 std::span<const std::uint32_t> gradient,
                                                 std::span<const int> gpu_of_rank) {
  std::vector<sim::StreamProgram> out;
  const std::uint32_t rank = sending ? 0 : 1;
  for (int peer = 0; peer < layout.mp; ++peer) {
    if (peer == k) continue;
    const int from = sending ? k : peer, to = sending ? peer : k;
    const auto acts = edges_between(layout, from, to).by_forward;  // activations from → to
    const auto grads = edges_between(layout, to, from).by_backward;  // their gradients, back from → to
    if (acts.empty() && grads.empty()) continue;
    const std::string gpu = std::to_string(gpu_of_rank[static_cast<std::size_t>(peer)]);
    sim::StreamProgram stream{(sending ? "send→GPU" : "recv←GPU") + gpu, {}};
    for (const auto& [pos, p] : acts) {
      if (sending) stream.tasks.push_back(Task::wait(events.forward_done[layout.edges.edges[p].op]));
      stream.tasks.push_back(Task::collective(activation[p], rank));
      if (!sending) stream.tasks.push_back(Task::record(events.activation_received[p]));
    }
    for (const auto& [pos, p] : grads) {
      if (sending) stream.tasks.push_back(Task::wait(events.gradient_ready[p]));
      stream.tasks.push_back(Task::collective(gradient[p], rank));
      if (!sending) stream.tasks.push_back(Task::record(events.gradient_received[p]));
    }
    out.push_back(std::move(stream));
  }
  return out;
}

}  // namespace

std::vector<sim::StreamProgram> send_streams(const StepLayout& layout, const WorkerEvents& events, int k,
                                             std::span<const std::uint32_t> activation,
                                             std::span<const std::uint32_t> gradient,
                                             std::span<const int> gpu_of_rank) {
  return transfer_streams(layout, events, k, true, activation, gradient, gpu_of_rank);
}

std::vector<sim::StreamProgram> receive_streams(const StepLayout& layout, const WorkerEvents& events, int k,
                                                std::span<const std::uint32_t> activation,
                                                std::span<const std::uint32_t> gradient,
                                                std::span<const int> gpu_of_rank) {
  return transfer_streams(layout, events, k, false, activation, gradient, gpu_of_rank);
}

}  // namespace hybridsim::workloads::step_parts
