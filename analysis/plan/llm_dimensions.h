// The transformer planner's search space as a table: one row per dimension with its name, the
// scenario key a candidate sets (`--set` style, through the scenario loader), its candidate values,
// and its closed-form effect on memory and time (analysis/plan/llm_closed_forms.h). A disabled row
// (`enabled` false) keeps its default value and writes no key (the study's DP-heavy family turns
// the pipeline's rows off so).
//   for (const PlanDimension& d : llm_plan_dimensions()) d.values(space);   // e.g. tp: 1 2 4 8
//   std::vector<LlmLayout> all = enumerate_layouts(llm_plan_dimensions(), space);
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/plan/llm_closed_forms.h"

namespace hybridsim::analysis {

// What the values of a row depend on.
struct LlmSpace {
  LlmSetting setting{};
  int gpus = 1;
  int gpus_per_machine = 8;
  std::int64_t global_batch = 1;  // sequences per optimizer step
};

struct PlanDimension {
  std::string_view name;           // "tp"
  std::string_view key;            // "parallelism.tp"
  bool enabled = true;             // false: not searched; the default is kept
  std::string_view memory_effect;  // the closed form, in words (analysis/README.md prints the table)
  std::string_view time_effect;
  // The values searched, as the key's texts; empty: derived (dp = gpus / (tp · pp)).
  std::vector<std::string> (*values)(const LlmSpace& space) = nullptr;
  void (*set)(LlmLayout& layout, std::string_view value) = nullptr;
  std::string (*get)(const LlmLayout& layout) = nullptr;  // the key's value for a layout
};

// dp, tp, pp, sequence_parallel, micro_batch, recompute, zero, schedule, virtual_stages, ep, all
// enabled.
std::vector<PlanDimension> llm_plan_dimensions();
// The same table with every row enabled (tests of the closed forms).
std::vector<PlanDimension> llm_plan_dimensions_all_enabled();

// Every valid layout: the product of the enabled rows' values (disabled rows at their default), dp
// derived, those with an llm_layout_problem left out. Deterministic order (table order, values in
// order).
std::vector<LlmLayout> enumerate_layouts(const std::vector<PlanDimension>& dimensions, const LlmSpace& space);
// Per replica count the rows allow (dp = GPUs / (tp · pp)), the smallest multiple of it above
// space.global_batch that some layout takes (enumerate_layouts not empty there), looked for up to the
// first multiple of the most replicas; in increasing order, each once. Llama 3 8B's DP-heavy rows
// (pp 1) on 12 GPUs of 8 a machine take no 512 (dp 12, 6 or 3): 513 (dp 3) and 516 (dp 6 and 12).
std::vector<std::int64_t> batches_above(const std::vector<PlanDimension>& dimensions, const LlmSpace& space);

// The `--set` texts of the enabled rows for `layout` ("parallelism.tp=8", ...).
std::vector<std::string> layout_overlay(const std::vector<PlanDimension>& dimensions,
                                        const LlmLayout& layout);
// How a layout is written: Rows, every enabled row in the table's order, defaults included ("dp 64
// tp 8 pp 2 sp mb 1 recompute full zero 1 schedule 1f1b virtual_stages 1 ep 1": the plan's table);
// Compact, only what differs from the defaults, enabled or not, the pipeline's rows beside pp ("dp 16
// tp 4 pp 2 interleaved v4 sp mb 2 full Z3": the LLM study's table).
enum class LabelForm : std::uint8_t { Rows, Compact };
std::string layout_label(const std::vector<PlanDimension>& dimensions, const LlmLayout& layout,
                         LabelForm form = LabelForm::Rows);
// The rows whose values differ between a and b ("tp 8→4, micro_batch 1→2").
std::string layout_differences(const std::vector<PlanDimension>& dimensions, const LlmLayout& a,
                               const LlmLayout& b);

}  // namespace hybridsim::analysis
