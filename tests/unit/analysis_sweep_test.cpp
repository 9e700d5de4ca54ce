// Sweeps: determinism across thread counts, shard + merge equal to one run, resume skips finished
// points. Uses the shipped example scenarios/examples/dgx1-nvlink-sweep.yaml (6 points); a transformer
// point that does not fit its GPUs is a row not simulated (the shipped Llama 3 8B tp 8 scenario, swept).
#include <doctest/doctest.h>
#include "tests/paths/paths.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <sys/wait.h>

#include "analysis/output/csv.h"
#include "analysis/sweep/sweep_integrity.h"
#include "analysis/sweep/sweep_merge.h"
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

// `hybridsim sweep -q SCENARIO --out DIR/cli`: its exit status (1 where points were refused or failed)
// and what it printed, stdout and stderr together (kept in DIR/cli.log).
struct CommandLineSweep {
  int status = -1;
  std::string log;
};
CommandLineSweep sweep_on_command_line(const fs::path& scenario, const fs::path& dir) {
  const std::string cmd = std::string(HYBRIDSIM_CLI) + " sweep -q " + scenario.string() + " --out " +
                          (dir / "cli").string() + " > " + (dir / "cli.log").string() + " 2>&1";
  const int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_whole_file(dir / "cli.log")};
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
  // GNMT (a 2017 network) as written: 8 GPUs, dp 4 × mp 2, and no tp, pp, ep or zero (empty).
  CHECK(csv.find("{dp: 4, mp: 2}\",25 GB/s,\"{dp: 4, mp: 2}\",8,4,2,,,,,") != std::string::npos);
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

namespace {

// Llama 3 8B at tp 8 on one DGX H100 (scenarios/llm/llama3-8b-dgx-h100-tp8.yaml) swept over the
// micro-batch: at 1 and 2 it fits the 80 GiB H100s (19.7 GiB at 1, `hybridsim run`), at 64 its
// activations alone are 64 times micro-batch 1's, about 300 GiB, and `hybridsim run` refuses it.
fs::path llama_micro_batch_sweep(const fs::path& dir, const std::string& values) {
  fs::create_directories(dir);
  const fs::path file = dir / "llama-mb.yaml";
  // The shipped file's recompute: selective is noted as not used under flash attention on every
  // point; none is the same step, without the note these tests do not ask about.
  std::string text =
      read_whole_file(std::string(HYBRIDSIM_SOURCE_DIR) + "/scenarios/llm/llama3-8b-dgx-h100-tp8.yaml");
  REQUIRE(text.find("recompute: selective") != std::string::npos);
  text.replace(text.find("recompute: selective"), 20, "recompute: none");
  std::ofstream(file) << text
                      << "sweep:\n  parameters:\n    - {path: training.micro_batch, values: " << values
                      << "}\n";
  return file;
}

std::vector<std::vector<std::string>> csv_rows(const std::string& csv) {
  std::vector<std::vector<std::string>> out;
  std::istringstream lines(csv);
  for (std::string line; std::getline(lines, line);) out.push_back(analysis::csv_split(line));
  return out;
}

std::size_t column(const std::vector<std::string>& head, const std::string& name) {
  const auto at = std::find(head.begin(), head.end(), name);
  REQUIRE(at != head.end());
  return static_cast<std::size_t>(at - head.begin());
}

}  // namespace

