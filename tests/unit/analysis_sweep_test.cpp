// Sweeps: determinism across thread counts, shard + merge equal to one run, resume skips finished
// points. Uses the shipped example scenarios/examples/dgx1-nvlink-sweep.yaml (6 points).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "analysis/sweep/sweep_runner.h"
#include "analysis/sweep/sweep_table.h"
#include "sim/error.h"
#include "tests/unit/test_files.h"

using namespace hybridsim;
namespace fs = std::filesystem;

using hybridsim::testing::read_whole_file;
using hybridsim::testing::fresh_temp_dir;

namespace {

const std::string kScenario =
    std::string(HYBRIDSIM_SOURCE_DIR) + "/scenarios/examples/dgx1-nvlink-sweep.yaml";

analysis::SweepOptions options(const fs::path& out, int jobs) {
  analysis::SweepOptions o;
  o.out = out;
  o.jobs = jobs;
  o.progress = false;
  return o;
}

}  // namespace

TEST_CASE("a sweep writes one row per point in point order, the same bytes for any thread count") {
  const auto a = analysis::run_sweep(kScenario, options(fresh_temp_dir("sweep-test-a"), 2));
  CHECK(a.points_total == 6);
  CHECK(a.points_run == 6);
  const std::string csv = read_whole_file(a.directory / "results.csv");
  CHECK(csv == a.csv);
  // Header, then rows 0..5: the last parameter (parallelism) varies fastest.
  std::istringstream lines(csv);
  std::string line;
  std::getline(lines, line);
  CHECK(line.starts_with("index,label,cluster.links.nvlink.bandwidth,parallelism,gpus,dp,mp"));
  for (int i = 0; i < 6; ++i) {
    REQUIRE(std::getline(lines, line));
    CHECK(line.starts_with(std::to_string(i) + ","));
  }
  CHECK(csv.find("\n1,\"nvlink.bandwidth=25 GB/s, parallelism={dp: 4, mp: 2}\",25 GB/s") !=
        std::string::npos);
  CHECK_FALSE(fs::exists(a.directory / "points.partial.csv"));
  CHECK(fs::exists(a.directory / "summary.json"));
  const auto b = analysis::run_sweep(kScenario, options(fresh_temp_dir("sweep-test-b"), 1));
  CHECK(read_whole_file(b.directory / "results.csv") == csv);
  CHECK(read_whole_file(b.directory / "summary.json") == read_whole_file(a.directory / "summary.json"));
}

TEST_CASE("shards merged give the same CSV as one run") {
  const auto whole = analysis::run_sweep(kScenario, options(fresh_temp_dir("sweep-test-whole"), 2));
  auto o1 = options(fresh_temp_dir("sweep-test-s1"), 1);
  o1.shard = {1, 2};
  auto o2 = options(fresh_temp_dir("sweep-test-s2"), 1);
  o2.shard = {2, 2};
  const auto s1 = analysis::run_sweep(kScenario, o1);
  const auto s2 = analysis::run_sweep(kScenario, o2);
  CHECK(s1.points_in_shard == 3);
  CHECK(s2.points_in_shard == 3);
  const auto merged =
      analysis::merge_sweep_outputs({s1.directory, s2.directory}, fresh_temp_dir("sweep-test-merged"));
  CHECK(read_whole_file(merged.directory / "results.csv") == whole.csv);
  // The same shard twice is a mistake.
  CHECK_THROWS_AS(
      analysis::merge_sweep_outputs({s1.directory, s1.directory}, fresh_temp_dir("sweep-test-bad")),
      InputError);
}

TEST_CASE("resume skips finished points") {
  const fs::path dir = fresh_temp_dir("sweep-test-resume");
  auto first = options(dir, 1);
  first.shard = {1, 2};  // finishes points 0, 2, 4
  analysis::run_sweep(kScenario, first);
  auto rest = options(dir, 2);
  rest.resume = true;
  const auto r = analysis::run_sweep(kScenario, rest);
  CHECK(r.points_run == 3);
  const auto whole = analysis::run_sweep(kScenario, options(fresh_temp_dir("sweep-test-resume-whole"), 2));
  CHECK(r.csv == whole.csv);
}

TEST_CASE("bad sweep options are clear errors") {
  auto o = options(fresh_temp_dir("sweep-test-badshard"), 1);
  o.shard = {3, 2};
  CHECK_THROWS_WITH_AS(analysis::run_sweep(kScenario, o), doctest::Contains("--shard K/N"), InputError);
  const std::string no_sweep = std::string(HYBRIDSIM_SOURCE_DIR) + "/scenarios/examples/dgx1-gnmt-dp8.yaml";
  CHECK_THROWS_WITH_AS(analysis::run_sweep(no_sweep, options(fresh_temp_dir("sweep-test-nosweep"), 1)),
                       doctest::Contains("has no sweep"), InputError);
}

TEST_CASE("summary.json's fastest point says when it does not fit, and names the fastest that does") {
  // Point 0 is the fastest (100 ms) but needs more memory than the GPUs hold; point 2 (150 ms) is the
  // fastest that fits. The summary named point 0 alone, as if it could run.
  const std::string head = "index,label,step_time_ms,fits_memory";
  const analysis::SweepRows rows = {
      {0, "0,\"dp 8, big\",100.0,no"}, {1, "1,dp 4,200.0,yes"}, {2, "2,dp 2,150.0,yes"}};
  const std::string json =
      analysis::sweep_summary_json("s.yaml", {.fingerprint = "f", .sweep_points = 3}, head, rows);
  CHECK(json.find("\"fastest_step\": {\"label\": \"dp 8, big\", \"step_time_ms\": 100.000000, "
                  "\"fits_memory\": false}") != std::string::npos);
  CHECK(json.find("\"fastest_step_that_fits\": {\"label\": \"dp 2\", \"step_time_ms\": 150.000000}") !=
        std::string::npos);
  // Where the fastest fits (or the capacity is unknown: ""), the summary is as before.
  const analysis::SweepRows fit = {{0, "0,dp 8,100.0,yes"}, {1, "1,dp 4,200.0,"}};
  const std::string plain =
      analysis::sweep_summary_json("s.yaml", {.fingerprint = "f", .sweep_points = 2}, head, fit);
  CHECK(plain.find("\"fastest_step\": {\"label\": \"dp 8\", \"step_time_ms\": 100.000000}\n}") !=
        std::string::npos);
  CHECK(plain.find("fastest_step_that_fits") == std::string::npos);
  // Where no point fits, the summary says so (it named the fastest, marked, and nothing else).
  const analysis::SweepRows none = {{0, "0,dp 8,100.0,no"}, {1, "1,dp 4,200.0,no"}};
  const std::string nothing =
      analysis::sweep_summary_json("s.yaml", {.fingerprint = "f", .sweep_points = 2}, head, none);
  CHECK(nothing.find("\"fits_memory\": false},\n  \"fastest_step_that_fits\": null\n}") != std::string::npos);
}
