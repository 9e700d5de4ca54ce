// A sweep's plot (analysis/sweep/sweep_plot.h) marks the points of a layer slice whose whole model
// does not fit (results.csv's whole_model_fits "no"): drawn unmarked among runs of every layer, a
// slice's step time read as the model's, where the model cannot run at all.
#include <doctest/doctest.h>
#include "tests/paths/paths.h"

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "analysis/output/csv.h"
#include "analysis/output/plot_gnuplot.h"
#include "analysis/sweep/sweep_plot.h"
#include "analysis/sweep/sweep_runner.h"
#include "analysis/sweep/sweep_table.h"
#include "tests/unit/test_files.h"

using namespace hybridsim;
namespace fs = std::filesystem;

namespace {

// A results.csv row of `head`'s columns: those named set, the others empty.
std::string row(const std::string& head, const std::vector<std::pair<std::string, std::string>>& set) {
  std::vector<std::string> fields(analysis::csv_split(head).size());
  const std::vector<std::string> columns = analysis::csv_split(head);
  for (const auto& [name, value] : set)
    for (std::size_t i = 0; i < columns.size(); ++i)
      if (columns[i] == name) fields[i] = value;
  std::string out;
  for (std::size_t i = 0; i < fields.size(); ++i) out += (i ? "," : "") + fields[i];
  return out;
}

// A sweep's options writing into `out`, one point at a time, without progress lines.
analysis::SweepOptions quiet_sweep_into(const fs::path& out) {
  analysis::SweepOptions o;
  o.out = out;
  o.jobs = 1;
  o.progress = false;
  return o;
}

// The datablock named `name` in a gnuplot script, its lines; empty where there is none.
std::string datablock(const std::string& script, const std::string& name) {
  const std::size_t at = script.find(name + " << EOD\n");
  if (at == std::string::npos) return {};
  const std::size_t from = at + name.size() + 8;
  return script.substr(from, script.find("EOD\n", from) - from);
}

}  // namespace

TEST_CASE("sweep plot: points whose whole model does not fit are ringed, with a legend entry") {
  // Three points over cluster.gpu_memory: a slice whose whole model does not fit (point 0), one whose
  // does (point 1), and a run of every layer (point 2, whole_model_fits empty). Before, the script drew
  // the three alike.
  const std::string head = analysis::sweep_header({"cluster.gpu_memory"});
  analysis::SweepRows rows;
  rows[0] = row(head, {{"index", "0"},
                       {"label", "a"},
                       {"cluster.gpu_memory", "80 GiB"},
                       {"step_time_ms", "12.5"},
                       {"whole_model_fits", "no"}});
  rows[1] = row(head, {{"index", "1"},
                       {"label", "b"},
                       {"cluster.gpu_memory", "512 GiB"},
                       {"step_time_ms", "11.25"},
                       {"whole_model_fits", "yes"}});
  rows[2] =
      row(head, {{"index", "2"}, {"label", "c"}, {"cluster.gpu_memory", "1024 GiB"}, {"step_time_ms", "10"}});
  const analysis::SweepPlotScript s =
      analysis::sweep_plot_script({"cluster.gpu_memory"}, head, rows, "step_time_ms");
  REQUIRE(s.note.empty());
  // Every point on its line, each at its size in bytes (80, 512 and 1024 GiB); point 0 alone ringed.
  CHECK(datablock(s.body, "$d0") == "85899345920 12.5\n549755813888 11.25\n1099511627776 10\n");
  CHECK(datablock(s.body, "$whole_model_unfit") == "85899345920 12.5\n");
  CHECK(s.body.find("$whole_model_unfit using 1:2 with points pt 6 ps 3 lw 2 lc rgb 'red' title '" +
                    std::string(analysis::kWholeModelUnfitLegend) + "'") != std::string::npos);
  // Where every whole model fits, nothing is ringed and the legend has no such entry.
  rows.erase(0);
  const analysis::SweepPlotScript fits =
      analysis::sweep_plot_script({"cluster.gpu_memory"}, head, rows, "step_time_ms");
  CHECK(fits.body.find("whole_model_unfit") == std::string::npos);
  CHECK(fits.body.find(analysis::kWholeModelUnfitLegend) == std::string::npos);
}

