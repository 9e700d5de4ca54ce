// The LLM study (format hybridsim-llm-study/1; scenarios/study/llm-at-scale.yaml): for each
// transformer, machine, InfiniBand bandwidth and GPU count, the best data-parallel-heavy plan
// (ZeRO-3/FSDP, tp <= 8, pp 1) against the best 3D plan (dp × tp × pp with every dimension the
// planner searches), both found by the transformer planner (analysis/plan/llm_planner.h), and where
// the first stops paying; time to train under each stated critical batch. A family's best plan whose
// step would simulate past the planner's budget (it does not fold yet) is its closed-form estimate,
// and the cell says so ("estimated"); the report (CSV, plots, README.md) keeps the two apart.
//   LlmStudyConfig c = load_llm_study_config("scenarios/study/llm-at-scale.yaml");
//   LlmStudyResult r = run_llm_study(c, {.progress = &std::cerr});  print_llm_study(r, std::cout);
//   write_llm_study_report(r, c.output);
#pragma once
#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/plan/llm_planner.h"

namespace hybridsim::analysis {

inline constexpr std::string_view kLlmStudyFormat = "hybridsim-llm-study/1";

struct LlmStudyConfig {
  std::string title{};
  std::string source = "<memory>";
  std::vector<std::string> models{};
  std::vector<std::string> clusters{};  // machine presets (dgx-a100, dgx-h100)
  std::vector<int> gpus{};
  std::vector<std::string> ib_bandwidths{};  // per NIC port; the first is the headline
  // Kaplan et al.'s critical batch in tokens, a stated assumption varied over these values (the
  // first is the headline); empty: tokens/s only. At each model's fixed batch it moves both
  // families' time to train alike, so plans are ranked by tokens/s.
  std::vector<double> critical_batch_tokens{};
  int simulate = 2;                               // candidates simulated per plan (the planner's K)
  std::filesystem::path output = "out/study/llm";
  int threads = 0;
};

// True when the file's `format`, as YAML reads it, is of kLlmStudyFormat's family ("hybridsim-llm-study/";
// the study command dispatches on it, and the LLM reader refuses another version).
bool is_llm_study_file(const std::filesystem::path& path);
LlmStudyConfig load_llm_study_config(const std::filesystem::path& path);

struct LlmStudyCell {
  // `ib`: InfiniBand per NIC port, as the study file gives it (cluster.links.infiniband.bandwidth);
  // `ib_per_gpu`: what it carries for one GPU when all send at once (topology::ib_share_per_gpu: the
  // machine's NICs, each at the lesser of its port and its PCIe link, over its GPUs; DGX-1's 4 NICs
  // on 12 GB/s links for 8 GPUs give 6 GB/s at any port from 100 Gb/s).
  std::string model, cluster, ib;
  int gpus = 0;
  std::string ib_per_gpu{};
  std::optional<LlmPlanCandidate> dp_heavy{}, three_d{};
  // Where a family's plan is simulated, its best layout estimated, not simulated (over the events
  // budget), when that layout's closed form beats the simulated one (the planner's "may be faster
  // than #1"): the table and the verdict say that the simulated row may not be the family's best.
  std::optional<LlmPlanCandidate> dp_heavy_faster_estimate{}, three_d_faster_estimate{};
  std::string dp_heavy_note{}, three_d_note{};  // why a family has no plan
  // Its kind, which the table's verdict follows ("no layout", "none fits"); empty: "failed".
  std::optional<LlmPlanRefusal> dp_heavy_refusal{}, three_d_refusal{};
  // The model's published global batch and sequence length: a family whose plan had to take a larger
  // batch (DP-heavy past batch / (GPUs / 8) replicas) shows it, and the critical batch prices it.
  std::int64_t published_batch = 0, sequence = 0;
  // Each family's best plan at every batch it was planned at: the published one, or where the family
  // had to take a larger one, each it chose among (3D also DP-heavy's). At each critical batch a family
  // trains at the one of them it trains fastest at, so that both are compared each at its best batch;
  // `dp_heavy` and `three_d` above are the first critical batch's (empty: those alone).
  std::vector<LlmPlanCandidate> dp_heavy_options{}, three_d_options{};
  // Per critical batch of the config: each family's time to train in seconds (0: no plan), and the
  // batch in sequences it trains at there.
  std::vector<double> dp_heavy_ttt{}, three_d_ttt{};
  std::vector<std::int64_t> dp_heavy_ttt_batch{}, three_d_ttt_batch{};
};

struct LlmStudyResult {
  LlmStudyConfig config{};
  std::vector<LlmStudyCell> cells{};
  double wall_seconds = 0;
};

struct LlmStudyRunOptions {
  std::ostream* progress = nullptr;
  std::optional<int> threads{};
  std::string max_events{};  // each candidate's budget (study --max-events); empty: the planner's
  std::string max_sim_memory{};  // the candidates' shared memory (study --max-sim-memory); likewise
  std::optional<std::string> memory{};  // each GPU's memory, a what-if (study --memory); none: the GPU's
  OptionSpelling spelling{};            // how refusals name those options (Python's max_events=)
};
LlmStudyResult run_llm_study(const LlmStudyConfig& config, const LlmStudyRunOptions& options = {});
// The table (tokens/s of each family, 3D over DP-heavy) and, per model, machine and bandwidth,
// the first GPU count from which the DP-heavy plan stops paying (3D at least 5% faster), and, where
// the families train at different batches, the critical batch at which they break even.
void print_llm_study(const LlmStudyResult& result, std::ostream& out);
// The same without the counts of simulated and estimated plans (the report's README.md).
void print_llm_table(const LlmStudyResult& result, std::ostream& out);
// How much faster the cell's best 3D plan trains than its best DP-heavy one: their times to train at
// the first critical batch (which prices a larger batch) when one is stated, else their tokens/s;
// 0 without both plans.
double llm_three_d_advantage(const LlmStudyResult& result, const LlmStudyCell& cell);
// The report folder: README.md (the table above and every assumption), cells.csv (both families of
// every cell, simulated or estimated), time_to_train.csv (per critical batch), and the pictures
// tokens_per_gpu.png (per GPU, both families, headline bandwidth) and ib_sensitivity.png (3D over
// DP-heavy at each bandwidth), each with its gnuplot script.
struct StudyReportFiles;
struct StudyReportOptions;
StudyReportFiles write_llm_study_report(const LlmStudyResult& result, const std::filesystem::path& dir,
                                        const StudyReportOptions& options);

}  // namespace hybridsim::analysis
