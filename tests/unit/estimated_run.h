// A scenario's step estimated up front and then run, with the bytes the run held by the estimate's own
// measure (its collectives' state, its program's and arrays' bytes, and the messages its networks held
// at once: the step's, and its models' and ghost network's, StepResult::Simulation::model_in_flight):
// what the bound tests
// (tests/unit/analysis_step_bound_test.cpp, tests/scale/shipped_estimate_test.cpp) hold against
// StepEstimate::memory().
#pragma once
#include <cstdint>

#include "analysis/run/scenario_run.h"
#include "analysis/step/step_estimate.h"
#include "analysis/step/step_runner.h"
#include "scenarios/loader/resolve.h"
#include "scenarios/loader/scenario.h"
#include "sim/budget.h"

namespace hybridsim::testing {

struct EstimatedRun {
  analysis::StepEstimate estimate;
  analysis::StepResult result;
  std::int64_t held = 0;
};

inline EstimatedRun estimate_and_run(const scenarios::Scenario& scenario) {
  const scenarios::ResolvedScenario resolved = scenarios::resolve(scenario);
  const analysis::StepSetup setup = analysis::step_setup(resolved);
  EstimatedRun out{analysis::estimate_step(setup), analysis::simulate_step(setup), 0};
  const analysis::StepResult::Simulation& s = out.result.simulation;
  // Its program, arrays and network as the estimate counts them (held_bytes): the bound tests hold the
  // state and the messages in flight to it.
  out.held = out.estimate.state_bytes + out.estimate.held_bytes +
             static_cast<std::int64_t>(s.most_in_flight + s.model_in_flight) * sim::kBytesPerMessageInFlight;
  return out;
}

}  // namespace hybridsim::testing
