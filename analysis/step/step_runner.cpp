#include "analysis/step/step_runner.h"

#include <algorithm>
#include <string>
#include <string_view>

#include "analysis/step/step_fold.h"
#include <memory>

#include "sim/collective_chain.h"
#include "sim/error.h"
#include "sim/fast/link_claims.h"
#include "sim/hash.h"
#include "sim/ring_collective.h"
#include "sim/ring_embed.h"
#include "sim/stream_executor.h"
#include "topology/presets.h"
#include "workloads/comm/collective_load.h"

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
    if (c == nullptr) continue;  // a folded step's shadow is never simulated
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

// How one attempt went: whether a folded ring was interfered with, and, for a folded step,
// whether its members saw what their representatives did (and their signatures if not).
struct Attempt {
  bool interfered = false;
  bool fold_broken = false;
  bool unsuitable = false;  // splitting the classes cannot help (why says why)
  bool embed_unbounded = false;  // an embedded ring's chunks of unequal size strayed from its bound
  std::string why;

  std::vector<std::uint64_t> signature;
};

// Whether rings that share links are folded together (sim/ring_embed.h).
enum class Embed : std::uint8_t { Off, On };

StepResult simulate_once(const StepSetup& setup, const workloads::StepProgram& program,
                         StepObservers observers, const StepFoldPlan& fold, Attempt& attempt, Embed embed,
                         std::string_view what);

// One attempt with rings that share links folded together; if one of them with chunks of unequal
// size strays from its bound (more than 0.1% of its time), again without.
StepResult simulate_attempt(const StepSetup& setup, const workloads::StepProgram& program,
                            StepObservers observers, const StepFoldPlan& fold, Attempt& attempt,
                            std::string_view what) {
  StepResult r = simulate_once(setup, program, observers, fold, attempt, Embed::On, what);
  if (!attempt.embed_unbounded) return r;
  attempt = {};
  return simulate_once(setup, program, observers, fold, attempt, Embed::Off, what);
}

// What a progress line says the step is doing.
std::string attempt_label(const StepSetup& setup, std::string_view how) {
  if (setup.variability.steps <= 1) return "the step, " + std::string(how);
  return "step " + std::to_string(setup.step_index + 1) + " of " + std::to_string(setup.variability.steps) + ", " +
         std::string(how);
}

// Up to this many folded attempts, each with its classes split by what the last one saw.
constexpr int kFoldAttempts = 4;

}  // namespace

StepResult simulate_program(const StepSetup& setup, const workloads::StepProgram& program,
                            StepObservers observers) {
  const bool may_fold = setup.collective.fast_path != sim::FastPath::Off && observers.stream == nullptr &&
                        observers.network == nullptr;
  std::vector<std::uint64_t> refine;
  std::string step_fold_reason;
  const StepFoldBasis basis = may_fold ? step_fold_basis(program, *setup.topology) : StepFoldBasis{};
  for (int i = 0; may_fold && i < kFoldAttempts; ++i) {
    const StepFoldPlan fold = plan_step_fold(program, *setup.topology, basis, refine);
    if (fold.empty()) break;
    Attempt attempt;
    StepResult r = simulate_attempt(setup, program, observers, fold, attempt,
                                    attempt_label(setup, "folded onto representative GPUs"));
    if (attempt.unsuitable) {
      step_fold_reason = attempt.why;
      break;
    }
    if (!attempt.interfered && !attempt.fold_broken) return r;
    // A folded ring's assumption failed: everything in full below. (When members saw other
    // timelines they also joined their next bucket at the wrong times, which can look the same.)
    if (!attempt.fold_broken) break;
    // Split the classes by what their members saw, keeping the splits made before.
    if (refine.empty()) refine.assign(attempt.signature.size(), 0);
    for (std::size_t g = 0; g < refine.size(); ++g)
      if (attempt.signature[g] != 0) refine[g] = refine[g] * 0x9E3779B97F4A7C15ULL + attempt.signature[g];
    step_fold_reason = "GPUs alike in program and machine saw different collective timelines";
  }
  Attempt attempt;
  StepResult r = simulate_attempt(setup, program, observers, {}, attempt, attempt_label(setup, "every GPU simulated"));
  if (!attempt.interfered) {
    r.simulation.step_fold_reason = step_fold_reason;
    return r;
  }
  // A folded ring assumed nothing else crossed its links; something did, so the fold's timeline
  // is not the step's: simulate it again with every collective in full.
  StepSetup full = setup;
  full.collective.fast_path = sim::FastPath::Off;
  r = simulate_once(full, program, observers, {}, attempt, Embed::Off,
                    attempt_label(setup, "every GPU and collective simulated in full"));
  r.simulation.rerun = true;
  return r;
}

