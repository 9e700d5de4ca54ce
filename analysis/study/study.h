// The hybrid-vs-DP study: for each network and GPU count N, data parallelism alone (dp = N) against
// hybrid workers of mp GPUs (dp = N / mp), each simulated for one step and projected to time to
// train = epochs(B) × ceil(dataset / B) × step time with B = dp × the per-worker batch. Hybrid keeps
// the per-worker batch, so at the same N its global batch is mp times smaller: fewer epochs, slower
// steps per sample. Sensitivity variants (other efficiency curves, faster InfiniBand) reuse the
// simulated steps. Times are seconds (doubles) in results; step times stay sim::Time.
//   StudyResult r = run_study(load_study_config("scenarios/study/quick.yaml"), {.progress = &std::cerr});
//   r.networks[1].variants[0].headline.gain_best   // GNMT: best DP time / best hybrid time − 1
#pragma once
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/study/study_config.h"
#include "analysis/study/study_steps.h"
#include "analysis/training/time_to_train.h"

namespace hybridsim::analysis {

// One configuration of one network under one variant.
struct StudyRow {
  int gpus = 1;
  int dp = 1;
  int mp = 1;
  StepPoint step{};
  TimeToTrain ttt{};
  double step_speedup = 0;  // samples per second / the 1-GPU baseline's (throughput ratio)
  double e2e_speedup = 0;   // the 1-GPU baseline's time to train / this one
  // "does not fit: GPU 0 needs ..." against StudyResult::memory; empty when it fits (or the
  // capacity is unknown). Such a row is never "best" (compute_headline skips it).
  std::string does_not_fit{};
  bool is_dp() const { return mp == 1; }
};

// The answer under one variant. Definitions (also printed in the report):
//   best DP      = min over N in the grid of DP's time to train;
//   best hybrid  = min over N in the grid and mp >= 2 of hybrid's time to train;
//   gain_best    = best DP / best hybrid − 1   (the headline: > 0 means hybrid trains faster than
//                  the best DP can with at most the largest N GPUs);
//   gain_at_max  = DP(N max) / best hybrid(N max) − 1 (both on the largest GPU count);
//   crossover    = the smallest N from which the best hybrid at N beats DP at N at every larger N
//                  of the grid (none when hybrid is behind at N max).
// Rows that do not fit in the GPU's memory (StudyRow::does_not_fit) take part in none of these.
// Rows are indices into StudyVariant::rows (-1: none, e.g. no hybrid fits the grid).
struct StudyHeadline {
  int best_dp = -1;
  int best_hybrid = -1;
  int dp_at_max = -1;
  int hybrid_at_max = -1;  // the best hybrid at N max
  double gain_best = 0;
  double gain_at_max = 0;
  std::optional<int> crossover{};
  bool extrapolated = false;  // any row's epochs lie outside the curve's supported range
};

// Where data parallelism stops paying, and how far the headline is from flipping
// (study_break_even.cpp; the derivation is in analysis/README.md, "Break-even"). Row indices as in
// StudyHeadline; rows that do not fit in memory take part in none of it (unless asked otherwise).
enum class DpPeak {
  None,        // no DP row fits
  Peaked,      // a larger DP N of the grid (that fits) trains no faster than the best DP
  GridEdge,    // the best DP is at the grid's largest N: still improving there
  MemoryEdge,  // the best DP is the largest DP N that fits; larger ones do not fit in memory
};
struct StudyBreakEven {
  DpPeak dp_peak = DpPeak::None;
  int best_dp = -1;           // where DP's end-to-end speedup stops growing (the headline's best DP)
  int dp_past_peak = -1;      // Peaked: the next larger DP N that fits (no faster than best_dp)
  int hybrid_upto_peak = -1;  // the best hybrid on at most best_dp's GPU count
  double gain_at_peak = 0;    // best DP time / hybrid_upto_peak's − 1
  int best_hybrid = -1;       // the headline's best hybrid (over the whole grid)
  // (a) Every hybrid step time × step_factor ties the best hybrid with the best DP:
  //     step_factor = best DP time / best hybrid time (< 1: hybrid's steps must get faster by
  //     1 / step_factor; > 1: they could be that much slower and hybrid would still win).
  double step_factor = 0;
  // (b) The epochs to converge at the best DP's global batch (every row of that batch, DP or hybrid)
  //     × epochs_factor flips the answer: hybrid behind → it wins above the factor; hybrid ahead →
  //     DP wins at or below it. None: no factor flips it (another DP point, or a hybrid at that
  //     batch, decides), or there is no best DP or no hybrid.
  std::optional<double> epochs_factor{};
  std::int64_t epochs_batch = 0;  // the best DP's global batch
  double epochs_now = 0;          // the curve's epochs there
};

struct StudyVariant {
  StudyVariant(std::string label_, EfficiencyCurve curve_, double ib_factor_)
      : label(std::move(label_)), curve(std::move(curve_)), ib_factor(ib_factor_) {}

