#include "analysis/study/study_steps.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <memory>
#include <optional>
#include <ostream>
#include <set>
#include <thread>
#include <utility>

#include "analysis/step/step_runner.h"
#include "sim/error.h"
#include "topology/builder.h"
#include "workloads/program/mapping.h"

namespace hybridsim::analysis {
namespace {

// Rough simulation cost, to start the heaviest keys first: ring all-reduce messages grow with the
// square of the data-parallel group, kernels with the GPU count.
double cost_estimate(const StepKey& k) {
  const double dp = k.dp();
  return dp * dp * k.mp + 50.0 * k.gpus;
}

}  // namespace

topology::Topology build_cluster(const ClusterSpec& cluster, int gpus, sim::Bandwidth ib_bandwidth) {
  const topology::PresetInfo* preset = topology::find_preset(cluster.preset);
  if (preset == nullptr || !preset->forms_clusters)
    throw InputError("cluster preset \"" + cluster.preset +
                     "\": expected a machine preset that can form a cluster: " +
                     topology::cluster_preset_name_list());
  ClusterSpec spec = topology::cluster_for_gpus(cluster, gpus);
  spec.links[sim::LinkKind::InfiniBand].bandwidth = ib_bandwidth;
  return topology::build_cluster(spec);
}

std::string describe(const StepKey& key) {
  const StepKey defaults;
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
  if (key.fast_path != defaults.fast_path) s += " fast_path=" + std::string(sim::fast_path_name(key.fast_path));
  return s;
}

workloads::MpPlacement placement_for(const workloads::Profile& profile, const StepKey& key) {
  if (key.mp < 1 || key.gpus < key.mp || key.gpus % key.mp != 0)
    throw InputError(describe(key) + ": expected GPUs to be a positive multiple of mp");
  if (key.mp == 1) return workloads::place_all_on_first(profile, 1);
  return workloads::partition(profile, key.mp, key.partitioner);
}

bool uses_every_gpu(const workloads::MpPlacement& placement) {
  std::vector<bool> used(static_cast<std::size_t>(placement.mp), false);
  for (const auto g : placement.gpu_of_op)
    if (g < used.size()) used[g] = true;
  return std::all_of(used.begin(), used.end(), [](bool u) { return u; });
}

StepPoint simulate_key(const StepKey& key, const StepRunContext& context, const topology::Topology& topology) {
  const auto it = context.profiles.find(key.network);
  if (it == context.profiles.end() || it->second == nullptr)
    throw InternalError("no profile for study network \"" + key.network + "\"");
  const workloads::Profile& profile = *it->second;
  const auto start = std::chrono::steady_clock::now();
  StepSetup setup;
  setup.profile = &profile;
  setup.topology = &topology;
  setup.placement = placement_for(profile, key);
  setup.mapping = workloads::default_mapping(topology, key.dp(), key.mp);
  setup.step.bucket_size = sim::Bytes::of(key.bucket_bytes);
  setup.comm.algorithm = key.algorithm;
  setup.collective.message_size = sim::Bytes::of(key.message_bytes);
  setup.collective.fast_path = key.fast_path;
  const StepResult r = simulate_step(setup);
  StepPoint p;
  p.key = key;
  p.global_batch = r.global_batch;
  p.step_time = r.step_time;
  p.samples_per_second = r.samples_per_second;
  p.units_per_second = r.units_per_second;
  p.critical = r.critical;
  p.mean = r.mean;
  p.mp_cut_bytes = setup.placement.cut_bytes(profile);
  p.memory_peaks = workloads::model_step_memory(profile, setup).peaks();
  p.events = r.events;
  p.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return p;
}

void StepCache::simulate(const std::vector<StepKey>& keys, const StepRunContext& context,
                         const StepRunOptions& options) {
  std::vector<StepKey> todo;
  {
    std::set<StepKey> seen;
    for (const auto& k : keys)
      if (!points_.contains(k) && !failures_.contains(k) && seen.insert(k).second) todo.push_back(k);
  }
  if (todo.empty()) return;
  std::stable_sort(todo.begin(), todo.end(),
                   [](const StepKey& a, const StepKey& b) { return cost_estimate(a) > cost_estimate(b); });

  // One topology per (machines, IB bandwidth), built up front and shared by the threads.
  const int per_machine = topology::gpus_per_machine(context.cluster);
  std::map<std::pair<int, std::int64_t>, std::unique_ptr<topology::Topology>> topologies;
  auto topology_key = [&](const StepKey& k) {
    return std::make_pair((k.gpus + per_machine - 1) / per_machine, k.ib_bytes_per_second);
  };
  for (const auto& k : todo) {
    auto& t = topologies[topology_key(k)];
    if (!t)
      t = std::make_unique<topology::Topology>(build_cluster(
          context.cluster, k.gpus, sim::Bandwidth::bytes_per_second(k.ib_bytes_per_second)));
  }

  std::vector<StepPoint> results(todo.size());
  std::vector<std::optional<std::string>> failed_why(todo.size());
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex lock;
  std::exception_ptr error;
  std::size_t done = 0;
  auto work = [&] {
    while (!failed) {
      const std::size_t i = next++;
      if (i >= todo.size()) return;
      try {
        results[i] = simulate_key(todo[i], context, *topologies.at(topology_key(todo[i])));
        std::lock_guard guard(lock);
        ++done;
        if (options.on_progress) options.on_progress({done, todo.size(), &results[i]});
      } catch (const InputError& e) {
        std::lock_guard guard(lock);
        if (options.keep_going) {
          failed_why[i] = e.what();
          ++done;
          continue;
        }
        if (!error) error = std::current_exception();
        failed = true;
      } catch (...) {
        std::lock_guard guard(lock);
        if (!error) error = std::current_exception();
        failed = true;
      }
    }
  };
  unsigned threads = options.threads > 0 ? static_cast<unsigned>(options.threads)
                                         : std::max(1u, std::thread::hardware_concurrency());
  threads = std::min<unsigned>(threads, static_cast<unsigned>(todo.size()));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
  for (std::size_t i = 0; i < todo.size(); ++i) {
    if (failed_why[i])
      failures_.emplace(todo[i], *failed_why[i]);
    else
      points_.emplace(todo[i], std::move(results[i]));
  }
  simulated_ += todo.size();
}

bool StepCache::contains(const StepKey& key) const { return points_.contains(key); }

const StepPoint& StepCache::at(const StepKey& key) const {
  const auto it = points_.find(key);
  if (it == points_.end()) throw InternalError("step not simulated: " + describe(key));
  return it->second;
}

std::function<void(const StepProgress&)> progress_printer(std::ostream& out, std::string label) {
  return [&out, label = std::move(label)](const StepProgress& p) {
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.2f s", p.point ? p.point->wall_seconds : 0.0);
    out << label << ": " << p.done << "/" << p.total << " steps  "
        << (p.point ? describe(p.point->key) : std::string()) << "  (" << seconds << ")\n"
        << std::flush;
  };
}

}  // namespace hybridsim::analysis
