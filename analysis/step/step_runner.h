// Simulates one training step of a dp × mp strategy end to end: builds the per-GPU programs
// (workloads/program/step_program.h), plans every collective on the topology
// (workloads/comm/comm_plan.h), runs them on sim/'s network and streams, and measures the result
// (analysis/step/step_metrics.h).
//   StepSetup s;  s.profile = &p;  s.topology = &t;  s.placement = pl;  s.mapping = m;
//   StepResult r = simulate_step(s);
//   r.step_time; r.units_per_second; r.critical.exposed_communication;
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "analysis/step/critical_path.h"
#include "analysis/step/memory_gate.h"
#include "analysis/step/step_metrics.h"
#include "analysis/step/step_progress.h"
#include "sim/network.h"
#include "sim/stream_executor.h"
#include "topology/topology.h"
#include "workloads/comm/comm_plan.h"
#include "workloads/profile/profile.h"
#include "workloads/program/mapping.h"
#include "workloads/program/placement.h"
#include "workloads/program/step_program.h"
#include "workloads/program/variability.h"
#include "workloads/step/step_config.h"

namespace hybridsim::workloads {
struct StepMemory;
}

namespace hybridsim::analysis {

// A step's configuration and what it runs on (neither owned).
struct StepSetup : workloads::StepConfig {
  const workloads::Profile* profile = nullptr;
  const topology::Topology* topology = nullptr;
  // Which step of the run this setup simulates: its noise and sentence lengths
  // (StepConfig::variability) are those drawn for step `step_index`.
  int step_index = 0;
  // The memory the run reports where it is not workloads::model_step_memory's, by MP rank (a
  // transformer's, Korthikanti's: one rank per pipeline stage); null: that model's. A trace's memory
  // counter follows it, so that its highest sample is the run's peak.
  const workloads::StepMemory* memory = nullptr;
  // Where communication.protocol was written ("s.yaml:12:13", "--set communication.protocol=ll128"),
  // which the step's refusal of a fixed LL128 leads with, as resolve's refusal of a 2017 network's
  // (a transformer's collectives are known only here); empty: no scenario (a plan's own setup).
  std::string protocol_written;
};

struct StepResult;

// Told each collective's plan as a run sets it up, before its events start (a trace names the
// algorithm and protocol that ran from the run's own plans, not by planning them again). A folded
// step's shadows are never planned: no GPU it runs takes part in them.
class PlanObserver {
 public:
  virtual void on_plan(std::uint32_t collective, const workloads::CollectivePlan& plan) = 0;

 protected:
  ~PlanObserver() = default;
};

class FoldObserver;

// Optional observers of the run, e.g. a trace writer (the step's own metrics are always collected).
// `stream` and `network` see every GPU and message, so with either the step is not folded; `fold`
// alone lets it fold (it is not told when the step does not).
struct StepObservers {
  sim::StreamObserver* stream = nullptr;
  sim::NetworkObserver* network = nullptr;
  SimulationProgress* progress = nullptr;  // lines for a person waiting (does not stop the step folding)
  FoldObserver* fold = nullptr;
  PlanObserver* plans = nullptr;  // told each collective's plan, attempt by attempt (the same each time)
  // The step's own estimate (estimate_program: what sweep, study and plan check up front) and the
  // way it counts (StepEstimate::way), which the progress lines count against in every attempt;
  // 0: each attempt's own (its first, folded attempt quoted 293,424 events of a step that ran
  // 1,081,008 every GPU simulated, where sweep quoted 1.1e6).
  std::uint64_t expected_events = 0;
  std::string_view expected_way = {};
  // The step's hold on a memory budget shared with steps run at once on other threads (StepCache's,
  // analysis/study/study_steps.cpp), taken for its estimate (null: none shared). Each later way of the
  // ladder (every GPU, every collective in full) grows it to that way's count before its set-up is
  // built, so that two steps on two threads never hold past the budget together: two fallbacks of
  // GNMT dp 4,096 x mp 4 on 16,384 GPUs peaked at 7.8 GB under a 4 GiB cap (tests/bench/MEASUREMENTS.md,
  // escal).
  MemoryGate::Hold* shared = nullptr;
  // The execution record's entries handed from one try to the next (null: each takes fresh ones):
  // a variability run's steps take their last step's, cleared, rather than 37 MB fresh from the
  // system a step at 1,024 GPUs (sim::ExecutionRecord::Storage; simulate_steps holds them).
  sim::ExecutionRecord::Storage* record_storage = nullptr;
};

// Told which way of simulating the step held (a trace of some GPUs, analysis/trace/step_trace.h):
// `fold` is the folded step's (its representatives), or empty when every GPU was simulated, and
// `held` the result. Returns observers of the GPUs' streams and the collectives' plans to run that
// same attempt once more with (the same plan gives the same events and result, which is checked), or
// no stream observer for none. Attempts that did not hold are never observed.
class FoldObserver {
 public:
  virtual StepObservers observe_fold(const sim::StepFold& fold, const StepResult& held) = 0;

