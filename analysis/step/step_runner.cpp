#include "analysis/step/step_runner.h"

#include <algorithm>
#include <memory>

#include "sim/collective_chain.h"
#include "sim/error.h"
#include "sim/ring_collective.h"
#include "sim/stream_executor.h"
#include "topology/presets.h"
#include "workloads/collective_load.h"

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
  return m;
}

// Events a task of a GPU stream takes in the executor, at most: its start and its end.
constexpr std::uint64_t kEventsPerTask = 2;

}  // namespace

void check_step_budget(sim::SimulationBudget& budget, const workloads::StepProgram& program,
                       const std::vector<std::unique_ptr<sim::Collective>>& collectives) {
  std::uint64_t tasks = 0;
  for (const sim::GpuProgram& gpu : program.gpus)
    for (const sim::StreamProgram& stream : gpu.streams) tasks += stream.tasks.size();
  // What is simulated in full whatever happens: every collective that cannot fold. Those that may
  // fold are checked when they start, if they start in full (sim/budget.h). Collectives on a stream
  // run one after another: the largest one's messages in flight stand for the step's.
  sim::SimulationCost sure;
  std::int64_t state = 0;
  for (const auto& c : collectives) {
    const sim::SimulationCost cost = c->full_cost();
    state += cost.state_bytes;
    if (c->may_fold()) continue;
    sure.events += cost.events;
    sure.messages += cost.messages;
    sure.in_flight = std::max(sure.in_flight, cost.in_flight);
  }
  budget.record(kEventsPerTask * tasks, state);
  budget.check(sure);
}

workloads::StepProgram build_program(const StepSetup& setup) {
  if (setup.profile == nullptr || setup.topology == nullptr)
    throw InternalError("a step setup needs a profile and a topology");
  workloads::StepProgram program = workloads::build_step_program(
      *setup.profile, setup.placement, setup.mapping, static_cast<int>(setup.topology->gpus().size()), setup.step);
  apply_step_variability(setup, program);
  return program;
}

void apply_step_variability(const StepSetup& setup, workloads::StepProgram& program) {
  const workloads::Variability& v = setup.variability;
  if (!v.varies()) return;
  const workloads::Profile& profile = *setup.profile;
  if (v.lengths != workloads::LengthDistribution::Fixed && profile.meta.target_length <= 0)
    throw InputError("sentence lengths " + std::string(workloads::length_distribution_name(v.lengths)) +
                     " need an encoder-decoder profile (metadata target_length > 0); " + profile.meta.network +
                     " has none");
  const workloads::LengthModel lengths =
      v.lengths == workloads::LengthDistribution::Fixed ? workloads::LengthModel{} : workloads::wmt16_en_de_lengths();
  const workloads::StepScales s =
      workloads::step_scales(v, lengths, program.worker_of_gpu, profile.meta.batch_per_gpu, setup.step_index);
  for (std::size_t g = 0; g < program.gpus.size(); ++g) {
    program.gpus[g].compute_scale = workloads::gpu_compute_scale(setup.step, g) * s.compute[g];
    program.gpus[g].sample_scale = s.sample[g];
  }
}

StepResult simulate_step(const StepSetup& setup, StepObservers observers) {
  const workloads::StepProgram program = build_program(setup);
  return simulate_program(setup, program, observers);
}

StepResult simulate_on_one_gpu(const workloads::Profile& profile) {
  const topology::Topology one = topology::presets::fully_connected({.gpus = 1});
  StepSetup setup;
  setup.profile = &profile;
  setup.topology = &one;
  setup.placement = workloads::place_all_on_first(profile, 1);
  setup.mapping = workloads::default_mapping(one, 1, 1);
  return simulate_step(setup);
}

namespace {

StepResult simulate_once(const StepSetup& setup, const workloads::StepProgram& program,
                         StepObservers observers, bool& interfered);

}  // namespace

