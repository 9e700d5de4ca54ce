#include "analysis/study/study_steps.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <numeric>
#include <optional>
#include <ostream>
#include <set>
#include <utility>

#include "analysis/step/memory_gate.h"
#include "analysis/step/step_progress.h"
#include "analysis/study/step_run_progress.h"
#include "analysis/study/study_step_resolve.h"
#include "analysis/study/study_step_run.h"
#include "sim/collective.h"
#include "sim/error.h"
#include "sim/units.h"
#include "workloads/comm/comm_plan.h"
#include "workloads/program/placement.h"

namespace hybridsim::analysis {
namespace {

// The cache's two phases, resolving (study_step_resolve.cpp) and estimating and simulating
// (study_step_run.cpp), each a file of its own.
using namespace steps_detail;

// Rough simulation cost, to start the heaviest steps first: ring all-reduce messages grow with the
// square of the data-parallel group, kernels with the GPU count.
double cost_estimate(const StepLabel& l) {
  const double dp = l.dp();
  return dp * dp * l.mp + 50.0 * l.gpus;
}

}  // namespace

std::string describe(const StepLabel& key) {
  const StepLabel defaults;
  std::string s = key.network + " N=" + std::to_string(key.gpus) + " dp=" + std::to_string(key.dp()) +
                  " mp=" + std::to_string(key.mp);
  if (key.mp > 1) s += " " + std::string(workloads::partitioner_name(key.partitioner));
  if (key.ib_bytes_per_second != defaults.ib_bytes_per_second)
    s += " ib=" + sim::format_bandwidth(sim::Bandwidth::bytes_per_second(key.ib_bytes_per_second));
  if (key.bucket_bytes != defaults.bucket_bytes)
    s += " bucket=" + sim::human_bytes(sim::Bytes::of(key.bucket_bytes));
  if (key.algorithm != defaults.algorithm) s += " " + std::string(workloads::algorithm_name(key.algorithm));
  if (key.message_bytes != defaults.message_bytes)
    s += " message=" + sim::format_bytes(sim::Bytes::of(key.message_bytes));
  if (key.fast_path != defaults.fast_path)
    s += " fast_path=" + std::string(sim::fast_path_name(key.fast_path));
  return s;
}

workloads::MpPlacement worker_placement(const workloads::Profile& profile, int mp,
                                        workloads::Partitioner partitioner) {
  if (mp == 1) return workloads::place_all_on_first(profile, 1);
  return workloads::partition(profile, mp, partitioner);
}

std::vector<StepRef> StepCache::simulate(const std::vector<StepRequest>& requests,
                                         const StepRunContext& context, const StepRunOptions& options) {
  Resolver resolver(context);
  std::vector<StepRef> ids;
  std::vector<Resolved> todo;
  std::set<StepId> seen;
  // Resolving builds each cluster's topology and every request's mapping: seconds for a large grid.
  ReadRequests read = read_requests(requests);
  std::vector<double>& weights = read.weights;
  // Its lines' total is the command's, the steps' estimating and simulation after it counted from their
  // tasks and kernels (they said "about 37 s left of about 39 s in all" of a study that ran minutes
  // more, then only "until every configuration is resolved").
  ProgressEstimate resolving(options.progress, options.label,
                             std::accumulate(weights.begin(), weights.end(), 0.0), "GPUs placed",
                             options.clock, {.since = options.started});
  tell_work_after_resolving(resolving, read, requests, context);
  double resolved = 0;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const StepRequest& request = requests[i];
    Resolved r;
    try {
      if (read.unreadable[i]) std::rethrow_exception(read.unreadable[i]);
      if (const auto it = context.profiles.find(request.network); it != context.profiles.end() && it->second)
        refuse_under_event_floor(request, *read.scenarios[i], *it->second, options.budget_knobs);
      // Its cluster's topology told as a share of its GPUs: at 16,384 GPUs it takes seconds.
      PartShare share(
          resolving, [&] { return resolved; }, weights[i],
          "resolving the configurations before any step is estimated");
      ProgramBuildTicks ticks(options.progress ? &share : nullptr, {});
      r = resolver.resolve(request, *read.scenarios[i], &ticks);
      read.scenarios[i].reset();
      r.memory = i < options.memory.size() ? options.memory[i] : 0;
      resolving.advance(resolved += weights[i],
                        "resolving the configurations before any step is estimated");
    } catch (const InputError& e) {
      if (!options.keep_going) throw;
      // Nothing resolved to hash: the request's own text identifies its failure.
      std::string what = request.network;
      for (const auto& o : request.overlay) what += " " + o;
      // A refusal for its budget names the configuration itself (refuse_under_event_floor).
      std::optional<BudgetRefused> budget = read.scenarios[i] ? budget_refused(e) : std::nullopt;
      ids.push_back({fnv1a("unresolved;" + what), budget ? label_before_resolving(request, *read.scenarios[i])
                                                         : StepLabel{.network = request.network}});
      failures_.emplace(ids.back().id, StepFailure{e.what(), budget ? "" : what, std::move(budget)});
      continue;
    }
    const auto [known, added] = fingerprints_.try_emplace(r.id, r.fingerprint);
    if (!added && known->second != r.fingerprint)
      throw InternalError("step cache: two steps share the hash " + std::to_string(r.id) + ": " +
                          describe(r.label));
    ids.push_back({r.id, r.label});
    if (!points_.contains(r.id) && !failures_.contains(r.id) && seen.insert(r.id).second)
      todo.push_back(std::move(r));
  }
  if (todo.empty()) return ids;
  std::stable_sort(todo.begin(), todo.end(), [](const Resolved& a, const Resolved& b) {
    return cost_estimate(a.label) > cost_estimate(b.label);
  });

