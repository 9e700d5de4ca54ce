// Internal to the study's report (study_report.cpp, study_csv.cpp, study_plots.cpp, study_why.cpp):
// the CSV files, the plot scripts and the explanatory text made from a StudyResult.
#pragma once
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "analysis/output/plot_gnuplot.h"
#include "analysis/study/study.h"

namespace hybridsim::analysis::study_detail {

// (file name, content) of every CSV of the report.
std::vector<std::pair<std::string, std::string>> csv_files(const StudyResult& result);

// The pictures of the report, targets inside `dir`: epochs.png, dp_speedup.png, dp_vs_hybrid.png,
// headline.png.
std::vector<PlotRequest> plot_requests(const StudyResult& result, const std::filesystem::path& dir);

// "DP" or "512 x 2" (dp × mp).
std::string strategy(const StudyRow& row);
// Markdown bullet points: why the best hybrid wins or loses against the best DP, from the simulated
// breakdowns (statistical vs hardware efficiency), and how DP scales.
std::string why_text(const NetworkStudy& study);

// The break-even figures of one variant in words (study_break_even_text.cpp), each a phrase without
// a final period: where DP's end-to-end speedup stops growing, hybrid's gain there, and the two
// break-even conditions (hybrid's step time, DP's epochs at its best batch). Empty where a figure
// does not exist (no best DP, no hybrid).
struct BreakEvenText {
  std::string peak, gain, step, epochs;
};
BreakEvenText break_even_text(const StudyResult& result, const StudyVariant& variant,
                              const StudyBreakEven& be);
// True where memory shapes the break-even figures (it leaves a row out, and no best DP or hybrid
// fits, or DP's scaling ends at the largest DP that fits), so the report adds the figures memory aside.
bool memory_shapes_break_even(const StudyVariant& variant);

}  // namespace hybridsim::analysis::study_detail
