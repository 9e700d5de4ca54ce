#include "analysis/sweep/sweep_plot.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <utility>

#include "analysis/output/csv.h"
#include "analysis/output/plot_gnuplot.h"
#include "sim/error.h"
#include "sim/time.h"
#include "sim/units.h"

namespace hybridsim::analysis {

namespace {

// A number's text for gnuplot that reads back as the same double: whole ones in full (bytes per
// second, bytes, picoseconds: 6250000000, where the shortest text is 6.25e+09).
std::string number_text(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e18) return std::to_string(static_cast<long long>(v));
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

// A gnuplot datablock of (x position, y) lines, in x order: a line joins its points as listed.
std::string datablock(const std::string& name, std::vector<std::pair<double, std::string>> xy) {
  std::stable_sort(xy.begin(), xy.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string out = name + " << EOD\n";
  for (const auto& [x, y] : xy) out += number_text(x) + " " + y + "\n";
  return out + "EOD\n";
}

// The value of each text as one quantity (a bandwidth in B/s, a size in B, a time in ps, a plain
// number), where every text reads as the same one; nullopt otherwise (words, lists, mappings, a mix).
std::optional<std::vector<double>> quantities(const std::vector<std::string>& texts) {
  const std::function<double(const std::string&)> kinds[] = {
      [](const std::string& t) { return static_cast<double>(sim::parse_bandwidth(t).bytes_per_second()); },
      [](const std::string& t) { return static_cast<double>(sim::parse_bytes(t).count()); },
      [](const std::string& t) { return static_cast<double>(sim::parse_time(t).ps()); },
      [](const std::string& t) {
        double v = 0;
        const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
        if (t.empty() || ec != std::errc() || end != t.data() + t.size() || !std::isfinite(v))
          throw InputError("not a number");
        return v;
      }};
  for (const auto& value_of : kinds) {
    std::vector<double> out;
    try {
      for (const std::string& t : texts) out.push_back(value_of(t));
    } catch (const std::exception&) {
      continue;  // InputError, or overflow_error past the unit's range: not this kind
    }
    return out;
  }
  return std::nullopt;
}

// A swept parameter's values as drawn: where all are one quantity, in its order and each at its
// value (on a log scale where all are above zero and span a factor of 10 or more); otherwise in the
// order written, at 0, 1, 2, ... (categories). Drawn in the order written, an InfiniBand axis
// [100 Gb/s, 6.25GB/s, 25 GB/s] went 12.5 -> 6.25 -> 25 GB/s, a zig-zag read as the response.
struct Axis {
  std::vector<std::string> texts;  // in the order drawn
  std::map<std::string, double> at;
  bool log = false;
};
Axis axis_of(const std::vector<std::string>& written) {
  Axis axis;
  axis.texts = written;
  const auto values = quantities(written);
  for (std::size_t i = 0; i < written.size(); ++i)
    axis.at[written[i]] = values ? (*values)[i] : static_cast<double>(i);
  if (!values) return axis;
  std::stable_sort(axis.texts.begin(), axis.texts.end(),
                   [&](const std::string& a, const std::string& b) { return axis.at[a] < axis.at[b]; });
  const auto [low, high] = std::minmax_element(values->begin(), values->end());
  axis.log = *low > 0 && *high >= 10 * *low;
  return axis;
}

// The points of a series, each at its x value's position.
std::vector<std::pair<double, std::string>> positioned(
    const Axis& x, const std::vector<std::pair<std::string, std::string>>& xy) {
  std::vector<std::pair<double, std::string>> p;
  for (const auto& [text, y] : xy) p.emplace_back(x.at.at(text), y);
  return p;
}

}  // namespace

// A swept value's text is its tick label, whatever its position (its value, or its place as written).
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
  std::vector<std::string> series_written, x_written;
  std::vector<std::pair<std::string, std::string>> unfit;  // (x, y)
  for (const auto& [index, line] : rows) {
    const auto f = csv_split(line);
    // A point not simulated (results.csv's not_simulated) has no figure to draw: gnuplot read its
    // empty field as the next number.
    if (mcol >= f.size() || f[mcol].empty()) continue;
    const std::string key = paths.size() == 2 ? f[2] : metric;
    const std::string x = f[paths.size() == 2 ? 3 : 2];
    if (!series.count(key)) series_written.push_back(key);
    if (std::find(x_written.begin(), x_written.end(), x) == x_written.end()) x_written.push_back(x);
    series[key].push_back({x, f[mcol]});
    if (whole_col < f.size() && f[whole_col] == "no") unfit.push_back({x, f[mcol]});
  }
  if (series_written.empty()) {
    out.note = "no plot: no point has a " + metric + " (none was simulated)";
    return out;
  }
  const Axis x_axis = axis_of(x_written);
  // The lines of a two-parameter sweep, in the first parameter's order by the same rule (the legend's).
  const std::vector<std::string> series_order =
      paths.size() == 2 ? axis_of(series_written).texts : series_written;
  std::string& body = out.body;
  body = "set title " + gnuplot_quote(metric + " against " + paths.back()) + " noenhanced\nset xlabel " +
         gnuplot_quote(paths.back()) + " noenhanced\nset ylabel " + gnuplot_quote(metric) +
         " noenhanced\nset grid\nset key outside noenhanced\n" + (x_axis.log ? "set logscale x\n" : "") +
         "set xtics (";
  for (std::size_t i = 0; i < x_axis.texts.size(); ++i)
    body +=
        (i ? ", " : "") + gnuplot_quote(x_axis.texts[i]) + " " + number_text(x_axis.at.at(x_axis.texts[i]));
  body += ")\n";
  std::string plots;
  for (std::size_t s = 0; s < series_order.size(); ++s) {
    body += datablock("$d" + std::to_string(s), positioned(x_axis, series[series_order[s]]));
    plots += (s ? ", " : "plot ") + std::string("$d") + std::to_string(s) +
             " using 1:2 with linespoints title " +
             gnuplot_quote(paths.size() == 2 ? paths.front() + " = " + series_order[s] : metric);
  }
  if (!unfit.empty()) {  // open circles, larger than any series' marker, around those points
    body += datablock("$whole_model_unfit", positioned(x_axis, unfit));
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
