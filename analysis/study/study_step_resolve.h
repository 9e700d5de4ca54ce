// The step cache's first phase (StepCache::simulate, study_steps.h): each request's scenario read from
// its overlay and resolved the way `hybridsim run` resolves a scenario, each cluster built once, with the
// hash that tells steps apart (of the resolved configuration, the built topology and the profile).
//   Resolver resolver(context);  ReadRequests read = read_requests(requests);
//   Resolved r = resolver.resolve(requests[0], *read.scenarios[0], nullptr);  // r.id: the step's
#pragma once
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/output/progress_estimate.h"
#include "analysis/step/budget_error.h"
#include "analysis/study/study_steps.h"
#include "scenarios/loader/scenario.h"
#include "sim/work_progress.h"
#include "topology/topology.h"
#include "workloads/profile/profile.h"
#include "workloads/step/step_config.h"

namespace hybridsim::analysis::steps_detail {

// The 64-bit FNV-1a hash of `text`: what tells steps apart.
StepId fnv1a(std::string_view text);

// A request resolved: what simulating it takes, and what identifies it.
struct Resolved {
  StepId id = 0;
  std::string fingerprint;
  StepLabel label;
  workloads::StepConfig config;
  const workloads::Profile* profile = nullptr;
  const topology::Topology* topology = nullptr;
  std::int64_t memory = 0;  // StepRunOptions::memory: held against the shared budget while it runs
};

// The label of a request not resolved yet, from its scenario's keys as written.
StepLabel label_before_resolving(const StepRequest& request, const scenarios::Scenario& s);

// A step whose worker's kernels alone pass its events cap (analysis::check_event_floor) is refused before
// its cluster is built, named by its configuration: at 65,536 GPUs and --max-events 1 a plan spent
// minutes placing and estimating GPUs first.
void refuse_under_event_floor(const StepRequest& request, const scenarios::Scenario& s,
                              const workloads::Profile& p, const BudgetKnobs& knobs);

// Resolves requests the way `hybridsim run` resolves a scenario, building each topology once.
class Resolver {
 public:
  explicit Resolver(const StepRunContext& context) : context_(context) {}

  // The request's scenario as read from its overlay, before anything is built.
  static scenarios::Scenario read(const StepRequest& request);

  // `progress` (null: none) hears of the cluster's topology being built.
  Resolved resolve(const StepRequest& request, const scenarios::Scenario& s, sim::WorkProgress* progress);

 private:
  std::uint64_t profile_hash(const std::string& network, const workloads::Profile& profile);

  struct Built {
    std::unique_ptr<topology::Topology> topology;
    std::uint64_t hash = 0;
  };
  const StepRunContext& context_;
  std::map<std::string, Built> topologies_;  // by cluster section: each built once
  std::map<std::string, std::uint64_t> profile_hashes_;
};

// Every request's scenario read from its overlay (which costs little), and the GPUs it names, dp ×
// mp × tp, which weigh its resolving in the progress (whose total is needed before the first is
// resolved). One that cannot be read weighs 1 and fails in its turn, when it would be resolved.
struct ReadRequests {
  std::vector<std::optional<scenarios::Scenario>> scenarios;
  std::vector<std::exception_ptr> unreadable;
  std::vector<double> weights;
};

ReadRequests read_requests(const std::vector<StepRequest>& requests);

// The work after resolving, counted before any configuration is resolved, so that the resolving's lines
// give the command's end from the first (issue 31: `plan -m gnmt --gpus 16384` resolved for 13-17 s at
// load 9-10 with lines that gave only the resolving's end): the estimating, each task of every GPU's
// program at one event's time (its 54 candidates, 7.6e8 tasks so counted, estimated on 2 threads in 3
// min at load 2 and 11-12.5 min at load 10-14: 0.24 and 0.9-1 us a task, where 5e6 events/s gives 0.2;
// tests/bench/MEASUREMENTS.md, plan16k2), and their simulation from below, each step's kernels
// (event_floor), both at sim::kEventsPerSecond. The estimating's lines revise it.
void tell_work_after_resolving(ProgressEstimate& resolving, const ReadRequests& read,
                               const std::vector<StepRequest>& requests, const StepRunContext& context);

}  // namespace hybridsim::analysis::steps_detail
