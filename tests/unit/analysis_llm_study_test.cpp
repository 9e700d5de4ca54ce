// The LLM study's table (analysis/study/llm_study.cpp) on hand-made cells: 3D/DP by time to train,
// "stops paying" and the break-even critical batch, each expected number derived below.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "analysis/study/llm_study.h"
#include "analysis/study/study_report.h"

using namespace hybridsim;
using analysis::LlmPlanCandidate;
using analysis::LlmStudyCell;

namespace {

// A closed-form plan of `sequences` a batch at `tokens_per_second`.
LlmPlanCandidate plan(std::int64_t sequences, double tokens_per_second, int dp) {
  LlmPlanCandidate c;
  c.layout.dp = dp;
  c.layout.tp = 8;
  c.layout.zero = 3;
  c.layout.global_batch = sequences;
  c.tokens_per_second = tokens_per_second;
  c.estimated_only = "over the budget";
  return c;
}

LlmStudyCell cell(int gpus) {
  LlmStudyCell c;
  c.gpus = gpus;
  return c;
}

// A cell of both families' plans and their times to train at the one critical batch.
LlmStudyCell planned(int gpus, LlmPlanCandidate dp_heavy, LlmPlanCandidate three_d, double dp_heavy_ttt,
                     double three_d_ttt) {
  LlmStudyCell c = cell(gpus);
  c.dp_heavy = std::move(dp_heavy);
  c.three_d = std::move(three_d);
  c.dp_heavy_ttt = {dp_heavy_ttt};
  c.three_d_ttt = {three_d_ttt};
  return c;
}

// Sequences of 1,000 tokens, a published batch of 2,000 sequences (2 M tokens); one critical batch.
analysis::LlmStudyResult study(std::vector<LlmStudyCell> cells, std::vector<int> gpus) {
  analysis::LlmStudyResult r;
  r.config.title = "toy";
  r.config.ib_bandwidths = {"50 GB/s"};
  r.config.critical_batch_tokens = {8e6};
  r.config.gpus = std::move(gpus);
  for (LlmStudyCell& c : cells) {
    c.model = "toy";
    c.cluster = "dgx-h100";
    c.ib = "50 GB/s";
    c.ib_per_gpu = "48 GB/s";
    c.published_batch = 2000;
    c.sequence = 1000;
  }
  r.cells = std::move(cells);
  return r;
}

// The cells.csv the study's report folder holds (written without plots to a scratch `folder`).
std::string written_cells_csv(const analysis::LlmStudyResult& r, const std::string& folder) {
  const auto dir = std::filesystem::temp_directory_path() / folder;
  std::filesystem::remove_all(dir);
  analysis::StudyReportOptions options;
  options.plots = false;
  analysis::write_llm_study_report(r, dir, options);
  std::ifstream in(dir / "cells.csv");
  std::string csv{std::istreambuf_iterator<char>(in), {}};
  std::filesystem::remove_all(dir);
  return csv;
}

// A CSV's rows split at commas (the fields these tests read hold none), a trailing comma an empty field.
std::vector<std::vector<std::string>> csv_rows(const std::string& csv) {
  std::istringstream in(csv);
  std::vector<std::vector<std::string>> rows;
  for (std::string line; std::getline(in, line);) {
    rows.emplace_back();
    std::istringstream fields(line);
    for (std::string f; std::getline(fields, f, ',');) rows.back().push_back(f);
    if (line.ends_with(",")) rows.back().emplace_back();
  }
  return rows;
}

// The index of column `name` in `header` (header.size() where it has none).
std::size_t column_of(const std::vector<std::string>& header, const std::string& name) {
  return static_cast<std::size_t>(std::ranges::find(header, name) - header.begin());
}

// A study of one model on `clusters` at `gpus`, one InfiniBand rate a NIC port.
analysis::LlmStudyConfig grid(const std::string& model, std::vector<std::string> clusters,
                              std::vector<int> gpus, const std::string& ib) {
  analysis::LlmStudyConfig config;
  config.models = {model};
  config.clusters = std::move(clusters);
  config.gpus = std::move(gpus);
  config.ib_bandwidths = {ib};
  return config;
}

}  // namespace

