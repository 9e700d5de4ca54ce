#include "analysis/study/study_steps.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <exception>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <ostream>
#include <set>
#include <thread>
#include <utility>

#include "analysis/step/budget_error.h"
#include "analysis/step/memory_gate.h"
#include "analysis/step/step_estimate.h"
#include "analysis/step/step_progress.h"
#include "analysis/step/step_runner.h"
#include "analysis/study/step_run_progress.h"
#include "scenarios/loader/resolve.h"
#include "scenarios/loader/scenario.h"
#include "sim/budget.h"
#include "sim/error.h"
#include "sim/text.h"
#include "sim/units.h"
#include "topology/builder.h"
#include "workloads/generators/profile_gen.h"
#include "workloads/profile/profile_io.h"
#include "workloads/program/mapping.h"
#include "workloads/step/step_config.h"

namespace hybridsim::analysis {
namespace {

// Where an overlay's unwritten fields are "located" in its error messages.
constexpr const char* kOverlaySource = "step overlay";

StepId fnv1a(std::string_view text) {
  std::uint64_t h = 14695981039346656037ull;
  for (const unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string number(double v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

// What identifies a built topology: its name and link table (each link's kind, bandwidth, latency
// and name, which says the devices it joins). A single machine's is the same whatever InfiniBand
// bandwidth its cluster section names: it has no InfiniBand.
std::uint64_t topology_hash(const topology::Topology& t) {
  std::string s = t.name() + ";gpus=" + std::to_string(t.gpus().size()) + ";";
  for (const sim::LinkSpec& l : t.links().all())
    s += std::to_string(static_cast<int>(l.kind)) + "," + std::to_string(l.bandwidth.bytes_per_second()) +
         "," + std::to_string(l.latency.ps()) + "," + l.name + ";";
  return fnv1a(s);
}

// What the topology is built from (scenarios::build_topology): the resolved cluster section.
std::string cluster_fingerprint(const scenarios::ClusterSettings& c) {
  std::string s =
      "preset=" + c.preset + ";topology=" + c.topology.string() + ";nodes=" + std::to_string(c.nodes) +
      ";gpus_per_node=" + (c.gpus_per_node ? std::to_string(*c.gpus_per_node) : "auto") +
      ";fabric=" + std::string(topology::presets::fabric_name(c.fabric)) +
      ";oversubscription=" + number(c.oversubscription) + ";leaf_radix=" + std::to_string(c.leaf_radix) +
      ";spines=" + (c.spines ? std::to_string(*c.spines) : "auto") + ";";
  for (int k = 0; k < sim::kLinkKindCount; ++k) {
    const auto& o = c.links[static_cast<sim::LinkKind>(k)];
    s += "links." + std::string(sim::link_kind_key(static_cast<sim::LinkKind>(k))) + "=" +
         (o.bandwidth ? std::to_string(o.bandwidth->bytes_per_second()) : "-") + "," +
         (o.latency ? std::to_string(o.latency->ps()) : "-") + ";";
  }
  return s;
}

StepLabel label_of(const StepRequest& request, const scenarios::Scenario& s, const workloads::StepConfig& c) {
  using Kind = scenarios::PlacementSettings::Kind;
  StepLabel l;
  l.network = request.network;
  l.mp = s.parallelism.mp;
  l.gpus = s.parallelism.dp * s.parallelism.mp;
  const Kind kind = s.parallelism.placement.kind;
  l.partitioner = kind == Kind::Stacks     ? workloads::Partitioner::Stacks
                  : kind == Kind::Branches ? workloads::Partitioner::Branches
                                           : workloads::Partitioner::Layers;
  l.ib_bytes_per_second = topology::ib_bandwidth_of(s.cluster).bytes_per_second();
  l.bucket_bytes = c.step.bucket_size.count();
  l.algorithm = c.comm.algorithm;
  l.message_bytes = c.collective.message_size.count();
  l.fast_path = c.collective.fast_path;
  return l;
}

// Rough simulation cost, to start the heaviest steps first: ring all-reduce messages grow with the
// square of the data-parallel group, kernels with the GPU count.
double cost_estimate(const StepLabel& l) {
  const double dp = l.dp();
  return dp * dp * l.mp + 50.0 * l.gpus;
}

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
StepLabel label_before_resolving(const StepRequest& request, const scenarios::Scenario& s) {
  workloads::StepConfig c;
  c.step.bucket_size = s.communication.bucket_size;
  c.comm.algorithm = s.communication.algorithm;
  c.collective.message_size = s.communication.message_size;
  c.collective.fast_path = s.communication.fast_path;
  return label_of(request, s, c);
}

// A step whose worker's kernels alone pass its events cap (analysis::check_event_floor) is refused before
// its cluster is built, named by its configuration: at 65,536 GPUs and --max-events 1 a plan spent
// minutes placing and estimating GPUs first.
void refuse_under_event_floor(const StepRequest& request, const scenarios::Scenario& s,
                              const workloads::Profile& p, const BudgetKnobs& knobs) {
  try {
    check_event_floor(p, s.simulation.max_events);
  } catch (const sim::BudgetExceeded& e) {
    const bool off = s.communication.fast_path == sim::FastPath::Off;
    throw budget_refusal(describe(label_before_resolving(request, s)), e, "the step", knobs, off);
  }
}

// Resolves requests the way `hybridsim run` resolves a scenario, building each topology once.
class Resolver {
 public:
  explicit Resolver(const StepRunContext& context) : context_(context) {}

  // The request's scenario as read from its overlay, before anything is built.
  static scenarios::Scenario read(const StepRequest& request) {
    return scenarios::parse_scenario("", kOverlaySource, request.overlay);
  }

  // `progress` (null: none) hears of the cluster's topology being built.
  Resolved resolve(const StepRequest& request, const scenarios::Scenario& s, sim::WorkProgress* progress) {
    const auto it = context_.profiles.find(request.network);
    if (it == context_.profiles.end() || it->second == nullptr)
      throw InternalError("no profile for step network \"" + request.network + "\"");
    const workloads::Profile& profile = *it->second;
    Built& built = topologies_[cluster_fingerprint(s.cluster)];
    if (!built.topology) {
      built.topology = std::make_unique<topology::Topology>(scenarios::build_topology(s, progress));
      built.hash = topology_hash(*built.topology);
    }
    const auto& topology = built.topology;
    Resolved r;
    r.config = scenarios::resolve_step_config(s, *topology, profile);
    r.fingerprint = "profile=" + std::to_string(profile_hash(request.network, profile)) +
                    ";topology=" + std::to_string(built.hash) + ";" + workloads::fingerprint(r.config);
    r.id = fnv1a(r.fingerprint);
    r.label = label_of(request, s, r.config);
    r.profile = &profile;
    r.topology = topology.get();
    return r;
  }

 private:
  std::uint64_t profile_hash(const std::string& network, const workloads::Profile& profile) {
    auto [it, added] = profile_hashes_.try_emplace(network, 0);
    if (added) it->second = fnv1a(workloads::profile_to_yaml(profile));
    return it->second;
  }

  struct Built {
    std::unique_ptr<topology::Topology> topology;
    std::uint64_t hash = 0;
  };
  const StepRunContext& context_;
  std::map<std::string, Built> topologies_;  // by cluster section: each built once
  std::map<std::string, std::uint64_t> profile_hashes_;
};

StepSetup setup_of(const Resolved& r) {
  StepSetup setup;
  static_cast<workloads::StepConfig&>(setup) = r.config;
  setup.profile = r.profile;
  setup.topology = r.topology;
  return setup;
}

// What `e` was refused for where it is a refusal for the simulation budget; none for any other error.
std::optional<BudgetRefused> budget_refused(const InputError& e) {
  const auto* refusal = dynamic_cast<const BudgetRefusal*>(&e);
  return refusal != nullptr ? std::optional<BudgetRefused>(refusal->refused()) : std::nullopt;
}

// A step over its caps, named by its configuration, with the option to raise them.
BudgetRefusal refusal(const Resolved& r, const StepSetup& setup, const sim::BudgetExceeded& e,
                      const BudgetKnobs& knobs) {
  return budget_refusal(describe(r.label), e, "the step", knobs,
                        setup.collective.fast_path == sim::FastPath::Off);
}

// `estimate`: the step's, made before any step ran (estimate_todo), which its attempts' lines count
// against and name the way of, as a run's do (each attempt counted against its own before). `held`
// (null: none): its hold on the budget shared with the steps run at once, which its later ways grow.
StepPoint simulate_resolved(const Resolved& r, SimulationProgress* progress, bool parallel,
                            const BudgetKnobs& knobs, const StepEstimate& estimate, MemoryGate::Hold* held) {
  const auto start = std::chrono::steady_clock::now();
  StepSetup setup = setup_of(r);
  // Steps on several threads already use the cores: a step's tree models run on its own.
  if (parallel) setup.limits.model_threads = 1;
  StepResult result;
  try {
    // With the estimate's foresight: a fold it foresaw given up is not tried (as `run`'s).
    result = simulate_step(setup,
                           {.progress = progress,
                            .expected_events = estimate.events(),
                            .expected_way = estimate.way,
                            .shared = held},
                           &estimate);
  } catch (const sim::BudgetExceeded& e) {  // named by its configuration, with the option to raise
    throw refusal(r, setup, e, knobs);
  }
  StepPoint p;
  p.id = r.id;
  p.label = r.label;
  p.global_batch = result.global_batch;
  p.step_time = result.step_time;
  p.samples_per_second = result.samples_per_second;
  p.units_per_second = result.units_per_second;
  p.critical = result.critical;
  p.mean = result.mean;
  p.mp_cut_bytes = setup.placement.cut_bytes(*r.profile);
  p.memory_peaks = workloads::model_step_memory(*r.profile, setup, *setup.topology).peaks();
  p.events = result.events;
  p.given_up_events = result.simulation.given_up_events;
  if (result.simulation.hierarchical > 0 &&
      result.simulation.hierarchical_as_ring == result.simulation.hierarchical)
    p.hierarchical_as_ring = result.simulation.hierarchical_unfit;
  p.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return p;
}

// The threads run_parallel uses for `count` pieces of work.
unsigned parallel_threads(std::size_t count, int threads_wanted) {
  const unsigned threads = threads_wanted > 0 ? static_cast<unsigned>(threads_wanted)
                                              : std::max(1u, std::thread::hardware_concurrency());
  return std::min<unsigned>(threads, static_cast<unsigned>(count));
}

// Runs `work(i)` for i in [0, count) on `threads` threads; the first exception (other than an
// InputError that `on_input_error` keeps) stops the others and is rethrown.
template <class Work, class OnInputError>
void run_parallel(std::size_t count, int threads_wanted, Work work, OnInputError on_input_error) {
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex lock;
  std::exception_ptr error;
  auto loop = [&] {
    while (!failed) {
      const std::size_t i = next++;
      if (i >= count) return;
      try {
        work(i, lock);
      } catch (const InputError& e) {
        std::lock_guard guard(lock);
        if (on_input_error(i, e)) continue;
        if (!error) error = std::current_exception();
        failed = true;
      } catch (...) {
        std::lock_guard guard(lock);
        if (!error) error = std::current_exception();
        failed = true;
      }
    }
  };
  const unsigned threads = parallel_threads(count, threads_wanted);
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(loop);
  loop();
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

// The simulation after the estimating, told to its lines so that they give the command's end (issue
// 31: `plan -m gnmt --gpus 16384` estimated for minutes, its lines giving only the estimating's end):
// the events of the steps estimated so far and within their caps (`events`, over `gpus_done` of
// `gpus` GPUs' steps), extrapolated over the rest by their GPUs, at sim::kEventsPerSecond as the
// run's estimate counts them.
void tell_simulation_after(ProgressEstimate& estimating, std::uint64_t events, double gpus_done, double gpus,
                           std::size_t steps_done, std::size_t steps) {
  if (!(gpus_done > 0)) return;
  const double all = static_cast<double>(events) * std::max(1.0, gpus / gpus_done);
  auto [seconds, how] = simulation_after(all, steps_done, steps, "steps estimated");
  estimating.set_after(seconds, std::move(how));
}

// Every step's estimate before any is simulated, checked against its caps. Whatever one step's
// estimate throws is kept by position and, without keep_going, the first in `todo`'s order is
// rethrown (the same step whatever the threads); with it, the step is recorded in `failures` and
// left out of `todo`.
std::vector<StepEstimate> estimate_todo(std::vector<Resolved>& todo, const StepRunOptions& options,
                                        MemoryGate& gate, std::map<StepId, StepFailure>& failures) {
  std::vector<StepEstimate> estimates(todo.size());
  std::vector<std::exception_ptr> refused(todo.size());
  // Estimating builds every step's program, whose cost grows with its GPUs: seconds for a large grid,
  // told like any long work, the GPUs of the steps estimated counting (the largest come first).
  double gpus = 0;
  for (const Resolved& r : todo) gpus += r.label.gpus;
  ProgressEstimate estimating(
      options.progress, options.label, gpus, "GPUs' steps estimated", options.clock,
      {.since = options.started, .until = "every step is estimated, their simulation not yet counted"});
  // Before any step is estimated, their simulation after is known only from below (each simulates at
  // least its worker's kernels, analysis::event_floor): counted so, the lines give the command's end
  // from the first, revised once a step is estimated. Before, a plan's first step of 16,384 GPUs took
  // seconds (20 s at load 7) with lines that gave only the estimating's end (issue 31, plan16k).
  std::uint64_t floor = 0;
  for (const Resolved& r : todo) floor += r.profile ? event_floor(*r.profile) : 0;
  estimating.set_after(static_cast<double>(floor) / sim::kEventsPerSecond,
                       "its simulation after: at least " + sim::BudgetExceeded::count_text(floor) +
                           " events, its steps' kernels, none of the " + std::to_string(todo.size()) +
                           " steps estimated yet");
  std::atomic<std::int64_t> estimated{0};
  std::atomic<std::uint64_t> events_estimated{0};
  std::atomic<std::size_t> steps_estimated{0};
  run_parallel(
      todo.size(), options.threads,
      [&](std::size_t i, std::mutex&) {
        const StepSetup setup = setup_of(todo[i]);
        estimates[i] = [&] {  // its program built (and freed) within the shared budget
          MemoryGate::Hold hold(&gate, todo[i].memory);
          // Its building told as a share of its GPUs: the largest step's takes seconds.
          PartShare share(
              estimating, [&] { return static_cast<double>(estimated.load()); }, todo[i].label.gpus,
              "before any step is simulated");
          // Its later set-ups held against the budget: each apart where the caller reserved nothing
          // for it, else the caller's reservation grown to their counts (estimate_step).
          return estimate_step(setup, options.progress ? &share : nullptr, &gate,
                               todo[i].memory > 0 ? &hold : nullptr);
        }();
        // A step refused by its caps is not simulated: its events count for nothing after.
        const auto told = [&](std::uint64_t events) {
          tell_simulation_after(estimating, events_estimated += events,
                                static_cast<double>(estimated + todo[i].label.gpus), gpus, ++steps_estimated,
                                todo.size());
          estimating.advance(static_cast<double>(estimated += todo[i].label.gpus),
                             "before any step is simulated");
        };
        try {
          estimates[i].check(setup.limits);
        } catch (const sim::BudgetExceeded& e) {
          told(0);
          throw refusal(todo[i], setup, e, options.budget_knobs);
        }
        told(estimates[i].events());
      },
      [&](std::size_t i, const InputError&) {
        refused[i] = std::current_exception();
        return true;
      });
  std::vector<Resolved> kept;
  std::vector<StepEstimate> kept_estimates;
  for (std::size_t i = 0; i < todo.size(); ++i) {
    if (!refused[i]) {
      kept.push_back(std::move(todo[i]));
      kept_estimates.push_back(estimates[i]);
      continue;
    }
    if (!options.keep_going) std::rethrow_exception(refused[i]);
    try {
      std::rethrow_exception(refused[i]);
    } catch (const InputError& e) {
      // Refused by its up-front estimate for its budget: over_budget, as a refusal in the run is.
      failures.emplace(todo[i].id, StepFailure{e.what(), {}, budget_refused(e)});
    }
  }
  todo = std::move(kept);
  return kept_estimates;
}

// The whole run's estimate, before any step is simulated.
void print_run_estimate(const std::vector<Resolved>& todo, const std::vector<StepEstimate>& estimates,
                        const StepRunOptions& options) {
  if (options.progress == nullptr || todo.empty()) return;
  std::uint64_t events = 0;
  std::size_t largest = 0;
  for (std::size_t i = 0; i < estimates.size(); ++i) {
    events += estimates[i].events();
    if (estimates[i].events() > estimates[largest].events()) largest = i;
  }
  *options.progress << run_estimate_line(options.label, todo.size(), events, describe(todo[largest].label),
                                         estimates[largest].events(), estimates[largest].memory())
                    << "\n"
                    << std::flush;
}

// Every request's scenario read from its overlay (which costs little), and the GPUs it names, dp ×
// mp × tp, which weigh its resolving in the progress (whose total is needed before the first is
// resolved). One that cannot be read weighs 1 and fails in its turn, when it would be resolved.
struct ReadRequests {
  std::vector<std::optional<scenarios::Scenario>> scenarios;
  std::vector<std::exception_ptr> unreadable;
  std::vector<double> weights;
};

ReadRequests read_requests(const std::vector<StepRequest>& requests) {
  ReadRequests out{.scenarios = std::vector<std::optional<scenarios::Scenario>>(requests.size()),
                   .unreadable = std::vector<std::exception_ptr>(requests.size()),
                   .weights = {}};
  for (std::size_t i = 0; i < requests.size(); ++i) {
    try {
      out.scenarios[i] = Resolver::read(requests[i]);
    } catch (const InputError&) {
      out.unreadable[i] = std::current_exception();
    }
    const auto& p = out.scenarios[i] ? out.scenarios[i]->parallelism : scenarios::ParallelismSettings{};
    out.weights.push_back(static_cast<double>(p.dp) * p.mp * p.tp);
  }
  return out;
}

// Every GPU's share of its worker's kernels: the tasks of a request's program, which its estimate
// builds for every GPU whatever folds (dp workers of the profile's kernels, forward and backward).
double tasks_to_estimate(const scenarios::Scenario& s, const workloads::Profile& profile) {
  return static_cast<double>(s.parallelism.dp) * static_cast<double>(event_floor(profile) / 2);
}

// The work after resolving, counted before any configuration is resolved, so that the resolving's lines
// give the command's end from the first (issue 31: `plan -m gnmt --gpus 16384` resolved for 13-17 s at
// load 9-10 with lines that gave only the resolving's end): the estimating, each task of every GPU's
// program at one event's time (its 54 candidates, 7.6e8 tasks so counted, estimated on 2 threads in 3
// min at load 2 and 11-12.5 min at load 10-14: 0.24 and 0.9-1 us a task, where 5e6 events/s gives 0.2;
// tests/bench/MEASUREMENTS.md, plan16k2), and their simulation from below, each step's kernels
// (event_floor), both at sim::kEventsPerSecond. The estimating's lines revise it.
void tell_work_after_resolving(ProgressEstimate& resolving, const ReadRequests& read,
                               const std::vector<StepRequest>& requests, const StepRunContext& context) {
  double tasks = 0;
  std::uint64_t floor = 0;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const auto it = context.profiles.find(requests[i].network);
    if (!read.scenarios[i] || it == context.profiles.end() || it->second == nullptr) continue;
    tasks += tasks_to_estimate(*read.scenarios[i], *it->second);
    floor += event_floor(*it->second);
  }
  resolving.set_after((tasks + static_cast<double>(floor)) / sim::kEventsPerSecond,
                      "its steps' estimating and simulation after: about " +
                          sim::BudgetExceeded::count_text(static_cast<std::uint64_t>(tasks)) +
                          " GPUs' tasks to estimate and at least " + sim::BudgetExceeded::count_text(floor) +
                          " events to simulate, at " +
                          sim::BudgetExceeded::count_text(static_cast<std::uint64_t>(sim::kEventsPerSecond)) +
                          " a second, none estimated yet");
}

// The steps simulated in parallel, each holding its memory estimate against the shared budget
// while it runs; by position, its point or (with keep_going) why it failed.
struct Ran {
  std::vector<StepPoint> results;
  std::vector<std::optional<std::string>> failed_why;
  // What a BudgetRefusal in its run was refused for (its estimate had passed the caps); none for any
  // other failure.
  std::vector<std::optional<BudgetRefused>> over_budget;
};

// What a step holds while it is simulated, against the budget the steps on the threads share: its
// estimate's state (what its run checks against its own cap), or what the caller reserved for it
// (StepRunOptions::memory) where that is more.
std::int64_t simulation_memory(const Resolved& r, const StepEstimate& estimate) {
  return std::max(r.memory, estimate.memory());
}

// The budget the steps running at once share (MemoryGate): the caller's (StepRunOptions::memory_budget),
// else the least memory cap of the steps (simulation.max_memory, --max-sim-memory; 0: none). Each step's
// estimate is checked against its cap alone: `plan -m gnmt --gpus 16384` simulated and estimated two
// candidates at once on 2 threads, each within the 4 GiB default, and reached 5.2 GB (issue 31, plan16k).
std::int64_t shared_memory_budget(const std::vector<Resolved>& todo, const StepRunOptions& options) {
  if (options.memory_budget > 0) return options.memory_budget;
  std::int64_t least = 0;
  for (const Resolved& r : todo) {
    const std::int64_t cap = r.config.limits.max_memory;
    if (cap > 0 && (least == 0 || cap < least)) least = cap;
  }
  return least;
}

Ran run_todo(const std::vector<Resolved>& todo, const std::vector<StepEstimate>& estimates,
             const StepRunOptions& options, MemoryGate& gate, StepRunProgress& whole) {
  Ran ran{.results = std::vector<StepPoint>(todo.size()),
          .failed_why = std::vector<std::optional<std::string>>(todo.size()),
          .over_budget = std::vector<std::optional<BudgetRefused>>(todo.size())};
  std::size_t done = 0;
  const bool parallel = parallel_threads(todo.size(), options.threads) > 1;
  gate.hold_beside(heap_in_use());  // the routes the estimates cached too
  run_parallel(
      todo.size(), options.threads,
      [&](std::size_t i, std::mutex& lock) {
        StepRunProgress::Share share(whole, i);
        {
          MemoryGate::Hold hold(&gate, simulation_memory(todo[i], estimates[i]));
          ran.results[i] = simulate_resolved(todo[i], options.progress ? &share : nullptr, parallel,
                                             options.budget_knobs, estimates[i], &hold);
        }
        whole.step_done(i, describe(todo[i].label));
        std::lock_guard guard(lock);
        ++done;
        if (options.on_progress) options.on_progress({done, todo.size(), &ran.results[i]});
      },
      [&](std::size_t i, const InputError& e) {
        std::optional<BudgetRefused> budget = budget_refused(e);
        if (!options.keep_going && !(options.keep_going_past_run_refusals && budget)) return false;
        ran.failed_why[i] = e.what();
        whole.step_done(i, {});
        ran.over_budget[i] = std::move(budget);
        ++done;
        return true;
      });
  return ran;
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
