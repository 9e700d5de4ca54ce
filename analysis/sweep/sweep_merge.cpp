#include "analysis/sweep/sweep_merge.h"

#include <filesystem>
#include <string>
#include <vector>

#include "analysis/sweep/sweep_integrity.h"
#include "analysis/sweep/sweep_table.h"
#include "sim/error.h"

namespace hybridsim::analysis {

SweepOutcome merge_sweep_outputs(const std::vector<std::filesystem::path>& shard_dirs,
                                 const std::filesystem::path& out, const MergeOptions& options) {
  if (shard_dirs.empty()) throw InputError("merge needs at least one shard folder");
  std::vector<ShardResults> shards;
  for (const auto& dir : shard_dirs) shards.push_back(read_shard_results(dir));
  const ShardResults& first = shards.front();
  SweepRows rows;
  for (const ShardResults& s : shards) {
    if (s.fingerprint != first.fingerprint || s.sweep_points != first.sweep_points)
      throw InputError(s.directory.string() + " holds another sweep than " + first.directory.string() +
                       " (fingerprint " + s.fingerprint + " against " + first.fingerprint +
                       "): only shards of one sweep, with the same --set overrides, can be merged");
    if (s.header != first.header)
      throw InputError(s.directory.string() + ": its columns differ from " + first.directory.string() + "'s");
    for (const auto& [i, line] : s.rows)
      if (!rows.emplace(i, line).second)
        throw InputError("point " + std::to_string(i) + " appears in two shards (" + s.directory.string() +
                         ")");
  }
  const std::string missing = missing_points(rows, first.sweep_points);
  if (!missing.empty() && !options.allow_incomplete)
    throw InputError("merge: " + missing + " of the sweep's " + std::to_string(first.sweep_points) +
                     " points are in none of the shards (a shard not given, not run, or not finished); "
                     "--allow-incomplete merges what is there");
  std::filesystem::create_directories(out);
  SweepOutcome outcome;
  outcome.directory = out;
  outcome.points_total = rows.size();
  if (!missing.empty()) outcome.notes.push_back("incomplete: " + missing + " points missing");
  const SweepIdentity identity{.fingerprint = first.fingerprint,
                               .sweep_points = first.sweep_points,
                               .shard = missing.empty() ? "1/1" : "incomplete"};
  outcome.csv = write_sweep_results(out, "merged from " + std::to_string(shard_dirs.size()) + " shards",
                                    identity, first.header, rows);
  if (auto note = whole_model_note(first.header, rows)) outcome.notes.push_back(std::move(*note));
  return outcome;
}

}  // namespace hybridsim::analysis
