// Simulated training steps for the hybrid-vs-DP study and the planner. A step is asked for as a
// scenario overlay (the `--set path=value` texts a sweep point is made of) and resolved by the path
// `hybridsim run` takes (scenarios::resolve_step_config); the cache tells steps apart by a hash of
// the resolved workloads::StepConfig with the identity of its profile and topology, so that a
// study, a plan and a run that configure the same step share it. Missing steps are simulated in
// parallel threads (results land by request, so their order is deterministic).
//   StepCache cache;  StepRunContext ctx{.profiles = {{"gnmt", &gnmt}}};
//   StepRequest a{"gnmt", {"cluster.preset=dgx1-v100", "workload.network=gnmt", "parallelism.dp=8"}};
//   const std::vector<StepRef> refs = cache.simulate({a}, ctx, {.threads = 2});
//   const StepPoint p = cache.point(refs[0]);   // describe(p.label) == "gnmt N=8 dp=8 mp=1"
#pragma once
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/output/progress_estimate.h"
#include "analysis/step/budget_error.h"
#include "analysis/step/step_metrics.h"
#include "scenarios/loader/scenario.h"
#include "sim/collective.h"
#include "sim/time.h"
#include "sim/units.h"
#include "topology/preset_registry.h"
#include "topology/topology.h"
#include "workloads/comm/comm_plan.h"
#include "workloads/generators/gpu_choice.h"
#include "workloads/memory/memory_model.h"
#include "workloads/profile/profile.h"
#include "workloads/program/placement.h"
#include "workloads/program/step_program.h"

namespace hybridsim::analysis {

// The machines of a study or plan: a topology::ClusterSpec whose preset forms clusters (nodes follow
// from each configuration's GPU count).
using topology::ClusterSpec;
// The smallest cluster of the spec's machines holding `gpus` GPUs, its InfiniBand at `ib_bandwidth`
// (unused when they fit in one machine); InputError for a preset that cannot form clusters.
topology::Topology build_cluster(const ClusterSpec& cluster, int gpus, sim::Bandwidth ib_bandwidth);
// The scenario keys of that cluster, as --set texts: cluster.preset, nodes, fabric,
// oversubscription and links.infiniband.bandwidth.
std::vector<std::string> cluster_overlay(const ClusterSpec& cluster, int gpus, sim::Bandwidth ib_bandwidth);
// workload.network for a built-in network without a file, else workload.profile (`profile_file`,
// or the network's name for a profile made in memory); then workload.gpu and workload.precision
// where `choice` names them.
std::vector<std::string> workload_overlay(const std::string& network, const std::string& profile_file,
                                          const workloads::GpuChoice& choice);
// parallelism.dp, parallelism.mp and parallelism.placement (auto, layers, stacks or branches).
// The caps of --max-events and --max-sim-memory on study and plan as overrides of every step
// ("simulation.max_events=N"); empty texts are left out. Read, and refused naming the option in
// `spelling`'s language (--max-events, max_events=), here.
std::vector<std::string> limit_overlay(const std::string& max_events, const std::string& max_sim_memory,
                                       const OptionSpelling& spelling = {});
std::vector<std::string> parallelism_overlay(int dp, int mp, const std::string& placement);
// communication.algorithm, bucket_size (nullopt: not written, the DDP's default), message_size and
// fast_path.
std::vector<std::string> communication_overlay(workloads::AllReduceAlgorithm algorithm,
                                               std::optional<sim::Bytes> bucket_size, sim::Bytes message_size,
                                               sim::FastPath fast_path);

// One step asked for: the loaded profile it runs (`network`, a key into StepRunContext::profiles)
// and the scenario that configures it, as "path=value" overrides of an empty scenario file.
struct StepRequest {
  std::string network{};
  std::vector<std::string> overlay{};
  auto operator<=>(const StepRequest&) const = default;
};

// What reports say of a simulated step, read back from its resolved scenario (it does not identify
// the step: StepId does). `gpus` = dp × mp; the worker's placement is `partitioner` at mp.
struct StepLabel {
  std::string network{};
  int gpus = 1;
  int mp = 1;
  workloads::Partitioner partitioner = workloads::Partitioner::Layers;
  std::int64_t ib_bytes_per_second = topology::presets::kEdrBandwidth.bytes_per_second();
  std::int64_t bucket_bytes = workloads::StepOptions{}.bucket_size.count();
  workloads::AllReduceAlgorithm algorithm = workloads::AllReduceAlgorithm::Ring;
  std::int64_t message_bytes = sim::CollectiveConfig{}.message_size.count();
  // How its collectives are simulated (sim/README.md, "Folding"): a scenario's communication.fast_path.
  sim::FastPath fast_path = scenarios::kDefaultFastPath;

