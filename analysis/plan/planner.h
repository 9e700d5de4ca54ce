// The strategy planner: for one model on N GPUs of a cluster, searches dp × mp (mp among the
// divisors of N up to 8, the machine size and the op count), the MP placement (each partitioner,
// identical placements once), the gradient bucket size and the all-reduce algorithm; simulates one
// step of each candidate and ranks them by projected time to train (epochs(B) × ceil(dataset / B) ×
// step) or by throughput, explaining why the best win (compute, exposed communication, epochs).
// Each candidate's per-GPU peak memory (workloads/memory/memory_model.h) is checked against the GPU's
// capacity (the preset's GPU, or a what-if): one that does not fit is left out, or with show_unfit
// ranked after every one that fits and marked, so the planner never recommends it.
//   PlanResult r = plan(make_plan_request({.model = "gnmt", .gpus = 64}));
//   print_plan(r, std::cout);   // r.ranked[0] is the best configuration
#pragma once
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/study/study_steps.h"
#include "analysis/training/statistical_efficiency.h"
#include "analysis/training/time_to_train.h"
#include "scenarios/loader/scenario.h"
#include "sim/collective.h"
#include "workloads/comm/comm_plan.h"
#include "workloads/memory/memory_model.h"
#include "workloads/profile/profile.h"
#include "workloads/program/placement.h"
#include "workloads/program/step_program.h"

