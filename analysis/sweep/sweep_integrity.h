// What keeps a sweep's results honest across runs, shards and interruptions: a fingerprint of
// what the sweep is (the scenario text, the --set overrides and every point's values), written
// into points.partial.csv and summary.json, and the checks `--resume` and `merge` make before they
// trust rows on disk: the same fingerprint, whole rows, indices that are points of this sweep and
// of this shard, each index once, and (for merge) every point present.
//   const std::string fp = sweep_fingerprint(source.text, overrides, points);
//   SweepRowCheck check{.fingerprint = fp, .points = points, .header = head};
#pragma once
#include <cstddef>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/output/option_spelling.h"
#include "analysis/sweep/sweep_table.h"
#include "scenarios/loader/sweep.h"

namespace hybridsim::analysis {

// 16 hex digits (64-bit FNV-1a) over the scenario text, each override, each point's index and
// assignments, and the texts of the files the points read (`inputs`: a profile's or topology file's
// contents). Any edit of the file or of a profile it names, another --set
// or another value list gives another one.
std::string sweep_fingerprint(std::string_view scenario_text, std::span<const std::string> overrides,
                              std::span<const scenarios::SweepPoint> points,
                              std::span<const std::string> inputs = {});

// The first line of points.partial.csv: "# hybridsim sweep <fingerprint>, <points> points".
std::string partial_preamble(const std::string& fingerprint, std::size_t points);

// What rows on disk must be to belong to a sweep (or one shard of it).
struct SweepRowCheck {
  std::string fingerprint;
  std::span<const scenarios::SweepPoint> points;  // the whole sweep, by index
  std::string header;
  std::pair<int, int> shard = {1, 1};  // K of N: only its points are accepted
  OptionSpelling spelling{};  // how a refusal names the overrides and options (Python's set=, out=)
};

// The rows of a points.partial.csv written for `check`. Absent file: none. A preamble with another
// fingerprint, another header, a row naming no point of this shard, a row whose values are not its
// point's, or an index twice: InputError naming the file and the line. A last row cut short (the
// process was killed while writing it) is dropped, its point to run again, and said in `notes`.
SweepRows read_partial_rows(const std::filesystem::path& file, const SweepRowCheck& check,
                            std::vector<std::string>& notes);
// The rows of a finished results.csv with its summary.json (whose fingerprint must match), checked
// the same way; absent: none.
SweepRows read_finished_rows(const std::filesystem::path& dir, const SweepRowCheck& check);

// What merge found in one shard folder: its rows, fingerprint, header and sweep size.
struct ShardResults {
  std::filesystem::path directory;
  std::string fingerprint;
  std::string header;
  std::size_t sweep_points = 0;
  SweepRows rows;
};
// Reads results.csv and summary.json of a shard folder, every row checked for shape and index.
ShardResults read_shard_results(const std::filesystem::path& dir);
// The indices in [0, total) that no row has, as "3, 5, 7-9" (at most 20 numbers listed).
std::string missing_points(const SweepRows& rows, std::size_t total);

}  // namespace hybridsim::analysis
