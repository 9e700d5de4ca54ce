// trace_by_class: the step run as untraced (folded onto representative GPUs where it folds), with a
// StepTraceObserver of the representatives attached to the fold that held.
#include "analysis/trace/step_trace_classes.h"

#include <utility>

#include "analysis/step/step_fold.h"
#include "sim/error.h"

namespace hybridsim::analysis {

namespace {

class ClassTrace final : public FoldObserver {
 public:
  ClassTrace(const StepSetup& setup, const workloads::StepProgram& program, std::filesystem::path file,
             StepTraceOptions options)
      : setup_(setup), program_(program), file_(std::move(file)), options_(std::move(options)) {}

  bool tracing() const { return tracer_.has_value(); }

  sim::StreamObserver* observe_fold(const sim::StepFold& fold) override {
    if (tracer_) throw InternalError("a step trace was given a second folded run");
    representative_ = fold.representative;
    std::vector<int> count(program_.gpus.size(), 0), shown;
    for (std::size_t g = 0; g < program_.gpus.size(); ++g)
      if (program_.worker_of_gpu[g] >= 0) ++count[representative_[g]];
    for (std::size_t g = 0; g < count.size(); ++g)
      if (count[g] > 0) shown.push_back(static_cast<int>(g));
    shown_ = shown.size();
    options_.gpus = std::move(shown);
    options_.links = false;
    options_.stands_for = std::move(count);
    writer_.emplace(file_, StepTraceObserver::writer_options(options_, *setup_.topology));
    tracer_.emplace(*writer_, setup_, program_, options_);
    return &*tracer_;
  }

  void finish(const StepResult& result, StepTraceSummary* summary) {
    tracer_->finish();
    // Which GPUs each shown GPU stands for: "GPU 0: 0,8,16; GPU 1: 1,9,17".
    std::vector<std::vector<int>> members(program_.gpus.size());
    for (std::size_t g = 0; g < program_.gpus.size(); ++g)
      if (program_.worker_of_gpu[g] >= 0) members[representative_[g]].push_back(static_cast<int>(g));
    std::string classes;
    for (std::size_t g = 0; g < members.size(); ++g) {
      if (members[g].empty()) continue;
      classes += (classes.empty() ? "GPU " : "; GPU ") + std::to_string(g) + ": " + format_gpu_list(members[g]);
    }
    const std::string shows = "one GPU per class of alike GPUs, " + std::to_string(shown_) + " of " +
                              std::to_string(result.gpus) +
                              " (the step ran folded onto them, as untraced; --trace-gpus all for every GPU)";
    auto& extra = options_.other_data;
    extra.insert(extra.begin(), {{"gpus_shown", shows}, {"gpu_classes", classes}});
    if (result.critical.gpu >= 0) {
      const auto c = static_cast<std::size_t>(result.critical.gpu);
      extra.insert(extra.begin() + 2, {"critical_gpu", "GPU " + std::to_string(c) + ", shown as GPU " +
                                                           std::to_string(representative_[c])});
    }
    extra.insert(extra.begin() + 2, {"network", "not traced: the folded step's rings run without messages "
                                                "(--trace-gpus all for link utilization)"});
    finish_step_trace(*writer_, setup_, result, options_, summary);
    if (summary != nullptr) summary->shows = shows;
  }

 private:
  const StepSetup& setup_;
  const workloads::StepProgram& program_;
  std::filesystem::path file_;
  StepTraceOptions options_;
  std::vector<std::uint32_t> representative_;
  std::size_t shown_ = 0;
  std::optional<ChromeTraceWriter> writer_;
  std::optional<StepTraceObserver> tracer_;
};

// Why a trace cannot take the folded path before trying it; empty if it may.
std::string why_not_by_class(const StepSetup& setup, const workloads::StepProgram& program,
                             const StepTraceOptions& options) {
  if (options.all_gpus) return "every GPU (--trace-gpus all), each simulated in full";
  if (options.gpus)
    return "GPUs " + format_gpu_list(*options.gpus) +
           ", with every GPU simulated in full (a list of GPUs needs them all; leave --trace-gpus out "
           "to trace one GPU per class as the untraced run simulates them)";
  if (options.detail != TraceDetail::Kernels)
    return "every GPU, simulated in full (detail " + std::string(trace_detail_name(options.detail)) +
           " records every ring message, which a folded step does not send)";
  if (setup.collective.fast_path == sim::FastPath::Off) return "every GPU (fast path off)";
  if (plan_step_fold(program, *setup.topology, {}).empty())
    return "every GPU (no GPUs alike in program and machine: the untraced run simulates every GPU too)";
  return {};
}

}  // namespace

std::optional<StepResult> trace_by_class(const StepSetup& setup, const workloads::StepProgram& program,
                                         const std::filesystem::path& file, const StepTraceOptions& options,
                                         StepTraceSummary* summary, SimulationProgress* progress,
                                         std::string& why_full) {
  why_full = why_not_by_class(setup, program, options);
  if (!why_full.empty()) return std::nullopt;
  ClassTrace trace(setup, program, file, options);
  StepResult r = simulate_program(setup, program, {.progress = progress, .fold = &trace});
  if (!trace.tracing()) {
    const std::string why = r.simulation.refused.empty() ? r.simulation.step_fold_reason
                                                         : r.simulation.refused.front();
    why_full = "every GPU, simulated in full after an untraced run (the step did not fold: " + why + ")";
    return std::nullopt;
  }
  trace.finish(r, summary);
  return r;
}

}  // namespace hybridsim::analysis
