// A gnuplot driver: renders a plot script (with its data inline as gnuplot datablocks) by running
// gnuplot as a subprocess on a temporary output file in the target's folder, renamed over the target
// only when gnuplot succeeded; the script is kept next to the picture (`<target>.gp`, with the final
// file name) so a reader can edit and re-render it. Without gnuplot nothing is drawn and the status
// says why, so reports can say so and still write their tables.
//   GnuplotStatus g = find_gnuplot();
//   if (g.available) render_plot(g, {.body = "plot x*x", .target = "out/square.png"});
#pragma once
#include <filesystem>
#include <string>

namespace hybridsim::analysis {

struct GnuplotStatus {
  bool available = false;
  std::string program = "gnuplot";  // run through PATH
  std::string version{};              // "gnuplot 5.4 patchlevel 4"
  std::string why_not{};              // when not available
};

// Runs `program --version` and checks that the pngcairo terminal exists.
GnuplotStatus find_gnuplot(const std::string& program = "gnuplot");

struct PlotRequest {
  std::string body{};                 // gnuplot commands after the terminal and output lines
  std::filesystem::path target;     // the picture; its extension picks the terminal (.png, .svg)
  int width = 1200;                 // pixels
  int height = 800;
};

struct PlotOutcome {
  bool ok = false;
  std::string error;  // gnuplot's stderr (trimmed) or why it could not run
};

// Writes `<target>.gp`, runs gnuplot on a copy that writes a temporary picture, renames it over the
// target on success; on failure an earlier picture at the target is removed. Never throws for
// gnuplot failures (they are in the outcome); throws InputError only when the script file itself
// cannot be written.
PlotOutcome render_plot(const GnuplotStatus& gnuplot, const PlotRequest& request);

// Removes the picture an earlier run left at `target` (and with `script_too` its `<target>.gp`)
// where this run draws none: left beside this run's CSVs it reads as theirs. Only regular files go
// (a folder of that name stays); a failure to remove is ignored, as the picture is extra.
void remove_stale_plot(const std::filesystem::path& target, bool script_too);

// A gnuplot string literal: single quotes, with embedded single quotes doubled.
std::string gnuplot_quote(const std::string& text);

}  // namespace hybridsim::analysis