TEST_CASE(
    "a transformer sweep runs the points that fit and lists one that does not as a row, not simulated") {
  // The whole sweep was refused ("sweep point 2 (training.micro_batch=64): ... needs 318.5 GiB per
  // GPU ... (no point was run)") although points 0 and 1 fit.
  const fs::path dir = fresh_temp_dir("sweep-test-unfit");
  const fs::path scenario = llama_micro_batch_sweep(dir / "in", "[1, 2, 64]");
  const auto r = analysis::run_sweep(scenario.string(), options(dir / "out", 2));
  CHECK(r.points_run == 2);
  CHECK(r.points_not_simulated == 1);
  REQUIRE(r.notes.size() == 1);
  CHECK(r.notes[0].starts_with("sweep point 2 (training.micro_batch=64): not simulated"));
  const auto rows = csv_rows(r.csv);
  REQUIRE(rows.size() == 4);
  const auto& head = rows[0];
  const std::size_t step = column(head, "step_time_ms"), peak = column(head, "peak_memory_bytes"),
                    capacity = column(head, "memory_capacity_bytes"), fits = column(head, "fits_memory"),
                    why = column(head, "not_simulated");
  for (std::size_t i = 1; i < rows.size(); ++i) REQUIRE(rows[i].size() == head.size());
  const auto& unfit = rows[3];
  // Each row's size: mp the GPUs of one DP worker (tp 8 × pp 1), so dp × mp = gpus; the step's own mp
  // (pp) read 1 here, and there was no tp column.
  for (std::size_t i = 1; i < rows.size(); ++i) {
    CHECK(rows[i][column(head, "mp")] == "8");
    CHECK(rows[i][column(head, "tp")] == "8");
    CHECK(rows[i][column(head, "pp")] == "1");
    CHECK(rows[i][column(head, "ep")] == "1");
    CHECK(rows[i][column(head, "zero")] == "0");
  }
  // Its size as the simulated points count theirs: 8 GPUs, one replica (dp 1) of tp 8, 64 samples a
  // step (micro-batch 64, one micro-batch); no step figures: it was not simulated.
  CHECK(unfit[column(head, "gpus")] == "8");
  CHECK(unfit[column(head, "dp")] == "1");
  CHECK(unfit[column(head, "global_batch")] == "64");
  CHECK(rows[1][column(head, "global_batch")] == "1");
  CHECK(unfit[step].empty());
  CHECK(unfit[column(head, "samples_per_second")].empty());
  CHECK(unfit[column(head, "nvswitch_bytes")].empty());
  CHECK(unfit[fits] == "no");
  CHECK(rows[1][fits] == "yes");
  CHECK(rows[2][fits] == "yes");
  CHECK(rows[1][why].empty());
  CHECK(rows[2][why].empty());
  CHECK(unfit[why].find("workload.model: llama3-8b needs ") != std::string::npos);
  CHECK(unfit[why].find("but the GPU has 80 GiB") != std::string::npos);
  // The H100's 80 GiB, and a peak of the same memory model as the points that ran: Korthikanti's
  // activations grow linearly with the micro-batch and nothing else does, so micro-batch 64 needs
  // micro-batch 1's peak plus 63 times what one more sample adds (micro-batch 2 minus 1).
  CHECK(unfit[capacity] == std::to_string(80LL << 30));
  const long long p1 = std::stoll(rows[1][peak]), p2 = std::stoll(rows[2][peak]),
                  p64 = std::stoll(unfit[peak]);
  CHECK(p2 > p1);
  CHECK(std::llabs(p64 - (p1 + 63 * (p2 - p1))) <= 64);  // each activation rounded to a byte
  CHECK(p64 > (80LL << 30));
  // summary.json: the fastest among the points simulated, and the one not simulated listed with why.
  const std::string json = read_whole_file(r.directory / "summary.json");
  const double ms1 = std::stod(rows[1][step]), ms2 = std::stod(rows[2][step]);
  CHECK(json.find("\"fastest_step\": {\"label\": \"training.micro_batch=" +
                  std::string(ms1 <= ms2 ? "1" : "2") + "\"") != std::string::npos);
  CHECK(json.find("fastest_step_that_fits") == std::string::npos);
  CHECK(
      json.find("\"not_simulated\": [\n    {\"label\": \"training.micro_batch=64\", \"fits_memory\": false, "
                "\"why\": \"") != std::string::npos);
}