TEST_CASE("llm study: 3D/DP is the ratio of times to train, and DP-heavy stops paying from 5%") {
  LlmStudyCell even = cell(1024);
  even.dp_heavy = plan(2000, 1e6, 128);
  even.three_d = plan(2000, 1.04e6, 64);
  even.dp_heavy_ttt = {100};
  even.three_d_ttt = {96.2};  // 100 / 96.2 = 1.0395: under 5%
  LlmStudyCell pays = cell(4096);
  pays.dp_heavy = plan(2000, 2e6, 512);
  pays.three_d = plan(2000, 4e6, 256);
  pays.dp_heavy_ttt = {50};
  pays.three_d_ttt = {25};
  const auto r = study({even, pays}, {1024, 4096});
  CHECK(analysis::llm_three_d_advantage(r, r.cells[0]) == doctest::Approx(100 / 96.2));
  CHECK(analysis::llm_three_d_advantage(r, r.cells[1]) == doctest::Approx(2.0));
  std::ostringstream out;
  analysis::print_llm_table(r, out);
  CHECK(out.str().find(
            "DP-heavy stops paying, toy on dgx-h100 at 50 GB/s a NIC port (48 GB/s a GPU): from 4096 GPUs "
            "(estimated, not simulated)") != std::string::npos);
  CHECK(out.str().find("dp 512 tp 8 mb 1 Z3") != std::string::npos);
  CHECK(out.str().find("break-even") == std::string::npos);  // one batch: no crossing to report
}

TEST_CASE("llm study: \"stops paying\" names only what its rows show when 3D's lead comes and goes") {
  // 3D at least 5% ahead at 64 and 4,096 GPUs, even at 256: "from 4096", and 64 named apart.
  auto at = [](int gpus, double dp_days, double three_d_days) {
    LlmStudyCell c = cell(gpus);
    c.dp_heavy = plan(2000, 1e6, 8);
    c.three_d = plan(2000, 1e6, 4);
    c.dp_heavy_ttt = {dp_days};
    c.three_d_ttt = {three_d_days};
    return c;
  };
  {
    const auto r = study({at(64, 109, 100), at(256, 100, 100), at(4096, 163, 100)}, {64, 256, 4096});
    std::ostringstream out;
    analysis::print_llm_table(r, out);
    CHECK(out.str().find("at 50 GB/s a NIC port (48 GB/s a GPU): from 4096 GPUs, and at 64 GPUs (estimated, "
                         "not simulated)\n") != std::string::npos);
  }
  {  // ahead at the smaller counts only: no "from"
    const auto r = study({at(64, 109, 100), at(256, 106, 100), at(4096, 100, 100)}, {64, 256, 4096});
    std::ostringstream out;
    analysis::print_llm_table(r, out);
    CHECK(out.str().find("at 50 GB/s a NIC port (48 GB/s a GPU): at 64 and 256 GPUs, not at 4096 (estimated, "
                         "not simulated)\n") != std::string::npos);
  }
}

TEST_CASE("llm study: where the families train at different batches, the critical batch they meet at") {
  // DP-heavy: 4 M tokens a batch at 2 M tokens/s (2 s a step); 3D: 2 M at 1.5 M tokens/s (4/3 s).
  // Times to train go as (B_crit + B) / (B_crit R): equal where (B_crit + 4e6) / 2e6 = (B_crit + 2e6) /
  // 1.5e6, i.e. B_crit = 4e6 tokens; above it DP-heavy's tokens/s win, below it 3D's shorter step.
  LlmStudyCell c = cell(16384);
  c.dp_heavy = plan(4000, 2e6, 2048);
  c.three_d = plan(2000, 1.5e6, 256);
  c.dp_heavy_ttt = {1};
  c.three_d_ttt = {1};
  std::ostringstream out;
  analysis::print_llm_table(study({c}, {16384}), out);
  CHECK(out.str().find("dp 2048 tp 8 mb 1 Z3 B 4000") != std::string::npos);
  CHECK(out.str().find("break-even, toy on 16384 GPUs of dgx-h100 (DP-heavy at 4,000,000 tokens a batch, 3D "
                       "at 2,000,000): critical batch 4,000,000 tokens; DP-heavy trains faster above it, 3D "
                       "below") != std::string::npos);
  // With DP-heavy also slower, 3D wins at every critical batch.
  c.dp_heavy = plan(4000, 1e6, 2048);
  std::ostringstream slower;
  analysis::print_llm_table(study({c}, {16384}), slower);
  CHECK(slower.str().find("3D trains faster at every critical batch") != std::string::npos);
}

