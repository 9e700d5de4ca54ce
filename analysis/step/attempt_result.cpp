#include "analysis/step/attempt_result.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "analysis/step/critical_path.h"
#include "analysis/step/step_bound.h"
#include "analysis/step/step_metrics.h"
#include "sim/fast/unfolded_reason.h"
#include "workloads/generators/transformer_model.h"

namespace hybridsim::analysis {

namespace {

GpuStepMetrics mean_of(const std::vector<GpuStepMetrics>& gpus) {
  GpuStepMetrics m;
  if (gpus.empty()) return m;
  std::int64_t c = 0, slowed = 0, copies = 0, comm = 0, exposed = 0, idle = 0, finish = 0, kernels = 0;
  for (const auto& g : gpus) {
    c += g.compute.ps();
    slowed += g.compute_slowed.ps();
    copies += g.gradient_copies.ps();
    comm += g.communication.ps();
    exposed += g.exposed_communication.ps();
    idle += g.idle.ps();
    finish += g.finish.ps();
    kernels += g.kernels;
  }
  const auto n = static_cast<std::int64_t>(gpus.size());
  m.compute = sim::Time::ps(c / n);
  m.compute_slowed = sim::Time::ps(slowed / n);
  m.gradient_copies = sim::Time::ps(copies / n);
  m.communication = sim::Time::ps(comm / n);
  m.exposed_communication = sim::Time::ps(exposed / n);
  m.idle = sim::Time::ps(idle / n);
  m.finish = sim::Time::ps(finish / n);
  m.kernels = kernels / n;
  const auto mean = [&](sim::Time GpuStepMetrics::*part) {
    std::int64_t sum = 0;
    for (const auto& g : gpus) sum += (g.*part).ps();
    return sim::Time::ps(sum / n);
  };
  for (const auto part :
       {&GpuStepMetrics::optimizer, &GpuStepMetrics::tp_communication, &GpuStepMetrics::ep_communication,
        &GpuStepMetrics::pipeline_bubble, &GpuStepMetrics::dp_communication})
    m.*part = mean(part);
  return m;
}

}  // namespace

StepResult step_result(const StepSetup& setup, const workloads::StepProgram& program,
                       const StepFoldPlan& fold, const sim::StreamExecutor& executor,
                       const StepCollectives& collectives, std::uint64_t events) {
  const workloads::Profile& profile = *setup.profile;
  StepResult r;
  r.dp = program.dp;
  r.mp = program.mp;
  r.gpus = program.dp * program.mp * program.tp;
  r.tp = program.tp;
  r.pp = setup.step.pipeline.pp;
  r.ep = setup.step.ep.ep;
  r.zero = setup.step.zero;
  r.transformer = workloads::is_transformer_network(profile.meta.network);
  r.accumulation = program.accumulation;
  r.global_batch = program.global_batch;
  r.step_time = executor.finish_time();
  r.spread = {1, r.step_time, r.step_time, r.step_time, r.step_time};
  const double seconds = r.step_time.to_seconds();
  r.samples_per_second = seconds > 0 ? static_cast<double>(r.global_batch) / seconds : 0;
  r.units_per_second = seconds > 0 ? static_cast<double>(profile.meta.units_per_step) * program.dp *
                                         program.accumulation / seconds
                                   : 0;
  r.unit = profile.meta.throughput_unit;
  std::vector<sim::Time> finish(program.gpus.size());
  for (std::uint32_t g = 0; g < program.gpus.size(); ++g) finish[g] = executor.gpu_finish_time(g);
  r.per_gpu = step_metrics(program, executor.record(), r.step_time, finish, fold.fold.representative);
  r.mean = mean_of(r.per_gpu);
  for (const auto& g : r.per_gpu)
    if (g.finish == r.step_time) {
      r.critical = g;
      break;
    }
  r.critical_path = critical_path(program, executor.record(), r.step_time, fold.fold.representative);
  const auto& owned = collectives.owned;
  // Each simulated collective counted once per collective it stands for (itself and its shadows):
  // summing a route table per shadow cost 16,384 GPUs' pipeline 1.7 s.
  std::vector<std::int64_t> times(owned.size(), 0);
  for (std::size_t i = 0; i < owned.size(); ++i) ++times[fold.empty() ? i : fold.shadow_of[i]];
  for (std::size_t i = 0; i < owned.size(); ++i) {
    if (times[i] == 0) continue;
    const auto b = owned[i]->bytes_by_link_kind();
    for (std::size_t k = 0; k < b.size(); ++k)
      r.bytes_by_link_kind[k] += sim::Bytes::of(b[k].count() * times[i]);
    r.messages += owned[i]->messages_sent() * static_cast<std::uint64_t>(times[i]);
  }
  r.events = events;
  // Only representatives' collectives are walked (a shadow's ranks are members', which ran nothing).
  OwnBounds own_bound;
  sim::Time largest_own;
  for (std::size_t i = 0; i < owned.size(); ++i) {
    if (owned[i] == nullptr) continue;  // a shadow: its representative is counted
    const sim::SimulationPath path = owned[i]->simulation_path();
    r.events += path.private_events;
    if (path.folded) {
      ++r.simulation.folded;
      if (path.bound > sim::Time::zero()) own_bound.emplace_back(static_cast<std::uint32_t>(i), path.bound);
      largest_own = max(largest_own, path.bound);
    } else if (r.simulation.full_reason.empty()) {
      r.simulation.full_reason = sim::unfolded_reason(path);
    }
  }
  // Each folded collective's bound holds given its joins; the lateness it leaves is carried on to
  // what waits on it (sim/README.md, "The bound, carried through the step"). Never less than the
  // largest collective's own: kernels slowed by communication beside them, and transfers on a
  // folded ring's links, make the rest of the step depend a little on when a collective's ranks
  // finish, outside the walk's rules (GNMT dp 512 × mp 4: its buckets' lateness absorbed by the
  // backward's records, yet the step 1 ns late against the exact path).
  r.simulation.bound =
      max(step_bound(program, executor.record(), own_bound, fold.fold.representative), largest_own);
  for (std::size_t i = 0; i < owned.size(); ++i) {  // a shadow counted as its representative
    const std::size_t of = fold.empty() ? i : fold.shadow_of[i];
    if (of >= collectives.hierarchical.size() || collectives.hierarchical[of] == 0) continue;
    ++r.simulation.hierarchical;
    r.simulation.hierarchical_as_ring += collectives.hierarchical[of] == 2 ? 1 : 0;
  }
  r.simulation.hierarchical_unfit = collectives.hierarchical_unfit;
  r.collectives = owned.size();
  return r;
}

std::uint64_t models_in_flight(const std::vector<std::unique_ptr<sim::Collective>>& owned,
                               const sim::UniformTrees& trees, const sim::EmbedPlan& embedded) {
  std::uint64_t largest = 0;
  for (const auto& c : owned)
    if (c != nullptr) largest = std::max(largest, c->simulation_path().model_in_flight);
  const std::uint64_t at_once = trees.runner != nullptr ? std::max(trees.threads, 1u) : 1;
  const std::uint64_t ghost = embedded.ghost != nullptr ? embedded.ghost->most_messages_in_flight() : 0;
  return largest * at_once + ghost;
}

std::uint32_t working_representatives(const workloads::StepProgram& program, const StepFoldPlan& fold) {
  std::uint32_t n = 0;
  for (std::size_t g = 0; g < fold.fold.representative.size(); ++g)
    if (fold.fold.representative[g] == g && program.worker_of_gpu[g] >= 0) ++n;
  return n;
}

}  // namespace hybridsim::analysis
