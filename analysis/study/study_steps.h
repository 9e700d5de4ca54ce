// Simulated training steps for the hybrid-vs-DP study and the planner: one key per configuration
// (network, GPUs, mp, placement, InfiniBand bandwidth, bucket, algorithm, message size, fast path), a cache of
// their results so that sensitivity runs never re-simulate a step, and a runner that simulates the
// missing ones in parallel threads (results land by key, so their order is deterministic).
//   StepCache cache;  StepRunContext ctx{.profiles = {{"gnmt", &gnmt}}, .cluster = {}};
//   cache.simulate({key_a, key_b}, ctx, {.threads = 2});  const StepPoint& a = cache.at(key_a);
#pragma once
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "analysis/step/step_metrics.h"
#include "sim/collective.h"
#include "sim/time.h"
#include "sim/units.h"
#include "topology/preset_registry.h"
#include "topology/topology.h"
#include "workloads/comm/comm_plan.h"
#include "workloads/memory/memory_model.h"
#include "workloads/profile/profile.h"
#include "workloads/program/placement.h"
#include "workloads/program/step_program.h"

namespace hybridsim::analysis {

// The machines of a study or plan: a topology::ClusterSpec whose preset forms clusters (nodes follow
// from each configuration's GPU count, the InfiniBand bandwidth from its StepKey).
using topology::ClusterSpec;
// The smallest cluster of the spec's machines holding `gpus` GPUs, its InfiniBand at `ib_bandwidth`
// (unused when they fit in one machine); InputError for a preset that cannot form clusters.
topology::Topology build_cluster(const ClusterSpec& cluster, int gpus, sim::Bandwidth ib_bandwidth);

// One simulated configuration. `gpus` = dp × mp; the worker's placement is `partitioner` at mp.
struct StepKey {
  std::string network{};  // key into StepRunContext::profiles
  int gpus = 1;
  int mp = 1;
  workloads::Partitioner partitioner = workloads::Partitioner::Layers;
  std::int64_t ib_bytes_per_second = topology::presets::kEdrBandwidth.bytes_per_second();
  std::int64_t bucket_bytes = workloads::StepOptions{}.bucket_size.count();
  workloads::AllReduceAlgorithm algorithm = workloads::AllReduceAlgorithm::Ring;
  std::int64_t message_bytes = sim::CollectiveConfig{}.message_size.count();
  // How its collectives are simulated (sim/README.md, "Folding"): a scenario's communication.fast_path.
  sim::FastPath fast_path = sim::CollectiveConfig{}.fast_path;

  int dp() const { return gpus / mp; }
  auto operator<=>(const StepKey&) const = default;
};
// "gnmt N=64 dp=32 mp=2 layers" (plus ib/bucket/algorithm/message/fast path where they differ from
// the defaults).
std::string describe(const StepKey& key);

// What the study and planner keep of a simulated step (analysis/step/step_runner.h has the rest).
struct StepPoint {
  StepKey key{};
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
  double wall_seconds = 0;  // how long the simulation took (not part of any result)
};

struct StepRunContext {
  std::map<std::string, const workloads::Profile*> profiles{};
  ClusterSpec cluster{};  // preset, fabric and oversubscription; the key carries the IB bandwidth
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
  // true: a key whose simulation throws InputError is recorded in StepCache::failures() and the
  // others go on; false: the first exception stops the run and is rethrown.
  bool keep_going = false;
};

// The placement of a key's worker; InputError when the key is not a valid configuration.
workloads::MpPlacement placement_for(const workloads::Profile& profile, const StepKey& key);
// True when every one of the mp GPUs holds at least one op under the partitioner (otherwise the
// configuration wastes GPUs and is left out of studies and plans).
bool uses_every_gpu(const workloads::MpPlacement& placement);
// Simulates one key (the building block of StepCache::simulate).
StepPoint simulate_key(const StepKey& key, const StepRunContext& context, const topology::Topology& topology);

class StepCache {
 public:
  // Simulates the keys not yet cached or failed (duplicates once), in parallel, heaviest first.
  // Without keep_going, the first exception thrown by a simulation stops the remaining work and is
  // rethrown here.
  void simulate(const std::vector<StepKey>& keys, const StepRunContext& context,
                const StepRunOptions& options = {});
  bool contains(const StepKey& key) const;
  const StepPoint& at(const StepKey& key) const;  // InternalError when missing
  std::size_t size() const { return points_.size(); }
  // How many keys simulate() had to run (a cache hit counts nothing).
  std::size_t simulated() const { return simulated_; }
  // Keys that could not be simulated (with keep_going), and why.
  const std::map<StepKey, std::string>& failures() const { return failures_; }

 private:
  std::map<StepKey, StepPoint> points_;
  std::map<StepKey, std::string> failures_;
  std::size_t simulated_ = 0;
};

// A progress printer for StepRunOptions::on_progress, one line per step on `out` (stderr in the CLI):
// "study: 12/57 steps  gnmt N=64 dp=32 mp=2 layers  (0.41 s)".
std::function<void(const StepProgress&)> progress_printer(std::ostream& out, std::string label);

}  // namespace hybridsim::analysis
