// The picture of a one- or two-parameter sweep: a results.csv column against the last swept
// parameter, one line per value of the first, drawn by gnuplot into <dir>/<metric>.png.
//   SweepPlot p = plot_sweep(dir, paths, head, rows, "step_time_ms");   // p.file, or p.note why not
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "analysis/sweep/sweep_table.h"

namespace hybridsim::analysis {

struct SweepPlot {
  std::optional<std::filesystem::path> file;
  std::string note;  // why there is no plot, when there is none
};

SweepPlot plot_sweep(const std::filesystem::path& dir, const std::vector<std::string>& paths,
                     const std::string& head, const SweepRows& rows, const std::string& metric);

}  // namespace hybridsim::analysis