TEST_CASE("a transformer sweep's unfit rows survive --resume, from results.csv and from points.partial.csv") {
  const fs::path dir = fresh_temp_dir("sweep-test-unfit-resume");
  const fs::path scenario = llama_micro_batch_sweep(dir / "in", "[1, 2, 64]");
  const auto whole = analysis::run_sweep(scenario.string(), options(dir / "whole", 1));
  // Shard 1/2 holds points 0 and 2 (2 does not fit); the resume runs point 1 alone and keeps the row.
  auto first = options(dir / "resumed", 1);
  first.shard = {1, 2};
  const auto s1 = analysis::run_sweep(scenario.string(), first);
  CHECK(s1.points_run == 1);
  CHECK(s1.points_not_simulated == 1);
  auto rest = options(dir / "resumed", 1);
  rest.resume = true;
  const auto r = analysis::run_sweep(scenario.string(), rest);
  CHECK(r.points_run == 1);
  CHECK(r.points_not_simulated == 0);
  CHECK(r.csv == whole.csv);
  CHECK(read_whole_file(r.directory / "summary.json") == read_whole_file(whole.directory / "summary.json"));
  // The same rows as an interrupted sweep's points.partial.csv (its preamble, the header, rows 0
  // and 2): the resume again runs point 1 alone.
  const fs::path partial = dir / "partial";
  fs::create_directories(partial);
  const auto lines = csv_rows(s1.csv);
  const std::string fingerprint = [&] {
    const std::string j = read_whole_file(s1.directory / "summary.json");
    const auto at = j.find("\"fingerprint\": \"") + 16;
    return j.substr(at, 16);
  }();
  std::ofstream(partial / "points.partial.csv") << analysis::partial_preamble(fingerprint, 3) << "\n"
                                                << s1.csv;
  auto again = options(partial, 1);
  again.resume = true;
  const auto p = analysis::run_sweep(scenario.string(), again);
  CHECK(p.points_run == 1);
  CHECK(p.csv == whole.csv);
  CHECK(lines.size() == 3);
}

TEST_CASE("a transformer sweep where no point fits is refused, located, as a run is") {
  const fs::path dir = fresh_temp_dir("sweep-test-unfit-all");
  const fs::path scenario = llama_micro_batch_sweep(dir / "in", "[64, 128]");
  const std::string located = "sweep point 0 (training.micro_batch=64): " + scenario.string() +
                              ":10:3: workload.model: llama3-8b needs ";
  CHECK_THROWS_WITH_AS(analysis::run_sweep(scenario.string(), options(dir / "out", 1)),
                       doctest::Contains(located.c_str()), InputError);
  CHECK_THROWS_WITH_AS(analysis::run_sweep(scenario.string(), options(dir / "out", 1)),
                       doctest::Contains("(no point of the sweep fits its GPUs' memory: no point was run)"),
                       InputError);
  CHECK_FALSE(fs::exists(dir / "out"));
  // One shard of several is not refused (the other shards' points may fit): its row says why.
  auto shard = options(dir / "shard", 1);
  shard.shard = {1, 2};
  const auto s = analysis::run_sweep(scenario.string(), shard);
  CHECK(s.points_run == 0);
  CHECK(s.points_not_simulated == 1);
  CHECK_FALSE(s.plot.has_value());
  const std::string json = read_whole_file(s.directory / "summary.json");
  CHECK(json.find("fastest_step") == std::string::npos);
  CHECK(json.find("\"not_simulated\": [\n    {\"label\": \"training.micro_batch=64\"") != std::string::npos);
}

TEST_CASE("summary.json's fastest point is chosen among the simulated rows, one not simulated listed apart") {
  // A row with an empty step_time_ms (not simulated) made std::stod throw; it is no candidate.
  const std::string head = "index,label,step_time_ms,fits_memory,not_simulated";
  const analysis::SweepRows rows = {{0, "0,mb 64,,no,\"needs 318.5 GiB, has 80\""}, {1, "1,mb 1,435.0,yes,"}};
  const std::string json =
      analysis::sweep_summary_json("s.yaml", {.fingerprint = "f", .sweep_points = 2}, head, rows);
  CHECK(json.find("\"fastest_step\": {\"label\": \"mb 1\", \"step_time_ms\": 435.000000}") !=
        std::string::npos);
  CHECK(json.find("\"not_simulated\": [\n    {\"label\": \"mb 64\", \"fits_memory\": false, \"why\": "
                  "\"needs 318.5 GiB, has 80\"}]\n}") != std::string::npos);
}