namespace {

// Whether a collective has ranks on representatives and on members of a folded step.
bool spans_members(const StepFoldPlan& fold, const workloads::CollectiveSpec& spec) {
  bool rep = false, member = false;
  for (const int m : spec.members) {
    const bool is_rep = fold.fold.representative[static_cast<std::size_t>(m)] == static_cast<std::uint32_t>(m);
    rep = rep || is_rep;
    member = member || !is_rep;
  }
  return rep && member;
}

// An embedded ring's position p repeats position p mod its window: a member GPU sees what its
// representative does only if they stand at positions that repeat each other in every embedded ring.
// If not, the fold is broken before it runs, and each GPU's signature names its positions' classes.
bool embedded_classes_agree(const workloads::StepProgram& program, const std::vector<sim::RingCollective*>& rings,
                            const StepFoldPlan& fold, Attempt& attempt) {
  std::vector<std::uint64_t> signature(program.gpus.size(), 0);
  for (std::size_t i = 0; i < rings.size(); ++i) {
    if (rings[i] == nullptr || rings[i]->embedded_window(0) == 0) continue;
    const std::vector<int>& gpus = program.collectives[i].members;
    for (std::uint32_t c = 0; c < rings[i]->channel_count(); ++c) {
      const sim::RingChannel& plan = rings[i]->channel_plan(c);
      const std::uint32_t w = rings[i]->embedded_window(c);
      for (std::uint32_t p = 0; p < plan.order.size(); ++p) {
        std::uint64_t& s = signature[static_cast<std::size_t>(gpus[plan.order[p]])];
        s = sim::hash_combine(sim::hash_combine(s, c), p % w + 1);
      }
    }
  }
  for (std::size_t g = 0; g < signature.size(); ++g)
    if (signature[g] != signature[fold.fold.representative[g]]) {
      attempt.fold_broken = true;
      attempt.signature = std::move(signature);
      return false;
    }
  return true;
}

StepResult simulate_once(const StepSetup& setup, const workloads::StepProgram& program,
                         StepObservers observers, const StepFoldPlan& fold, Attempt& attempt, Embed embed,
                         std::string_view what) {
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
  for (std::size_t c = 0; c < program.collectives.size(); ++c) {
    const workloads::CollectiveSpec& spec = program.collectives[c];
    if (!fold.empty() && fold.fold.shadow[c] != 0) {  // never started: no plan, no state
      if (setup.executor.contention) loads.emplace_back();
      collectives.emplace_back();
      pointers.push_back(nullptr);
      continue;
    }
    workloads::CollectivePlan plan = planner.plan(spec);
    // Only rings fold in a step (a tree folds only when all its ranks join at once, which a
    // step's buckets rarely do): a collective of representatives and members that is not a ring
    // would run in full and break the step's fold, so it is not tried.
    if (!fold.empty() && plan.algorithm != workloads::AllReduceAlgorithm::Ring && spans_members(fold, spec)) {
      attempt.unsuitable = true;
      attempt.why = "a collective they share is not a ring";
      return {};
    }
    if (setup.executor.contention) loads.push_back(workloads::collective_load(spec, plan, topology.links()));
    collectives.push_back(workloads::make_collective(network, std::move(plan), collective_config));
    pointers.push_back(collectives.back().get());
  }
  sim::EmbedPlan embedded;  // before the collectives start; its groups outlive their run
  std::vector<sim::RingCollective*> rings;
  if (embed == Embed::On) {
    for (const auto& c : collectives) rings.push_back(dynamic_cast<sim::RingCollective*>(c.get()));
    embedded = sim::embed_coupled_rings(rings, network);
    if (!fold.empty() && embedded.rings > 0 && !embedded_classes_agree(program, rings, fold, attempt)) return {};
  }
  check_step_budget(budget, program, collectives);

  sim::StreamExecutor executor(queue, program.gpus, pointers, program.event_count, setup.executor,
                               std::move(loads));
  executor.set_observer(observers.stream);
  if (!fold.empty()) executor.set_fold(fold.fold);
  executor.start();
  run_with_progress(queue, observers.progress, what);
  if (!executor.is_done())
    throw InternalError("the step deadlocked:\n" + executor.describe_stuck());
  if (embedded.bounded)
    for (sim::RingCollective* ring : rings)
      if (ring != nullptr && ring->embedded_window(0) != 0)
        attempt.embed_unbounded = attempt.embed_unbounded || !ring->embedded_bound_holds();

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
  r.per_gpu = step_metrics(program, executor.record(), r.step_time, finish, fold.fold.representative);
  r.mean = mean_of(r.per_gpu);
  for (const auto& g : r.per_gpu)
    if (g.finish == r.step_time) {
      r.critical = g;
      break;
    }
  r.critical_path = critical_path(program, executor.record(), r.step_time, fold.fold.representative);
  for (std::size_t i = 0; i < collectives.size(); ++i) {
    const sim::Collective& c = *collectives[fold.empty() ? i : fold.shadow_of[i]];
    const auto b = c.bytes_by_link_kind();
    for (std::size_t k = 0; k < b.size(); ++k) r.bytes_by_link_kind[k] += b[k];
    r.messages += c.messages_sent();
  }
  r.events = queue.events_processed();
  for (const auto& c : collectives) {
    if (c == nullptr) continue;  // a shadow: its representative is counted
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
  r.simulation.embedded = embedded.rings;
  attempt.interfered = sim::interfered(network);
  if (!fold.empty()) {
    r.simulation.gpus_simulated = fold.representatives;
    // A collective shared by representatives and members must have folded: in full, its messages
    // in the members' machines would miss the shadows' traffic there.
    for (std::size_t i = 0; i < collectives.size() && !attempt.fold_broken; ++i) {
      if (collectives[i] == nullptr || collectives[i]->simulation_path().folded) continue;
      attempt.fold_broken = spans_members(fold, program.collectives[i]);
      if (attempt.fold_broken) {  // the same ring would run in full again
        attempt.unsuitable = true;
        attempt.why = "a ring they share ran in full: " + std::string(collectives[i]->simulation_path().reason);
      }
    }
    if (!attempt.fold_broken) attempt.fold_broken = !executor.fold_held();
    if (attempt.fold_broken) attempt.signature = executor.fold_signature();
  }
  return r;
}

}  // namespace

}  // namespace hybridsim::analysis
