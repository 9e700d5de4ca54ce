#include "analysis/step/step_metrics.h"

#include <algorithm>
#include <array>
#include <span>
#include <utility>

namespace hybridsim::analysis {

namespace {

using Interval = std::pair<std::int64_t, std::int64_t>;

// Sorts `v`. It is mostly a few sorted runs (a stream's tasks come in time order, stream after
// stream, and a merged list is sorted before what is added to it), which are merged in place:
// std::sort of the whole was 2% of a 1,024-GPU step's instructions. Many runs: std::sort.
void sort_runs(std::vector<Interval>& v) {
  constexpr int kMaxRuns = 8;
  std::array<std::size_t, kMaxRuns + 1> ends{};
  int runs = 0;
  for (std::size_t i = 1; i <= v.size(); ++i) {
    if (i < v.size() && !(v[i] < v[i - 1])) continue;
    if (runs == kMaxRuns) return std::sort(v.begin(), v.end());
    ends[static_cast<std::size_t>(runs++)] = i;
  }
  const auto end = [&](int r) {
    return v.begin() + static_cast<std::ptrdiff_t>(ends[static_cast<std::size_t>(r)]);
  };
  // [0, end(r - 1)) is sorted: merge run r into it.
  for (int r = 1; r < runs; ++r) std::inplace_merge(v.begin(), end(r - 1), end(r));
}

// Sorts and merges overlapping intervals in place; returns their total length.
std::int64_t merge(std::vector<Interval>& v) {
  sort_runs(v);
  std::size_t out = 0;
  for (const Interval& iv : v) {
    if (out > 0 && iv.first <= v[out - 1].second) {
      v[out - 1].second = std::max(v[out - 1].second, iv.second);
    } else {
      v[out++] = iv;
    }
  }
  v.resize(out);
  std::int64_t total = 0;
  for (const Interval& iv : v) total += iv.second - iv.first;
  return total;
}

// A receive is the sender's transfer seen from the other end: while it waits, the receiving GPU
// is idle (or computing), not communicating.
bool is_receive(const workloads::StepProgram& program, const sim::Task& t) {
  const workloads::CollectiveRole role = program.collectives[t.id].role;
  return (role == workloads::CollectiveRole::Activation ||
          role == workloads::CollectiveRole::ActivationGradient) &&
         t.rank == 1;
}

// One GPU's intervals by kind, as the executor recorded them.
struct GpuIntervals {
  std::vector<Interval> compute, comm, tp, ep, dp, bubble;
  std::int64_t slowed_ps = 0, copies_ps = 0, optimizer_ps = 0;
  void clear() {
    for (auto* v : {&compute, &comm, &tp, &ep, &dp, &bubble}) v->clear();
    slowed_ps = copies_ps = optimizer_ps = 0;
  }
};

// Per kernel label, what its phase makes of it here: a gradient copy, the optimizer (bits), looked up
// once per label rather than once per kernel of every GPU.
constexpr std::uint8_t kCopyLabel = 1, kOptimizerLabel = 2;
using LabelKinds = std::vector<std::uint8_t>;
LabelKinds label_kinds(const workloads::StepProgram& program) {
  LabelKinds out(program.labels.size(), 0);
  for (std::size_t l = 0; l < out.size(); ++l) {
    const workloads::Phase phase = program.labels[l].phase;
    out[l] = static_cast<std::uint8_t>((workloads::is_gradient_copy(phase) ? kCopyLabel : 0) |
                                       (phase == workloads::Phase::Optimizer ? kOptimizerLabel : 0));
  }
  return out;
}

// Stream s (the k-th of its GPU, `tasks`): its kernels and collectives; on a pipeline stage's
// compute stream (k = 0) its waits on another stage and its idle after the last task until `step`.
void add_stream(const workloads::StepProgram& program, const sim::ExecutionRecord& record, std::uint32_t s,
                std::uint32_t k, const sim::TaskList& tasks, const LabelKinds& label_kinds,
                const std::vector<std::uint8_t>& arrivals, sim::Time step, GpuIntervals& out) {
  const sim::ExecutionRecord::Stream entries = record.stream(s);
  // The tasks as stored, a kernel read in place (no shift applies to it), the others shifted; each
  // task reached when the one before it ended (the record's rule), carried from one to the next.
  // tasks[i] tested the list's storage and copied every task out, and reached(i) tested for the
  // first task: 44 M instructions of a 128-GPU two-step run, 10 an event (cachegrind).
  const std::span<const sim::Task> stored = tasks.stored();
  std::int64_t reached = entries.reached(0).ps();
  for (std::uint32_t i = 0; i < stored.size(); ++i) {
    const Interval ran{reached, entries.ended(i).ps()};
    reached = ran.second;
    if (!entries.has_run(i)) continue;
    const sim::Task& task = stored[i];
    if (task.kind == sim::TaskKind::Kernel) {
      out.compute.push_back({ran.first + task.launch_delay.ps(), ran.second});
      const std::int64_t slowed = entries.slowed(i).ps();
      out.slowed_ps += slowed;
      const std::int64_t alone = ran.second - ran.first - task.launch_delay.ps() - slowed;
      const std::uint8_t kind = task.id < label_kinds.size() ? label_kinds[task.id] : 0;
      if (kind & kCopyLabel) out.copies_ps += alone;
      if (kind & kOptimizerLabel) out.optimizer_ps += alone;
      continue;
    }
    const sim::Task t = tasks.shifted(task);
    if (t.kind == sim::TaskKind::Collective && !is_receive(program, t)) {
      out.comm.push_back(ran);
      const workloads::CollectiveRole role = program.collectives[t.id].role;
      if (role == workloads::CollectiveRole::TensorParallel ||
          role == workloads::CollectiveRole::NormGradientAllReduce)  // on the TP group too
        out.tp.push_back(ran);
      else if (role == workloads::CollectiveRole::ExpertParallel) out.ep.push_back(ran);
      else if (role != workloads::CollectiveRole::Activation &&
               role != workloads::CollectiveRole::ActivationGradient)
        out.dp.push_back(ran);
    } else if (t.kind == sim::TaskKind::Wait && k == 0 && !arrivals.empty() && arrivals[t.id] != 0) {
      out.bubble.push_back(ran);
    }
  }
  if (k == 0 && !arrivals.empty() && !tasks.empty() && entries.has_run(0))
    out.bubble.push_back({entries.ended(static_cast<std::uint32_t>(tasks.size() - 1)).ps(), step.ps()});
}

// What `more` adds to `base` (merged, as merge leaves it), which then holds both, merged.
std::int64_t added(std::vector<Interval>& base, const std::vector<Interval>& more) {
  const std::int64_t before = merge(base);
  base.insert(base.end(), more.begin(), more.end());
  return merge(base) - before;
}

GpuStepMetrics metrics_of(GpuIntervals& in, sim::Time step_time) {
  GpuStepMetrics m;
  m.kernels = static_cast<std::int64_t>(in.compute.size());
  const std::int64_t busy_compute = merge(in.compute);
  std::vector<Interval> both = in.compute;
  const std::int64_t busy = busy_compute + added(both, in.comm);
  m.compute = sim::Time::ps(busy_compute);
  m.compute_slowed = sim::Time::ps(in.slowed_ps);
  m.gradient_copies = sim::Time::ps(in.copies_ps);
  m.communication = sim::Time::ps(merge(in.comm));
  m.exposed_communication = sim::Time::ps(busy - busy_compute);
  m.idle = sim::Time::ps(step_time.ps() - busy);
  m.optimizer = sim::Time::ps(in.optimizer_ps);
  std::vector<Interval>& parts = in.compute;  // kernels, then what each later part adds
  m.tp_communication = sim::Time::ps(added(parts, in.tp));
  m.ep_communication = sim::Time::ps(added(parts, in.ep));
  m.pipeline_bubble = sim::Time::ps(added(parts, in.bubble));
  m.dp_communication = sim::Time::ps(added(parts, in.dp));
  return m;
}

}  // namespace

std::vector<std::uint8_t> pipeline_arrivals(const workloads::StepProgram& program) {
  const bool pipeline = std::any_of(program.labels.begin(), program.labels.end(),
                                    [](const workloads::KernelLabel& l) { return l.micro_batch >= 0; });
  if (!pipeline) return {};
  std::vector<std::uint8_t> out(program.event_count, 0);
  for (const sim::GpuProgram& gpu : program.gpus)
    for (const sim::StreamProgram& sp : gpu.streams) {
      std::uint8_t arrived = 0;  // what the receive before a record brought
      for (const sim::Task& t : sp.tasks)
        if (t.kind == sim::TaskKind::Collective && is_receive(program, t))
          arrived = program.collectives[t.id].role == workloads::CollectiveRole::Activation ? 1 : 2;
        else if (t.kind == sim::TaskKind::Record && arrived != 0 && t.id < out.size())
          out[t.id] = std::exchange(arrived, std::uint8_t{0});
    }
  return out;
}

std::vector<GpuStepMetrics> step_metrics(const workloads::StepProgram& program,
                                         const sim::ExecutionRecord& record, sim::Time step_time,
                                         const std::vector<sim::Time>& gpu_finish,
                                         const std::vector<std::uint32_t>& representative) {
  std::vector<GpuStepMetrics> out;
  std::vector<std::size_t> index_of(representative.empty() ? 0 : program.gpus.size(), 0);  // GPU → out
  const std::vector<std::uint8_t> arrivals = pipeline_arrivals(program);
  const LabelKinds kinds = label_kinds(program);
  GpuIntervals in;
  std::uint32_t stream = 0;
  for (std::size_t g = 0; g < program.gpus.size(); ++g) {
    const auto& streams = program.gpus[g].streams;
    const std::uint32_t first = stream;
    stream += static_cast<std::uint32_t>(streams.size());
    if (program.worker_of_gpu[g] < 0) continue;
    if (!representative.empty()) {
      index_of[g] = out.size();
      if (representative[g] != g) {  // filled in below, once every representative is
        out.push_back({});
        continue;
      }
    }
    in.clear();
    for (std::uint32_t k = 0; k < streams.size(); ++k)
      add_stream(program, record, first + k, k, streams[k].tasks, kinds, arrivals, step_time, in);
    GpuStepMetrics m = metrics_of(in, step_time);
    m.gpu = static_cast<int>(g);
    m.finish = gpu_finish[g];
    out.push_back(m);
  }
  for (std::size_t g = 0; g < representative.size(); ++g)
    if (representative[g] != g && program.worker_of_gpu[g] >= 0) {
      GpuStepMetrics& m = out[index_of[g]];
      m = out[index_of[representative[g]]];
      m.gpu = static_cast<int>(g);
    }
  return out;
}

}  // namespace hybridsim::analysis