TEST_CASE("--resume refuses the results of an older hybridsim, whose columns and mp differ, saying so") {
  // A results.csv with the header before sweep45 (no tp, pp, ep, zero, not_simulated, nor the
  // whole-model columns) and this sweep's fingerprint:
  // "its columns differ from this sweep's (was the scenario changed?)" sent the user to the scenario.
  const fs::path dir = fresh_temp_dir("sweep-test-old-header");
  const auto done = analysis::run_sweep(kScenario, options(dir, 1));
  std::string old_head = done.csv.substr(0, done.csv.find('\n'));
  for (const std::string added : {",layers_simulated,layers,whole_model_peak_bytes,whole_model_fits",
                                  ",tp,pp,ep,zero", ",not_simulated"}) {
    REQUIRE(old_head.find(added) != std::string::npos);
    old_head.erase(old_head.find(added), added.size());
  }
  REQUIRE(old_head.ends_with("memory_capacity_bytes,fits_memory"));
  REQUIRE(old_head.find(",gpus,dp,mp,global_batch,") != std::string::npos);
  std::ofstream(dir / "results.csv") << old_head << "\n";
  auto again = options(dir, 1);
  again.resume = true;
  CHECK_THROWS_WITH_AS(
      analysis::run_sweep(kScenario, again),
      doctest::Contains(
          "results.csv:1: written by an older hybridsim, without the columns layers_simulated, "
          "layers, whole_model_peak_bytes, whole_model_fits, tp, pp, ep, zero and not_simulated "
          "(and with mp a transformer's pp"),
      InputError);
}

TEST_CASE("--resume refuses the results of the hybridsim before the whole-model columns, naming them") {
  // The header sweep45 wrote (tp to zero and not_simulated, no layer-slice columns): "its columns
  // differ from this sweep's (was the scenario changed?)" on the code before, as if the scenario had
  // changed; its rows of a slice would say nothing of the whole model.
  const fs::path dir = fresh_temp_dir("sweep-test-sweep45-header");
  const auto done = analysis::run_sweep(kScenario, options(dir, 1));
  std::string old_head = done.csv.substr(0, done.csv.find('\n'));
  const std::string added = ",layers_simulated,layers,whole_model_peak_bytes,whole_model_fits";
  REQUIRE(old_head.find(added + ",not_simulated") != std::string::npos);
  old_head.erase(old_head.find(added), added.size());
  REQUIRE(old_head.ends_with("memory_capacity_bytes,fits_memory,not_simulated"));
  std::ofstream(dir / "results.csv") << old_head << "\n";
  auto again = options(dir, 1);
  again.resume = true;
  CHECK_THROWS_WITH_AS(
      analysis::run_sweep(kScenario, again),
      doctest::Contains("results.csv:1: written by an older hybridsim, without the columns layers_simulated, "
                        "layers, whole_model_peak_bytes and whole_model_fits; its rows cannot be resumed"),
      InputError);
}