TEST_CASE("llm study: the break-even compares each family at its fastest of the batches it was planned at") {
  // Sequences of 1,000 tokens. A time to train goes as (1 + B x) / R, x = 1 / B_crit, B tokens a batch
  // at R tokens/s: a line in x for each plan, a family's time the lowest of its lines.
  // 1. DP-heavy at 4 M tokens and 2 M tokens/s; 3D at 2 M and 1.5 M tokens/s, and at DP-heavy's 4 M at
  // 2.1 M tokens/s. Against 3D's 2 M plan alone DP-heavy wins above B_crit 4 M (the test above), but 3D's
  // 4 M plan beats DP-heavy's at every critical batch (the same batch, more tokens/s): 3D everywhere.
  LlmStudyCell c = cell(16384);
  c.dp_heavy = plan(4000, 2e6, 2048);
  c.three_d = plan(2000, 1.5e6, 256);
  c.dp_heavy_options = {*c.dp_heavy};
  c.three_d_options = {*c.three_d, plan(4000, 2.1e6, 512)};
  c.dp_heavy_ttt = c.three_d_ttt = {1};
  std::ostringstream out;
  analysis::print_llm_table(study({c}, {16384}), out);
  CAPTURE(out.str());
  CHECK(out.str().find("break-even, toy on 16384 GPUs of dgx-h100 (each family at its fastest of the batches "
                       "it was planned at, 2,000,000 to 4,000,000 tokens): 3D trains faster at every "
                       "critical batch\n") != std::string::npos);
  // 2. 3D's plan at 4 M is DP-heavy's own (as where 3D's layouts include DP-heavy's): 3D's 2 M plan is
  // faster below B_crit 4 M (where it met DP-heavy's above), the same plan above it.
  c.three_d_options[1] = *c.dp_heavy;
  std::ostringstream same;
  analysis::print_llm_table(study({c}, {16384}), same);
  CHECK(
      same.str().find("(each family at its fastest of the batches it was planned at, 2,000,000 to 4,000,000 "
                      "tokens): critical batch 4,000,000 tokens; both train alike above it, 3D below\n") !=
      std::string::npos);
  // 3. DP-heavy at 1 M tokens and 1 M tokens/s (1/R 1e-6, B/R 1 s) and at 8 M and 4 M tokens/s (0.25e-6,
  // 2 s); 3D at 2 M and 1.6 M tokens/s (0.625e-6, 1.25 s). 3D's line is lowest between its crossings
  // with DP-heavy's 1 M plan, 1e-6 + x = 0.625e-6 + 1.25 x at x = 1.5e-6 (B_crit 666,667 tokens), and
  // with its 8 M plan, 0.625e-6 + 1.25 x = 0.25e-6 + 2 x at x = 0.5e-6 (B_crit 2 M); DP-heavy's 1 M plan
  // below the first, its 8 M plan above the second.
  c.dp_heavy = plan(1000, 1e6, 1024);
  c.dp_heavy_options = {*c.dp_heavy, plan(8000, 4e6, 8192)};
  c.three_d = plan(2000, 1.6e6, 256);
  c.three_d_options = {*c.three_d};
  std::ostringstream three;
  analysis::print_llm_table(study({c}, {16384}), three);
  CAPTURE(three.str());
  CHECK(
      three.str().find("(each family at its fastest of the batches it was planned at, 1,000,000 to 8,000,000 "
                       "tokens): critical batches 666,667, 2,000,000 tokens; DP-heavy trains faster below "
                       "666,667, 3D trains faster from 666,667 to 2,000,000, DP-heavy trains faster above "
                       "2,000,000\n") != std::string::npos);
}

