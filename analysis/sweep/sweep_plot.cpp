#include "analysis/sweep/sweep_plot.h"

#include <algorithm>
#include <map>

#include "analysis/output/csv.h"
#include "analysis/output/plot_gnuplot.h"

namespace hybridsim::analysis {

// One- or two-parameter sweeps: the metric against the last parameter, one line per value of the
// first. Values are drawn in sweep order (categories), since they may carry units.
SweepPlot plot_sweep(const std::filesystem::path& dir, const std::vector<std::string>& paths,
                     const std::string& head, const SweepRows& rows, const std::string& metric) {
  SweepPlot outcome;
  if (paths.empty() || paths.size() > 2) {
    outcome.note = "plots are drawn for one- and two-parameter sweeps";
    return outcome;
  }
  const GnuplotStatus g = find_gnuplot();
  if (!g.available) {
    outcome.note = "no plot: " + g.why_not + " (the CSV is complete)";
    return outcome;
  }
  const auto columns = csv_split(head);
  const auto mcol =
      static_cast<std::size_t>(std::find(columns.begin(), columns.end(), metric) - columns.begin());
  if (mcol >= columns.size()) {
    outcome.note = "no plot: unknown metric column \"" + metric + "\"";
    return outcome;
  }
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> series;  // first value → (x, y)
  std::vector<std::string> series_order, x_order;
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
  }
  if (series_order.empty()) {
    outcome.note = "no plot: no point has a " + metric + " (none was simulated)";
    return outcome;
  }
  std::string body = "set title " + gnuplot_quote(metric + " against " + paths.back()) +
                     " noenhanced\nset xlabel " + gnuplot_quote(paths.back()) + " noenhanced\nset ylabel " +
                     gnuplot_quote(metric) + " noenhanced\nset grid\nset key outside noenhanced\nset xtics (";
  for (std::size_t i = 0; i < x_order.size(); ++i)
    body += (i ? ", " : "") + gnuplot_quote(x_order[i]) + " " + std::to_string(i);
  body += ")\n";
  std::string plots;
  for (std::size_t s = 0; s < series_order.size(); ++s) {
    body += "$d" + std::to_string(s) + " << EOD\n";
    for (const auto& [x, y] : series[series_order[s]])
      body += std::to_string(std::find(x_order.begin(), x_order.end(), x) - x_order.begin()) + " " + y + "\n";
    body += "EOD\n";
    plots += (s ? ", " : "plot ") + std::string("$d") + std::to_string(s) +
             " using 1:2 with linespoints title " +
             gnuplot_quote(paths.size() == 2 ? paths.front() + " = " + series_order[s] : metric);
  }
  body += plots + "\n";
  const std::filesystem::path target = dir / (metric + ".png");
  const PlotOutcome o = render_plot(g, {.body = body, .target = target});
  if (o.ok) outcome.file = target;
  else outcome.note = "no plot: gnuplot failed: " + o.error;
  return outcome;
}


}  // namespace hybridsim::analysis
