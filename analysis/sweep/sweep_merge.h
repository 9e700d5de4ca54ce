// Joins the folders of a sharded sweep (`hybridsim merge`, `run_sweep` with `shard = {K, N}`) into
// one: the same results.csv, rows in point order, and summary.json as one run of the whole sweep.
//   SweepOutcome o = merge_sweep_outputs({"out/s1", "out/s2"}, "out/all");
#pragma once
#include <filesystem>
#include <vector>

#include "analysis/sweep/sweep_runner.h"

namespace hybridsim::analysis {

struct MergeOptions {
  bool allow_incomplete = false;  // merge even when some points are in no shard (said in the notes)
};

// Joins the results.csv of shard folders into `out` (results.csv + summary.json), rows in point
// order; throws InputError on shards of different sweeps (fingerprints), mismatched headers, a
// damaged row, a point present twice, and (unless allow_incomplete) points in no shard.
SweepOutcome merge_sweep_outputs(const std::vector<std::filesystem::path>& shard_dirs,
                                 const std::filesystem::path& out, const MergeOptions& options = {});

}  // namespace hybridsim::analysis
