// Decisions that respect each GPU's memory: the planner leaves out (or, asked to, ranks last) the
// configurations whose peak memory exceeds the GPU's, and the study leaves them out of "best" and
// says so; a what-if capacity changes the answer. The footprints themselves are derived by hand in
// tests/unit/workloads_memory_model.cpp; here BigLSTM's, on the DGX-1's 16 GiB V100s.
#include <doctest/doctest.h>
#include "tests/paths/paths.h"

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "analysis/plan/planner.h"
#include "analysis/study/study.h"
#include "analysis/study/study_report.h"
#include "sim/error.h"

using namespace hybridsim;
using sim::Bytes;

namespace {

// BigLSTM on 8 GPUs, mp 1 or 2, one bucket size and algorithm: two candidates.
analysis::PlanRequest biglstm_request() {
  analysis::PlanRequest r = analysis::make_plan_request({.model = "biglstm", .gpus = 8, .threads = 2});
  r.search.mp = {1, 2};
  r.search.bucket_sizes = {Bytes::of(25'000'000)};
  r.search.algorithms = {workloads::AllReduceAlgorithm::Ring};
  return r;
}

sim::Bytes largest_peak(const analysis::StepPoint& p) {
  return workloads::largest_peak(p.memory_peaks);
}

}  // namespace

TEST_CASE("plan: a configuration that does not fit in the GPU's memory is never recommended") {
  // BigLSTM holds 1.78 B parameters: 6.62 GiB of FP32 weights and as much again of Adagrad's sums,
  // with its dense LSTM gradients (0.61 GiB), the gathered sparse rows and bucket copies, NCCL's
  // buffers and the 1 GiB framework allowance a DP worker of 8 needs 16.3 GiB (ring: one
  // connection a channel) > the dgx1-v100's 16 GiB; 4 x 2 halves the parameters per GPU.
  analysis::PlanRequest request = biglstm_request();
  REQUIRE(request.memory.has_value());
  CHECK(request.memory->bytes == Bytes::gib(16));
  analysis::StepCache cache;
  const analysis::PlanResult fit16 = analysis::plan(request, &cache);
  REQUIRE(fit16.ranked.size() == 1);
  CHECK(fit16.ranked[0].step.label.mp == 2);
  CHECK(fit16.ranked[0].does_not_fit.empty());
  CHECK(largest_peak(fit16.ranked[0].step) <= Bytes::gib(16));
  REQUIRE(fit16.unfit.size() == 1);
  CHECK(fit16.unfit[0].label.mp == 1);
  CHECK(fit16.unfit[0].why.find("does not fit: GPU 0 needs 16.3 GiB of 16 GiB: weights 6.62, gradients 0.61, "
                                "optimizer 6.62") == 0);
  CHECK(fit16.ranked[0].why.find("; DP alone does not fit in 16 GiB (1 left out)") != std::string::npos);
  std::ostringstream printed;
  analysis::print_plan(fit16, printed);
  CHECK(printed.str().find("GPU memory 16 GiB (V100-SXM2-16GB of dgx1-v100)") != std::string::npos);
  CHECK(printed.str().find("1 do not fit in memory (left out; --show-unfit ranks them)") !=
        std::string::npos);
  CHECK(printed.str().find("left out: 8 x 1, 25.0 MB buckets, ring: does not fit: GPU 0 needs 16.3 GiB") !=
        std::string::npos);

  // Shown on request: ranked after every configuration that fits, whatever its time to train.
  request.show_unfit = true;
  const analysis::PlanResult shown = analysis::plan(request, &cache);
  REQUIRE(shown.ranked.size() == 2);
  CHECK(shown.ranked[0].step.label.mp == 2);
  CHECK(shown.ranked[1].step.label.mp == 1);
  CHECK(shown.ranked[1].does_not_fit.find("does not fit: GPU 0 needs 16.3 GiB") == 0);
  CHECK(shown.ranked[1].ttt->seconds < shown.ranked[0].ttt->seconds);  // DP alone would train faster
  // The winner's note says where DP alone went: ranked below it, not left out as without the option.
  CHECK(shown.ranked[0].why.find("; DP alone does not fit in 16 GiB (1 ranked last, marked !)") !=
        std::string::npos);
  CHECK(shown.simulated == 0);  // the cache already has both steps

  // 32 GiB (the V100 32 GB part): both fit and DP's time to train wins.
  request.show_unfit = false;
  request.memory = workloads::MemoryCapacity{Bytes::gib(32), "--memory 32 GiB"};
  const analysis::PlanResult fit32 = analysis::plan(request, &cache);
  REQUIRE(fit32.ranked.size() == 2);
  CHECK(fit32.unfit.empty());
  CHECK(fit32.ranked[0].step.label.mp == 1);

  // Through the command's options: --memory parses a size; no capacity at all leaves nothing out.
  const analysis::PlanRequest parsed =
      analysis::make_plan_request({.model = "biglstm", .gpus = 8, .memory = std::string("32 GiB")});
  CHECK(parsed.memory->bytes == Bytes::gib(32));
  CHECK(parsed.memory->source == "--memory 32 GiB");
  CHECK_THROWS_AS(analysis::make_plan_request({.model = "biglstm", .gpus = 8, .memory = std::string("0 B")}),
                  InputError);
  request.memory.reset();
  CHECK(analysis::plan(request, &cache).ranked.size() == 2);
}