StepResult simulate_program(const StepSetup& setup, const workloads::StepProgram& program,
                            StepObservers observers) {
  bool interfered = false;
  StepResult r = simulate_once(setup, program, observers, interfered);
  if (!interfered) return r;
  // A folded ring assumed nothing else crossed its links; something did, so the fold's timeline
  // is not the step's: simulate it again with every collective in full.
  StepSetup full = setup;
  full.collective.fast_path = sim::FastPath::Off;
  r = simulate_once(full, program, observers, interfered);
  r.simulation.rerun = true;
  return r;
}

namespace {

StepResult simulate_once(const StepSetup& setup, const workloads::StepProgram& program,
                         StepObservers observers, bool& interfered) {
  if (setup.profile == nullptr || setup.topology == nullptr)
    throw InternalError("a step setup needs a profile and a topology");
  const workloads::Profile& profile = *setup.profile;
  const topology::Topology& topology = *setup.topology;

  sim::EventQueue queue;
  sim::Network network(queue, topology.links(), setup.switching);
  network.set_observer(observers.network);
  workloads::CommPlanner planner(topology, setup.comm);
  sim::SimulationBudget budget(setup.limits);
  sim::CollectiveConfig collective_config = setup.collective;
  collective_config.budget = &budget;
  std::vector<std::unique_ptr<sim::Collective>> collectives;
  std::vector<sim::Collective*> pointers;
  std::vector<sim::CollectiveLoad> loads;
  collectives.reserve(program.collectives.size());
  for (const workloads::CollectiveSpec& spec : program.collectives) {
    workloads::CollectivePlan plan = planner.plan(spec);
    if (setup.executor.contention) loads.push_back(workloads::collective_load(spec, plan, topology.links()));
    collectives.push_back(workloads::make_collective(network, std::move(plan), collective_config));
    pointers.push_back(collectives.back().get());
  }
  check_step_budget(budget, program, collectives);

  sim::StreamExecutor executor(queue, program.gpus, pointers, program.event_count, setup.executor,
                               std::move(loads));
  executor.set_observer(observers.stream);
  executor.start();
  queue.run();
  if (!executor.is_done())
    throw InternalError("the step deadlocked:\n" + executor.describe_stuck());

  StepResult r;
  r.dp = program.dp;
  r.mp = program.mp;
  r.gpus = program.dp * program.mp;
  r.global_batch = program.global_batch;
  r.step_time = executor.finish_time();
  r.spread = {1, r.step_time, r.step_time, r.step_time, r.step_time};
  const double seconds = r.step_time.to_seconds();
  r.samples_per_second = seconds > 0 ? static_cast<double>(r.global_batch) / seconds : 0;
  r.units_per_second =
      seconds > 0 ? static_cast<double>(profile.meta.units_per_step) * program.dp / seconds : 0;
  r.unit = profile.meta.throughput_unit;
  std::vector<sim::Time> finish(program.gpus.size());
  for (std::uint32_t g = 0; g < program.gpus.size(); ++g) finish[g] = executor.gpu_finish_time(g);
  r.per_gpu = step_metrics(program, executor.record(), r.step_time, finish);
  r.mean = mean_of(r.per_gpu);
  for (const auto& g : r.per_gpu)
    if (g.finish == r.step_time) {
      r.critical = g;
      break;
    }
  r.critical_path = critical_path(program, executor.record(), r.step_time);
  for (const auto& c : collectives) {
    const auto b = c->bytes_by_link_kind();
    for (std::size_t k = 0; k < b.size(); ++k) r.bytes_by_link_kind[k] += b[k];
    r.messages += c->messages_sent();
  }
  r.events = queue.events_processed();
  for (const auto& c : collectives) {
    const sim::SimulationPath path = c->simulation_path();
    r.events += path.private_events;
    if (path.folded) {
      ++r.simulation.folded;
      r.simulation.bound = max(r.simulation.bound, path.bound);
    } else if (r.simulation.full_reason.empty()) {
      r.simulation.full_reason = std::string(path.reason);
    }
  }
  r.collectives = collectives.size();
  interfered = network.interfered();
  return r;
}

}  // namespace

}  // namespace hybridsim::analysis
