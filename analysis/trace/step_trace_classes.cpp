// trace_by_class: the step run as untraced (folded onto representative GPUs where it folds), with a
// StepTraceObserver of the representatives attached to the fold that held.
#include "analysis/trace/step_trace_classes.h"

#include <algorithm>
#include <utility>

#include "analysis/step/step_estimate.h"
#include "analysis/step/step_fold.h"
#include "sim/budget.h"
#include "sim/error.h"

namespace hybridsim::analysis {

namespace {

class ClassTrace final : public FoldObserver {
 public:
  // `classes`: the GPUs alike in program and machine (plan_step_fold's), shown when the step does
  // not fold.
  ClassTrace(const StepSetup& setup, const workloads::StepProgram& program, std::filesystem::path file,
             StepTraceOptions options, std::vector<std::uint32_t> classes)
      : setup_(setup), program_(program), file_(std::move(file)), options_(std::move(options)),
        classes_(std::move(classes)) {}

  // The fold's run traced: its streams and the plans of its collectives (not its network, whose
  // folded rings run without messages).
  StepObservers observe_fold(const sim::StepFold& fold, const StepResult& held) override {
    if (tracer_) throw InternalError("a step trace was given a second run");
    StepTraceObserver* tracer =
        fold.representative.empty() ? start(classes_, held.critical.gpu) : start(fold.representative, -1);
    return {.stream = tracer, .plans = tracer};
  }