TEST_CASE("a sweep of layer-slices says what the whole model needs, as run does, beside the slice's fits") {
  // The shipped GPT-3 175B slice (2 of 96 layers, tp 8 x dp 2 on DGX A100 80 GiB, BF16, full
  // recomputation, unfused attention) swept over parallelism.zero [0, 1]. Its fits_memory is the
  // slice's (about 9.8 GiB: yes); results.csv had no whole-model column, so the sweep said the points fit.
  // The whole model by hand (h = 12,288, s = 2,048, a = 96, t = 8, vocabulary padded to 51,200):
  // parameters a GPU 96 x (12h^2 / 8 + 4h) + 2 x 51,200 x h / 8 + 2h = 21,905,301,504 (the matrices
  // and the vocabulary over tp 8, the layer norms and the final norm whole on every TP rank);
  // activations 96 layer inputs 2sh, one layer whole 13sh + 5as^2/t and the FP32 logits
  // 4s x 51,200 / t: 5,463,080,960 B. ZeRO 0: 16 B a parameter, 350,484,824,064 + 5,463,080,960 =
  // 355,947,905,024 B; ZeRO 1 over dp 2: 2 + 2 + 12 / 2 = 10 B, 219,053,015,040 + 5,463,080,960 =
  // 224,516,096,000 B. Both above 80 GiB: the whole model fits at neither point.
  const fs::path dir = fresh_temp_dir("sweep-test-slice");
  fs::create_directories(dir / "in");
  const fs::path scenario = dir / "in" / "slice.yaml";
  std::ofstream(scenario) << read_whole_file(std::string(HYBRIDSIM_SOURCE_DIR) +
                                             "/scenarios/llm/gpt3-175b-slice-dgx-a100.yaml")
                          << "sweep:\n  parameters:\n    - {path: parallelism.zero, values: [0, 1]}\n";
  const auto r = analysis::run_sweep(scenario.string(), options(dir / "out", 1));
  REQUIRE(r.points_run == 2);
  const auto rows = csv_rows(r.csv);
  REQUIRE(rows.size() == 3);
  const auto& head = rows[0];
  const std::size_t fits = column(head, "fits_memory");
  CHECK(head[fits + 1] == "layers_simulated");
  CHECK(head[fits + 4] == "whole_model_fits");
  CHECK(head.back() == "not_simulated");
  for (std::size_t i = 1; i < rows.size(); ++i) {
    REQUIRE(rows[i].size() == head.size());
    CHECK(rows[i][fits] == "yes");
    CHECK(rows[i][column(head, "layers_simulated")] == "2");
    CHECK(rows[i][column(head, "layers")] == "96");
    CHECK(rows[i][column(head, "whole_model_fits")] == "no");
  }
  CHECK(rows[1][column(head, "whole_model_peak_bytes")] == "355947905024");
  CHECK(rows[2][column(head, "whole_model_peak_bytes")] == "224516096000");
  // summary.json: the fastest point is marked, and no point fits once the whole model is counted.
  const std::string json = read_whole_file(r.directory / "summary.json");
  CHECK(json.find("\"whole_model_fits\": false}") != std::string::npos);
  CHECK(json.find("\"fastest_step_that_fits\": null") != std::string::npos);
  REQUIRE_FALSE(r.notes.empty());
  CHECK(r.notes.back() ==
        "layer slices: points 0, 1 simulate 2 of 96 layers; their step figures and fits_memory are the "
        "slice's, whole_model_peak_bytes and whole_model_fits the whole model's; the whole model does not "
        "fit at "
        "points 0, 1");
  // A run of every layer (Llama 3 8B at tp 8) leaves the four empty, and says nothing.
  const fs::path llama = llama_micro_batch_sweep(dir / "in2", "[1]");
  const auto plain = analysis::run_sweep(llama.string(), options(dir / "out2", 1));
  const auto plain_rows = csv_rows(plain.csv);
  REQUIRE(plain_rows.size() == 2);
  for (const char* name : {"layers_simulated", "layers", "whole_model_peak_bytes", "whole_model_fits"})
    CHECK(plain_rows[1][column(plain_rows[0], name)].empty());
  CHECK(plain.notes.empty());
}