TEST_CASE("llm study: at every critical batch each family trains at its fastest of the same batches") {
  // GPT-3 175B (1,536 sequences of 2,048 tokens; 300 B tokens at that batch, transformers.md) on 16,384
  // GPUs of DGX H100: DP-heavy (dp >= 2,048) has no layout at 1,536 and is planned at 2,048, 4,096,
  // 8,192 and 16,384 sequences; 3D at 1,536 and at each of those. A plan of B tokens a batch at R tokens/s
  // trains in 300e9 (1 + B / B_crit) / (1 + 3,145,728 / B_crit) / R seconds (Kaplan et al.). Each
  // family's time at each critical batch must be the least of its plans', and 3D's no more than
  // DP-heavy's (3D's layouts include DP-heavy's at every batch DP-heavy was planned at). 3D took the
  // first critical batch's plan at every critical batch: at 8 M its 2,048 sequences took 41.2 h, more
  // than DP-heavy's 40.5 h, where its plan at DP-heavy's batch is as fast as DP-heavy's own; and
  // DP-heavy took the batch of its shortest step, 4,096, where 8,192 trains faster at 2 M tokens.
  analysis::LlmStudyConfig config = grid("gpt3-175b", {"dgx-h100"}, {16384}, "400 Gb/s");
  config.critical_batch_tokens = {2e6, 8e6};
  config.simulate = 1;
  const analysis::LlmStudyResult r = analysis::run_llm_study(config, {.max_events = "1"});  // estimates
  REQUIRE(r.cells.size() == 1);
  const LlmStudyCell& c = r.cells[0];
  REQUIRE(c.published_batch == 1536);
  REQUIRE(c.sequence == 2048);
  REQUIRE(c.dp_heavy);
  REQUIRE(c.three_d);
  const auto seconds = [](const LlmPlanCandidate& p, double critical) {
    const double batch = static_cast<double>(p.layout.global_batch) * 2048;
    return 300e9 * (1 + batch / critical) / (1 + 1536.0 * 2048 / critical) / p.tokens_per_second;
  };
  std::vector<std::int64_t> dp_batches, three_d_batches;
  for (const LlmPlanCandidate& p : c.dp_heavy_options) dp_batches.push_back(p.layout.global_batch);
  for (const LlmPlanCandidate& p : c.three_d_options) three_d_batches.push_back(p.layout.global_batch);
  CHECK(dp_batches == std::vector<std::int64_t>{2048, 4096, 8192, 16384});
  CHECK(three_d_batches == std::vector<std::int64_t>{1536, 2048, 4096, 8192, 16384});
  for (std::size_t i = 0; i < 2; ++i) {
    const double critical = config.critical_batch_tokens[i];
    CAPTURE(critical);
    for (const auto& [options, ttt, batch] :
         {std::tuple{&c.dp_heavy_options, &c.dp_heavy_ttt, &c.dp_heavy_ttt_batch},
          std::tuple{&c.three_d_options, &c.three_d_ttt, &c.three_d_ttt_batch}}) {
      double least = INFINITY;
      std::int64_t at = 0;
      for (const LlmPlanCandidate& p : *options)
        if (seconds(p, critical) < least) {
          least = seconds(p, critical);
          at = p.layout.global_batch;
        }
      CHECK((*ttt)[i] == doctest::Approx(least).epsilon(1e-12));
      CHECK((*batch)[i] == at);
    }
    CHECK(c.three_d_ttt[i] <= c.dp_heavy_ttt[i] * (1 + 1e-12));
  }
  // The rows shown are the first critical batch's.
  CHECK(c.dp_heavy_ttt[0] == doctest::Approx(seconds(*c.dp_heavy, 2e6)).epsilon(1e-12));
  CHECK(c.three_d_ttt[0] == doctest::Approx(seconds(*c.three_d, 2e6)).epsilon(1e-12));
}

TEST_CASE("llm study: a family without a plan is named by the planner's kind of refusal, not its wording") {
  // The same refusal kinds under messages that no longer start with the option they name: the table
  // still says "none fits" and "no layout"; a failure of another kind (no refusal) says "failed".
  LlmStudyCell c = cell(64);
  c.dp_heavy_note = "nothing of the model fits (reworded)";
  c.dp_heavy_refusal = analysis::LlmPlanRefusal::NothingFits;
  c.three_d_note = "--memory is not what this is about: nothing takes the batch";
  c.three_d_refusal = analysis::LlmPlanRefusal::NoLayout;
  c.dp_heavy_ttt = c.three_d_ttt = {0};  // no plan: no time to train
  std::ostringstream out;
  analysis::print_llm_table(study({c}, {64}), out);
  const std::string table = out.str();
  CHECK(table.find("none fits") < table.find("no layout"));  // DP-heavy's column comes first
  CHECK(table.find("failed") == std::string::npos);
  c.three_d_refusal.reset();
  std::ostringstream failed;
  analysis::print_llm_table(study({c}, {64}), failed);
  CHECK(failed.str().find("no layout") == std::string::npos);
  CHECK(failed.str().find("failed") != std::string::npos);
}