  std::string label{};  // "default", "optimistic", "pessimistic", "IB x2"
  EfficiencyCurve curve;
  double ib_factor = 1.0;
  StudyRow baseline{};                 // 1 GPU
  std::vector<StudyRow> mp_alone{};    // dp = 1, one per mp of the study the model allows
  std::vector<StudyRow> rows{};        // the grid: by N, then DP before hybrid by mp
  // Configurations of the grid refused during their run (StepFailure::in_run), left out of `rows` and
  // so of every figure (the network's notes name them): "N = 16384, 4096 x 4" and the refusal.
  struct NotSimulated {
    std::string configuration;
    std::string why;
  };
  std::vector<NotSimulated> not_simulated{};
  StudyHeadline headline{};
  StudyBreakEven break_even{};
  const StudyRow& row(int index) const { return rows.at(static_cast<std::size_t>(index)); }
};

struct NetworkStudy {
  std::size_t network = 0;                // index into StudyResult::config.networks
  std::vector<int> mp;                    // the mp values the model allows (every GPU gets ops)
  std::vector<std::string> notes{};       // configurations left out and why (kernel_note first)
  // Where the preset's GPU is another part of the chip whose kernels run (pcie-server, dgx2: the
  // V100-SXM2-16GB's): workloads/gpu/gpu_part_note.h's note, as run and plan say it; else empty.
  std::string kernel_note{};
  std::vector<std::string> mp_left_out{};   // "mp = 16: the stacks partitioner gives only 5 of …"
  std::string no_hybrid{};  // why the grid holds no hybrid configuration; empty when it holds one
  std::vector<StudyVariant> variants{};     // [0] the headline curve; then the sensitivity runs
  const StudyVariant& main() const { return variants.front(); }
};

struct StudyResult {
  StudyConfig config{};
  std::vector<NetworkStudy> networks{};
  std::optional<workloads::MemoryCapacity> memory{};  // each GPU's memory the rows are checked against
  std::size_t steps_simulated = 0;
  double wall_seconds = 0;  // not written into the report (it would break reproducible output)
  // The language the report's hints name options in ("--memory", Python's "memory=").
  OptionSpelling spelling{};
  const StudyNetwork& network(const NetworkStudy& n) const { return config.networks.at(n.network); }
};

struct StudyRunOptions {
  std::ostream* progress = nullptr;  // one line per simulated step (stderr in the CLI)
  std::optional<int> threads{};        // overrides config.threads
  bool ib_sensitivity = true;        // false: skip the faster-InfiniBand runs (they re-simulate)
  // Each GPU's memory, a what-if (none: the GPU workload.gpu names, else the cluster preset's GPU,
  // workloads/gpu/gpu.h).
  std::optional<workloads::MemoryCapacity> memory{};
  // --max-events / --max-sim-memory for every step (limit_overlay(), study_steps.h).
  std::vector<std::string> limits{};
  OptionSpelling spelling{};  // the language refusals name those options in (Python's max_events=)
};

// Projects one simulated step under a curve: the row's time to train and speedups against the
// 1-GPU baseline `base` (pass nullptr to project the baseline itself).
StudyRow project_row(const StepPoint& step, const EfficiencyCurve& curve, std::int64_t dataset_samples,
                     const StudyRow* base);
// Fills the headline of a variant from its rows (see StudyHeadline for the definitions).
// With `respect_memory` false, rows that do not fit count as if they did: the answer a GPU with room
// enough would give, which the study prints beside a headline that memory emptied.
StudyHeadline compute_headline(const StudyVariant& variant, bool respect_memory = true);

// Fills the break-even figures of a variant from its rows (see StudyBreakEven; `respect_memory` as
// for compute_headline).
StudyBreakEven compute_break_even(const StudyVariant& variant, bool respect_memory = true);

// Runs the study: simulates every step once (in parallel), projects every variant.
StudyResult run_study(const StudyConfig& config, const StudyRunOptions& options = {});
// The same with a caller's cache (e.g. shared with the planner).
StudyResult run_study(const StudyConfig& config, const StudyRunOptions& options, StepCache& cache);

}  // namespace hybridsim::analysis
