// A step's cost before it runs, as its run checks it (sim/budget.h, check_step_budget): the events
// of the program's tasks, the full events of every collective that cannot fold, and the state its
// collectives and messages in flight hold, for the first way the run will simulate it (folded onto
// representative GPUs when it can, else every GPU). Commands that run many steps (study, plan,
// sweep) sum it over their configurations and refuse before any work when one step is over its caps.
//   const StepEstimate e = estimate_step(setup);
//   e.check(setup.limits);   // throws sim::BudgetExceeded as the run would
//   total += e.events();
#pragma once
#include <cstdint>

#include "sim/budget.h"

namespace hybridsim::workloads {
struct StepProgram;
}

namespace hybridsim::analysis {

struct StepSetup;
class SimulationProgress;

struct StepEstimate {
  std::uint64_t task_events = 0;  // the GPU streams' tasks, two events each
  std::int64_t state_bytes = 0;   // every collective's state
  sim::SimulationCost sure{};     // the collectives that cannot fold, simulated in full
  std::uint64_t events() const { return task_events + sure.events; }
  std::int64_t memory() const { return state_bytes + sure.memory(); }
  // Throws sim::BudgetExceeded past `limits`, with the figures the run's own check gives.
  void check(const sim::SimulationLimits& limits) const;
};

// Builds the step's program and its first attempt's collectives (no event is run). `progress` (null:
// none) hears of the program's building, as build_program's.
StepEstimate estimate_step(const StepSetup& setup, SimulationProgress* progress = nullptr);
// The same for a program already built (build_program(setup)).
StepEstimate estimate_program(const StepSetup& setup, const workloads::StepProgram& program);

}  // namespace hybridsim::analysis
