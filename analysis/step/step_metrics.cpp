#include "analysis/step/step_metrics.h"

#include <algorithm>

namespace hybridsim::analysis {

namespace {

using Interval = std::pair<std::int64_t, std::int64_t>;

// Sorts and merges overlapping intervals in place; returns their total length.
std::int64_t merge(std::vector<Interval>& v) {
  std::sort(v.begin(), v.end());
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

}  // namespace

std::vector<GpuStepMetrics> step_metrics(const workloads::StepProgram& program,
                                         const sim::ExecutionRecord& record, sim::Time step_time,
                                         const std::vector<sim::Time>& gpu_finish,
                                         const std::vector<std::uint32_t>& representative) {
  std::vector<GpuStepMetrics> out;
  std::vector<std::size_t> index_of(representative.empty() ? 0 : program.gpus.size(), 0);  // GPU → out
  std::vector<Interval> compute, comm, both;
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
    compute.clear();
    comm.clear();
    std::int64_t slowed_ps = 0, copies_ps = 0;
    for (std::uint32_t k = 0; k < streams.size(); ++k) {
      const std::uint32_t s = first + k;
      for (std::uint32_t i = 0; i < streams[k].tasks.size(); ++i) {
        const sim::Task& t = streams[k].tasks[i];
        if (!record.has_run(s, i)) continue;
        if (t.kind == sim::TaskKind::Kernel) {
          compute.push_back({(record.reached(s, i) + t.launch_delay).ps(), record.ended(s, i).ps()});
          const sim::Time slowed = record.slowed(s, i);
          slowed_ps += slowed.ps();
          if (program.is_gradient_copy(t))
            copies_ps += (record.ended(s, i) - record.reached(s, i) - t.launch_delay - slowed).ps();
        }
        else if (t.kind == sim::TaskKind::Collective && !is_receive(program, t))
          comm.push_back({record.reached(s, i).ps(), record.ended(s, i).ps()});
      }
    }
    GpuStepMetrics m;
    m.gpu = static_cast<int>(g);
    m.finish = gpu_finish[g];
    m.kernels = static_cast<std::int64_t>(compute.size());
    const std::int64_t busy_compute = merge(compute);
    both = compute;
    both.insert(both.end(), comm.begin(), comm.end());
    const std::int64_t busy = merge(both);
    m.compute = sim::Time::ps(busy_compute);
    m.compute_slowed = sim::Time::ps(slowed_ps);
    m.gradient_copies = sim::Time::ps(copies_ps);
    m.communication = sim::Time::ps(merge(comm));
    m.exposed_communication = sim::Time::ps(busy - busy_compute);
    m.idle = sim::Time::ps(step_time.ps() - busy);
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
