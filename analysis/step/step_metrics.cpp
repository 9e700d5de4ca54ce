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

}  // namespace

StepMetricsCollector::StepMetricsCollector(const workloads::StepProgram& program)
    : program_(program), compute_(program.gpus.size()), comm_(program.gpus.size()) {}

void StepMetricsCollector::on_kernel(std::uint32_t gpu, std::uint32_t, std::uint32_t,
                                     sim::Time start, sim::Time end) {
  compute_[gpu].push_back({start.ps(), end.ps()});
}

void StepMetricsCollector::on_collective(std::uint32_t gpu, std::uint32_t stream, std::uint32_t task,
                                         sim::Time start, sim::Time end) {
  const sim::Task& t = program_.gpus[gpu].streams[stream].tasks[task];
  const workloads::CollectiveSpec& spec = program_.collectives[t.id];
  // A receive is the sender's transfer seen from the other end: while it waits, the receiving GPU
  // is idle (or computing), not communicating.
  const bool receive = (spec.role == workloads::CollectiveRole::Activation ||
                        spec.role == workloads::CollectiveRole::ActivationGradient) &&
                       t.rank == 1;
  if (!receive) comm_[gpu].push_back({start.ps(), end.ps()});
}

std::vector<GpuStepMetrics> StepMetricsCollector::finish(sim::Time step_time,
                                                         const std::vector<sim::Time>& gpu_finish) {
  std::vector<GpuStepMetrics> out;
  for (std::size_t g = 0; g < program_.gpus.size(); ++g) {
    if (program_.worker_of_gpu[g] < 0) continue;
    GpuStepMetrics m;
    m.gpu = static_cast<int>(g);
    m.finish = gpu_finish[g];
    m.kernels = static_cast<std::int64_t>(compute_[g].size());
    const std::int64_t compute = merge(compute_[g]);
    std::vector<Interval> both = compute_[g];
    both.insert(both.end(), comm_[g].begin(), comm_[g].end());
    const std::int64_t busy = merge(both);
    const std::int64_t comm = merge(comm_[g]);
    m.compute = sim::Time::ps(compute);
    m.communication = sim::Time::ps(comm);
    m.exposed_communication = sim::Time::ps(busy - compute);
    m.idle = sim::Time::ps(step_time.ps() - busy);
    out.push_back(m);
  }
  return out;
}

}  // namespace hybridsim::analysis
