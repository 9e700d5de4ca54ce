// What --resume and merge trust (analysis/sweep/sweep_integrity.h): rows of the same sweep only —
// same scenario text, overrides and values (the fingerprint), whole rows, indices of this sweep and
// shard, each once — and merge of every point unless told otherwise. Also the checks a sweep makes
// before its first point runs. Uses a copy of scenarios/examples/dgx1-nvlink-sweep.yaml (6 points).
#include <doctest/doctest.h>
#include "tests/paths/paths.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <sys/stat.h>

#include "analysis/sweep/sweep_integrity.h"
#include "analysis/sweep/sweep_merge.h"
#include "analysis/sweep/sweep_runner.h"
#include "scenarios/loader/scenario.h"
#include "scenarios/loader/sweep.h"
#include "sim/error.h"
#include "tests/unit/test_files.h"

using namespace hybridsim;
namespace fs = std::filesystem;
using hybridsim::testing::read_whole_file;
using hybridsim::testing::ScratchDir;

namespace {

const std::string kExample = std::string(HYBRIDSIM_SOURCE_DIR) + "/scenarios/examples/dgx1-nvlink-sweep.yaml";

analysis::SweepOptions quiet(const fs::path& out, std::pair<int, int> shard = {1, 1}, bool resume = false) {
  analysis::SweepOptions o;
  o.out = out;
  o.jobs = 2;
  o.progress = false;
  o.shard = shard;
  o.resume = resume;
  return o;
}

// The example scenario copied into `dir` (so a test can edit it), with its values replaced.
std::string copy_example(const fs::path& dir, const std::string& from = {}, const std::string& to = {}) {
  std::string text = read_whole_file(kExample);
  if (!from.empty()) {
    const auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    text.replace(at, from.size(), to);
  }
  const fs::path file = dir / "sweep.yaml";
  std::ofstream(file) << text;
  return file.string();
}

std::string first_line(const std::string& error) { return error.substr(0, error.find('\n')); }

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("sweep fingerprint: the scenario text, the overrides and the values") {
  const auto points = scenarios::expand_sweep(scenarios::load_scenario(kExample));
  const std::string text = read_whole_file(kExample);
  const std::string fp = analysis::sweep_fingerprint(text, {}, points);
  CHECK(fp.size() == 16);
  CHECK(analysis::sweep_fingerprint(text, {}, points) == fp);  // deterministic
  CHECK(analysis::sweep_fingerprint(text + "\n", {}, points) != fp);
  const std::vector<std::string> set = {"cluster.nodes=2"};
  CHECK(analysis::sweep_fingerprint(text, set, points) != fp);
  auto fewer = points;
  fewer.pop_back();
  CHECK(analysis::sweep_fingerprint(text, {}, fewer) != fp);
  CHECK(analysis::partial_preamble(fp, 6) == "# hybridsim sweep " + fp + ", 6 points");
}

TEST_CASE("resume refuses the rows of another version of the sweep") {
  ScratchDir dir;
  const std::string file = copy_example(dir.path);
  analysis::run_sweep(file, quiet(dir.path / "out", {1, 2}));  // points 0, 2, 4
  // The values edited: the finished rows belong to another sweep.
  copy_example(dir.path, "25 GB/s", "30 GB/s");
  const std::string e = error_of([&] { analysis::run_sweep(file, quiet(dir.path / "out", {1, 1}, true)); });
  CHECK(e.find("results.csv: written by another sweep (fingerprint ") != std::string::npos);
  CHECK(e.find("the scenario, its --set overrides, its sweep values or a profile or topology file it reads "
               "changed") != std::string::npos);
}

TEST_CASE("resume refuses the rows of a sweep whose profile file was edited since") {
  // A profile edited between a sweep and its --resume kept the old profile's rows beside the new one's
  // (dp 2 at 9.78 ms of 100 us kernels, dp 4 at 7.96 ms of 900 us ones), exit 0: the fingerprint read
  // the scenario's text only.
  ScratchDir dir;
  const auto profile = [&](const std::string& duration) {
    std::ofstream(dir.path / "p.yaml")
        << "format: hybridsim-profile/1\nmetadata: {network: mine, gpu: V100-SXM2-16GB, precision: fp32, "
           "batch_per_gpu: 32, throughput_unit: images, units_per_step: 32}\n"
           "optimizer: {name: sgd, time_per_gib: 10 ms}\nops:\n"
           "  - {name: a, forward: [{name: k, duration: "
        << duration << "}], backward: [{name: k, duration: " << duration
        << "}], gradient: {bytes: 100 MB, exchange: dense-allreduce}}\n";
  };
  const std::string file = (dir.path / "sweep.yaml").string();
  std::ofstream(file) << "cluster: {preset: dgx1-v100}\nworkload: {profile: p.yaml}\nparallelism: {dp: 8}\n"
                         "sweep: {parameters: [{path: parallelism.dp, values: [2, 4]}]}\n";
  profile("100 us");
  analysis::run_sweep(file, quiet(dir.path / "out", {1, 2}));  // point 0
  profile("900 us");
  const std::string e = error_of([&] { analysis::run_sweep(file, quiet(dir.path / "out", {1, 1}, true)); });
  CHECK(e.find("results.csv: written by another sweep (fingerprint ") != std::string::npos);
  // Restored, the finished row is resumed: the fingerprint is of the file's contents.
  profile("100 us");
  const auto resumed = analysis::run_sweep(file, quiet(dir.path / "out", {1, 1}, true));
  CHECK(resumed.csv == analysis::run_sweep(file, quiet(dir.path / "whole")).csv);
}

TEST_CASE("resume drops a row cut short, runs its point again, and refuses damaged or foreign rows") {
  ScratchDir dir;
  const std::string file = copy_example(dir.path);
  const auto whole = analysis::run_sweep(file, quiet(dir.path / "whole"));
  const auto points = scenarios::expand_sweep(scenarios::load_scenario(file));
  const std::string preamble = analysis::partial_preamble(
      analysis::sweep_fingerprint(read_whole_file(file), {}, points), points.size());
  std::istringstream csv(whole.csv);
  std::string header, row0, row1;
  std::getline(csv, header);
  std::getline(csv, row0);
  std::getline(csv, row1);
  const fs::path out = dir.path / "out";
  fs::create_directories(out);

  SUBCASE("a last row cut short (a killed write) is run again") {
    std::ofstream(out / "points.partial.csv") << preamble << "\n" << header << "\n" << row0 << "\n"
                                              << row1.substr(0, row1.size() / 2);
    const auto r = analysis::run_sweep(file, quiet(out, {1, 1}, true));
    CHECK(r.points_run == 5);  // all but point 0
    CHECK(r.csv == whole.csv);
    REQUIRE(r.notes.size() == 1);
    CHECK(r.notes[0].find("points.partial.csv:4: the last row was cut short") != std::string::npos);
  }
  SUBCASE("a row whose index is no point of the sweep") {
    std::ofstream(out / "points.partial.csv") << preamble << "\n"
                                              << header << "\n"
                                              << "9" << row0.substr(1) << "\n";
    CHECK(first_line(error_of([&] {
            analysis::run_sweep(file, quiet(out, {1, 1}, true));
          })) == (out / "points.partial.csv").string() +
                     ":3: \"9\" is not the index of a point of this sweep (0 to 5)");
  }
  SUBCASE("a row with a field missing in the middle") {
    std::string damaged = row0;
    damaged.erase(damaged.find(",tokens,"), 7);
    std::ofstream(out / "points.partial.csv") << preamble << "\n" << header << "\n" << damaged << "\n";
    CHECK(error_of([&] { analysis::run_sweep(file, quiet(out, {1, 1}, true)); }).find(":3: a row of ") !=
          std::string::npos);
  }
  SUBCASE("a partial file without its first line") {
    std::ofstream(out / "points.partial.csv") << header << "\n" << row0 << "\n";
    CHECK(error_of([&] { analysis::run_sweep(file, quiet(out, {1, 1}, true)); })
              .find(":1: not a points.partial.csv of hybridsim") != std::string::npos);
  }
}

TEST_CASE("merge checks that the shards are one whole sweep") {
  ScratchDir dir;
  const std::string file = copy_example(dir.path);
  const auto whole = analysis::run_sweep(file, quiet(dir.path / "whole"));
  const auto s1 = analysis::run_sweep(file, quiet(dir.path / "s1", {1, 2}));
  const auto s2 = analysis::run_sweep(file, quiet(dir.path / "s2", {2, 2}));
  CHECK(
      read_whole_file(analysis::merge_sweep_outputs({s1.directory, s2.directory}, dir.path / "m").directory /
                      "results.csv") == whole.csv);
  // One shard of two: 3 points are missing.
  const std::string e = error_of([&] { analysis::merge_sweep_outputs({s1.directory}, dir.path / "m1"); });
  CHECK(e ==
        "merge: 3 (1, 3, 5) of the sweep's 6 points are in none of the shards (a shard not given, not run, "
        "or not finished); --allow-incomplete merges what is there");
  const auto partial =
      analysis::merge_sweep_outputs({s1.directory}, dir.path / "m2", {.allow_incomplete = true});
  CHECK(partial.points_total == 3);
  REQUIRE(partial.notes.size() == 1);
  CHECK(partial.notes[0] == "incomplete: 3 (1, 3, 5) points missing");
  // A shard of another sweep (other values).
  const std::string other = copy_example(dir.path, "25 GB/s", "30 GB/s");
  const auto foreign = analysis::run_sweep(other, quiet(dir.path / "other", {2, 2}));
  CHECK(error_of([&] { analysis::merge_sweep_outputs({s1.directory, foreign.directory}, dir.path / "m3"); })
            .find("holds another sweep than") != std::string::npos);
  // A damaged row.
  std::string csv = read_whole_file(s2.directory / "results.csv");
  csv.replace(csv.find("\n1,"), 3, "\n1x,");
  std::ofstream(s2.directory / "results.csv") << csv;
  CHECK(error_of([&] { analysis::merge_sweep_outputs({s1.directory, s2.directory}, dir.path / "m4"); })
            .find("results.csv:2: \"1x\" is not the index of a point") != std::string::npos);
}

TEST_CASE("a sweep checks its options and every point before the first one runs") {
  ScratchDir dir;
  // Every point asks for more GPUs than an 8-GPU DGX-1 has: nothing runs, nothing is written (one such
  // point among others is a row refused, analysis_sweep_test.cpp).
  const fs::path bad = dir.path / "bad.yaml";
  std::ofstream(bad) << "cluster: {preset: dgx1-v100}\nworkload: {network: gnmt}\nparallelism: {dp: 8}\n"
                        "sweep:\n  parameters:\n    - {path: parallelism.dp, values: [16, 32]}\n";
  const std::string e = error_of([&] { analysis::run_sweep(bad.string(), quiet(dir.path / "out")); });
  CHECK(e.starts_with(
      "sweep point 0 (parallelism.dp=16): sweep value parallelism.dp=16: parallelism: dp × mp = 16 × 1"));
  CHECK(e.ends_with("(no point was run)"));
  CHECK_FALSE(fs::exists(dir.path / "out"));
  auto metric = quiet(dir.path / "m");
  metric.plot_metric = "step_time";
  CHECK(error_of([&] { analysis::run_sweep(kExample, metric); })
            .starts_with(
                "--plot-metric \"step_time\" is not a results.csv column; expected one of gpus, dp, mp"));
  auto jobs = quiet(dir.path / "j");
  jobs.jobs = -3;
  CHECK(error_of([&] { analysis::run_sweep(kExample, jobs); }) ==
        "--jobs -3: expected 0 (all cores) or positive");
  // A shard with no points writes an empty table and its summary (for merge), and no plot.
  const fs::path two = dir.path / "two.yaml";
  std::ofstream(two) << "cluster: {preset: dgx1-v100}\nworkload: {network: gnmt}\nparallelism: {dp: 8}\n"
                        "sweep:\n  parameters:\n    - {path: parallelism.dp, values: [8, 4]}\n";
  const auto empty = analysis::run_sweep(two.string(), quiet(dir.path / "empty", {3, 3}));
  CHECK(empty.points_in_shard == 0);
  CHECK(empty.plot_note == "no plot: this shard has no points");
  CHECK_FALSE(empty.plot);
  CHECK(fs::exists(dir.path / "empty" / "summary.json"));
}

TEST_CASE("a sweep reads its scenario once: a pipe (sweep <(cat s.yaml)) works") {
  ScratchDir dir;
  const fs::path fifo = dir.path / "s.yaml";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  const std::string text =
      "cluster: {preset: dgx1-v100}\nworkload: {network: gnmt}\nparallelism: {dp: 8}\n"
      "sweep:\n  parameters:\n    - {path: parallelism.dp, values: [8, 4]}\n";
  std::thread writer([&] { std::ofstream(fifo) << text; });  // opens once the sweep opens it
  const auto r = analysis::run_sweep(fifo.string(), quiet(dir.path / "out"));
  writer.join();
  CHECK(r.points_run == 2);
  CHECK(r.csv.find("\n1,parallelism.dp=4,4,") != std::string::npos);
}
