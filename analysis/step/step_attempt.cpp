#include "analysis/step/step_attempt.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "analysis/step/embedding_forecast.h"
#include "analysis/step/fold_forecast.h"
#include "analysis/step/step_bound.h"
#include "analysis/step/step_fold_p2p.h"
#include "analysis/step/step_series.h"
#include "sim/error.h"
#include "sim/fast/embedded_ring.h"
#include "sim/fast/fold_cost.h"
#include "sim/fast/folded_ring.h"
#include "sim/fast/folded_tree.h"
#include "sim/fast/link_claims.h"
#include "sim/fast/ring_embedding.h"
#include "sim/fast/unfolded_reason.h"
#include "sim/hash.h"
#include "sim/saturating.h"
#include "sim/stream_executor.h"
#include "workloads/comm/collective_load.h"
#include "workloads/generators/transformer_model.h"

namespace hybridsim::analysis {

namespace {

// The most tasks of any GPU simulated: each of its tasks' events on the step's queue ends an
// embedded group's jump (sim::EmbedPlan::expect_interruptions); GPUs of a data-parallel group run
// their tasks at the same times, so one GPU's count stands for them.
std::uint64_t most_tasks_simulated(const workloads::StepProgram& program, const StepFoldPlan& fold) {
  std::uint64_t most = 0;
  for (std::size_t g = 0; g < program.gpus.size(); ++g) {
    if (!fold.empty() && fold.fold.representative[g] != g) continue;
    std::uint64_t own = 0;
    for (const sim::StreamProgram& stream : program.gpus[g].streams) own += stream.tasks.size();
    most = std::max(most, own);
  }
  return most;
}

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

// An embedded ring's position p repeats position p mod its window: a member GPU sees what its
// representative does only if they stand at positions that repeat each other in every embedded ring.
// If not, the fold is broken before it runs, and each GPU's signature names its positions' classes.
bool embedded_classes_agree(const workloads::StepProgram& program,
                            const std::vector<sim::EmbeddedRing*>& rings, const StepFoldPlan& fold,
                            Attempt& attempt) {
  std::vector<std::uint64_t> signature(program.gpus.size(), 0);
  for (std::size_t i = 0; i < rings.size(); ++i) {
    // A ring among representatives alone (a TP group's) has no member to stand at its positions;
    // its shadows repeat it as a whole.
    if (rings[i] == nullptr || !spans_members(fold, program.collectives[i])) continue;
    const std::vector<int>& gpus = program.collectives[i].members;
    for (std::uint32_t c = 0; c < rings[i]->ring().channel_count(); ++c) {
      const sim::RingChannel& plan = rings[i]->ring().channel_plan(c);
      const std::uint32_t w = rings[i]->window(c);
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

// Whether every ring of representatives and members may fold as far as its plan tells: one that
// cannot (two of its edges on one link, as every data-parallel ring on an NVSwitch machine) would
// run in full and the step's fold be given up after the run (check_step_fold), so it is not tried,
// and the step's estimate is every GPU's.
// Told ring by ring (`progress`, null: none): each one's check sorts the links of its routes, a few
// hundredths of a second at 65,536 GPUs, unless it takes the same routes as the ring checked before
// it (a step's buckets over one member set), which then hands it its answer.
bool shared_rings_may_fold(const workloads::StepProgram& program, const StepFoldPlan& fold,
                           const std::vector<std::unique_ptr<sim::Collective>>& collectives,
                           Attempt& attempt, sim::WorkProgress* progress) {
  const std::size_t n = collectives.size();
  const sim::FoldedRing* previous = nullptr;
  for (std::size_t i = 0; i < n; ++i) {
    auto* ring = dynamic_cast<sim::FoldedRing*>(collectives[i].get());
    const bool checked = ring != nullptr && spans_members(fold, program.collectives[i]);
    sim::work_tick(progress, "checking its shared rings' links", i, n, "collectives",
                   checked ? 1 : sim::kWorkTickEvery);
    if (!checked) continue;
    if (previous != nullptr) ring->share_edge_answer(*previous);
    if (const char* why = ring->plan_only_refusal()) {
      attempt.unsuitable = true;
      attempt.why = "a ring they share would run in full: " + std::string(why);
      return false;
    }
    previous = ring;
  }
  sim::work_tick(progress, "checking its shared rings' links", n, n, "collectives");
  return true;
}

// The links where a folded step's other transfers (a model-parallel stage's activation copies) meet
// its embedded rings live (sim::LinkClaims::share): those the models simulate themselves, inside
// machines whose GPUs are all representatives. Every transfer crossing such a link is simulated (a
// shadow runs on members' machines only), and a member's link that the models stand for sees its
// representative's transfers at the same times where the fold holds (checked after the run).
// Fabric links, which a shadow transfer between machines may cross, are not shared. Sorted.
std::vector<sim::LinkId> representative_links(const topology::Topology& topology, const StepFoldPlan& fold,
                                              const sim::EmbedPlan& embedded) {
  std::vector<std::uint8_t> whole(static_cast<std::size_t>(topology.node_count()), 1);
  for (std::uint32_t g = 0; g < fold.fold.representative.size(); ++g)
    if (fold.fold.representative[g] != g)
      whole[static_cast<std::size_t>(topology.device(topology.gpu(static_cast<int>(g))).node.value())] = 0;
  const auto inside = [&](topology::DeviceId d) {
    const std::optional<int> node = topology.device(d).node;
    return node.has_value() && whole[static_cast<std::size_t>(*node)] != 0;
  };
  std::vector<sim::LinkId> out;
  for (const auto& group : embedded.groups)
    for (const sim::LinkId l : group->simulated_links())
      if (inside(topology.link_ends(l).from) && inside(topology.link_ends(l).to)) out.push_back(l);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// simulate_once's embedded rings (none: nothing to do) set to run: a folded step's links that its
// models meet live shared, and a stop at the first interference (the embedded rings' run is then
// thrown away, simulate_attempt).
void set_embedded_to_run(const topology::Topology& topology, const StepFoldPlan& fold,
                         const sim::EmbedPlan& embedded, sim::Network& network) {
  if (embedded.rings == 0) return;
  sim::LinkClaims& claims = sim::LinkClaims::of(network);
  if (!fold.empty()) {
    claims.mirror_shared(embedded.ghost.get());
    for (const sim::LinkId l : representative_links(topology, fold, embedded)) claims.share(l);
  }
  claims.stop_when_interfered();
}

// The collectives of one attempt; a folded step's shadows are null (never started: no plan, no
// state).
struct StepCollectives {
  // The trees of a folded step under `bounded` (each finishing uniformly) and their bounds; first,
  // so that it outlives the trees that use it (CollectiveConfig::uniform_trees).
  std::unique_ptr<sim::UniformTrees> uniform_trees = std::make_unique<sim::UniformTrees>();
  std::vector<std::unique_ptr<sim::Collective>> owned;
  std::vector<sim::Collective*> pointers;
  std::vector<sim::CollectiveLoad> loads;
  // Under communication.algorithm: hierarchical, per collective: 1 for an all-reduce that ran
  // hierarchical, 2 for one whose GPUs cannot (workloads::hierarchical_unfit) and ran the ring.
  std::vector<std::uint8_t> hierarchical;
  std::string hierarchical_unfit;  // the first such all-reduce's reason
  // Whether a tree runs on `uniform_trees` (one that representatives and members share under
  // bounded): counted so in a fold alone, each GPU's tree its own with every GPU simulated.
  bool uniform = false;
};

// Progress of make_collectives: the ranks of the collectives set up so far, of all (a ring's set-up
// grows with its ranks).
class SetupTicks {
 public:
  SetupTicks(SimulationProgress* progress, std::string_view what,
             const std::vector<workloads::CollectiveSpec>& specs)
      : progress_(progress), what_(what) {
    if (progress_ == nullptr) return;
    for (const auto& spec : specs) total_ += spec.members.size();
  }
  // Before `spec` is set up (the first call starts the part's clock). A folded step's shadow
  // (`shadow`: nothing to set up) is told only once kWorkTickEvery ranks or more went by since the
  // last tick: dp 32,768 x mp 2's 6.3 M transfers, most of them shadows, were a tick each (a poll,
  // in the Python module under the GIL, and a clock reading).
  void next(const workloads::CollectiveSpec& spec, bool shadow) {
    if (progress_ == nullptr) return;
    if (!shadow || done_ == 0 || done_ >= told_ + sim::kWorkTickEvery) {
      progress_->setup_tick(what_, done_, total_);
      told_ = done_;
    }
    done_ += spec.members.size();
  }

 private:
  SimulationProgress* progress_;
  std::string_view what_;
  std::uint64_t done_ = 0, told_ = 0, total_ = 0;
};

// Whether an all-reduce asked to be hierarchical ran so (the step's report says which did not, and why).
void note_hierarchical(const StepSetup& setup, const topology::Topology& topology,
                       const workloads::CollectiveSpec& spec, const workloads::CollectivePlan& plan,
                       StepCollectives& out) {
  out.hierarchical.resize(out.owned.size(), 0);
  if (setup.comm.algorithm != workloads::AllReduceAlgorithm::Hierarchical ||
      spec.op != sim::CollectiveOp::AllReduce || spec.members.size() < 2) {
    out.hierarchical.push_back(0);
    return;
  }
  const bool ran = plan.algorithm == workloads::AllReduceAlgorithm::Hierarchical;
  out.hierarchical.push_back(ran ? 1 : 2);
  if (!ran && out.hierarchical_unfit.empty())
    out.hierarchical_unfit = workloads::hierarchical_unfit(topology, spec.members);
}

// False if a collective of representatives and members is not a ring (attempt says so).
// `forecast` and `crossing` (null: none) note each plan's links (EmbeddingForecast::note_plan,
// CrossingForecast::note_plan); `plans` (null: none) is told each plan.
bool make_collectives(const StepSetup& setup, const workloads::StepProgram& program, const StepFoldPlan& fold,
                      sim::Network& network, const sim::CollectiveConfig& config, StepCollectives& out,
                      Attempt& attempt, SimulationProgress* progress = nullptr, std::string_view what = {},
                      EmbeddingForecast* forecast = nullptr, CrossingForecast* crossing = nullptr,
                      PlanObserver* plans = nullptr) {
  const topology::Topology& topology = *setup.topology;
  workloads::CommPlanner planner(topology, setup.comm);
  ProgramBuildTicks routes(progress, std::string(what));  // a ring of 65,536 GPUs: seconds
  planner.set_progress(&routes);
  out.owned.reserve(program.collectives.size());
  SetupTicks ticks(progress, what, program.collectives);
  for (std::size_t c = 0; c < program.collectives.size(); ++c) {
    const workloads::CollectiveSpec& spec = program.collectives[c];
    const bool shadow = !fold.empty() && fold.fold.shadow[c] != 0;
    ticks.next(spec, shadow);
    if (shadow) {
      if (setup.executor.contention) out.loads.emplace_back();
      out.owned.emplace_back();
      out.pointers.push_back(nullptr);
      continue;
    }
    // A fixed LL128 where NCCL disables it ran Simple under the scenario's ll128: refused, as the
    // collective command refuses it; located where the key was written, as resolve's refusal.
    if (const std::string why = planner.ll128_refusal(spec.members, spec.op); !why.empty())
      throw InputError((setup.protocol_written.empty() ? "" : setup.protocol_written + ": ") +
                       "communication.protocol: ll128: " + why);
    workloads::CollectivePlan plan = planner.plan(spec);
    note_hierarchical(setup, topology, spec, plan, out);
    // Rings fold in a step exactly; a tree only under `bounded`, every rank finishing when its last
    // one would (sim/README.md, "Trees in a step: bounded"). Any other collective of
    // representatives and members would run in full and break the step's fold, so it is not tried.
    const bool shared = !fold.empty() && spans_members(fold, spec);
    const bool uniform = shared && plan.algorithm == workloads::AllReduceAlgorithm::Tree &&
                         config.fast_path == sim::FastPath::Bounded;
    if (shared && plan.algorithm != workloads::AllReduceAlgorithm::Ring && !uniform) {
      attempt.unsuitable = true;
      attempt.why = "a collective they share is not a ring";
      return false;
    }
    if (setup.executor.contention)
      out.loads.push_back(workloads::collective_load(spec, plan, topology.links()));
    sim::CollectiveConfig own = config;
    if (uniform) own.uniform_trees = out.uniform_trees.get();
    out.uniform = out.uniform || uniform;
    if (forecast != nullptr) forecast->note_plan(plan);
    if (crossing != nullptr) crossing->note_plan(c, spec, plan);
    if (plans != nullptr) plans->on_plan(static_cast<std::uint32_t>(c), plan);
    out.owned.push_back(workloads::make_collective(network, std::move(plan), own));
    out.pointers.push_back(out.owned.back().get());
  }
  return true;
}

// The events a run has taken so far: its queue's and its folded collectives' models' (as
// step_result counts them once it is done).
std::uint64_t events_so_far(const sim::EventQueue& queue,
                            const std::vector<std::unique_ptr<sim::Collective>>& collectives) {
  std::uint64_t events = queue.events_processed();
  for (const auto& c : collectives)
    if (c != nullptr) events += c->simulation_path().private_events;
  return events;
}

// The rings that share links, embedded together before the collectives start (told ring by ring;
// `progress` null: not told), each expecting its share of the step's interruptions: per collective,
// the embedded ring it became, if any. nullopt if a folded step's members stand where their
// representatives' rings do not repeat (attempt says so, its signature splitting the classes): the
// fold breaks before it runs. What simulate_once runs and estimate_once counts, alike.
std::optional<std::vector<sim::EmbeddedRing*>> embed_rings(const workloads::StepProgram& program,
                                                           const StepFoldPlan& fold, sim::Network& network,
                                                           StepCollectives& collectives,
                                                           sim::WorkProgress* progress,
                                                           sim::EmbedPlan& embedded, Attempt& attempt) {
  embedded = sim::embed_coupled_rings(collectives.owned, network, progress);
  embedded.expect_interruptions(most_tasks_simulated(program, fold));
  std::vector<sim::EmbeddedRing*> rings;
  for (std::size_t i = 0; i < collectives.owned.size(); ++i) {
    rings.push_back(dynamic_cast<sim::EmbeddedRing*>(collectives.owned[i].get()));
    if (collectives.pointers[i] != nullptr) collectives.pointers[i] = collectives.owned[i].get();
  }
  if (!fold.empty() && embedded.rings > 0 && !embedded_classes_agree(program, rings, fold, attempt))
    return std::nullopt;
  return rings;
}

// The record entries a try takes from the one before it and leaves to the next, on every way out
// of simulate_once (StepObservers::record_storage; null: none handed on).
class RecordHandOn {
 public:
  RecordHandOn(sim::StreamExecutor& executor, sim::ExecutionRecord::Storage* kept)
      : executor_(executor), kept_(kept) {
    if (kept_ != nullptr) executor_.reuse_record_storage(std::move(*kept_));
  }
  RecordHandOn(const RecordHandOn&) = delete;
  RecordHandOn& operator=(const RecordHandOn&) = delete;
  ~RecordHandOn() {
    if (kept_ != nullptr) *kept_ = executor_.take_record_storage();
  }

 private:
  sim::StreamExecutor& executor_;
  sim::ExecutionRecord::Storage* kept_;
};

}  // namespace

struct AttemptStage {
  AttemptStage(const StepSetup& setup, SimulationProgress* progress, std::string_view name)
      : what(name),
        parts(progress, this->what),
        network(queue, setup.topology->links(), setup.switching, &parts),
        budget(run_limits(setup.limits)),  // past the estimate, a fallback's tolerance
        ticks(queue, progress, this->what, &budget) {}
  std::string what;  // its set-up's lines' name, which `ticks` views until the run names its own
  sim::EventQueue queue;
  ProgramBuildTicks parts;  // told of its set-up
  sim::Network network;
  sim::SimulationBudget budget;
  // The folded collectives' models count their events here: a tree's model of seconds, within one
  // of the queue's events, gives lines with the step's time left (its expected events set in the run).
  StepTicks ticks;
  StepCollectives collectives;
  sim::EmbedPlan embedded;                // before the collectives start; its groups outlive their run
  std::vector<sim::EmbeddedRing*> rings;  // per collective: the embedded ring it became, if any
  PlanObserver* plans = nullptr;          // told each collective's plan as it was made (none: no one)
  // The estimate's count of this try (estimate_staged's step_budget_cost), which its run takes
  // rather than counting it again: 68.7 M instructions, 0.65% of the 1,024-GPU jittered step
  // (tests/bench/MEASUREMENTS.md, perf of 07:35). Where rings are embedded the run counts again:
  // their counts may read the claims set_embedded_to_run makes.
  std::optional<StepEstimate> counted;
};

void AttemptStageDeleter::operator()(AttemptStage* stage) const { delete stage; }

namespace {

// One try set up (AttemptStage), or null where it is refused before it starts (`attempt` says why,
// as make_collectives and embed_rings leave it). `forecast`, `crossing` and `plans` as make_collectives'.
StagedAttempt set_up_attempt(const StepSetup& setup, const workloads::StepProgram& program,
                             const StepFoldPlan& fold, Embed embed, SimulationProgress* progress,
                             std::string_view what, Attempt& attempt, EmbeddingForecast* forecast = nullptr,
                             CrossingForecast* crossing = nullptr, PlanObserver* plans = nullptr,
                             sim::NetworkObserver* watcher = nullptr) {
  StagedAttempt stage(new AttemptStage(setup, progress, what));
  // Before the collectives are made: a folded ring or tree watched by a trace runs in full.
  stage->network.set_observer(watcher);
  stage->plans = plans;
  sim::CollectiveConfig config = setup.collective;
  config.budget = &stage->budget;
  config.model_progress = stage->ticks.for_models();
  stage->collectives.uniform_trees->threads = sim::model_threads(setup.limits.model_threads);
  if (!make_collectives(setup, program, fold, stage->network, config, stage->collectives, attempt, progress,
                        what, forecast, crossing, plans))
    return nullptr;
  if (embed == Embed::On) {
    auto rings = embed_rings(program, fold, stage->network, stage->collectives,
                             progress ? &stage->parts : nullptr, stage->embedded, attempt);
    if (!rings) return nullptr;
    stage->rings = std::move(*rings);
  }
  return stage;
}

// The step's figures, read off the finished run.
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

// Why a folded step was given up where a collective its representatives and members share ran in
// full (`reason`, the collective's): check_step_fold's words; where the estimate foresaw it and the
// fold was not tried (Attempt::run_refusal), words that say so rather than that it ran.
std::string shared_ran_in_full(std::string_view reason, bool foreseen = false) {
  return (foreseen ? "a ring they share would run in full, foreseen before the run (the fold not tried): "
                   : "a ring they share ran in full: ") +
         std::string(reason);
}

// The reason a collective that may fold gives where it starts in full on links still busy
// (CrossingForecast::expected_in_full foresees that for rings and trees alone).
const char* busy_refusal(const sim::Collective& c) {
  if (const auto* tree = dynamic_cast<const sim::FoldedTree*>(&c)) return tree->busy_refusal();
  return sim::FoldedRing::busy_refusal();
}

// Whether a folded step held: a collective shared by representatives and members must have
// folded (in full, its messages in the members' machines would miss the shadows' traffic there),
// and every member must have seen what its representative did.
void check_step_fold(const StepFoldPlan& fold, const workloads::StepProgram& program,
                     const StepCollectives& collectives, const sim::StreamExecutor& executor,
                     Attempt& attempt) {
  const auto& owned = collectives.owned;
  for (std::size_t i = 0; i < owned.size() && !attempt.fold_broken; ++i) {
    if (owned[i] == nullptr || owned[i]->simulation_path().folded) continue;
    attempt.fold_broken = spans_members(fold, program.collectives[i]);
    if (attempt.fold_broken) {  // the same ring would run in full again
      attempt.unsuitable = true;
      attempt.why = shared_ran_in_full(sim::unfolded_reason(owned[i]->simulation_path()));
    }
  }
  if (!attempt.fold_broken) attempt.fold_broken = !executor.fold_held();
  if (attempt.fold_broken) attempt.signature = executor.fold_signature();
}

// The most messages the step's networks of their own held at once, at most. A folded ring's or tree's
// models run within one event of the step's queue, on the step's thread one at a time, so the
// largest model's most bounds theirs; where a uniform trees' runner ran models ahead, up to `threads`
// of them at once (the step's and its workers'). The embedded rings' ghosts (their smaller chunks'
// segments) live on the ghost network beside the step's, as long as the step runs.
std::uint64_t models_in_flight(const std::vector<std::unique_ptr<sim::Collective>>& owned,
                               const sim::UniformTrees& trees, const sim::EmbedPlan& embedded) {
  std::uint64_t largest = 0;
  for (const auto& c : owned)
    if (c != nullptr) largest = std::max(largest, c->simulation_path().model_in_flight);
  const std::uint64_t at_once = trees.runner != nullptr ? std::max(trees.threads, 1u) : 1;
  const std::uint64_t ghost = embedded.ghost != nullptr ? embedded.ghost->most_messages_in_flight() : 0;
  return largest * at_once + ghost;
}

// An attempt's estimate charged before its event loop. Refused once a fold was given up, the run had
// begun, and the refusal says so (Mixtral 8x7B ep 8 with trees at --max-events 995600 said nothing of
// its first attempt's 289,986 events).
void charge_attempt(const StepEstimate& estimate, sim::SimulationBudget& budget, std::uint64_t max_events,
                    std::uint64_t given_up) {
  try {
    estimate.charge(budget, max_events);
  } catch (sim::BudgetExceeded& over) {
    if (given_up > 0)
      over.cause += std::string(over.cause.empty() ? "" : " and ") + "its earlier attempts were given up (" +
                    sim::BudgetExceeded::count_text(given_up) + " events run, thrown away)";
    throw;
  }
}

// A fallback's charge past twice the cap, mid-run, in the words of the user's cap (`max_events`).
[[noreturn]] void refuse_fallback(sim::BudgetExceeded& over, const StepEstimate& estimate,
                                  std::uint64_t max_events) {
  // Memory: a collective started in full holds more messages than estimated; quote every one's.
  if (over.kind != sim::BudgetExceeded::Kind::Events) {
    over.upper = static_cast<std::uint64_t>(estimate.full_memory);
    throw;  // the exception being handled (refuse_fallback runs inside simulate_once's handler)
  }
  // The cap to raise it to: every GPU and collective in full (the most any way of the step takes,
  // each of its attempts charged against twice the cap), or what this one charged if more.
  sim::BudgetExceeded again(over.kind, over.estimate, max_events, over.in_flight,
                            over.cause + ", past twice the limit its estimate passed");
  again.upper = std::max(estimate.full_events, over.estimate);
  throw again;
}

// What a try's count says of the ladder's later ways, for the ladder (Attempt::every_gpu_set_up and
// after): every GPU in full's memory always; a folded try with embedded rings' every-GPU way and its
// events in full.
void note_later_ways(const StepEstimate& estimate, bool folded_embedded, Attempt& attempt) {
  attempt.full_memory_set_up = estimate.full_memory;
  if (!folded_embedded) return;
  attempt.every_gpu_set_up = estimate.every_gpu;
  attempt.full_events_set_up = estimate.full_events;
  attempt.full_in_flight_set_up = estimate.full_in_flight;
}

// The representatives that run something: a cluster larger than the step has idle GPUs, alike on
// each idle machine, which fold onto one another, and were counted with them: GNMT dp 8 on 4 DGX-1
// said "16 of 8 GPUs simulated (the others repeat them)", its 8 GPUs each simulated.
std::uint32_t working_representatives(const workloads::StepProgram& program, const StepFoldPlan& fold) {
  std::uint32_t n = 0;
  for (std::size_t g = 0; g < fold.fold.representative.size(); ++g)
    if (fold.fold.representative[g] == g && program.worker_of_gpu[g] >= 0) ++n;
  return n;
}

}  // namespace

StepResult simulate_once(const StepSetup& setup, const workloads::StepProgram& program,
                         StepObservers observers, const StepFoldPlan& fold, Attempt& attempt, Embed embed,
                         std::string_view what, StagedAttempt staged) {
  if (setup.profile == nullptr || setup.topology == nullptr)
    throw InternalError("a step setup needs a profile and a topology");
  // A set-up told to other progress, or made without this run's plan or network observer, is made
  // again.
  if (staged && (staged->ticks.progress() != observers.progress || staged->plans != observers.plans ||
                 staged->network.observer() != observers.network))
    staged = nullptr;
  // The parts of the set-up that are one call each, told at their start and end (a second each at
  // 65,536 GPUs), and those grown in batches (the network's links, the executor's state): a line
  // when one is due, so none waits past the next.
  if (!staged)
    staged = set_up_attempt(setup, program, fold, embed, observers.progress, what, attempt, nullptr, nullptr,
                            observers.plans, observers.network);
  if (!staged) return {};
  AttemptStage& stage = *staged;
  ProgramBuildTicks parts(observers.progress, std::string(what));
  sim::EventQueue& queue = stage.queue;
  sim::Network& network = stage.network;
  sim::SimulationBudget& budget = stage.budget;
  StepTicks& ticks = stage.ticks;
  ticks.set_what(what);
  StepCollectives& collectives = stage.collectives;
  const sim::EmbedPlan& embedded = stage.embedded;
  const std::vector<sim::EmbeddedRing*>& rings = stage.rings;
  if (embed == Embed::On) set_embedded_to_run(*setup.topology, fold, embedded, network);
  if (!fold.empty() && !shared_rings_may_fold(program, fold, collectives.owned, attempt, &parts)) return {};
  const StepEstimate estimate = stage.counted && embedded.rings == 0
                                    ? *stage.counted
                                    : step_budget_cost(program, collectives.owned, fold.fold, fold.shadow_of,
                                                       &parts, attempt_shape(setup));
  note_later_ways(estimate, !fold.empty() && embed == Embed::On, attempt);
  const std::uint64_t given_up = attempt.before + attempt.given_up_events;
  charge_attempt(estimate, budget, setup.limits.max_events, given_up);

  // Told GPU by GPU: at 65,536 GPUs its check, fold and start take seconds.
  sim::StreamExecutor executor(queue, program.gpus, collectives.pointers, program.event_count, setup.executor,
                               std::move(collectives.loads), &parts);
  const RecordHandOn hand_on(executor, observers.record_storage);
  executor.set_observer(observers.stream);
  if (!fold.empty()) executor.set_fold(fold.fold);
  executor.start();
  try {
    ticks.set_expected(observers.expected_events > 0 ? observers.expected_events : estimate.events(),
                       observers.expected_way);  // the step's (StepObservers), else this attempt's
    ticks.set_given_up(given_up);
    ticks.run();
  } catch (sim::BudgetExceeded& over) {  // a fallback's charge: in the words of the user's cap
    refuse_fallback(over, estimate, setup.limits.max_events);
  }
  if (embedded.rings > 0 && sim::interfered(network)) {  // stopped there (or ran out after it)
    attempt.interfered = true;
    StepResult r;
    r.simulation.embedded = embedded.rings;
    r.events = events_so_far(queue, collectives.owned);
    return r;
  }
  if (!executor.is_done())
    throw InternalError("the step deadlocked:\n" + executor.describe_stuck());
  if (embedded.bounded)
    for (sim::EmbeddedRing* ring : rings)
      if (ring != nullptr) attempt.embed_unbounded = attempt.embed_unbounded || !ring->bound_holds();

  StepResult r = sim::work_part(&parts, "reading off its figures", [&] {
    return step_result(setup, program, fold, executor, collectives, queue.events_processed());
  });
  r.simulation.embedded = embedded.rings;
  r.simulation.most_in_flight = network.most_messages_in_flight();
  r.simulation.model_in_flight = models_in_flight(collectives.owned, *collectives.uniform_trees, embedded);
  attempt.interfered = sim::interfered(network);
  if (!fold.empty()) {
    r.simulation.gpus_simulated = working_representatives(program, fold);
    check_step_fold(fold, program, collectives, executor, attempt);
    if (auto why = fold_p2p_apart_held(program, fold, executor.record()); why && !attempt.fold_broken) {
      attempt.unsuitable = true;  // the same plan would run the same way again
      attempt.why = *why;
    }
  }
  return r;
}

namespace {

// Adds to a count the collectives expected to run in full as they start (`in_full`,
// CrossingForecast::expected_in_full): each one's full cost over what it counted for it as folding,
// in this way's events and in the every-GPU way's, where they run in full alike.
void count_in_full(StepEstimate& e, const std::vector<std::unique_ptr<sim::Collective>>& owned,
                   const std::vector<std::size_t>& in_full) {
  for (const std::size_t i : in_full) {
    const std::uint64_t full = owned[i]->full_cost().events, counted = owned[i]->expected_events().total();
    if (full <= counted) continue;
    e.collective_events.queue = sim::add_saturating(e.collective_events.queue, full - counted);
    e.every_gpu.events = sim::add_saturating(e.every_gpu.events, full - counted);
  }
}

// Whether a ring this try embedded, shared by representatives and members, has two edges on one
// link: without embedding it would be the FoldedRing of the same plan, which shared_rings_may_fold
// refuses (its plan_refusal passed, or it would not have been embedded: FoldedRing::may_embed), and
// the other shared rings are that try's as this one's, which passed. So the try without embedding
// is known unsuitable without setting it up (at 65,536 GPUs of GNMT DP on DGX H100, a second set-up
// of about 0.5 GB beside the kept one: tests/bench/MEASUREMENTS.md, mem).
bool embedded_shared_ring_shares_edges(const workloads::StepProgram& program, const StepFoldPlan& fold,
                                       const std::vector<sim::EmbeddedRing*>& rings) {
  for (std::size_t i = 0; i < rings.size(); ++i)
    if (rings[i] != nullptr && spans_members(fold, program.collectives[i]) &&
        sim::ring_edges_share_a_link(rings[i]->ring()))
      return true;
  return false;
}

// The links where a folded try's embedded rings meet other transfers live (representative_links;
// none where every GPU is simulated or nothing is embedded).
std::vector<sim::LinkId> embedding_tolerated(const StepSetup& setup, const StepFoldPlan& fold,
                                             const AttemptStage& stage) {
  return fold.empty() || stage.embedded.rings == 0
             ? std::vector<sim::LinkId>{}
             : representative_links(*setup.topology, fold, stage.embedded);
}

// estimate_once's count of a try set up (`stage`, as simulate_once would run it).
std::optional<StepEstimate> estimate_staged(const StepSetup& setup, const workloads::StepProgram& program,
                                            const StepFoldPlan& fold, Embed embed,
                                            SimulationProgress* progress, Attempt& attempt,
                                            AttemptStage& stage, const EmbeddingForecast& forecast,
                                            const CrossingForecast& crossing) {
  const std::vector<std::unique_ptr<sim::Collective>>& owned = stage.collectives.owned;
  if (embed == Embed::On) {
    const std::vector<sim::LinkId> tolerated = embedding_tolerated(setup, fold, stage);
    attempt.every_gpu_unembedded = !tolerated.empty() && forecast.expected_crossed(owned, stage.embedded, {});
  }
  sim::WorkProgress* told = progress ? &stage.parts : nullptr;
  // The every-GPU way from this try's count (Attempt::every_gpu): where another party is expected to
  // cross its collectives (`crossed`), the ladder's third way, every collective in full.
  const auto count_every_gpu = [&](const StepEstimate& count, bool crossed) {
    if (fold.empty() || attempt.every_gpu_unembedded || stage.collectives.uniform) return;
    attempt.every_gpu = count.every_gpu;
    if (!crossed) return;
    attempt.every_gpu->events = count.full_events;
    attempt.every_gpu->in_flight = count.full_in_flight;
  };
  const std::vector<std::size_t> in_full = crossing.expected_in_full(owned, program);
  // Where the fold is given up below, its count says what the every-GPU way would hold and take
  // (estimate_program checks it before that way is set up, and counts that way from it); where the
  // every-GPU try is, what the ladder's last way, every collective in full, would hold (its
  // full_memory, checked before that way is set up: step_estimate.cpp).
  const auto count = [&] {
    attempt.counted =
        step_budget_cost(program, owned, fold.fold, fold.shadow_of, nullptr, attempt_shape(setup));
    count_in_full(*attempt.counted, owned, in_full);
    count_every_gpu(*attempt.counted, crossing.expected_crossed(owned).has_value());
  };
  if (!fold.empty() && !shared_rings_may_fold(program, fold, owned, attempt, told)) {
    count();
    return {};
  }
  // A ring they share that will run in full: the run gives the fold up after it (check_step_fold).
  if (auto why = folded_ring_expected_in_full(program, fold, owned)) {
    attempt.unsuitable = true;
    attempt.why = std::move(*why);
    count();
    return {};
  }
  // A folded collective that another party is expected to cross: the run gives the attempt up
  // (interfered) and takes the ladder's next way.
  if (auto why = crossing.expected_crossed(owned)) {
    attempt.interfered = true;
    attempt.why = std::move(*why);
    count();
    return {};
  }
  // One they share that runs in full as it starts, its links claimed or busy: the run gives the fold
  // up after it (check_step_fold), as above.
  for (const std::size_t i : in_full)
    if (!fold.empty() && spans_members(fold, program.collectives[i])) {
      attempt.unsuitable = true;
      attempt.why = "a collective they share would run in full: its links are still busy";
      attempt.run_refusal = shared_ran_in_full(busy_refusal(*owned[i]), true);
      count();
      return {};
    }
  attempt.embed_bounded = stage.embedded.bounded;
  if (attempt.embed_bounded && !fold.empty())
    attempt.unembedded_unsuitable = embedded_shared_ring_shares_edges(program, fold, stage.rings);
  StepEstimate e = step_budget_cost(program, owned, fold.fold, fold.shadow_of, told, attempt_shape(setup));
  count_in_full(e, owned, in_full);
  count_every_gpu(e, false);
  stage.counted = e;
  return e;
}

// The step refused before the try without embedding is set up again for the run (set_up_retry_or_refuse
// below), where every GPU and collective in full, the last way left, is past the events cap (`tried`'s
// counts; `crossed_why`: why that try is foreseen crossed; `given_up`: the events run and thrown away).
// The refusal names the cap the ladder would meet first: the every-GPU way's memory, checked before its
// set-up (step_runner.cpp, every_gpu), where that passes the memory cap, else the events of every
// collective in full; each saying where the other cap is passed too, so that one raise is not
// refused by the other.
[[noreturn]] void refuse_only_in_full_remains(const StepSetup& setup, const Attempt& tried,
                                              const std::string& crossed_why, std::uint64_t given_up) {
  const std::uint64_t cap = setup.limits.max_events;
  const std::string thrown_away =
      given_up > 0 ? " (" + sim::BudgetExceeded::count_text(given_up) + " events run, thrown away)" : "";
  const std::string crossed =
      "its fold was given up with its rings embedded, and without embedding it is foreseen crossed (" +
      crossed_why + ")";
  const std::int64_t memory_cap = setup.limits.max_memory;
  const std::string in_full_events = "about " + sim::BudgetExceeded::count_text(tried.full_events_set_up) +
                                     " events, past the events limit (" +
                                     sim::BudgetExceeded::count_text(cap) + ") too";
  if (memory_cap != 0 && tried.every_gpu_set_up && tried.every_gpu_set_up->memory() > memory_cap) {
    const std::int64_t every_gpu = tried.every_gpu_set_up->memory();
    sim::BudgetExceeded over(sim::BudgetExceeded::Kind::Memory, static_cast<std::uint64_t>(every_gpu),
                             static_cast<std::uint64_t>(memory_cap), tried.every_gpu_set_up->in_flight,
                             crossed + ", so every GPU would be simulated, as counted before that is set up" +
                                 thrown_away + "; every collective in full after it would simulate " +
                                 in_full_events);
    over.upper = static_cast<std::uint64_t>(std::max(every_gpu, tried.full_memory_set_up));
    throw over;
  }
  std::string cause =
      crossed +
      ", as every GPU's way would be: every GPU and collective would be simulated in full, as "
      "counted before that is set up";
  if (memory_cap != 0 && tried.full_memory_set_up > memory_cap)
    cause += " (holding about " + sim::human_bytes(sim::Bytes::of(tried.full_memory_set_up)) +
             " of simulation state, past the memory limit (" + sim::human_bytes(sim::Bytes::of(memory_cap)) +
             ") too)";
  sim::BudgetExceeded over(sim::BudgetExceeded::Kind::Events, tried.full_events_set_up, cap,
                           tried.full_in_flight_set_up, cause + thrown_away);
  over.upper = tried.full_events_set_up;
  throw over;
}

// Before a fold given up with its rings embedded (`tried`) is tried again without: the retry's
// set-up, built here as the run builds it (`observers`, named `what`) and returned for the run to
// take, or the step refused. Where every GPU and collective in full, the ladder's last way, is past
// the events cap, the retry is set up to ask whether it is foreseen crossed (CrossingForecast, on its
// own set-up); if it is, the every-GPU way is too (its folded collectives are the same rings:
// estimate_staged counts it as that last way), and the step is refused now
// (refuse_only_in_full_remains), before the every-GPU set-up is built: GNMT dp 4,096 x mp 4 on 2,048
// DGX-1 at --max-events 2e9 ran both tries, built the every-GPU set-up (3.8 GB) and was refused for
// the same 3.6e9 events after 25-150 s (tests/bench/MEASUREMENTS.md, escal). Where the last way fits,
// nothing is set up here (null: the run builds its own); where the retry is not foreseen crossed, its
// set-up is returned: built once, where it was let go and built again, GNMT dp 32 x mp 2 on 8 DGX
// H100 at --max-events 676479 ran 5.2% more instructions (tests/bench/MEASUREMENTS.md, nice).
StagedAttempt set_up_retry_or_refuse(const StepSetup& setup, const workloads::StepProgram& program,
                                     const StepObservers& observers, const StepFoldPlan& fold,
                                     const Attempt& tried, std::uint64_t given_up, std::string_view what) {
  const std::uint64_t cap = setup.limits.max_events;
  if (fold.empty() || cap == 0 || tried.full_events_set_up <= cap) return nullptr;
  Attempt plain;
  CrossingForecast crossing(setup.topology->links().size());
  StagedAttempt stage = set_up_attempt(setup, program, fold, Embed::Off, observers.progress, what, plain,
                                       nullptr, &crossing, observers.plans, observers.network);
  if (!stage) return nullptr;  // refused before it starts: the run's try finds it so again
  const EmbeddingForecast no_embedding(0);
  if (estimate_staged(setup, program, fold, Embed::Off, nullptr, plain, *stage, no_embedding, crossing) ||
      !plain.interfered) {
    stage->counted.reset();  // the run counts its try itself, as where it sets it up
    return stage;
  }
  stage = nullptr;  // let go before the refusal is made
  refuse_only_in_full_remains(setup, tried, plain.why, given_up);
}

}  // namespace

std::optional<StepEstimate> estimate_once(const StepSetup& setup, const workloads::StepProgram& program,
                                          const StepFoldPlan& fold, Embed embed, SimulationProgress* progress,
                                          Attempt* refused, StagedAttempt* keep) {
  const std::string what = progress ? attempt_label(setup, "estimating its events") : "";
  Attempt own;
  Attempt& attempt = refused != nullptr ? *refused : own;
  const std::size_t links = setup.topology->links().size();
  EmbeddingForecast forecast(embed == Embed::On ? links : 0);
  CrossingForecast crossing(links);
  // As simulate_once, which runs it where it is kept: embedded rings cost what they cost there, and
  // members standing where their representatives' embedded rings do not repeat break the fold
  // before it runs.
  StagedAttempt stage = set_up_attempt(setup, program, fold, embed, progress, what, attempt,
                                       embed == Embed::On ? &forecast : nullptr, &crossing);
  if (!stage) return {};
  // Its embedding expected to be interfered with: the run would throw such an attempt away
  // (simulate_attempt) and run without embedding; its first try stops at the interference, and is not
  // counted. Its set-up is let go before the try without embedding is made, unless kept for the run:
  // held beside it, GNMT dp 2,048 x mp 8 on 16,384 GPUs held two every-GPU set-ups (1.08 and 1.05 GB)
  // at once where its shared budget counted one (tests/bench/MEASUREMENTS.md, plan16k3).
  if (embed == Embed::On && forecast.expected_to_fail(program, stage->collectives.owned, stage->embedded,
                                                      embedding_tolerated(setup, fold, *stage))) {
    if (keep != nullptr) *keep = std::move(stage);
    stage = nullptr;
    return estimate_once(setup, program, fold, Embed::Off, progress, &attempt);
  }
  std::optional<StepEstimate> e =
      estimate_staged(setup, program, fold, embed, progress, attempt, *stage, forecast, crossing);
  if (keep != nullptr) *keep = std::move(stage);
  return e;
}

// One attempt with rings that share links folded together; if one of them with chunks of unequal
// size strays from its bound (more than 0.1% of its time), or the network was interfered with,
// again without.
StepResult simulate_attempt(const StepSetup& setup, const workloads::StepProgram& program,
                            StepObservers observers, const StepFoldPlan& fold, Attempt& attempt,
                            std::string_view what, StagedAttempt staged) {
  StepResult r = simulate_once(setup, program, observers, fold, attempt, Embed::On, what, std::move(staged));
  // Rings embedded together assume their models' messages never tie with another route's at a
  // link; a ring whose channels share links in lockstep (a TP group's on an NVSwitch) ties at once.
  // Without embedding such a ring runs plain and claims nothing, so the others may still fold.
  const bool embedding_failed = attempt.interfered && r.simulation.embedded > 0;
  if (!attempt.embed_unbounded && !embedding_failed) return r;
  const std::string again = std::string(what) + ", again without embedding its rings";
  StagedAttempt plain =
      set_up_retry_or_refuse(setup, program, observers, fold, attempt, attempt.before + r.events, again);
  const std::uint64_t before = attempt.before;
  std::optional<StepEstimate::EveryGpu> every_gpu = std::move(attempt.every_gpu_set_up);
  const std::int64_t full_memory = attempt.full_memory_set_up;
  attempt = {};
  attempt.before = before;
  attempt.every_gpu_set_up = std::move(every_gpu);
  attempt.full_memory_set_up = full_memory;
  attempt.embed_off = true;
  attempt.given_up_events = r.events;
  return simulate_once(setup, program, observers, fold, attempt, Embed::Off, again, std::move(plain));
}

AttemptShape attempt_shape(const StepSetup& setup) {
  return {.links = setup.topology->links().size(),
          .loads = setup.executor.contention,
          .bounds = setup.collective.fast_path == sim::FastPath::Bounded};
}

// What a progress line says the step is doing.
std::string attempt_label(const StepSetup& setup, std::string_view how) {
  if (setup.variability.steps <= 1) return "the step, " + std::string(how);
  const std::string steps = std::to_string(setup.variability.steps);
  // Alike steps (step_series.h): the one simulated is the whole run's work, and its time left the
  // run's; "step 1 of 3000" alone read as the first of 3000 to simulate.
  const std::string alike = steps_alike(setup) ? " alike steps, simulated once for all" : "";
  return "step " + std::to_string(setup.step_index + 1) + " of " + steps + alike + ", " + std::string(how);
}

}  // namespace hybridsim::analysis
