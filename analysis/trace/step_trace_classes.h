// Private to analysis/trace: a step trace that takes the untraced run's path. The step is simulated
// as untraced; the attempt that held runs once more with a trace of one GPU per class of alike GPUs
// attached (StepObservers::fold): the folded step's representatives, or, when it does not fold,
// plan_step_fold's classes and the critical GPU. The trace says which GPUs each stands for. When
// that cannot be (a GPU list, every GPU, detail steps or messages, nothing alike), the caller traces
// every GPU in full and `why_full` says why (the run prints it).
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "analysis/step/step_runner.h"
#include "analysis/trace/step_trace.h"

namespace hybridsim::analysis {

// The trace of a folded step, or none (then `why_full` says what a full trace will show and why).
std::optional<StepResult> trace_by_class(const StepSetup& setup, const workloads::StepProgram& program,
                                         const std::filesystem::path& file, const StepTraceOptions& options,
                                         StepTraceSummary* summary, SimulationProgress* progress,
                                         std::string& why_full);

// After the run: refuses a window that starts after the step, carries counters to the window's end
// (not past the step), writes otherData and finishes the file.
void finish_step_trace(ChromeTraceWriter& writer, const StepSetup& setup, const StepResult& result,
                       const StepTraceOptions& options, StepTraceSummary* summary);

// "0-3,8" for {0, 1, 2, 3, 8}: the inverse of topology::parse_gpu_list.
std::string format_gpu_list(const std::vector<int>& gpus);

}  // namespace hybridsim::analysis
