// The transformer planner: for a named transformer (gpt3-175b, llama3-70b, ...) on N GPUs, enumerates
// the layouts of the dimension table (analysis/plan/llm_dimensions.h), keeps those whose most loaded
// stage fits in a GPU's memory (closed forms), ranks them by the analytic step estimate, simulates
// the best K through the scenario loader (each candidate a `--set`-style overlay, as `hybridsim
// run` resolves it) and ranks the simulated ones by time to train when a critical batch is given
// (Kaplan et al. 2020's trade-off, ../shared/reference/transformers.md), else by tokens/s, saying
// which; it explains the winner against the runner-up.
// A candidate whose step would simulate more events than the plan's budget (--max-events, by
// default kPlanCandidateEvents), found before its event loop starts by the run's own estimate
// (analysis/step/step_estimate.h: what the fold leaves to simulate), is not simulated: it keeps its
// closed form and is marked "estimated, not simulated" (a step that folds onto a few GPUs costs
// little and is simulated; one that does not fold is estimated until it does). So is one whose
// program of every GPU's tasks, which that estimate needs built, would take too long to build or
// hold too much memory, judged before it is built (analysis/plan/llm_candidate_cost.h); those
// built at once on the threads share one memory budget.
// The verdict rests on simulated rows only: they are ranked first, and the estimated ones are
// listed apart after them, never ranked against them (the closed form runs a few per cent off the
// simulator, low on pipelines: an estimated #1 above simulated rows was slower in its own `run`).
// Only where nothing could be simulated are the estimates ranked, as estimates.
//   LlmPlanResult r = plan_llm(make_llm_plan_request({.model = "llama3-8b", .gpus = 64, .gpu = "h100"}));
//   print_llm_plan(r, std::cout);
#pragma once
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "analysis/plan/llm_dimensions.h"
#include "analysis/study/study_steps.h"
#include "sim/budget.h"
#include "sim/error.h"
#include "workloads/memory/memory_model.h"

namespace hybridsim::analysis {

// Events one candidate's step may simulate (plan --max-events): 2×10^7, about 4 s at sim/budget.h's
// 5 M events/s, so that K candidates stay within the plan's 30 s target (issue 29).
inline constexpr std::uint64_t kPlanCandidateEvents = 20'000'000;
// How a refusal or an estimated row names what the user would change: the plan's options, or
// (the LLM study, whose user writes a file) its own keys and options. An empty prefix leaves the
// message unlocated.
struct LlmPlanNames {
  std::string gpus = "--gpus";  // before the GPU count when no layout takes it ("--gpus 64: ...")
  std::string other_layout = "another --gpus or --global-batch";
  std::string memory = "--memory";  // before "none of the layouts fits"
  std::string more_memory = "a larger --memory or more --gpus";
  std::string max_events = "--max-events", max_sim_memory = "--max-sim-memory";
};

// Kaplan et al.'s critical batch, in tokens: from one token to 1e15, a thousand times the largest
// training set of a named model. Under one token the time to train came out n/a (inf / inf) on
// every row, above 9.2e18 the header printed "critical batch -0 tokens" (a rounding past int64).
inline constexpr double kCriticalBatchTokensMin = 1;
inline constexpr double kCriticalBatchTokensMax = 1e15;

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
  // Where the preset's GPU is another part of the chip whose cost model prices the kernels (dgx2,
  // pcie-server under no --gpu): the note run and the 2017 networks' plan print; empty otherwise.
  std::string gpu_note{};
  std::vector<PlanDimension> dimensions = llm_plan_dimensions();
  int simulate = 8;  // the best K by the estimate that are simulated; 0: every one that fits
  // Candidates tried for simulation at most, best estimate first, while fewer than K simulated (those
  // over the budget keep their closed form, listed apart): 2K; 0: every one that fits.
  int attempts() const { return simulate * 2; }
  int threads = 0;
  std::ostream* progress = nullptr;
  std::string progress_label = "plan";  // what starts its progress lines (a study names its cell)
  std::vector<std::string> limits{};  // limit_overlay(): the candidates' budget (kPlanCandidateEvents)
  // That budget as the user set it (--max-events' text: "1", "unlimited"), for the report; empty: the
  // default, kPlanCandidateEvents.
  std::string events_budget_given{};
  std::uint64_t events_budget_count = kPlanCandidateEvents;  // the same as a count; 0: no limit
  // The memory the candidates built and simulated at once share (--max-sim-memory, by default
  // sim::kDefaultMaxMemory; analysis/plan/llm_candidate_cost.h); 0: no limit.
  std::int64_t memory_budget_bytes = sim::kDefaultMaxMemory;
  std::string memory_budget_given{};  // that budget as the user wrote it ("10 MB"); empty: the default
  LlmMachine machine{};
  LlmPlanNames names{};
  // How a candidate refused by its caps says to raise them, in the request's language ("--max-events N",
  // "max_events=N"): made from LlmPlanOptions::spelling.
  BudgetKnobs budget_knobs = study_budget_knobs();
};