TEST_CASE("a product sweep runs every point the loader takes and lists the one it refuses, with why") {
  // GNMT at dp 8 over global batch × exchange: 1024 is one micro-batch a worker (128 × 8), so
  // last-micro-batch has no accumulation to wait for and `hybridsim run` refuses point 1. The whole
  // sweep was refused ("sweep point 1 (...): ... (no point was run)"); only mode: zip could leave
  // the one combination out.
  const fs::path dir = fresh_temp_dir("sweep-test-refused");
  fs::create_directories(dir);
  const fs::path scenario = dir / "grid.yaml";
  std::ofstream(scenario)
      << "cluster: {preset: dgx1-v100}\nworkload: {network: gnmt}\nparallelism: {dp: 8}\n"
         "sweep:\n  parameters:\n    - {path: training.global_batch, values: [1024, 2048]}\n"
         "    - {path: communication.exchange, values: [every-micro-batch, "
         "last-micro-batch]}\n";
  const auto r = analysis::run_sweep(scenario.string(), options(dir / "out", 2));
  CHECK(r.points_run == 3);
  CHECK(r.points_refused == 1);
  CHECK(r.points_not_simulated == 0);
  const auto rows = csv_rows(r.csv);
  REQUIRE(rows.size() == 5);
  const auto& head = rows[0];
  for (std::size_t i = 1; i < rows.size(); ++i) REQUIRE(rows[i].size() == head.size());
  const std::size_t step = column(head, "step_time_ms"), why = column(head, "not_simulated");
  const auto& refused = rows[2];
  CHECK(refused[0] == "1");
  CHECK(refused[column(head, "training.global_batch")] == "1024");
  CHECK(refused[column(head, "communication.exchange")] == "last-micro-batch");
  CHECK(refused[step].empty());
  CHECK(refused[column(head, "gpus")].empty());
  CHECK(refused[column(head, "fits_memory")].empty());
  CHECK(
      refused[why].starts_with("refused: sweep value communication.exchange=last-micro-batch: "
                               "communication.exchange: last-micro-batch needs gradient accumulation"));
  for (const std::size_t i : {1u, 3u, 4u}) {
    CHECK_FALSE(rows[i][step].empty());
    CHECK(rows[i][why].empty());
  }
  // The two points at 2048 take two micro-batches a worker; last-micro-batch exchanges once.
  CHECK(std::stod(rows[4][step]) < std::stod(rows[3][step]));
  REQUIRE_FALSE(r.notes.empty());
  CHECK(
      r.notes.front().starts_with("sweep point 1 (training.global_batch=1024, "
                                  "communication.exchange=last-micro-batch): refused (not_simulated in "
                                  "results.csv): sweep value communication.exchange=last-micro-batch"));
  const std::string json = read_whole_file(r.directory / "summary.json");
  CHECK(json.find("\"not_simulated\": [\n    {\"label\": \"training.global_batch=1024, "
                  "communication.exchange=last-micro-batch\", \"refused\": true, \"why\": \"sweep value ") !=
        std::string::npos);
  // --resume keeps the row (the same sweep refuses it again) and still counts it.
  auto again = options(dir / "out", 1);
  again.resume = true;
  const auto resumed = analysis::run_sweep(scenario.string(), again);
  CHECK(resumed.points_run == 0);
  CHECK(resumed.points_refused == 1);
  CHECK(resumed.csv == r.csv);
  // The command line writes the same and exits 1, naming the count.
  const CommandLineSweep cli = sweep_on_command_line(scenario, dir);  // no structured binding: INFO's lambda
  INFO(cli.log);
  CHECK(cli.status == 1);
  CHECK(read_whole_file(dir / "cli" / "results.csv") == r.csv);
  CHECK(cli.log.find("hybridsim sweep: error: 1 of 4 points refused") != std::string::npos);
}