  // Traces one GPU per class (`representative`: per GPU, the GPU standing for it) and `extra` (a
  // GPU shown besides its class's representative, e.g. the critical one; -1: none).
  StepTraceObserver* start(const std::vector<std::uint32_t>& representative, int extra) {
    representative_ = representative;
    std::vector<int> count(program_.gpus.size(), 0), shown;
    for (std::size_t g = 0; g < program_.gpus.size(); ++g)
      if (program_.worker_of_gpu[g] >= 0) ++count[representative_[g]];
    if (extra >= 0 && count[static_cast<std::size_t>(extra)] == 0) count[static_cast<std::size_t>(extra)] = 1;
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

  // `unfolded`: why the step did not fold, as the run's refusal says it ("folded onto representative
  // GPUs: a ring they share would run in full ..."; its shown GPUs then stand for GPUs alike in program
  // and machine whose timelines differ); empty for a folded step. Said after "not": the words read "as
  // untraced: folded onto representative GPUs", the way this run did not take. Nor do its collectives
  // fold for certain ("fold as untraced, without messages"): an untraced run may run them in full.
  void finish(const StepResult& result, StepTraceSummary* summary, const std::string& unfolded = {}) {
    tracer_->finish(result.step_time);
    // Which GPUs each shown GPU stands for: "GPU 0: 0,8,16; GPU 1: 1,9,17".
    std::vector<std::vector<int>> members(program_.gpus.size());
    for (std::size_t g = 0; g < program_.gpus.size(); ++g)
      if (program_.worker_of_gpu[g] >= 0) members[representative_[g]].push_back(static_cast<int>(g));
    std::string classes;
    for (std::size_t g = 0; g < members.size(); ++g) {
      if (members[g].empty()) continue;
      classes +=
          (classes.empty() ? "GPU " : "; GPU ") + std::to_string(g) + ": " + format_gpu_list(members[g]);
    }
    const std::string shows =
        "one GPU per class of alike GPUs, " + std::to_string(shown_) + " of " + std::to_string(result.gpus) +
        (unfolded.empty() ? " (the step ran folded onto them, as untraced"
                          : " with the critical GPU (every GPU simulated, as untraced, not " + unfolded +
                                "; a class's GPUs ran the same program, not in step") +
        "; " + options_.all_gpus_said + " for every GPU)";
    auto& extra = options_.other_data;
    extra.insert(extra.begin(), {{"gpus_shown", shows}, {"gpu_classes", classes}});
    if (result.critical.gpu >= 0) {
      const auto c = static_cast<std::size_t>(result.critical.gpu);
      const std::size_t as = options_.stands_for[c] > 0 ? c : representative_[c];
      extra.insert(extra.begin() + 2, {"critical_gpu", "GPU " + std::to_string(c) + ", shown as GPU " +
                                                           std::to_string(as)});
    }
    extra.insert(
        extra.begin() + 2,
        {"network",
         std::string(unfolded.empty()
                         ? "not traced: the folded step's rings run without messages ("
                         : "not traced: its collectives run as untraced, their messages not recorded (") +
             options_.all_gpus_said + " for link utilization)"});
    finish_step_trace(*writer_, setup_, result, options_, summary);
    if (summary != nullptr) summary->shows = shows;
  }

 private:
  const StepSetup& setup_;
  const workloads::StepProgram& program_;
  std::filesystem::path file_;
  StepTraceOptions options_;
  std::vector<std::uint32_t> classes_;
  std::vector<std::uint32_t> representative_;
  std::size_t shown_ = 0;
  std::optional<ChromeTraceWriter> writer_;
  std::optional<StepTraceObserver> tracer_;
};

// Where the untraced run simulates every GPU too, it may still fold its collectives onto
// representative ranks (sim/fast/), which a trace that records every message runs in full: the
// words said "every GPU too" alone, and the figures differed by a bounded fold's picoseconds, the
// critical GPU by a tie (review7: llama3-8b tp 8, 426,930.733 us and GPU 0 untraced, 426,930.723 us
// and GPU 5 traced). By the step's estimate, as untraced_share's counts are. The bound the run
// states carries each folded collective's through what waits on it (analysis/step/step_bound.h).
std::string every_gpu_too(const StepSetup& setup, const workloads::StepProgram& program) {
  const StepEstimate estimate = estimate_program(setup, program);
  if (estimate.events() >= estimate.full_events) return "the untraced run simulates every GPU too";
  return "the untraced run simulates every GPU too, but folds the collectives that fold, which this trace "
         "runs in full to record their messages (by its estimate about " +
         sim::BudgetExceeded::count_text(estimate.events()) + " events, against about " +
         sim::BudgetExceeded::count_text(estimate.full_events) +
         " in full): where that fold is bounded its figures may be later than these (by at most "
         "the bound it states) and its critical GPU another of a tie";
}

// How much more a trace of every GPU simulated in full simulates than the untraced run, which folds
// onto one GPU per class where its fold holds: the words said nothing of it (issue 31 item 4: "or
// says why not, and how much slower"; a 1,024-GPU run took 5.6 s untraced, 48 s traced). The events,
// the measure of a run's time, are the step's estimate's (estimate_program): the way the untraced run
// takes against every GPU and collective in full.
std::string untraced_share(const StepSetup& setup, const workloads::StepProgram& program) {
  const StepFoldPlan plan = plan_step_fold(program, *setup.topology, {});
  const auto gpus = static_cast<std::uint32_t>(std::count_if(
      program.worker_of_gpu.begin(), program.worker_of_gpu.end(), [](int w) { return w >= 0; }));
  if (plan.empty() || plan.representatives >= gpus) return "; " + every_gpu_too(setup, program);
  const StepEstimate estimate = estimate_program(setup, program);
  return "; the untraced run simulates " + std::to_string(plan.representatives) + " of these " +
         std::to_string(gpus) + " GPUs, where its fold holds (by its estimate about " +
         sim::BudgetExceeded::count_text(estimate.events()) + " events, against about " +
         sim::BudgetExceeded::count_text(estimate.full_events) + " in full)";
}

// Why a trace cannot take the folded path before trying it, and what that costs; empty if it may.
std::string why_not_by_class(const StepSetup& setup, const workloads::StepProgram& program,
                             const StepTraceOptions& options) {
  const auto share = [&] { return untraced_share(setup, program); };
  if (options.all_gpus) return "every GPU (" + options.all_gpus_said + "), each simulated in full" + share();
  if (options.gpus)
    return (options.gpus->size() == 1 ? "GPU " : "GPUs ") + format_gpu_list(*options.gpus) +
           ", with every GPU simulated in full (a list of GPUs needs them all; leave " + options.gpus_option +
           " out to trace one GPU per class as the untraced run simulates them)" + share();
  if (options.detail != TraceDetail::Kernels)
    return "every GPU, simulated in full (detail " + std::string(trace_detail_name(options.detail)) +
           " records every ring message, which a folded step does not send)" + share();
  if (setup.collective.fast_path == sim::FastPath::Off) return "every GPU (fast path off)";
  return {};
}

}  // namespace

std::optional<StepResult> trace_by_class(const StepSetup& setup, const workloads::StepProgram& program,
                                         const std::filesystem::path& file, const StepTraceOptions& options,
                                         StepTraceSummary* summary, SimulationProgress* progress,
                                         std::string& why_full) {
  why_full = why_not_by_class(setup, program, options);
  if (!why_full.empty()) return std::nullopt;
  const StepFoldPlan plan = plan_step_fold(program, *setup.topology, {});
  if (plan.empty()) {
    why_full = "every GPU (no GPUs alike in program and machine: " + every_gpu_too(setup, program) + ")";
    return std::nullopt;
  }
  ClassTrace trace(setup, program, file, options, plan.fold.representative);
  StepResult r = simulate_program(setup, program, {.progress = progress, .fold = &trace});
  const bool folded = r.simulation.gpus_simulated != 0;
  trace.finish(r, summary,
               folded || r.simulation.refused.empty() ? std::string() : r.simulation.refused.front());
  return r;
}

}  // namespace hybridsim::analysis