TEST_CASE("study: rows that do not fit are marked and left out of best, and the table says so") {
  const auto config = analysis::load_study_config(std::filesystem::path(HYBRIDSIM_SOURCE_DIR) / "scenarios" /
                                                  "study" / "ci.yaml");
  analysis::StepCache cache;
  const analysis::StudyResult r = analysis::run_study(config, {.threads = 2, .ib_sensitivity = false}, cache);
  REQUIRE(r.memory.has_value());
  CHECK(r.memory->bytes == Bytes::gib(16));
  REQUIRE(r.networks.size() == 3);
  // Inception-V3 and GNMT fit everywhere on the grid (their peaks stay under 11 GiB).
  for (std::size_t n = 0; n < 2; ++n)
    for (const auto& row : r.networks[n].main().rows) CHECK(row.does_not_fit.empty());
  // BigLSTM: DP at N = 8, 16 and 32 needs 16.3, 17.2 and 18.8 GiB (the gathered sparse rows and
  // their copies grow with dp); every hybrid fits. The best DP is none, the best hybrid 16 x 2.
  const auto& ns = r.networks[2];
  const auto& biglstm = ns.main();
  int unfit = 0;
  for (const auto& row : biglstm.rows) {
    CAPTURE(row.gpus);
    CAPTURE(row.mp);
    CHECK(row.does_not_fit.empty() == !row.is_dp());
    CHECK((largest_peak(row.step) > Bytes::gib(16)) == row.is_dp());
    unfit += row.does_not_fit.empty() ? 0 : 1;
  }
  CHECK(unfit == 3);
  CHECK(biglstm.headline.best_dp == -1);
  REQUIRE(biglstm.headline.best_hybrid >= 0);
  CHECK(biglstm.row(biglstm.headline.best_hybrid).mp == 2);
  CHECK(biglstm.row(biglstm.headline.best_hybrid).gpus == 32);
  CHECK(std::count_if(ns.notes.begin(), ns.notes.end(), [](const std::string& s) {
          return s.find("left out of best: does not fit") != std::string::npos;
        }) == 3);
  std::ostringstream table;
  analysis::print_headline_table(r, table);
  CHECK(table.str().find("none fits") != std::string::npos);
  CHECK(table.str().find(
            "biglstm: 3 of 9 configurations do not fit in 16 GiB (V100-SXM2-16GB of dgx1-v100) and "
            "are left out of best") != std::string::npos);

  // 32 GiB: nothing is left out, and the study's steps are reused (memory needs no simulation).
  const analysis::StudyResult r32 = analysis::run_study(
      config,
      {.threads = 2, .ib_sensitivity = false, .memory = workloads::MemoryCapacity{Bytes::gib(32), "32 GiB"}},
      cache);
  CHECK(r32.steps_simulated == 0);
  CHECK(r32.networks[2].main().headline.best_dp >= 0);
  // Memory set aside, the 16 GiB study's headline is the 32 GiB one (the same steps, nothing left
  // out), and the table prints it beside the emptied one.
  const analysis::StudyHeadline unlimited = analysis::compute_headline(biglstm, /*respect_memory=*/false);
  CHECK(unlimited.best_dp == r32.networks[2].main().headline.best_dp);
  CHECK(unlimited.best_hybrid == r32.networks[2].main().headline.best_hybrid);
  CHECK(unlimited.gain_best == r32.networks[2].main().headline.gain_best);
  CHECK(table.str().find("biglstm: were memory no limit, best DP " +
                         std::to_string(biglstm.row(unlimited.best_dp).gpus) + " GPUs") != std::string::npos);
  // The break-even lines mirror it: no DP fits, so none of its figures exist under memory; memory
  // aside they are those of the 32 GiB study.
  CHECK(biglstm.break_even.dp_peak == analysis::DpPeak::None);
  CHECK(
      table.str().find("biglstm: no DP configuration fits in 16 GiB\n  were memory no limit: DP's end-to-end "
                       "speedup is still improving at 32 GPUs, the grid's edge") != std::string::npos);
  const analysis::StudyBreakEven be_unlimited =
      analysis::compute_break_even(biglstm, /*respect_memory=*/false);
  CHECK(be_unlimited.step_factor == r32.networks[2].main().break_even.step_factor);
  CHECK(be_unlimited.epochs_factor == r32.networks[2].main().break_even.epochs_factor);
}