TEST_CASE(
    "llm study: a family's note names the study file's keys and the study's options, not the planner's") {
  // GPT-3 175B on one DGX A100: 175 B parameters at 16 bytes over 8 GPUs is 350 GB a GPU, nothing
  // fits in 80 GiB (no candidate is built).
  const analysis::LlmStudyResult r = analysis::run_llm_study(grid("gpt3-175b", {"dgx-a100"}, {8}, "25 GB/s"));
  REQUIRE(r.cells.size() == 1);
  const LlmStudyCell& c = r.cells[0];
  CHECK(c.dp_heavy_refusal == analysis::LlmPlanRefusal::NothingFits);
  for (const std::string& note : {c.dp_heavy_note, c.three_d_note}) {
    CAPTURE(note);
    CHECK(note.starts_with("none of the"));
    CHECK(note.find("more GPUs in the study file's gpus, or a larger study --memory") != std::string::npos);
    CHECK(note.find("--gpus") == std::string::npos);
    CHECK(note.find("expected a larger --memory") == std::string::npos);
  }
}

TEST_CASE(
    "llm study: a family's simulated best that its own estimated, not simulated layout may beat is said") {
  // hunt6: llama3-8b on 8 GPUs of dgx-h100 (simulate 2). DP-heavy's best by the closed form, dp 8 mb 1
  // Z3 (49,200 tokens/s), was over the events budget; the row shown was the next one simulated, mb 8
  // full recomputation (45,328), so 3D's 50,046 was 1.10x: "stops paying at 8 GPUs". Simulated
  // (`run --max-events 0`), the mb 1 layout gives 48,384 tokens/s: 1.03x, under the 5%.
  LlmStudyCell c = cell(8);
  c.dp_heavy = plan(2000, 45328, 8);
  c.dp_heavy->step = analysis::StepPoint{};  // simulated
  c.dp_heavy->estimated_only.clear();
  c.dp_heavy_faster_estimate = plan(2000, 49200, 8);
  c.dp_heavy_faster_estimate->layout.micro_batch = 1;
  c.three_d = plan(2000, 50046, 8);
  c.three_d->step = analysis::StepPoint{};
  c.three_d->estimated_only.clear();
  c.dp_heavy_ttt = {110.4};
  c.three_d_ttt = {100};
  const auto r = study({c}, {8});
  REQUIRE(analysis::llm_three_d_advantage(r, r.cells[0]) == doctest::Approx(1.104));
  std::ostringstream out;
  analysis::print_llm_table(r, out);
  const std::string table = out.str();
  CAPTURE(table);
  CHECK(table.find("DP-heavy, toy on 8 GPUs of dgx-h100 at 50 GB/s a NIC port (48 GB/s a GPU): dp 8 tp 8 mb "
                   "1 Z3, not simulated (over "
                   "the budget), may be faster than the simulated row: 49,200 tokens/s by its closed form "
                   "against 45,328\n") != std::string::npos);
  CHECK(table.find("DP-heavy stops paying, toy on dgx-h100 at 50 GB/s a NIC port (48 GB/s a GPU): from 8 "
                   "GPUs (at 8 GPUs a layout not "
                   "simulated may beat a family's simulated best: see its line above)\n") !=
        std::string::npos);
  // cells.csv's note for the simulated row names the layout that may beat it.
  const std::string csv = written_cells_csv(r, "hybridsim-llm-study-faster-estimate");
  CAPTURE(csv);
  CHECK(csv.find(",45328.000000,5666.000000,0,\"may be beaten by dp 8 tp 8 mb 1 Z3, not simulated (over the "
                 "budget): 49,200 tokens/s by its closed form\"\n") != std::string::npos);
}