struct LlmPlanCandidate {
  LlmLayout layout{};
  LlmMemory memory{};
  LlmTimeEstimate estimate{};
  std::optional<StepPoint> step{};  // when simulated
  std::string estimated_only{};     // when not: why (its step's estimated events over the budget)
  bool simulated() const { return step.has_value(); }
  double step_seconds() const;  // simulated, else the closed form's
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
  // The simulated rows, ranked best first, then those estimated, not simulated, best closed form
  // first: listed apart, never ranked against the simulated ones (ranked.front() is the best
  // simulated row wherever there is one; only where none is, the best estimate).
  std::vector<LlmPlanCandidate> ranked{};
  std::size_t estimated = 0;           // of ranked, those estimated, not simulated (its last ones)
  std::vector<std::string> skipped{};  // candidates that failed (not for their budget), with why
  bool by_time_to_train = false;
  std::size_t simulated_rows() const { return ranked.size() - estimated; }  // the first ones of ranked
};

// How far the closed form ran from the simulator on this plan's own simulated rows: the least and
// the largest of closed form / simulated step; none without a simulated row.
struct LlmClosedFormRatio {
  double least = 0, largest = 0;
};
std::optional<LlmClosedFormRatio> llm_closed_form_ratio(const LlmPlanResult& r);
// The estimated rows (after the simulated ones) whose closed form beats the best simulated row by the
// plan's metric (time to train, else tokens/s): they may be faster, and are not simulated. 0 where
// nothing was simulated.
std::size_t llm_estimated_faster(const LlmPlanResult& r);

// Tokens to train at a global batch of `batch_tokens` under Kaplan et al.'s trade-off with a
// critical batch of `critical` tokens, scaled from the model's published run (r.training_tokens at
// r.reference_batch sequences).
double llm_tokens_to_train(const LlmPlanRequest& r, double critical, double batch_tokens);

// The index of the runner-up in r.ranked: the first after the best, on the same basis (a simulated
// best against the simulated rows only), whose step differs (another simulated step, or another
// layout's estimate); ranked.size() when none does.
std::size_t llm_runner_up(const LlmPlanResult& r);
// Why plan_llm has no plan, for callers that decide on it (the LLM study's "no layout" / "none
// fits" and its larger batch): the kind, never the message's wording.
enum class LlmPlanRefusal : std::uint8_t {
  NoLayout,       // no layout of the GPUs takes the batch (--gpus or --global-batch)
  NothingFits,    // layouts exist, none fits in memory (--memory or --gpus)
  NoneSimulated,  // every candidate tried failed for another reason than its budget
};
// The InputError plan_llm throws when it has no plan: the message names the option, `reason` the kind.
class LlmPlanRefused : public InputError {
 public:
  LlmPlanRefused(LlmPlanRefusal reason, const std::string& what) : InputError(what), reason(reason) {}
  LlmPlanRefusal reason;
};
// LlmPlanRefused when nothing fits (naming --memory, --gpus or --global-batch) or nothing could be
// simulated; InputError for a request it cannot price (--critical-batch without a published run).
LlmPlanResult plan_llm(const LlmPlanRequest& request, StepCache* cache = nullptr);
void print_llm_plan(const LlmPlanResult& result, std::ostream& out, int top = 5);

// The `--set` overlay a candidate is simulated with (the request's cluster, model and GPU, the
// layout's rows, its batch and exchange, the request's limits): what `hybridsim run` resolves for
// it, so that a test can hold the closed form to the run of the same layout.
std::vector<std::string> llm_candidate_overlay(const LlmPlanRequest& request, const LlmLayout& layout);

// A candidate's cost judged before it is built (analysis/plan/llm_candidate_cost.h), on its own
// generated profile.
struct LlmCandidateCost;
LlmCandidateCost llm_plan_candidate_cost(const LlmPlanRequest& request, const LlmLayout& layout);

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
  OptionSpelling spelling{};  // the language refusals name these options in (--memory, memory=)
};
bool is_llm_plan_model(const std::string& model);
LlmPlanRequest make_llm_plan_request(const LlmPlanOptions& options);

}  // namespace hybridsim::analysis