TEST_CASE("sweep plot: a two-parameter sweep rings the point on its own line's position") {
  const std::string head = analysis::sweep_header({"parallelism.zero", "cluster.gpu_memory"});
  analysis::SweepRows rows;
  rows[0] = row(head, {{"parallelism.zero", "0"},
                       {"cluster.gpu_memory", "80 GiB"},
                       {"step_time_ms", "3"},
                       {"whole_model_fits", "no"}});
  rows[1] = row(head, {{"parallelism.zero", "0"},
                       {"cluster.gpu_memory", "512 GiB"},
                       {"step_time_ms", "2"},
                       {"whole_model_fits", "yes"}});
  rows[2] = row(head, {{"parallelism.zero", "1"},
                       {"cluster.gpu_memory", "80 GiB"},
                       {"step_time_ms", "4"},
                       {"whole_model_fits", "yes"}});
  rows[3] = row(head, {{"parallelism.zero", "1"},
                       {"cluster.gpu_memory", "512 GiB"},
                       {"step_time_ms", "5"},
                       {"whole_model_fits", "no"}});
  const analysis::SweepPlotScript s =
      analysis::sweep_plot_script({"parallelism.zero", "cluster.gpu_memory"}, head, rows, "step_time_ms");
  // At 80 GiB (85,899,345,920 B) and 512 GiB (549,755,813,888 B).
  CHECK(datablock(s.body, "$d0") == "85899345920 3\n549755813888 2\n");
  CHECK(datablock(s.body, "$d1") == "85899345920 4\n549755813888 5\n");
  CHECK(datablock(s.body, "$whole_model_unfit") == "85899345920 3\n549755813888 5\n");
}

TEST_CASE("sweep plot: an axis of one quantity is drawn sorted by value, its values' text as ticks") {
  // hunt9's U2: NVLink [25GB/s, 400 Gb/s, 1e2 GB/s] x InfiniBand [100 Gb/s, 6.25GB/s, 25 GB/s]. Drawn
  // in the order written, as categories at 0, 1, 2, the InfiniBand axis went 12.5 -> 6.25 -> 25 GB/s:
  // a zig-zag (the middle point the slowest) read as a response that is not monotone.
  const std::vector<std::string> paths = {"cluster.links.nvlink.bandwidth",
                                          "cluster.links.infiniband.bandwidth"};
  const std::string head = analysis::sweep_header(paths);
  const char* nvlink[] = {"25GB/s", "400 Gb/s", "1e2 GB/s"};
  const char* infiniband[] = {"100 Gb/s", "6.25GB/s", "25 GB/s"};
  const char* step[] = {"312.5", "317.25", "309.75"};  // at 12.5, 6.25 and 25 GB/s
  analysis::SweepRows rows;
  for (std::size_t n = 0; n < 3; ++n)
    for (std::size_t i = 0; i < 3; ++i)
      rows[3 * n + i] = row(head, {{"index", std::to_string(3 * n + i)},
                                   {paths[0], nvlink[n]},
                                   {paths[1], infiniband[i]},
                                   {"step_time_ms", step[i]}});
  const analysis::SweepPlotScript s = analysis::sweep_plot_script(paths, head, rows, "step_time_ms");
  REQUIRE(s.note.empty());
  // Each InfiniBand value at its bytes per second, the line in that order; the ticks say what was written.
  CHECK(datablock(s.body, "$d0") == "6250000000 317.25\n12500000000 312.5\n25000000000 309.75\n");
  CHECK(s.body.find("set xtics ('6.25GB/s' 6250000000, '100 Gb/s' 12500000000, '25 GB/s' 25000000000)\n") !=
        std::string::npos);
  CHECK(s.body.find("set logscale x") == std::string::npos);  // 6.25 to 25 GB/s: a factor of 4
  // The lines (NVLink, 25 to 100 GB/s) in the legend by value too: 25GB/s, 1e2 GB/s, 400 Gb/s (50 GB/s).
  CHECK(s.body.find("title 'cluster.links.nvlink.bandwidth = 25GB/s', $d1 using 1:2 with linespoints title "
                    "'cluster.links.nvlink.bandwidth = 400 Gb/s', $d2 using 1:2 with linespoints title "
                    "'cluster.links.nvlink.bandwidth = 1e2 GB/s'") != std::string::npos);
  // Times, sizes and plain numbers alike; a factor of 10 or more draws on a log scale.
  const std::string one = analysis::sweep_header({"communication.bucket_size"});
  analysis::SweepRows sizes;
  const char* bucket[] = {"100 MB", "1 MB", "25MB"};
  for (std::size_t i = 0; i < 3; ++i)
    sizes[i] = row(one, {{"communication.bucket_size", bucket[i]}, {"step_time_ms", std::to_string(i + 1)}});
  const analysis::SweepPlotScript b =
      analysis::sweep_plot_script({"communication.bucket_size"}, one, sizes, "step_time_ms");
  CHECK(datablock(b.body, "$d0") == "1000000 2\n25000000 3\n100000000 1\n");
  CHECK(b.body.find("set logscale x\nset xtics ('1 MB' 1000000, '25MB' 25000000, '100 MB' 100000000)\n") !=
        std::string::npos);
  // Words, or values that are not all one quantity, stay in the order written, at 0, 1, 2.
  for (const auto& written :
       {std::vector<std::string>{"tree", "ring", "auto"}, std::vector<std::string>{"25 GB/s", "8", "1 ms"}}) {
    analysis::SweepRows words;
    for (std::size_t i = 0; i < 3; ++i)
      words[i] =
          row(one, {{"communication.bucket_size", written[i]}, {"step_time_ms", std::to_string(i + 1)}});
    const analysis::SweepPlotScript w =
        analysis::sweep_plot_script({"communication.bucket_size"}, one, words, "step_time_ms");
    CHECK(datablock(w.body, "$d0") == "0 1\n1 2\n2 3\n");
    CHECK(w.body.find("set xtics ('" + written[0] + "' 0, '" + written[1] + "' 1, '" + written[2] + "' 2)") !=
          std::string::npos);
  }
}