TEST_CASE("llm study: a model's name longer than the column keeps every row under the header") {
  // mixtral-8x7b (12 characters) in the 10-wide model column pushed its row's GPUs, tokens/s and
  // 3D/DP two columns right of the header's: each row's GPU count must end where "GPUs" ends.
  const LlmStudyCell c = planned(64, plan(2000, 2e6, 8), plan(2000, 2e6, 8), 50, 50);
  auto r = study({c, c}, {64});
  r.cells[0].model = "mixtral-8x7b";
  std::ostringstream out;
  analysis::print_llm_table(r, out);
  const std::string table = out.str();
  CAPTURE(table);
  const std::size_t header = table.find("\nmodel ") + 1;  // the header's line
  REQUIRE(header != 0);
  const std::size_t header_end = table.find('\n', header);
  const std::size_t gpus_end = table.find("GPUs", header) + 4 - header;
  const std::string rows[] = {"mixtral-8x7b ", "toy "};
  for (const std::string& model : rows) {
    CAPTURE(model);
    const std::size_t row = table.find("\n" + model, header_end) + 1;
    REQUIRE(row != 0);
    CHECK(table.substr(row + gpus_end - 2, 3) == "64 ");
  }
}

TEST_CASE("llm study: a machine or layout longer than its column keeps every row under the header") {
  // hunt12: clusters: [pcie-server] (11 characters in the 9-wide machine column) pushed its rows'
  // GPUs, tokens/s and 3D/DP right of their headers, as a topology file's path or a mixture's 3D
  // layout past 50 characters did. Each row's GPU count ends where "GPUs" ends, its 3D/DP where
  // "3D/DP" ends.
  LlmPlanCandidate moe = plan(2000, 2e6, 16);
  moe.layout.ep = 8;
  moe.layout.pp = 4;
  moe.layout.schedule = workloads::PipelineSchedule::Interleaved;
  moe.layout.virtual_stages = 4;
  moe.layout.sequence_parallel = true;
  moe.layout.recompute = workloads::Recompute::Full;
  moe.layout.global_batch = 2048;  // "B 2048"
  auto r = study({planned(64, plan(2000, 2e6, 8), moe, 50, 25),
                  planned(64, plan(2000, 2e6, 8), plan(2000, 2e6, 8), 50, 50)},
                 {64});
  r.cells[0].cluster = "pcie-server";
  r.cells[1].cluster = "topologies/my-cluster.yaml";
  std::ostringstream out;
  analysis::print_llm_table(r, out);
  const std::string table = out.str();
  CAPTURE(table);
  const std::size_t header = table.find("\nmodel ") + 1;
  REQUIRE(header != 0);
  const std::size_t header_end = table.find('\n', header);
  const std::size_t gpus_end = table.find("GPUs", header) + 4 - header;
  const std::size_t ratio_end = header_end - header;  // "3D/DP" ends the line
  REQUIRE(table.substr(header_end - 5, 5) == "3D/DP");
  std::size_t row = header_end + 1;
  for (const char* ratio : {" 2.00", " 1.00"}) {
    CAPTURE(ratio);
    const std::size_t end = table.find('\n', row);
    REQUIRE(end != std::string::npos);
    CHECK(table.substr(row + gpus_end - 3, 3) == " 64");
    CHECK(end - row == ratio_end);
    CHECK(table.substr(end - 5, 5) == ratio);
    row = end + 1;
  }
}