  int dp() const { return gpus / mp; }
  bool operator==(const StepLabel&) const = default;
};
// "gnmt N=64 dp=32 mp=2 layers" (plus ib/bucket/algorithm/message/fast path where they differ from
// the defaults above: EDR, 25 MB, ring, 512 KiB, auto).
std::string describe(const StepLabel& label);

// A simulated step's identity: a 64-bit FNV-1a hash of its StepConfig's fingerprint
// (workloads/step/step_config.h) with its profile's (its YAML) and its topology's (name and link
// table).
using StepId = std::uint64_t;

// What the study and planner keep of a simulated step (analysis/step/step_runner.h has the rest).
struct StepPoint {
  StepId id = 0;
  StepLabel label{};
  std::int64_t global_batch = 0;  // dp × the profile's batch per worker
  sim::Time step_time{};
  double samples_per_second = 0;
  double units_per_second = 0;
  GpuStepMetrics critical{};  // the GPU that finished last
  GpuStepMetrics mean{};      // means over the GPUs used
  sim::Bytes mp_cut_bytes{};  // activation bytes crossing GPUs per worker, forward
  // Each MP rank's peak memory (workloads/memory/memory_model.h), checked against a GPU's capacity by
  // plans and studies (analysis/step/memory_report.h).
  std::vector<workloads::MemoryBreakdown> memory_peaks{};
  std::uint64_t events = 0;
  // Events of the ways tried before the one that held and thrown away (StepResult::Simulation's
  // given_up_events: not part of any result, as wall_seconds).
  std::uint64_t given_up_events = 0;
  double wall_seconds = 0;  // how long the simulation took (not part of any result)
  // Under the hierarchical algorithm, where every all-reduce ran as the ring: why (its GPUs "all on
  // machine 0", workloads::hierarchical_unfit); empty otherwise. Such a step is its ring's under
  // another label, with more NCCL buffers counted (the planner leaves it out).
  std::string hierarchical_as_ring{};
};

struct StepRunContext {
  std::map<std::string, const workloads::Profile*> profiles{};
};

// One line of progress: `done` of `total` steps finished, the last being `point`.
struct StepProgress {
  std::size_t done = 0;
  std::size_t total = 0;
  const StepPoint* point = nullptr;
};

struct StepRunOptions {
  int threads = 0;  // 0: std::thread::hardware_concurrency()
  std::function<void(const StepProgress&)> on_progress;  // called under a lock, in finishing order
  // true: a request that cannot be resolved or simulated (InputError) is recorded in
  // StepCache::failure() and the others go on; false: the first exception stops the run and is
  // rethrown.
  bool keep_going = false;
  // true: a step refused for its caps during its run (BudgetRefusal after its estimate passed them:
  // its fold given up on timings no plan foresees, and its next way over the cap; tests/bench/
  // MEASUREMENTS.md, foldtie) is recorded in StepCache::failure() (in_run) and the others go on, even
  // without keep_going: the study, which would otherwise fail only after minutes of other steps. A
  // step refused by its estimate, before any step runs, still stops the run without keep_going.
  bool keep_going_past_run_refusals = false;
  // Where the whole run's estimate goes before any step is simulated, and its progress lines with an
  // estimated end (analysis/study/step_run_progress.h); null: nowhere. `label` starts each line.
  std::ostream* progress = nullptr;
  std::string label = "steps";
  // What the progress lines time by (tests drive it by hand).
  ProgressClock clock = steady_progress_clock();
  // The command's start by `clock` (< 0: each part's own): the lines of every part (resolving,
  // estimating, simulating) count the time from it, so their "in all" is the whole command's.
  double started = -1;
  // Bytes each request's step is estimated to hold while its program is built, estimated and
  // simulated (by request; missing or 0: not known, nothing reserved), and the budget the steps
  // running at once on the threads share (analysis/step/memory_gate.h): a step waits while the
  // others' estimates leave it too little. While simulated, a step holds the larger of this and its
  // own estimate's state. 0: the least memory cap of the steps (simulation.max_memory), so that the
  // cap bounds the steps on every thread together, not each alone.
  std::vector<std::int64_t> memory{};
  std::int64_t memory_budget = 0;
  // How a step refused for its caps names them: study's and plan's options, in the language they
  // were given in (--max-events, Python's max_events=).
  BudgetKnobs budget_knobs = study_budget_knobs();
};

// The placement of a worker of mp GPUs: all on one GPU at mp 1, else `partitioner`'s; InputError
// when the profile cannot be split so.
workloads::MpPlacement worker_placement(const workloads::Profile& profile, int mp,
                                        workloads::Partitioner partitioner);

// Why a step could not be resolved or simulated; `overlay`: the request's network and overlay
// when it did not resolve (it has no label then), else empty.
struct StepFailure {
  std::string why;
  std::string overlay{};
  // Refused for its simulation budget (a BudgetRefusal), before its event loop or in it: the cap, the
  // estimate and the words from the estimate on, which `why` says after the step's name; none for any
  // other failure.
  std::optional<BudgetRefused> over_budget{};
  bool in_run = false;  // refused so during its run, once its estimate had passed its caps
};

// A request's answer from StepCache::simulate: the step it resolved to, and its own label (two
// requests can resolve to one step, e.g. two partitioners that place every op alike).
struct StepRef {
  StepId id = 0;
  StepLabel label{};
};

class StepCache {
 public:
  // Resolves every request, estimates those whose step is not yet cached or failed (duplicates
  // once; analysis/step/step_estimate.h) and refuses one over its caps before any is simulated
  // (with keep_going: records it as failed), then simulates the others in parallel, heaviest
  // first. Returns each request's step, in order. Without keep_going, the first exception stops
  // the remaining work and is rethrown here.
  std::vector<StepRef> simulate(const std::vector<StepRequest>& requests, const StepRunContext& context,
                               const StepRunOptions& options = {});
  bool contains(StepId id) const { return points_.contains(id); }
  const StepPoint& at(StepId id) const;  // InternalError when missing
  // at(ref.id) with the label of the request that asked for it.
  StepPoint point(const StepRef& ref) const;
  std::size_t size() const { return points_.size(); }
  // How many steps simulate() had to run (a cache hit counts nothing).
  std::size_t simulated() const { return simulated_; }
  // How many of those were refused during their run (StepFailure::in_run).
  std::size_t refused_in_run() const { return refused_in_run_; }
  // Why a request could not be resolved or simulated (with keep_going); null when it was.
  const StepFailure* failure(StepId id) const;
  // The most bytes its steps held at once against their shared budget (StepRunOptions::memory_budget,
  // else their memory cap), by their estimates, over every simulate(): at most that budget unless one
  // step alone held more (by itself).
  std::int64_t most_memory_held() const { return most_memory_held_; }

 private:
  std::map<StepId, StepPoint> points_;
  std::map<StepId, StepFailure> failures_;
  std::map<StepId, std::string> fingerprints_;  // to tell a hash collision from a cache hit
  std::size_t simulated_ = 0;
  std::int64_t most_memory_held_ = 0;
  std::size_t refused_in_run_ = 0;
};

// A progress printer for StepRunOptions::on_progress, one line per step on `out` (stderr in the CLI):
// "study: 12/57 steps  gnmt N=64 dp=32 mp=2 layers  (0.41 s)".
std::function<void(const StepProgress&)> progress_printer(std::ostream& out, std::string label);

}  // namespace hybridsim::analysis