TEST_CASE(
    "a sweep point that fails once run is a row that says why, the others run, and --resume runs it again") {
  // Point 1's trace window starts after its 305.8 ms step: the loader takes it, the run refuses it
  // once the step is known. The sweep stopped there ("sweep point 1 (...): ... starts after the step"),
  // no results.csv written, its two good points kept for --resume only.
  const fs::path dir = fresh_temp_dir("sweep-test-failed-once-run");
  fs::create_directories(dir);
  const fs::path scenario = dir / "window.yaml";
  const auto write_sweep = [&](const std::string& windows) {
    std::ofstream(scenario)
        << "cluster: {preset: dgx1-v100}\nworkload: {network: gnmt}\nparallelism: {dp: 8}\n"
           "outputs: {trace: {file: t.json, detail: steps}}\n"
           "sweep:\n  parameters:\n    - {path: outputs.trace.window, values: "
        << windows << "}\n";
  };
  write_sweep(R"(["0 ms:1 ms", "10 s:11 s", "1 ms:2 ms"])");
  const auto r = analysis::run_sweep(scenario.string(), options(dir / "out", 2));
  CHECK(r.points_run == 2);
  CHECK(r.points_failed == 1);
  CHECK(r.points_refused == 0);
  const auto rows = csv_rows(r.csv);
  REQUIRE(rows.size() == 4);
  const auto& head = rows[0];
  const std::size_t step = column(head, "step_time_ms"), why = column(head, "not_simulated");
  REQUIRE(rows[2].size() == head.size());
  CHECK(rows[2][0] == "1");
  CHECK(rows[2][column(head, "outputs.trace.window")] == "10 s:11 s");
  CHECK(rows[2][step].empty());
  CHECK(rows[2][column(head, "gpus")].empty());
  CHECK(
      rows[2][why].starts_with("failed once run: sweep value outputs.trace.window=10 s:11 s: "
                               "outputs.trace.window \"10 s:11 s\" starts after the step, which ends at "
                               "305.840228333 ms"));
  for (const std::size_t i : {1u, 3u}) {
    CHECK_FALSE(rows[i][step].empty());
    CHECK(rows[i][why].empty());
  }
  CHECK(fs::exists(dir / "out" / "t-0.json"));
  CHECK_FALSE(fs::exists(dir / "out" / "t-1.json"));
  CHECK(fs::exists(dir / "out" / "t-2.json"));
  CHECK_FALSE(fs::exists(dir / "out" / "points.partial.csv"));
  REQUIRE(r.notes.size() == 1);
  CHECK(
      r.notes[0].starts_with("sweep point 1 (trace.window=10 s:11 s): failed once run (not_simulated in "
                             "results.csv): sweep value outputs.trace.window=10 s:11 s"));
  const std::string json = read_whole_file(r.directory / "summary.json");
  CHECK(json.find("{\"label\": \"trace.window=10 s:11 s\", \"failed_once_run\": true, \"why\": \"sweep "
                  "value outputs.trace.window") != std::string::npos);
  // --resume keeps the two finished points and runs the failed one again: it fails again, a row again.
  auto again = options(dir / "out", 1);
  again.resume = true;
  const auto resumed = analysis::run_sweep(scenario.string(), again);
  CHECK(resumed.points_run == 0);
  CHECK(resumed.points_failed == 1);
  CHECK(resumed.csv == r.csv);
  REQUIRE(resumed.notes.size() == 2);
  CHECK(resumed.notes[0] == "--resume: point 1 failed once run before: run again");
  // The command line writes the same and exits 1, naming the count.
  const CommandLineSweep cli = sweep_on_command_line(scenario, dir);  // no structured binding: INFO's lambda
  INFO(cli.log);
  CHECK(cli.status == 1);
  CHECK(read_whole_file(dir / "cli" / "results.csv") == r.csv);
  CHECK(cli.log.find("sweep: 2 points run, 1 failed once run (see the notes)") != std::string::npos);
  CHECK(cli.log.find("hybridsim sweep: error: 1 of 3 points failed once run") != std::string::npos);
  // Where no point would be simulated, the first failure stops the sweep, as before, and leaves nothing.
  write_sweep(R"(["10 s:11 s", "20 s:21 s"])");
  CHECK_THROWS_WITH_AS(analysis::run_sweep(scenario.string(), options(dir / "none", 1)),
                       doctest::Contains("sweep point 0 (trace.window=10 s:11 s): sweep value "
                                         "outputs.trace.window=10 s:11 s"),
                       InputError);
  CHECK_FALSE(fs::exists(dir / "none"));
}
