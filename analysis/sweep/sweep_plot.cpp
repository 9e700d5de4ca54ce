#include "analysis/sweep/sweep_plot.h"

#include <algorithm>
#include <map>
#include <utility>

#include "analysis/output/csv.h"
#include "analysis/output/plot_gnuplot.h"

namespace hybridsim::analysis {

namespace {

// A gnuplot datablock of (x position, y) lines.
std::string datablock(const std::string& name, const std::vector<std::pair<std::size_t, std::string>>& xy) {
  std::string out = name + " << EOD\n";
  for (const auto& [x, y] : xy) out += std::to_string(x) + " " + y + "\n";
  return out + "EOD\n";
}

}  // namespace

// Values are drawn in sweep order (categories), since they may carry units.
SweepPlotScript sweep_plot_script(const std::vector<std::string>& paths, const std::string& head,
                                  const SweepRows& rows, const std::string& metric) {
  SweepPlotScript out;
  const auto columns = csv_split(head);
  const auto column = [&](const std::string& name) {
    return static_cast<std::size_t>(std::find(columns.begin(), columns.end(), name) - columns.begin());
  };
  const std::size_t mcol = column(metric);
  if (mcol >= columns.size()) {
    out.note = "no plot: unknown metric column \"" + metric + "\"";
    return out;
  }
  // A layer slice's point whose whole model does not fit: its figures are the slice's, drawn among
  // those of runs of every layer without a mark, they read as the model's.
  const std::size_t whole_col = column("whole_model_fits");
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> series;  // first value → (x, y)
  std::vector<std::string> series_order, x_order;
  std::vector<std::pair<std::string, std::string>> unfit;  // (x, y)
  for (const auto& [index, line] : rows) {
    const auto f = csv_split(line);
    // A point not simulated (results.csv's not_simulated) has no figure to draw: gnuplot read its
    // empty field as the next number.
    if (mcol >= f.size() || f[mcol].empty()) continue;
    const std::string key = paths.size() == 2 ? f[2] : metric;
    const std::string x = f[paths.size() == 2 ? 3 : 2];
    if (!series.count(key)) series_order.push_back(key);
    if (std::find(x_order.begin(), x_order.end(), x) == x_order.end()) x_order.push_back(x);
    series[key].push_back({x, f[mcol]});
    if (whole_col < f.size() && f[whole_col] == "no") unfit.push_back({x, f[mcol]});
  }
  if (series_order.empty()) {
    out.note = "no plot: no point has a " + metric + " (none was simulated)";
    return out;
  }
  const auto position = [&](const std::string& x) {
    return static_cast<std::size_t>(std::find(x_order.begin(), x_order.end(), x) - x_order.begin());
  };
  const auto positioned = [&](const std::vector<std::pair<std::string, std::string>>& xy) {
    std::vector<std::pair<std::size_t, std::string>> p;
    for (const auto& [x, y] : xy) p.emplace_back(position(x), y);
    return p;
  };
  std::string& body = out.body;
  body = "set title " + gnuplot_quote(metric + " against " + paths.back()) + " noenhanced\nset xlabel " +
         gnuplot_quote(paths.back()) + " noenhanced\nset ylabel " + gnuplot_quote(metric) +
         " noenhanced\nset grid\nset key outside noenhanced\nset xtics (";
  for (std::size_t i = 0; i < x_order.size(); ++i)
    body += (i ? ", " : "") + gnuplot_quote(x_order[i]) + " " + std::to_string(i);
  body += ")\n";
  std::string plots;
  for (std::size_t s = 0; s < series_order.size(); ++s) {
    body += datablock("$d" + std::to_string(s), positioned(series[series_order[s]]));
    plots += (s ? ", " : "plot ") + std::string("$d") + std::to_string(s) +
             " using 1:2 with linespoints title " +
             gnuplot_quote(paths.size() == 2 ? paths.front() + " = " + series_order[s] : metric);
  }
  if (!unfit.empty()) {  // open circles, larger than any series' marker, around those points
    body += datablock("$whole_model_unfit", positioned(unfit));
    plots += ", $whole_model_unfit using 1:2 with points pt 6 ps 3 lw 2 lc rgb 'red' title " +
             gnuplot_quote(kWholeModelUnfitLegend);
  }
  body += plots + "\n";
  return out;
}

SweepPlot plot_sweep(const std::filesystem::path& dir, const std::vector<std::string>& paths,
                     const std::string& head, const SweepRows& rows, const std::string& metric) {
  SweepPlot outcome;
  const std::filesystem::path target = dir / (metric + ".png");
  // No picture drawn: an earlier sweep's in this folder would read as this one's.
  const auto none = [&](std::string note) {
    remove_stale_plot(target, /*script_too=*/true);
    outcome.note = std::move(note);
    return outcome;
  };
  if (paths.empty() || paths.size() > 2) return none("plots are drawn for one- and two-parameter sweeps");
  const GnuplotStatus g = find_gnuplot();
  if (!g.available) return none("no plot: " + g.why_not + " (the CSV is complete)");
  const SweepPlotScript script = sweep_plot_script(paths, head, rows, metric);
  if (script.body.empty()) return none(script.note);
  const PlotOutcome o = render_plot(g, {.body = script.body, .target = target});
  if (o.ok) outcome.file = target;
  else outcome.note = "no plot: gnuplot failed: " + o.error;
  return outcome;
}

}  // namespace hybridsim::analysis
