// The collectives of one try at a step (private to analysis/step/): each planned by the
// communication planner and built on the try's own network, a folded step's shadows left null; a
// collective that representatives and members share and that could not fold refuses the try.
//   StepCollectives collectives;
//   if (!make_collectives(setup, program, fold, network, config, collectives, attempt)) ...;  // attempt.why
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/step/step_attempt.h"
#include "analysis/step/step_fold.h"
#include "analysis/step/step_runner.h"
#include "sim/collective.h"
#include "sim/fast/folded_tree.h"
#include "sim/network.h"
#include "sim/stream_executor.h"
#include "workloads/program/step_program.h"

namespace hybridsim::analysis {

class CrossingForecast;
class EmbeddingForecast;

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
// False if a collective of representatives and members is not a ring (attempt says so).
// `forecast` and `crossing` (null: none) note each plan's links (EmbeddingForecast::note_plan,
// CrossingForecast::note_plan); `plans` (null: none) is told each plan.
bool make_collectives(const StepSetup& setup, const workloads::StepProgram& program, const StepFoldPlan& fold,
                      sim::Network& network, const sim::CollectiveConfig& config, StepCollectives& out,
                      Attempt& attempt, SimulationProgress* progress = nullptr, std::string_view what = {},
                      EmbeddingForecast* forecast = nullptr, CrossingForecast* crossing = nullptr,
                      PlanObserver* plans = nullptr);

}  // namespace hybridsim::analysis