TEST_CASE("llm study: cells.csv says the batch each family's row ran at") {
  // moe3d: a family with no layout at the published batch (2,000 sequences here) runs at one of
  // batches_above, and the table's label says "B n"; cells.csv had no batch column, so a reader of
  // the CSV took the row's tokens/s as the published batch's. DP-heavy at 4,096 sequences (dp 512),
  // 3D at the published 2,000 (dp 250); a family with no plan has the column empty.
  const LlmStudyCell c = planned(4096, plan(4096, 2e6, 512), plan(2000, 1.5e6, 250), 50, 60);
  LlmStudyCell none = cell(8);
  none.dp_heavy_note = "no layout";
  none.three_d_note = "no layout";
  none.dp_heavy_ttt = {0};  // as the study fills them: no time
  none.three_d_ttt = {0};
  const auto rows =
      csv_rows(written_cells_csv(study({none, c}, {8, 4096}), "hybridsim-llm-study-cells-batch"));
  REQUIRE(rows.size() == 5);
  const auto& header = rows[0];
  const auto column = [&](const std::string& name) { return column_of(header, name); };
  REQUIRE(column("global_batch") < header.size());
  for (const auto& row : rows) REQUIRE(row.size() == header.size());
  const struct {
    const char *gpus, *family, *dp, *batch;
  } expected[] = {{"8", "dp-heavy", "", ""},
                  {"8", "3d", "", ""},
                  {"4096", "dp-heavy", "512", "4096"},
                  {"4096", "3d", "250", "2000"}};
  for (std::size_t i = 0; i < 4; ++i) {
    const auto& row = rows[i + 1];
    CAPTURE(i);
    CHECK(row[column("gpus")] == expected[i].gpus);
    CHECK(row[column("family")] == expected[i].family);
    CHECK(row[column("dp")] == expected[i].dp);
    CHECK(row[column("global_batch")] == expected[i].batch);
  }
}

TEST_CASE("llm study: cells.csv says a mixture's expert-parallel size") {
  // The table's layout reads "dp 16 tp 1 ep 8 mb 8 full Z2" for Mixtral 8x7B on 16 H100 (hunt12), but
  // cells.csv had dp, tp and pp and no ep: its row read as a dense dp 16 replica, each GPU with every
  // expert. DP-heavy at ep 8, 3D at ep 1 (a dense model's); each row's ep in a column of its own.
  LlmPlanCandidate moe = plan(2000, 2e6, 16);
  moe.layout.ep = 8;
  const auto rows = csv_rows(written_cells_csv(study({planned(16, moe, plan(2000, 1e6, 16), 50, 60)}, {16}),
                                               "hybridsim-llm-study-ep"));
  REQUIRE(rows.size() == 3);
  const auto& header = rows[0];
  const std::size_t ep = column_of(header, "ep");
  REQUIRE(ep < header.size());
  CHECK(header[ep - 1] == "pp");
  for (const auto& row : rows) REQUIRE(row.size() == header.size());
  CHECK(rows[1][column_of(header, "family")] == "dp-heavy");
  CHECK(rows[1][ep] == "8");
  CHECK(rows[2][ep] == "1");
}

TEST_CASE("llm study: IB port is the study file's rate a NIC port, IB/GPU what it carries for a GPU") {
  // hunt7: on a DGX-1 (4 EDR NICs for 8 GPUs, each NIC on a 12 GB/s PCIe Gen3 link) the column said
  // "50 GB/s" for the GPU. A GPU's share (topology::ib_share_per_gpu) is 4 × min(50, 12) / 8 = 6 GB/s;
  // a DGX H100's, 8 NICs on 48 GB/s Gen5 links for 8 GPUs, 8 × min(50, 48) / 8 = 48 GB/s. GPT-3 175B
  // on 8 GPUs fits neither (no candidate is built), so the cells come without a simulation.
  const analysis::LlmStudyResult r =
      analysis::run_llm_study(grid("gpt3-175b", {"dgx1-v100", "dgx-h100"}, {8}, "50 GB/s"));
  REQUIRE(r.cells.size() == 2);
  CHECK(r.cells[0].ib == "50 GB/s");
  CHECK(r.cells[0].ib_per_gpu == "6 GB/s");
  CHECK(r.cells[1].ib_per_gpu == "48 GB/s");
  std::ostringstream out;
  analysis::print_llm_table(r, out);
  const std::string table = out.str();
  CAPTURE(table);
  CHECK(table.find("gpt3-175b  dgx1-v100 50 GB/s   6 GB/s         8 ") != std::string::npos);
  CHECK(table.find("DP-heavy stops paying, gpt3-175b on dgx1-v100 at 50 GB/s a NIC port (6 GB/s a GPU): ") !=
        std::string::npos);
}

