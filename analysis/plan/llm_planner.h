// The transformer planner: for a named transformer (gpt3-175b, llama3-70b, ...) on N GPUs, enumerates
// the layouts of the dimension table (analysis/plan/llm_dimensions.h), keeps those whose most loaded
// stage fits in a GPU's memory (closed forms), ranks them by the analytic step estimate, simulates
// the best K through the scenario loader (each candidate a `--set`-style overlay, as `hybridsim
// run` resolves it) and ranks the simulated ones by time to train when a critical batch is given
// (Kaplan et al. 2020's trade-off, ../shared/reference/transformers.md), else by tokens/s, saying
// which; it explains the winner against the runner-up.
//   LlmPlanResult r = plan_llm(make_llm_plan_request({.model = "llama3-8b", .gpus = 64, .gpu = "h100"}));
//   print_llm_plan(r, std::cout);
#pragma once
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "analysis/plan/llm_dimensions.h"
#include "analysis/study/study_steps.h"
#include "workloads/memory/memory_model.h"

namespace hybridsim::analysis {

struct LlmPlanRequest {
  std::string model;  // a named transformer
  LlmSetting setting{};
  int gpus = 8;
  ClusterSpec cluster{};
  std::string gpu{};              // workload.gpu's key; empty: the preset's
  std::int64_t global_batch = 0;  // sequences per optimizer step
  // Kaplan et al.'s critical batch in tokens (none: rank by tokens/s) and the tokens the model trains
  // on at its published batch (`reference_batch` sequences), to project time to train.
  std::optional<double> critical_batch_tokens{};
  double training_tokens = 0;
  std::int64_t reference_batch = 0;
  workloads::MemoryCapacity memory{};
  std::vector<PlanDimension> dimensions = llm_plan_dimensions();
  int simulate = 8;  // the best K by the estimate that are simulated; 0: every one that fits
  int threads = 0;
  std::ostream* progress = nullptr;
  std::vector<std::string> limits{};  // limit_overlay()
  LlmMachine machine{};
};

struct LlmPlanCandidate {
  LlmLayout layout{};
  LlmMemory memory{};
  LlmTimeEstimate estimate{};
  std::optional<StepPoint> step{};  // when simulated
  double tokens_per_second = 0;
  std::optional<double> time_to_train_seconds{};
  std::string why{};
};

struct LlmPlanResult {
  std::string model{};
  int gpus = 0;
  LlmPlanRequest request{};                // what was asked (dimensions, memory, batch, critical batch)
  std::size_t enumerated = 0;              // valid layouts
  std::size_t fitting = 0;                 // of them, those that fit in memory
  std::vector<LlmPlanCandidate> ranked{};  // the simulated ones, best first
  std::vector<std::string> skipped{};      // simulated candidates that failed, with why
  bool by_time_to_train = false;
};

// The index of the runner-up in r.ranked: the first after the best whose simulated step differs
// (ranked.size() when none does).
std::size_t llm_runner_up(const LlmPlanResult& r);
// InputError naming the option when nothing fits (--memory, --gpus or --global-batch).
LlmPlanResult plan_llm(const LlmPlanRequest& request, StepCache* cache = nullptr);
void print_llm_plan(const LlmPlanResult& result, std::ostream& out, int top = 5);

// The candidates that fit, with their closed forms, best estimate first (what plan_llm simulates the
// head of). Empty when none fits.
std::vector<LlmPlanCandidate> llm_fitting_candidates(const LlmPlanRequest& request, std::size_t* enumerated);

struct LlmPlanOptions {
  std::string model{};
  int gpus = 8;
  std::string gpu{};      // "a100-80gb", "a100", "h100", ...; empty: the cluster's
  std::string cluster{};  // empty: the GPU's DGX/HGX machine (dgx-a100 for an A100)
  std::optional<std::string> ib_bandwidth{};
  std::optional<std::string> memory{};
  std::int64_t global_batch = 0;  // 0: the model's published batch
  std::optional<double> critical_batch_tokens{};
  int simulate = 8;
  int threads = 0;
  std::string max_events{}, max_sim_memory{};
};
bool is_llm_plan_model(const std::string& model);
LlmPlanRequest make_llm_plan_request(const LlmPlanOptions& options);

}  // namespace hybridsim::analysis