TEST_CASE("sweep plot: the script written beside a slice sweep's picture rings its unfit point") {
  // GPT-3 175B's 2-layer slice on 2 DGX A100 (tp 8 x dp 2): the whole model needs 331 GiB a GPU
  // (355,881,451,520 B), so at 80 GiB it does not fit and at 512 GiB it does.
  const analysis::GnuplotStatus gnuplot = analysis::find_gnuplot();
  if (!gnuplot.available) {
    MESSAGE("skipped: " << gnuplot.why_not);
    return;
  }
  const fs::path dir = testing::fresh_temp_dir("sweep-plot-slice");
  fs::create_directories(dir / "in");
  const fs::path scenario = dir / "in" / "slice.yaml";
  std::ofstream(scenario)
      << testing::read_whole_file(HYBRIDSIM_SOURCE_DIR + "/scenarios/llm/gpt3-175b-slice-dgx-a100.yaml")
      << "sweep:\n  parameters:\n    - {path: cluster.gpu_memory, values: [80 GiB, 512 GiB]}\n";
  const analysis::SweepOptions o = quiet_sweep_into(dir / "out");
  const analysis::SweepOutcome r = analysis::run_sweep(scenario.string(), o);
  REQUIRE(r.plot.has_value());
  const std::string script = testing::read_whole_file(r.directory / "step_time_ms.png.gp");
  const std::string all = datablock(script, "$d0");
  const std::string ringed = datablock(script, "$whole_model_unfit");
  REQUIRE(all.find('\n') != std::string::npos);
  CHECK(ringed == all.substr(0, all.find('\n') + 1));  // point 0's line alone
  CHECK(script.find(analysis::kWholeModelUnfitLegend) != std::string::npos);
}

TEST_CASE("sweep plot: a sweep that draws no picture removes the one an earlier sweep left there") {
  // Sweeps share a folder (--out, outputs.directory): a 3-parameter sweep, which draws no plot, left
  // the earlier 2-parameter sweep's step_time_ms.png beside its own results.csv, read as its picture.
  const fs::path dir = testing::fresh_temp_dir("sweep-plot-stale");
  fs::create_directories(dir / "out");
  std::ofstream(dir / "out" / "step_time_ms.png") << "an earlier sweep's picture";
  std::ofstream(dir / "out" / "step_time_ms.png.gp") << "an earlier sweep's script";
  const fs::path scenario = dir / "three.yaml";
  std::ofstream(scenario) << "cluster: {preset: dgx1-v100}\nworkload: {network: gnmt}\nparallelism: {dp: 8}\n"
                             "sweep:\n  parameters:\n"
                             "    - {path: cluster.links.nvlink.bandwidth, values: [25 GB/s]}\n"
                             "    - {path: communication.bucket_size, values: [25 MB]}\n"
                             "    - {path: communication.algorithm, values: [ring, tree]}\n";
  const analysis::SweepOptions o = quiet_sweep_into(dir / "out");
  const analysis::SweepOutcome r = analysis::run_sweep(scenario.string(), o);
  CHECK_FALSE(r.plot.has_value());
  CHECK(r.plot_note == "plots are drawn for one- and two-parameter sweeps");
  CHECK(fs::exists(r.directory / "results.csv"));
  CHECK_FALSE(fs::exists(r.directory / "step_time_ms.png"));
  CHECK_FALSE(fs::exists(r.directory / "step_time_ms.png.gp"));
  // A folder of that name is not a picture: it stays.
  fs::remove(dir / "out" / "step_time_ms.png");
  fs::create_directories(dir / "out" / "step_time_ms.png");
  analysis::run_sweep(scenario.string(), o);
  CHECK(fs::is_directory(dir / "out" / "step_time_ms.png"));
}
