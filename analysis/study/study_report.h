// The hybrid-vs-DP study's report: a folder with a Markdown summary (headline, sensitivity, why,
// per-network tables, every assumption), CSVs of every number, and gnuplot pictures (epochs vs
// global batch; DP per-step and end-to-end speedup vs N; DP vs hybrid end to end with the crossover;
// the headline gains). Every file is written through AtomicFile. Also the short headline table the
// CLI prints. The same result gives the same bytes (no wall-clock times in the files).
//   StudyReportFiles f = write_study_report(result, "out/study/quick");
//   print_headline_table(result, std::cout);
#pragma once
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/output/format_fixed.h"  // format_fixed, used with the helpers below
#include "analysis/output/plot_gnuplot.h"
#include "analysis/study/study.h"
#include "topology/cluster_spec.h"

namespace hybridsim::analysis {

struct StudyReportOptions {
  bool plots = true;                // false: no gnuplot at all (the Markdown says so)
  std::string gnuplot = "gnuplot";  // the program, found through PATH
  std::string command;              // how the study was run, quoted in the summary (optional)
};

struct StudyReportFiles {
  std::filesystem::path dir{};
  std::filesystem::path summary{};                 // README.md
  std::vector<std::filesystem::path> files{};      // everything written, summary first
  bool plots_drawn = false;
  std::vector<std::string> plot_problems{};        // gnuplot missing, or a picture that failed
};

// Creates `dir` (and parents) and writes README.md, steps.csv, time_to_train.csv, headline.csv,
// epochs.csv and, when gnuplot works, epochs.png, dp_speedup.png, dp_vs_hybrid.png and
// headline.png (each with its .gp script). Throws InputError when a file cannot be written.
StudyReportFiles write_study_report(const StudyResult& result, const std::filesystem::path& dir,
                                    const StudyReportOptions& options = {});

// The reason a report gives for its missing pictures under --no-plots (no script is written either).
inline constexpr const char* kPicturesNotRequested = "pictures were not requested";

// What a study's report folder holds: CSV files (name, content), pictures to draw, and the Markdown
// summary, told which pictures were drawn and why others were not.
struct ReportFolder {
  std::vector<std::pair<std::string, std::string>> csv{};
  std::vector<PlotRequest> plots{};
  std::function<std::string(const std::vector<std::string>& drawn, const std::vector<std::string>& problems)>
      summary;
};
// Creates `dir` (and parents) and writes the CSVs, the pictures gnuplot draws (each with its .gp
// script) and README.md, every file through AtomicFile (the LLM study's report too).
StudyReportFiles write_report_folder(const std::filesystem::path& dir, const ReportFolder& parts,
                                     const StudyReportOptions& options = {});

// The Markdown summary alone; `plots` lists the pictures drawn ("epochs.png", ...) and `problems`
// why others were not.
std::string study_markdown(const StudyResult& result, const std::vector<std::string>& plots,
                           const std::vector<std::string>& problems, const std::string& command = {});

// The headline table for a terminal: per network, best DP, best hybrid, the gain over best DP, the
// gain at the largest N, the crossover and the sensitivity range.
void print_headline_table(const StudyResult& result, std::ostream& out);

// The published projection (Pal et al., IEEE Micro 2019) of hybrid's gain over the best DP, for the
// networks it covers: inception-v3 0.265, gnmt 0.08, biglstm 0.22.
std::optional<double> published_gain(std::string_view network);

// Formatting shared by the study's report and the planner: "48.1 h", "7.2 min", "42.0 s";
// "+12.3%"; "131,072".
std::string format_duration(double seconds);
// Two durations a reader compares, both in the unit format_duration picks for the larger: "2.4 d
// against 1.8 d", not "2.4 d against 44.0 h".
std::pair<std::string, std::string> format_durations_alike(double a, double b);
std::string format_percent(double fraction);
// "InfiniBand 12.5 GB/s a NIC port, 6 GB/s a GPU": the spec's port rate, as --ib-bandwidth and
// cluster.links.infiniband.bandwidth set it, and what it carries for a GPU (topology::ib_share_per_gpu:
// NICs capped by their PCIe links, shared by the machine's GPUs). The planners' headers.
std::string infiniband_words(const topology::ClusterSpec& spec);
std::string format_count(std::int64_t n);
// Steps per epoch: "484" (format_count), or the share of a step an epoch is when the global batch is
// over the dataset, to three significant digits ("0.611").
std::string format_steps_per_epoch(const TimeToTrain& t);

}  // namespace hybridsim::analysis