TEST_CASE("llm study: port rates that give a machine's GPUs the same share are said to repeat their rows") {
  // A DGX H100's 8 NICs sit on PCIe Gen5 links of 48 GB/s: 400 and 800 Gb/s ports (50 and 100 GB/s)
  // both carry 48 GB/s a GPU, 200 Gb/s (25 GB/s) its own. A DGX-1's 4 NICs on 12 GB/s Gen3 links give
  // 4 × 12 / 8 = 6 GB/s a GPU at 25 GB/s and above. GPT-3 175B on 8 GPUs fits neither: no candidate built.
  analysis::LlmStudyConfig config = grid("gpt3-175b", {"dgx-h100", "dgx1-v100"}, {8}, "200 Gb/s");
  config.ib_bandwidths = {"200 Gb/s", "400 Gb/s", "800 Gb/s"};
  const analysis::LlmStudyResult r = analysis::run_llm_study(config);
  REQUIRE(r.cells.size() == 6);
  const std::string table = [&] {
    std::ostringstream out;
    analysis::print_llm_table(r, out);
    return out.str();
  }();
  CAPTURE(table);
  CHECK(table.find("IB on dgx-h100: 400 Gb/s and 800 Gb/s a NIC port both carry 48 GB/s a GPU (each NIC held "
                   "to the lesser of its port and its PCIe link), so their rows differ only where the "
                   "leaf-spine links, which grow with the port rate, decide\n") != std::string::npos);
  CHECK(table.find("IB on dgx1-v100: 200 Gb/s, 400 Gb/s and 800 Gb/s a NIC port all carry 6 GB/s a GPU") !=
        std::string::npos);
  CHECK(table.find("IB on dgx-h100: 200 Gb/s") == std::string::npos);
}

TEST_CASE(
    "llm study: a family with no layout at the published batch takes the batch above of the shortest step") {
  // hunt7: Llama 3 8B (512 sequences) on 12 GPUs of DGX H100. DP-heavy (pp 1, tp 1, 2, 4 or 8 dividing
  // the GPUs) has dp 12, 6 or 3, none dividing 512: no layout. The batch was raised to a multiple of
  // GPUs / 8 = 1 replica, 512 again, and the cell read "no layout ... or the smallest above it with a
  // layout". Above 512 the smallest batches its replica counts take are 513 (dp 3, tp 4) and 516 (dp
  // 12 or 6); by the closed form (`plan -m llama3-8b --gpus 12 --gpu h100 --global-batch B`) the best
  // steps are 105.9 s at 513 (dp 3 tp 4 sp) and 57.3 s at 516 (dp 12 tp 1): 516 trains faster at every
  // critical batch, 513 would have made DP-heavy look 1.8x slower than 3D.
  analysis::LlmStudyConfig config = grid("llama3-8b", {"dgx-h100"}, {12}, "50 GB/s");
  config.simulate = 1;
  const analysis::LlmStudyResult r = analysis::run_llm_study(config, {.max_events = "1"});  // estimates
  REQUIRE(r.cells.size() == 1);
  const LlmStudyCell& c = r.cells[0];
  CAPTURE(c.dp_heavy_note);
  CHECK(c.published_batch == 512);
  REQUIRE(c.dp_heavy);
  CHECK(c.dp_heavy->layout.global_batch == 516);
  CHECK(c.dp_heavy->layout.dp == 12);
  CHECK(c.dp_heavy->layout.pp == 1);
  // The batches, on DP-heavy's rows (the pipeline's off): none at 512, then 513 and 516; from 516,
  // each replica count's next multiple, 519, 522 and 528.
  const analysis::LlmPlanRequest q =
      analysis::make_llm_plan_request({.model = "llama3-8b", .gpus = 12, .cluster = "dgx-h100"});
  std::vector<analysis::PlanDimension> rows = q.dimensions;
  for (analysis::PlanDimension& d : rows)
    if (d.name == "pp" || d.name == "schedule" || d.name == "virtual_stages") d.enabled = false;
  analysis::LlmSpace space{q.setting, 12, 8, 512};
  CHECK(analysis::enumerate_layouts(rows, space).empty());
  CHECK(!analysis::enumerate_layouts(q.dimensions, space).empty());  // 3D: dp 4 tp 1 pp 3, ...
  CHECK(analysis::batches_above(rows, space) == std::vector<std::int64_t>{513, 516});
  space.global_batch = 516;
  CHECK(analysis::batches_above(rows, space) == std::vector<std::int64_t>{519, 522, 528});
}
