// The LLM study (format hybridsim-llm-study/1; scenarios/study/llm-at-scale.yaml): for each
// transformer, machine, InfiniBand bandwidth and GPU count, the best data-parallel-heavy plan
// (ZeRO-3/FSDP, tp <= 8, pp 1) against the best 3D plan (dp × tp × pp with every dimension the
// planner searches), both found by the transformer planner (analysis/plan/llm_planner.h), and where
// the first stops paying. A family needing a dimension the scenario loader does not know yet (its
// row disabled in llm_plan_dimensions()) is reported as such, not approximated.
//   LlmStudyConfig c = load_llm_study_config("scenarios/study/llm-at-scale.yaml");
//   LlmStudyResult r = run_llm_study(c, {.progress = &std::cerr});  print_llm_study(r, std::cout);
#pragma once
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
  std::vector<std::string> ib_bandwidths{};       // per GPU; the first is the headline
  std::optional<double> critical_batch_tokens{};  // none: ranked by tokens/s
  int simulate = 2;                               // candidates simulated per plan (the planner's K)
  std::filesystem::path output = "out/study/llm";
  int threads = 0;
};

// True when the file's `format` is kLlmStudyFormat (the study command dispatches on it).
bool is_llm_study_file(const std::filesystem::path& path);
LlmStudyConfig load_llm_study_config(const std::filesystem::path& path);

struct LlmStudyCell {
  std::string model, cluster, ib;
  int gpus = 0;
  std::optional<LlmPlanCandidate> dp_heavy{}, three_d{};
  std::string dp_heavy_note{}, three_d_note{};  // why a family has no plan
};

struct LlmStudyResult {
  LlmStudyConfig config{};
  std::vector<LlmStudyCell> cells{};
  double wall_seconds = 0;
};

struct LlmStudyRunOptions {
  std::ostream* progress = nullptr;
  std::optional<int> threads{};
};
LlmStudyResult run_llm_study(const LlmStudyConfig& config, const LlmStudyRunOptions& options = {});
// The table (tokens/s of each family, 3D over DP-heavy) and, per model, machine and bandwidth,
// the first GPU count from which the DP-heavy plan stops paying (3D at least 5% faster).
void print_llm_study(const LlmStudyResult& result, std::ostream& out);

}  // namespace hybridsim::analysis
