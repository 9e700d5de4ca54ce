// The hybrid-vs-DP study on the reduced CI grid (scenarios/study/ci.yaml: Inception-V3, GNMT and
// BigLSTM on 8, 16 and 32 GPUs, mp 2 and 4, 2x InfiniBand sensitivity), its conclusions, the report
// folder it writes and the gnuplot driver. About a second in a Release build.
#include <doctest/doctest.h>
#include "tests/paths/paths.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "analysis/output/plot_gnuplot.h"
#include "analysis/study/study.h"
#include "analysis/study/study_report.h"
#include "tests/unit/test_files.h"

using namespace hybridsim;
using analysis::StudyRow;

using hybridsim::testing::read_whole_file;

namespace {

const StudyRow& row(const analysis::StudyVariant& v, int gpus, int mp) {
  for (const auto& r : v.rows)
    if (r.gpus == gpus && r.mp == mp) return r;
  FAIL("no row N = " << gpus << " mp = " << mp);
  return v.rows.front();
}

const analysis::StudyVariant& variant(const analysis::NetworkStudy& ns, const std::string& label) {
  for (const auto& v : ns.variants)
    if (v.label == label) return v;
  FAIL("no variant " << label);
  return ns.variants.front();
}

}  // namespace

TEST_CASE("study on the CI grid: conclusions, step reuse and the report folder") {
  const auto config = analysis::load_study_config(std::filesystem::path(HYBRIDSIM_SOURCE_DIR) / "scenarios" /
                                                  "study" / "ci.yaml");
  // On 32 GiB GPUs (the V100 32 GB part) every configuration of the grid fits, so these are the
  // conclusions of time alone; on the preset's 16 GiB V100s BigLSTM's DP does not fit
  // (tests/unit/analysis_memory_fit.cpp).
  const analysis::StudyResult r = analysis::run_study(
      config, {.threads = 2, .memory = workloads::MemoryCapacity{sim::Bytes::gib(32), "32 GiB"}});
  REQUIRE(r.networks.size() == 3);
  // Keys per network: 1 GPU, MP alone at 2 and 4, and DP, 2 and 4 at N = 8, 16, 32 (12); the 2x-IB
  // run re-simulates only the multi-machine ones (N = 16, 32: 6 more): 3 × 18 = 54.
  CHECK(r.steps_simulated == 54);

  for (const auto& ns : r.networks) {
    const auto& name = r.network(ns).name;
    CAPTURE(name);
    const auto& v = ns.main();
    CHECK(ns.mp == std::vector<int>{2, 4});
    CHECK(ns.variants.size() == 4);  // default, optimistic, pessimistic, IB x2
    // DP alone: end-to-end over per-step speedup is exactly the epochs the 1-GPU baseline needs
    // over the epochs at B = N x batch (time to train is a product; the dataset divides into whole
    // steps up to rounding). Where epochs grow with the batch (Inception-V3, BigLSTM: their curves
    // rise everywhere) the end-to-end speedup never beats the per-step one and its efficiency
    // falls with N. GNMT's curve does not rise everywhere: it passes through the measured 5 epochs
    // at B = 1,024 (NVIDIA's untuned fixed schedule) and the fit's 3.86 at 2,048 (MLPerf's tuned
    // recipes reach the target in 4 epochs at 2K-3K; statistical_efficiency.md), and holds 5 below
    // 1,024 where nothing is measured. So DP from 8 to 16 GPUs needs fewer epochs and its
    // end-to-end speedup exceeds the per-step one there: the measured points say so, and the
    // seed's claim is about larger batches (above 2K epochs grow, hybrid's halved batch pays).
    double last_efficiency = 2;
    for (const int n : {8, 16, 32}) {
      const StudyRow& dp = row(v, n, 1);
      CHECK(dp.e2e_speedup / dp.step_speedup ==
            doctest::Approx(v.baseline.ttt.epochs / dp.ttt.epochs).epsilon(0.002));
      if (name != "gnmt") {
        CHECK(dp.e2e_speedup <= dp.step_speedup);
        CHECK(dp.e2e_speedup / n < last_efficiency);
      }
      last_efficiency = dp.e2e_speedup / n;
      CHECK(dp.ttt.global_batch == n * r.network(ns).profile.meta.batch_per_gpu);
      CHECK(row(v, n, 2).ttt.global_batch == dp.ttt.global_batch / 2);  // hybrid halves the batch
    }
    // Sensitivity variants reuse the same simulated steps: only the projection differs.
    CHECK(variant(ns, "optimistic").rows[4].step.step_time == v.rows[4].step.step_time);
    CHECK(variant(ns, "IB x2").rows.size() == v.rows.size());
    // MP alone on 2 GPUs is faster per step than 1 GPU for all three (parallel towers, wavefront
    // pipelining of the LSTM layers).
    CHECK(v.mp_alone[0].step_speedup > 1.15);
  }
  // GNMT: 5 epochs at the baseline's B = 128 (held from the 1,024 point) and at N = 8 (B = 1,024),
  // 3.86 at N = 16 (B = 2,048): end to end is per step x 5 / 3.86 there.
  const auto& g = r.networks[1].main();
  CHECK(g.baseline.ttt.epochs == doctest::Approx(5));
  CHECK(row(g, 8, 1).ttt.epochs == doctest::Approx(5));
  CHECK(row(g, 16, 1).ttt.epochs == doctest::Approx(3.15 * (1 + 2048.0 / 9057)));
  CHECK(row(g, 16, 1).e2e_speedup > row(g, 16, 1).step_speedup);
  const auto& inception = r.networks[0].main();
  const auto& gnmt = r.networks[1].main();
  const auto& biglstm = r.networks[2].main();

  // Inception-V3 hides its 95 MB all-reduce behind backward: DP scales almost linearly per step
  // (> 31.5x at 32), while its branches give MP only about 1.2x at the same batch; epochs barely
  // grow below B = 2K, so halving the batch buys nothing: hybrid loses clearly (about -39%).
  CHECK(row(inception, 32, 1).step_speedup > 31.5);
  CHECK(inception.mp_alone[0].step_speedup < 1.3);
  CHECK(inception.headline.gain_best < -0.3);
  CHECK_FALSE(inception.headline.crossover);

  // GNMT at 32 GPUs: DP still runs at 97% of linear per step (exposed all-reduce under 10 ms of a
  // 295 ms step), and B = 4,096 is only 0.45 B_noise, so DP needs just 1.18x the epochs of hybrid
  // at 2,048 — not enough to pay for hybrid's 1.5x slower epochs (MP x1.38 per step on 2 GPUs).
  // Hybrid loses (about -21%) on this small grid; it needs far larger N (see the full study).
  CHECK(row(gnmt, 32, 1).step_speedup > 30);
  CHECK(gnmt.headline.gain_best < 0);
  CHECK(gnmt.headline.gain_best > -0.3);

  // BigLSTM: 7.1 GB of parameters, mostly the embedding and softmax whose sparse gradients are
  // all-gathered (a volume that grows with dp): DP's exposed communication already costs 37 ms of a
  // 326 ms step at N = 32, while MP on 2 GPUs runs the two LSTM layers as a wavefront at 1.8x. At N = 32
  // hybrid 16 x 2 beats DP (about +5%), and overtakes there.
  CHECK(biglstm.mp_alone[0].step_speedup > 1.7);
  CHECK(row(biglstm, 32, 1).step.critical.exposed_communication >
        row(biglstm, 8, 1).step.critical.exposed_communication);
  CHECK(biglstm.headline.gain_at_max > 0);
  CHECK(biglstm.row(biglstm.headline.best_hybrid).mp == 2);
  CHECK(biglstm.headline.crossover == 32);
  // Break-even: DP's best is at 32 GPUs, the grid's edge, for all three (its end-to-end speedup
  // still grows there), so hybrid's gain there is the headline's. Time to train is a product, so
  // every hybrid step × (best DP / best hybrid) = × (1 + gain) ties; and where no hybrid has the
  // best DP's batch and DP on 16 GPUs is slower than the best hybrid (Inception-V3 and GNMT here),
  // the epochs at that batch flip the answer at the inverse factor.
  for (const auto& ns : r.networks) {
    const auto& v = ns.main();
    CAPTURE(r.network(ns).name);
    CHECK(v.break_even.dp_peak == analysis::DpPeak::GridEdge);
    CHECK(v.break_even.gain_at_peak == doctest::Approx(v.headline.gain_best));
    CHECK(v.break_even.step_factor == doctest::Approx(1 + v.headline.gain_best));
    CHECK(v.break_even.epochs_batch == 32 * r.network(ns).profile.meta.batch_per_gpu);
  }
  REQUIRE(inception.break_even.epochs_factor.has_value());
  CHECK(*inception.break_even.epochs_factor == doctest::Approx(1 / inception.break_even.step_factor));
  REQUIRE(gnmt.break_even.epochs_factor.has_value());
  CHECK(*gnmt.break_even.epochs_factor == doctest::Approx(1 / gnmt.break_even.step_factor));
  // The pessimistic curve (epochs grow faster with the batch) favours hybrid's smaller batch, the
  // optimistic one DP's.
  const auto& ns = r.networks[2];
  CHECK(variant(ns, "pessimistic").headline.gain_best > biglstm.headline.gain_best);
  CHECK(variant(ns, "optimistic").headline.gain_best < biglstm.headline.gain_best);

  // The report: tables and CSVs always; pictures only where gnuplot works. A gnuplot that does not
  // exist is reported in the summary, and everything else is still written.
  const auto dir =
      std::filesystem::temp_directory_path() / ("hybridsim-study-grid-test-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  // An earlier study's picture in the folder: this one draws none, so it must not stay beside its CSVs.
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "dp_vs_hybrid.png") << "an earlier study's picture";
  const auto files = analysis::write_study_report(
      r, dir, {.plots = true, .gnuplot = "hybridsim-no-such-gnuplot", .command = ""});
  CHECK_FALSE(files.plots_drawn);
  REQUIRE(files.plot_problems.size() == 1);
  CHECK(files.plot_problems[0].find("gnuplot is not available") == 0);
  const std::string md = read_whole_file(dir / "README.md");
  CHECK(md.find("## Headline") != std::string::npos);
  CHECK(md.find("gnuplot is not available") != std::string::npos);
  CHECK(md.find("| biglstm |") != std::string::npos);
  CHECK(md.find("## Assumptions") != std::string::npos);
  CHECK(read_whole_file(dir / "headline.csv").find("network,variant,ib_factor,best_dp_gpus") == 0);
  CHECK(
      read_whole_file(dir / "time_to_train.csv").find("\ngnmt,default,gnmt/default,1.000,dp,32,32,1,4096,") !=
      std::string::npos);
  CHECK(std::filesystem::exists(dir / "steps.csv"));
  CHECK(std::filesystem::exists(dir / "epochs.csv"));
  CHECK(std::filesystem::exists(dir / "dp_vs_hybrid.png.gp"));  // scripts are kept for re-rendering
  CHECK_FALSE(std::filesystem::exists(dir / "dp_vs_hybrid.png"));
  // README's Files list the scripts written, not pictures that are not there.
  CHECK(md.find("- `*.png.gp`: the pictures' gnuplot scripts (data inline), none drawn") !=
        std::string::npos);
  CHECK(md.find("`*.png` with") == std::string::npos);
  // The same result gives the same bytes.
  const std::string first = read_whole_file(dir / "time_to_train.csv");
  std::ofstream(dir / "dp_vs_hybrid.png") << "an earlier study's picture";
  analysis::write_study_report(r, dir, {.plots = false, .gnuplot = "gnuplot", .command = ""});
  CHECK(read_whole_file(dir / "time_to_train.csv") == first);
  // Without pictures asked for, neither an earlier picture nor its script stays (--no-plots).
  CHECK_FALSE(std::filesystem::exists(dir / "dp_vs_hybrid.png"));
  CHECK_FALSE(std::filesystem::exists(dir / "dp_vs_hybrid.png.gp"));
  // And its Files name neither (they listed "*.png with their gnuplot scripts").
  const std::string none = read_whole_file(dir / "README.md");
  CHECK(none.find("No pictures were drawn.") != std::string::npos);
  CHECK(none.find(".png") == std::string::npos);

  std::ostringstream table;
  analysis::print_headline_table(r, table);
  CHECK(table.str().find("biglstm") != std::string::npos);
  CHECK(table.str().find("N=32") != std::string::npos);  // BigLSTM's crossover
  CHECK(table.str().find(
            "inception-v3: DP's end-to-end speedup is still improving at 32 GPUs, the grid's edge") !=
        std::string::npos);
  CHECK(md.find("## Where DP stops paying, and how far the answer is from flipping") != std::string::npos);
  CHECK(read_whole_file(dir / "headline.csv").find(",break_even_step_factor,break_even_epochs_batch,") !=
        std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("gnuplot driver: renders into a temporary file and renames it, or says why not") {
  const auto missing = analysis::find_gnuplot("hybridsim-no-such-gnuplot");
  CHECK_FALSE(missing.available);
  CHECK_FALSE(missing.why_not.empty());
  CHECK(analysis::gnuplot_quote("it's") == "'it''s'");

  const auto gnuplot = analysis::find_gnuplot();
  if (!gnuplot.available) return;  // nothing more to check on a machine without gnuplot
  const auto dir =
      std::filesystem::temp_directory_path() / ("hybridsim-gnuplot-test-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const auto ok =
      analysis::render_plot(gnuplot, {.body = "$d << EOD\n1 1\n2 4\nEOD\nplot $d using 1:2 with lines",
                                      .target = dir / "square.png",
                                      .width = 300,
                                      .height = 200});
  CHECK(ok.ok);
  CHECK(read_whole_file(dir / "square.png").substr(1, 3) == "PNG");
  CHECK(read_whole_file(dir / "square.png.gp").find("set output 'square.png'") != std::string::npos);
  // A broken script: no picture, gnuplot's complaint in the outcome, no temporary files left.
  const auto bad =
      analysis::render_plot(gnuplot, {.body = "plot x with nosuchstyle", .target = dir / "bad.png"});
  CHECK_FALSE(bad.ok);
  CHECK(bad.error.find("nosuchstyle") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "bad.png"));
  int entries = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++entries;
  CHECK(entries == 3);  // square.png, square.png.gp, bad.png.gp
  std::filesystem::remove_all(dir);
}
