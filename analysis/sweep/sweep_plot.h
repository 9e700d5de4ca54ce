// The picture of a one- or two-parameter sweep: a results.csv column against the last swept
// parameter, one line per value of the first, drawn by gnuplot into <dir>/<metric>.png (its script
// beside it, <metric>.png.gp). Points of a layer slice whose whole model does not fit (results.csv's
// whole_model_fits "no") are ringed, with a legend entry that says so. A parameter whose values all
// read as one quantity (bandwidth, size, time, plain number) is drawn in its order, each value at its
// own position; others in the order written, as categories. Either way the ticks are the values' text.
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

// The gnuplot commands plot_sweep draws (the body after the terminal and output lines), or, where
// there is nothing to draw, `note` says why and `body` is empty.
struct SweepPlotScript {
  std::string body;
  std::string note;
};
SweepPlotScript sweep_plot_script(const std::vector<std::string>& paths, const std::string& head,
                                  const SweepRows& rows, const std::string& metric);

// The legend entry of the ringed points.
inline constexpr const char* kWholeModelUnfitLegend =
    "whole model does not fit (a layer slice was simulated)";

}  // namespace hybridsim::analysis
