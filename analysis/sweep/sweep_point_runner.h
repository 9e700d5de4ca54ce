// Runs the points of a sweep's plan (internal to analysis/sweep/, for run_sweep): on threads of this
// process, and with a team (sweep_team.h) shared with the other processes of an MPI job. The leader
// hands out positions in the plan's `todo` and records every finished row, appending it to
// points.partial.csv at once; the other processes run what they are handed.
//   PointRunner runner(options, plan, directory, partial, made);
//   runner.run(jobs, outcome);  // then runner.error(), runner.failures()
#pragma once
#include <atomic>
#include <cstddef>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "analysis/output/created_folders.h"
#include "analysis/study/step_run_progress.h"
#include "analysis/sweep/sweep_plan.h"
#include "analysis/sweep/sweep_runner.h"
#include "analysis/sweep/sweep_team.h"
#include "scenarios/loader/sweep.h"

namespace hybridsim::analysis {

class PointRunner {
 public:
  PointRunner(const SweepOptions& options, SweepPlan& plan, const std::filesystem::path& directory,
              std::ofstream& partial, CreatedFolders& made);

  bool leader() const { return !options_.team || options_.team->rank() == 0; }

  // Runs everything on `jobs` threads; returns the points this process (leader: all ranks) finished,
  // counted per rank, or the first error.
  void run(int jobs, SweepOutcome& outcome);
  const std::string& error() const { return error_; }
  // The points that failed once run (failed_sweep_row): why, by point index (in point order,
  // whichever thread or rank finished first).
  const std::map<std::size_t, std::string>& failures() const { return failures_; }

 private:
  // A position in `todo` not yet handed out, for a worker of rank `rank` (0: the leader's own), or
  // nullopt when all are (or a point failed). Each other rank's first ask gets a point kept for it.
  std::optional<std::size_t> take(int rank);
  SweepTeam::Finished run_point(std::size_t i);
  static SweepTeam::Finished failure(const scenarios::SweepPoint& point, std::size_t i,
                                     const std::exception& e);
  // The leader keeps a finished point: in the rows, in the partial file at once, in the progress.
  void record(int rank, const SweepTeam::Finished& f);
  void lead();
  // Another rank's worker: each request to the leader carries the previous result.
  void follow();

  const SweepOptions& options_;
  SweepPlan& plan_;
  const std::filesystem::path& directory_;
  std::ofstream& partial_;
  CreatedFolders& made_;
  StepRunProgress progress_;
  std::mutex mutex_;
  std::atomic<std::size_t> next_{0};
  std::size_t reserved_ = 0;       // positions 0 .. reserved_ - 1: ranks 1 .. reserved_'s first points
  std::vector<bool> first_asked_;  // per rank: its first point handed out
  std::size_t done_ = 0, follower_done_ = 0;
  std::vector<std::size_t> by_rank_;
  std::string error_;
  std::map<std::size_t, std::string> failures_;
  bool parallel_ = false;  // points on several threads (set before they start)
};

}  // namespace hybridsim::analysis