  MemoryGate gate(shared_memory_budget(todo, options), heap_in_use());  // the resolved clusters beside
  const std::vector<StepEstimate> estimates = estimate_todo(todo, options, gate, failures_);
  print_run_estimate(todo, estimates, options);
  std::vector<std::uint64_t> events;
  for (const StepEstimate& e : estimates) events.push_back(e.events());
  StepRunProgress whole(options.progress, options.label, std::move(events), "steps", options.clock,
                        {.since = options.started});

  Ran ran = run_todo(todo, estimates, options, gate, whole);
  for (std::size_t i = 0; i < todo.size(); ++i) {
    if (ran.failed_why[i]) {
      failures_.emplace(todo[i].id, StepFailure{.why = *ran.failed_why[i],
                                                .over_budget = ran.over_budget[i],
                                                .in_run = ran.over_budget[i].has_value()});
      refused_in_run_ += ran.over_budget[i] ? 1 : 0;
    } else
      points_.emplace(todo[i].id, std::move(ran.results[i]));
  }
  simulated_ += todo.size();
  most_memory_held_ = std::max(most_memory_held_, gate.most_held());
  return ids;
}

const StepPoint& StepCache::at(StepId id) const {
  const auto it = points_.find(id);
  if (it == points_.end()) throw InternalError("step not simulated: " + std::to_string(id));
  return it->second;
}

StepPoint StepCache::point(const StepRef& ref) const {
  StepPoint p = at(ref.id);
  p.label = ref.label;
  return p;
}

const StepFailure* StepCache::failure(StepId id) const {
  const auto it = failures_.find(id);
  return it == failures_.end() ? nullptr : &it->second;
}

std::function<void(const StepProgress&)> progress_printer(std::ostream& out, std::string label) {
  // The time left is in the whole run's lines (StepRunOptions::progress), from its estimate.
  return [&out, label = std::move(label)](const StepProgress& p) {
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.2f s", p.point ? p.point->wall_seconds : 0.0);
    out << label << ": " << p.done << "/" << p.total << " steps  "
        << (p.point ? describe(p.point->label) : std::string()) << "  (" << seconds << ")\n"
        << std::flush;
  };
}

}  // namespace hybridsim::analysis
