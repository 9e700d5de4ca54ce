#include "analysis/step/attempt_collectives.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/step/embedding_forecast.h"
#include "analysis/step/fold_forecast.h"
#include "analysis/step/step_progress.h"
#include "sim/error.h"
#include "workloads/comm/collective_load.h"
#include "workloads/comm/comm_plan.h"

namespace hybridsim::analysis {

namespace {

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

}  // namespace

bool make_collectives(const StepSetup& setup, const workloads::StepProgram& program, const StepFoldPlan& fold,
                      sim::Network& network, const sim::CollectiveConfig& config, StepCollectives& out,
                      Attempt& attempt, SimulationProgress* progress, std::string_view what,
                      EmbeddingForecast* forecast, CrossingForecast* crossing, PlanObserver* plans) {
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

}  // namespace hybridsim::analysis
