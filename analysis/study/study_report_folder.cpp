// The study's report folder (study_report.h: write_report_folder, write_study_report): the CSV files,
// the pictures drawn with gnuplot where it is there (their scripts either way), and the README.md
// summary last written but listed first. A file of its own: writing files and drawing pictures is
// apart from the words and tables of the summary (study_report.cpp).
#include <algorithm>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "analysis/output/atomic_file.h"
#include "analysis/study/study_report.h"
#include "analysis/study/study_report_detail.h"
#include "sim/error.h"

namespace hybridsim::analysis {

StudyReportFiles write_report_folder(const std::filesystem::path& dir, const ReportFolder& parts,
                                     const StudyReportOptions& options) {
  StudyReportFiles files;
  files.dir = dir;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw InputError("cannot create the report folder " + dir.string() + ": " + ec.message());
  auto write = [&](const std::string& name, const std::string& content) {
    AtomicFile f(dir / name);
    f.write(content);
    f.commit();
    files.files.push_back(dir / name);
  };
  std::vector<std::string> drawn;
  if (options.plots) {
    const GnuplotStatus gnuplot = find_gnuplot(options.gnuplot);
    if (!gnuplot.available)
      files.plot_problems.push_back("gnuplot is not available (" + gnuplot.why_not +
                                    "): no pictures; install gnuplot (Debian: gnuplot-nox)");
    for (const auto& request : parts.plots) {
      const PlotOutcome o = render_plot(gnuplot, request);
      files.files.push_back(request.target.string() + ".gp");
      if (o.ok) {
        drawn.push_back(request.target.filename().string());
        files.files.push_back(request.target);
      } else if (gnuplot.available) {
        files.plot_problems.push_back(request.target.filename().string() + " failed: " + o.error);
      }
    }
  } else {
    files.plot_problems.push_back(kPicturesNotRequested);
    for (const auto& request : parts.plots) remove_stale_plot(request.target, /*script_too=*/true);
  }
  files.plots_drawn = !drawn.empty();
  for (const auto& [name, content] : parts.csv) write(name, content);
  files.summary = dir / "README.md";
  write("README.md", parts.summary(drawn, files.plot_problems));
  std::rotate(files.files.begin(), files.files.end() - 1, files.files.end());  // summary first
  return files;
}

StudyReportFiles write_study_report(const StudyResult& result, const std::filesystem::path& dir,
                                    const StudyReportOptions& options) {
  const ReportFolder parts{
      study_detail::csv_files(result), study_detail::plot_requests(result, dir),
      [&](const std::vector<std::string>& drawn, const std::vector<std::string>& problems) {
        return study_markdown(result, drawn, problems, options.command);
      }};
  return write_report_folder(dir, parts, options);
}

}  // namespace hybridsim::analysis
