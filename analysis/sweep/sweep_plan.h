// What a sweep will do before any point runs: the scenario read once (every point is built from
// that text), its points, its fingerprint, the points of this shard still to run, and the rows
// already finished (a resumed sweep, after the checks of sweep_integrity.h). Every point of the
// shard is built and resolved here first, so a bad point stops the sweep before the first one runs.
// Internal to analysis/sweep/ (sweep_runner.cpp, sweep_point_runner.cpp).
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "analysis/step/step_estimate.h"
#include "analysis/sweep/sweep_runner.h"
#include "analysis/sweep/sweep_table.h"
#include "scenarios/loader/scenario.h"
#include "scenarios/loader/sweep.h"

namespace hybridsim::analysis {

struct SweepPlan {
  scenarios::ScenarioSource source = {};
  scenarios::Scenario base = {};
  std::filesystem::path directory = {};  // where the results go
  std::vector<scenarios::SweepPoint> points = {};
  SweepIdentity identity = {};
  std::vector<std::string> paths = {};  // the swept fields, in order
  std::string head = {};                // the CSV header
  std::vector<const scenarios::SweepPoint*> todo = {};
  // Finished before this run (leader only), and each point not simulated (every process): a
  // transformer its GPUs cannot hold, listed as its row (unfit_sweep_row) instead of refusing the sweep.
  SweepRows rows = {};
  std::size_t not_simulated = 0;           // of this run's points: unfit transformers
  std::size_t refused = 0;                 // and the points the loader refuses (refused_sweep_row)
  std::vector<std::string> refusals = {};  // each one's note (also in notes), said before any runs
  std::vector<std::string> notes = {};  // what resuming dropped, and why
  // By point index, each point still to run: its cost as its run estimates it before it starts
  // (analysis/step/step_estimate.h; a variability run's events times the steps it simulates,
  // estimate_of_steps).
  std::map<std::size_t, StepEstimate> estimates = {};
  // And its step's own estimate, which its run counts against (ScenarioRunOptions::step_estimate)
  // rather than estimating the step again: a point's program and collectives were built twice more.
  std::map<std::size_t, StepEstimate> step_estimates = {};

  // The scenario at one point, from the text read once.
  scenarios::Scenario point_scenario(const scenarios::SweepPoint& point, const SweepOptions& options) const;
};

// Reads, expands and checks; `leader` reads what a resumed sweep already has. A point whose
// transformer does not fit its GPUs' memory becomes a row that says so (and a note); where no point
// of the sweep fits, the first one's refusal stops it, as every other bad point does.
SweepPlan plan_sweep(scenarios::ScenarioSource source, const SweepOptions& options, bool leader);

}  // namespace hybridsim::analysis