namespace hybridsim::analysis {

// Events one candidate's step may simulate where --max-events is not given: 2×10^8, about 40 s at
// sim/budget.h's 5 M events/s. The simulation's own default (2×10^9) let a 16,384-GPU plan of GNMT
// simulate its hybrid candidates whose collectives do not fold, hours in all (tests/bench/
// MEASUREMENTS.md, plan16k4); a candidate past this is found by its estimate before any step runs,
// not simulated, and listed as such below the ranking (PlanResult::not_simulated), never ranked.
inline constexpr std::uint64_t kPlanStepEvents = 200'000'000;

enum class PlanObjective : std::uint8_t { TimeToTrain, Throughput };
std::string_view objective_name(PlanObjective o);      // "time-to-train", "throughput"
PlanObjective parse_objective(std::string_view text);  // InputError listing the choices

// What is searched; empty `mp` means every divisor of N up to min(8, GPUs per machine, op count).
struct PlanSearch {
  std::vector<int> mp{};
  std::vector<workloads::Partitioner> partitioners{
      workloads::Partitioner::Layers, workloads::Partitioner::Stacks, workloads::Partitioner::Branches};
  std::vector<sim::Bytes> bucket_sizes{sim::Bytes::of(6'250'000), sim::Bytes::of(25'000'000),
                                       sim::Bytes::of(100'000'000)};
  std::vector<workloads::AllReduceAlgorithm> algorithms{workloads::AllReduceAlgorithm::Ring,
                                                        workloads::AllReduceAlgorithm::Hierarchical};
};

struct PlanRequest {
  std::string model;  // the name shown (the profile's network)
  workloads::Profile profile{};
  std::string profile_file{};  // the file `profile` was read from; empty: a built-in network
  std::optional<EfficiencyCurve> curve{};      // required for the time-to-train objective
  std::optional<TrainingDataset> dataset{};    // likewise
  int gpus = 8;
  ClusterSpec cluster{};
  PlanObjective objective = PlanObjective::TimeToTrain;
  PlanSearch search{};
  sim::Bytes message_size = sim::CollectiveConfig{}.message_size;
  // How the candidates' collectives are simulated: `run`'s and the study's default (bounded), so that a
  // row is the step `run` gives for that configuration. sim::CollectiveConfig's own `auto` folded no
  // ring of unequal chunks, the rule at scale: GNMT's DP candidates on 16,384 GPUs ran in full, about
  // 2e9 events each, hours for the plan (tests/bench/MEASUREMENTS.md, plan16k4).
  sim::FastPath fast_path = scenarios::kDefaultFastPath;
  int threads = 0;                   // 0: one per hardware thread
  std::ostream* progress = nullptr;  // one line per simulated step
  // Each GPU's memory (none: unknown, nothing is left out) and whether configurations that do not
  // fit are shown (ranked last, marked) rather than left out. Its origin says where it came from: the
  // preset's GPU, or --memory as read (memory_what_if: Origin::Option), which a "nothing fits" refusal
  // then leads with.
  std::optional<workloads::MemoryCapacity> memory{};
  bool show_unfit = false;
  // "simulation.max_events=N", "simulation.max_memory=SIZE" for every step (limit_overlay()).
  std::vector<std::string> limits{};
  std::string events_cap{};   // how the events' cap was set, for the report (PlanResult::events_cap)
  OptionSpelling spelling{};  // the language refusals name the plan's options in (--max-events, max_events=)
};

struct PlanCandidate {
  StepPoint step{};                 // its label holds dp × mp, placement, bucket, algorithm
  std::optional<TimeToTrain> ttt{};  // with a curve and dataset
  double samples_per_second = 0;
  std::string why;                 // filled for the best few by plan()
  std::string does_not_fit;        // "does not fit: GPU 0 needs ..."; empty when it fits
};

struct PlanResult {
  std::string model{};
  int gpus = 0;
  ClusterSpec cluster{};
  PlanObjective objective = PlanObjective::TimeToTrain;
  std::optional<EfficiencyCurve> curve{};
  std::optional<TrainingDataset> dataset{};
  std::vector<PlanCandidate> ranked{};  // best first; ties keep the search order
  std::vector<std::string> skipped;   // candidates left out (duplicate or idle-GPU placements, failures)
  std::optional<workloads::MemoryCapacity> memory{};
  struct Unfit {
    StepLabel label{};
    std::string why;    // "does not fit: GPU 0 needs ..."
    sim::Bytes need{};  // its largest GPU's peak
    std::string needs;  // "4.96 GiB on GPU 0 (weights 0.60, ...)" (largest_need)
  };
  std::vector<Unfit> unfit;           // candidates that do not fit (left out unless show_unfit)
  // Hierarchical candidates whose every all-reduce ran as the ring (StepPoint::hierarchical_as_ring):
  // the same steps as their ring rows, left out and printed as one line per reason.
  std::vector<Unfit> as_ring;
  // Candidates refused for their caps (--max-events, --max-sim-memory) by their estimate or in their
  // run: not simulated, so not ranked; `why`: the refusal's words, "the step would simulate about ..."
  // (BudgetRefused::words, without the step's name).
  struct NotSimulated {
    StepLabel label{};
    std::string why;
  };
  std::vector<NotSimulated> not_simulated;
  std::string events_cap{};  // "--max-events 200000000 (the plan's default)", as the user would raise it
  bool show_unfit = false;
  OptionSpelling spelling{};          // the language print_plan's hints name options in (show_unfit=True)
  std::string kernel_times{};         // how they are known, where not the calibrated V100's; else empty
  std::vector<int> mp_searched{};
  std::size_t simulated = 0;          // steps simulated for this plan (cache hits excluded)
};

// The mp values searched for `request` (its own list, or the divisors rule above).
std::vector<int> plan_mp_values(const PlanRequest& request);
// Runs the search; `cache` (optional) shares simulated steps with a study or another plan.
PlanResult plan(const PlanRequest& request, StepCache* cache = nullptr);
// The best `top` configurations as a table with their projected time to train and why they win.
void print_plan(const PlanResult& result, std::ostream& out, int top = 5);

// What the CLI parses: `hybridsim plan --model gnmt --gpus 64 --cluster dgx1-v100 --objective ...`.
struct PlanCommandOptions {
  std::string model{};                    // a built-in profile name or a profile file
  int gpus = 8;
  std::string cluster = "dgx1-v100";    // a machine preset
  std::string objective = "time-to-train";
  std::string variant = "default";      // the efficiency curve variant
  std::optional<std::string> ib_bandwidth{};  // e.g. "200 Gb/s"
  std::optional<std::string> memory{};        // each GPU's memory, e.g. "32 GiB" (else the preset's)
  bool show_unfit = false;
  int threads = 0;
  std::string max_events{};       // --max-events: a step's events (empty: kPlanStepEvents)
  std::string max_sim_memory{};   // --max-sim-memory: a step's simulation state
  // The language refusals name these options in: the command line's (--gpus) or Python's (gpus=).
  OptionSpelling spelling{};
};
// Resolves names into a request (built-in curve and dataset of the profile's network when they
// exist). Throws InputError for an unknown model or preset, and for time-to-train without a curve.
PlanRequest make_plan_request(const PlanCommandOptions& options);
// InputError for a --model that is no built-in profile, named transformer or file, with the nearest
// name: checked before the options that only a transformer takes are judged.
void check_plan_model(const PlanCommandOptions& options);
// The options both planners (this one and the transformer planner) read alike: --gpus within the
// machines a cluster may have (topology::kMaxNodes of the preset's), and --ib-bandwidth, a rate
// above 0; InputError naming the option otherwise.
void check_plan_gpus(const ClusterSpec& cluster, int gpus, const OptionSpelling& spelling = {});
// --cluster's preset, checked: a topology file is refused as such (the preset's refusal offered "or a
// topology YAML file", which plan does not take: it sizes a preset's machines to --gpus).
std::string plan_cluster_preset(const std::string& cluster, const OptionSpelling& spelling = {});
sim::Bandwidth ib_bandwidth_option(const std::string& text, const OptionSpelling& spelling = {});
// `plan --ib-bandwidth` with --gpus that fit one machine of `cluster` (no candidate crosses
// InfiniBand): InputError naming the option. The command's check only: a study grid's cells that fit
// one machine keep the study's rates, which change nothing there.
void refuse_ib_bandwidth_on_one_machine(const std::string& text, const ClusterSpec& cluster, int gpus,
                                        const OptionSpelling& spelling = {});

}  // namespace hybridsim::analysis