 protected:
  ~FoldObserver() = default;
};

struct StepResult {
  int dp = 1;
  int mp = 1;  // a pipeline's stages (pp), or a 2017 network's model-parallel ranks
  // A transformer's dimensions (StepOptions): tp, pp (= mp), expert parallel ep (within dp), ZeRO.
  int tp = 1, pp = 1, ep = 1, zero = 0;
  // A transformer's step (its profile a named model's or network: transformer's): its strategy line
  // names tp, pp, dp, never the 2017 networks' mp ("dp 16 × mp 1" read as if mp were a dimension).
  bool transformer = false;
  int gpus = 1;
  int accumulation = 1;  // micro-batches per step (gradient accumulation)
  std::int64_t global_batch = 0;
  sim::Time step_time;
  double samples_per_second = 0;
  double units_per_second = 0;  // the profile's throughput unit (images, tokens, words)
  std::string unit;
  // Means over the GPUs used, and the GPU that finished last (the step's critical GPU).
  GpuStepMetrics mean;
  GpuStepMetrics critical;
  CriticalPath critical_path;  // its parts add up to step_time
  std::vector<GpuStepMetrics> per_gpu;
  std::array<sim::Bytes, sim::kLinkKindCount> bytes_by_link_kind{};  // payload × links crossed
  // Over several steps (analysis/step/step_series.h): how many, and their mean (= step_time), p95
  // (nearest rank), shortest and longest; one step: all four are its time. critical_steps: in how
  // many of them `critical` (the GPU last most often) finished last; `steps` where it always did.
  struct Spread {
    int steps = 1;
    sim::Time mean, p95, min, max;
    int critical_steps = 1;
  } spread;
  std::uint64_t events = 0;  // its own queue's and those of folded rings' models
  std::uint64_t messages = 0;
  std::size_t collectives = 0;  // over every step of a variability run, as events and messages
  // How its collectives were simulated (sim/README.md, "Folding"): how many were folded onto
  // representatives, how late a bounded fold may make the step (analysis/step/step_bound.h), the
  // first unfolded one's reason, and whether another transfer crossed a folded ring's links so the
  // step was simulated again in full.
  struct Simulation {
    std::size_t folded = 0;
    std::size_t embedded = 0;  // of those, folded together with the rings that share their links
    sim::Time bound;
    std::string full_reason;
    bool rerun = false;
    std::uint32_t gpus_simulated = 0;  // folded step: its representative GPUs (0: every GPU)
    std::string step_fold_reason;      // why a fold of the step was given up, if it was
    // The way the step was simulated (step_runner.cpp's strategies, cheapest first) and, for each
    // one tried before it, "name: why it was refused" (a traced step: "... a trace records every GPU").
    std::string strategy;
    std::vector<std::string> refused;
    // Under communication.algorithm: hierarchical: its all-reduces, those of them that ran as rings
    // (their GPUs cannot run it), and why the first of those could not.
    std::size_t hierarchical = 0;
    std::size_t hierarchical_as_ring = 0;
    std::string hierarchical_unfit;
    // The most messages its network held in flight at once (sim::Network), against which its
    // estimate's messages in flight (StepEstimate::full_memory) is held by a test.
    std::uint64_t most_in_flight = 0;
    // And the most messages its networks of their own held at once, at most: its folded
    // collectives' models' (sim::SimulationPath::model_in_flight) and its embedded rings' ghost
    // network's, which the step's network does not see (issue 31). A bound: each part's most,
    // summed where they may coincide (attempt_result.cpp's models_in_flight).
    std::uint64_t model_in_flight = 0;
    // The events of the attempts run before this one and thrown away (their queues' and models'),
    // counted in `events` of none: what the step's estimate (analysis/step/step_estimate.h) and its
    // progress lines are held to, with `events`.
    std::uint64_t given_up_events = 0;
  } simulation;
};

// Builds the per-GPU programs of the setup (what simulate_program runs; observers such as a trace
// writer need it before the run), with the variability of step setup.step_index applied. `progress`
// (null: none) is told as the programs are built (SimulationProgress::part_tick).
workloads::StepProgram build_program(const StepSetup& setup, SimulationProgress* progress = nullptr);
// Sets every GPU's compute scale (its speed × the step's noise) and sample scale (its worker's
// padded length) for step setup.step_index. Throws InputError for sentence lengths on a profile
// that is not an encoder-decoder (metadata target_length 0).
void apply_step_variability(const StepSetup& setup, workloads::StepProgram& program);
// Runs a program built by build_program(setup). `first` (null: none): the ladder's first try as the
// step's estimate set it up (estimate_program, analysis/step/step_attempt.h), run rather than set up
// again; what it holds is taken.
struct FirstAttempt;
StepResult simulate_program(const StepSetup& setup, const workloads::StepProgram& program,
                            StepObservers observers = {}, FirstAttempt* first = nullptr);
// Before the event loop starts: records the program's tasks and the collectives' state in `budget`
// and checks it with the full cost of every collective that cannot fold (sim/budget.h); throws
// sim::BudgetExceeded past setup.limits. The others are checked as they start in full. Under a
// fold (`fold` not empty) only the representatives' tasks are counted: the members run none.
void check_step_budget(sim::SimulationBudget& budget, const workloads::StepProgram& program,
                       const std::vector<std::unique_ptr<sim::Collective>>& collectives,
                       const sim::StepFold& fold = {});
// Both in one. `estimated` (null: none): the step's estimate made before (estimate_step(setup), a
// study's or plan's), whose foresight the run takes: a first fold it foresaw given up after its run
// (StepEstimate::fold_given_up) is not tried.
struct StepEstimate;
StepResult simulate_step(const StepSetup& setup, StepObservers observers = {},
                         const StepEstimate* estimated = nullptr);
// The whole profile on one GPU, alone (the replay check of imported profiles).
StepResult simulate_on_one_gpu(const workloads::Profile& profile);

}  // namespace hybridsim::analysis
