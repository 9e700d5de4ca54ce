// The study's gnuplot pictures, one panel per network, data inline as datablocks so every script
// renders on its own: epochs vs global batch, DP speedups vs N, DP vs hybrid end to end with the
// crossover, and the headline gains under every variant next to the published projection.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "analysis/study/study_report.h"
#include "analysis/study/study_report_detail.h"

namespace hybridsim::analysis::study_detail {
namespace {

std::string num(double v) { return std::isfinite(v) ? format_fixed(v, 6) : std::string("?"); }

std::string header(const StudyResult& result, const std::string& title) {
  const std::size_t n = result.networks.size();
  return "set datafile missing '?'\nset grid\nset key opaque\nset multiplot layout 1," + std::to_string(n) +
         " title " + gnuplot_quote(title) + "\n";
}

int width_for(const StudyResult& result) {
  return static_cast<int>(std::max<std::size_t>(1, result.networks.size())) * 520;
}

PlotRequest epochs_plot(const StudyResult& result, const std::filesystem::path& dir) {
  std::ostringstream s;
  s << header(result, "Epochs to the quality target vs global batch (statistical efficiency)")
    << "set logscale x 2\nset format x '%.0s%c'\nset xlabel 'global batch (samples)'\nset ylabel 'epochs'\n"
       "set key top left\n";
  for (std::size_t i = 0; i < result.networks.size(); ++i) {
    const NetworkStudy& ns = result.networks[i];
    const StudyNetwork& net = result.network(ns);
    std::vector<const EfficiencyCurve*> curves{&net.curve};
    for (const auto& c : net.sensitivity_curves) curves.push_back(&c);
    const double lo = static_cast<double>(net.profile.meta.batch_per_gpu);
    const double hi = lo * result.config.gpus.back();
    s << "$curve" << i << " << EOD\n";
    for (double b = lo; b <= hi * 1.0001; b *= std::pow(2.0, 0.25)) {
      s << num(b);
      for (const auto* c : curves)
        s << " " << num(c->efficiency.epochs(static_cast<std::int64_t>(std::llround(b))).epochs);
      s << "\n";
    }
    s << "EOD\n$points" << i << " << EOD\n";
    for (const auto& r : ns.main().rows)
      s << r.ttt.global_batch << " " << num(r.ttt.epochs) << " " << (r.is_dp() ? 0 : 1) << "\n";
    s << "EOD\nset title " << gnuplot_quote(net.name + " (" + net.dataset.name + ")") << "\nplot ";
    for (std::size_t c = 0; c < curves.size(); ++c)
      s << "$curve" << i << " using 1:" << c + 2 << " with lines lw 2 title "
        << gnuplot_quote(curves[c]->variant + (curves[c]->is_estimate ? " (estimate)" : "")) << ", ";
    s << "$points" << i << " using 1:($3 == 0 ? $2 : 1/0) with points pt 7 ps 1.2 lc rgb 'black' "
      << "title 'DP batches (headline curve)', $points" << i
      << " using 1:($3 == 1 ? $2 : 1/0) with points pt 6 ps 1.8 lw 2 lc rgb 'red' title 'hybrid batches'\n";
  }
  s << "unset multiplot\n";
  return {s.str(), dir / "epochs.png", width_for(result), 520};
}

PlotRequest dp_speedup_plot(const StudyResult& result, const std::filesystem::path& dir) {
  std::ostringstream s;
  s << header(result, "Data parallelism alone: speedup over 1 GPU, per step (throughput) and end to end")
    << "set logscale xy 2\nset xlabel 'GPUs (N)'\nset ylabel 'speedup vs 1 GPU'\nset key top left\n";
  for (std::size_t i = 0; i < result.networks.size(); ++i) {
    const StudyVariant& v = result.networks[i].main();
    s << "$dp" << i << " << EOD\n1 1 1\n";
    for (const auto& r : v.rows)
      if (r.is_dp()) s << r.gpus << " " << num(r.step_speedup) << " " << num(r.e2e_speedup) << "\n";
    s << "EOD\nset title " << gnuplot_quote(result.network(result.networks[i]).name) << "\n"
      << "plot $dp" << i << " using 1:1 with lines dt 2 lc rgb 'gray' title 'ideal', "
      << "$dp" << i << " using 1:2 with linespoints lw 2 pt 7 title 'per step (throughput)', "
      << "$dp" << i << " using 1:3 with linespoints lw 2 pt 5 title 'end to end (time to train)'\n";
  }
  s << "unset multiplot\n";
  return {s.str(), dir / "dp_speedup.png", width_for(result), 520};
}

PlotRequest dp_vs_hybrid_plot(const StudyResult& result, const std::filesystem::path& dir) {
  std::ostringstream s;
  s << header(result, "End-to-end speedup over 1 GPU: DP alone vs hybrid (dp x mp)")
    << "set logscale x 2\nset logscale y 2\nset xlabel 'GPUs (N)'\nset ylabel 'time-to-train speedup vs 1 "
       "GPU'\n"
       "set key top left\n";
  for (std::size_t i = 0; i < result.networks.size(); ++i) {
    const NetworkStudy& ns = result.networks[i];
    const StudyVariant& v = ns.main();
    // Columns: N, DP, then one per mp (missing where mp does not divide N).
    s << "$e" << i << " << EOD\n";
    for (const int n : result.config.gpus) {
      s << n;
      auto find = [&](int mp) {
        for (const auto& r : v.rows)
          if (r.gpus == n && r.mp == mp) return num(r.e2e_speedup);
        return std::string("?");
      };
      s << " " << find(1);
      for (const int mp : ns.mp) s << " " << find(mp);
      s << "\n";
    }
    s << "EOD\nunset arrow\nunset label\nset title " << gnuplot_quote(result.network(ns).name) << "\n";
    if (v.headline.crossover) {
      // The label goes on the side of the line with room: left of it in the right half of the grid.
      const int c = *v.headline.crossover;
      const auto& grid = result.config.gpus;
      const bool at_right = std::find(grid.begin(), grid.end(), c) - grid.begin() >=
                            static_cast<std::ptrdiff_t>(grid.size() / 2);
      s << "set arrow from " << c << ", graph 0 to " << c
        << ", graph 1 nohead dt 3 lw 2 lc rgb 'dark-green'\n"
        << "set label " << gnuplot_quote("hybrid ahead from N = " + std::to_string(c)) << " at " << c
        << ", graph 0.06 " << (at_right ? "right offset -0.5,0" : "left offset 0.5,0")
        << " tc rgb 'dark-green'\n";
    }
    s << "plot $e" << i << " using 1:2 with linespoints lw 2 pt 7 title 'DP'";
    for (std::size_t m = 0; m < ns.mp.size(); ++m)
      s << ", $e" << i << " using 1:" << m + 3 << " with linespoints lw 2 pt " << 5 + 2 * m
        << " title " << gnuplot_quote("hybrid mp = " + std::to_string(ns.mp[m]));
    s << "\n";
  }
  s << "unset multiplot\n";
  return {s.str(), dir / "dp_vs_hybrid.png", width_for(result), 520};
}

PlotRequest headline_plot(const StudyResult& result, const std::filesystem::path& dir) {
  std::vector<std::string> labels;
  for (const auto& ns : result.networks)
    for (const auto& v : ns.variants)
      if (std::find(labels.begin(), labels.end(), v.label) == labels.end()) labels.push_back(v.label);
  std::ostringstream s;
  s << "set datafile missing '?'\nset grid ytics\nset title 'Hybrid gain over the best DP: best-DP time / "
       "best-hybrid time - 1'\nset ylabel 'gain (%)'\nset style data histograms\n"
       "set style histogram clustered gap 1\nset style fill solid 0.85 border -1\nset xzeroaxis lt -1\n"
       "set key outside right top\n$gain << EOD\nnetwork";
  for (const auto& l : labels) s << " \"" << l << "\"";
  s << " \"Pal et al. 2019\"\n";
  for (const auto& ns : result.networks) {
    s << "\"" << result.network(ns).name << "\"";
    for (const auto& l : labels) {
      const auto it = std::find_if(ns.variants.begin(), ns.variants.end(),
                                   [&](const StudyVariant& v) { return v.label == l; });
      s << " " << (it == ns.variants.end() ? std::string("?") : num(100 * it->headline.gain_best));
    }
    const auto pub = published_gain(result.network(ns).name);
    s << " " << (pub ? num(100 * *pub) : std::string("?")) << "\n";
  }
  s << "EOD\nplot for [c=2:" << labels.size() + 2 << "] $gain using c:xtic(1) title columnheader(c)\n";
  return {s.str(), dir / "headline.png", 1100, 560};
}

}  // namespace

std::vector<PlotRequest> plot_requests(const StudyResult& result, const std::filesystem::path& dir) {
  return {epochs_plot(result, dir), dp_speedup_plot(result, dir), dp_vs_hybrid_plot(result, dir),
          headline_plot(result, dir)};
}

}  // namespace hybridsim::analysis::study_detail
