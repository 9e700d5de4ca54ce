// The traces of a sweep's points (internal to analysis/sweep/): each point's outputs.trace, written
// by whichever thread or rank runs it into the sweep's folder under the point's index, and the
// traces an earlier sweep left there that this one does not write, removed once the sweep is done.
//   ScenarioRunOptions how = point_trace_options(point_scenario, point, directory, made);
//   remove_stale_point_traces(plan, directory, options.shard);
#pragma once
#include <filesystem>
#include <utility>

#include "analysis/output/created_folders.h"
#include "analysis/run/scenario_run.h"
#include "analysis/sweep/sweep_plan.h"
#include "scenarios/loader/scenario.h"
#include "scenarios/loader/sweep.h"

namespace hybridsim::analysis {

// The point's outputs.trace, if it asks for one: written by whichever thread or MPI rank runs the
// point, straight into the sweep's output directory (atomically, like every output), named by the
// point's index so no two points or shards collide. Recorded in the trace: which point it is.
ScenarioRunOptions point_trace_options(const scenarios::Scenario& point_scenario,
                                       const scenarios::SweepPoint& point,
                                       const std::filesystem::path& directory, CreatedFolders& made);

// Point traces an earlier sweep wrote into this folder that this one does not write: a point past
// this sweep's last, a point of this shard not simulated (no trace; its row says why), and a point
// of this shard under the other name (gzip changed: t-0.json.gz beside the t-0.json written now).
// Read as this sweep's, they were another's. Another shard's points may share the folder (MPI
// ranks, --shard K/N with one --out): theirs stay. Regular files only, as remove_stale_plot.
void remove_stale_point_traces(const SweepPlan& plan, const std::filesystem::path& directory,
                               std::pair<int, int> shard);

}  // namespace hybridsim::analysis
