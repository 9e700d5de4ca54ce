// The timeline of one simulated training step as a Chrome / Perfetto trace (Trace Event Format):
// one process per GPU ("GPU 13 · node 1", a thread per stream: kernels, collectives, transfers with
// flow arrows from send to receive, ring steps nested in collectives; a "memory" counter of what the
// GPU holds over the step, in GiB), one "network" process with a
// utilization counter per link and, at the highest detail, every message on every link. Times are
// sim::Time, written as µs with ns decimals. What each track means: analysis/README.md.
//   StepTraceSummary s;
//   StepResult r = simulate_step_with_trace(setup, "step.json", {.detail = TraceDetail::Steps}, &s);
//   // s.bytes: the file's size; a throwing run leaves neither step.json nor a temporary file
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/step/step_runner.h"
#include "analysis/trace/busy_fraction_bins.h"
#include "analysis/trace/chrome_trace_writer.h"
#include "analysis/trace/step_trace_options.h"
#include "analysis/trace/trace_track_allocator.h"
#include "sim/network.h"
#include "sim/ring_collective.h"
#include "sim/stream_executor.h"

namespace hybridsim::analysis {

struct StepTraceSummary {
  std::filesystem::path path;
  std::int64_t bytes = 0;   // size of the file (compressed if gzip)
  std::int64_t events = 0;  // events written
  std::string shows;  // which GPUs the trace shows and why (printed by the run), e.g. "one GPU per class …"
};

// Observes one run and writes it to a ChromeTraceWriter the caller owns (so a sweep can write one
// trace per point, and add otherData). Reuse: one observer per run.
class StepTraceObserver final : public sim::StreamObserver,
                                public sim::NetworkObserver,
                                public sim::RingObserver,
                                public PlanObserver {
 public:
  // GPU rank r is process r + 1; the network is process gpu_count + 1 (sorted after the GPUs).
  static TracePid gpu_pid(int rank) { return rank + 1; }
  static TracePid network_pid(const topology::Topology& topology) {
    return static_cast<TracePid>(topology.gpus().size()) + 1;
  }
  // The writer options for `options` on `topology` (gzip, window, and the pids the GPU filter
  // keeps). Throws InputError if the filter names a GPU the topology does not have.
  static ChromeTraceOptions writer_options(const StepTraceOptions& options,
                                           const topology::Topology& topology);

  // Writes the process and thread metadata at once. `writer`, `program` and the setup's profile and
  // topology must outlive the observer; `program` is what simulate_program will run.
  StepTraceObserver(ChromeTraceWriter& writer, const StepSetup& setup,
                    const workloads::StepProgram& program, const StepTraceOptions& options);
  StepTraceObserver(const StepTraceObserver&) = delete;
  StepTraceObserver& operator=(const StepTraceObserver&) = delete;

  // For simulate_program(setup, program, observer.observers()).
  StepObservers observers() { return {.stream = this, .network = this, .plans = this}; }
  // For StepSetup::collective.observer: this observer at detail steps or messages, else null (so
  // the rings pay nothing for traces that do not show their steps).
  sim::RingObserver* ring_observer() { return options_.detail >= TraceDetail::Steps ? this : nullptr; }

  void on_kernel(std::uint32_t gpu, std::uint32_t stream, std::uint32_t task, sim::Time start,
                 sim::Time end) override;
  void on_collective(std::uint32_t gpu, std::uint32_t stream, std::uint32_t task, sim::Time start,
                     sim::Time end) override;
  void on_hop(const sim::HopRecord& hop) override;
  void on_ring_arrival(const sim::RingArrival& arrival) override;
  void on_plan(std::uint32_t collective, const workloads::CollectivePlan& plan) override;

  // Writes what is still pending (each link counter's last bin, a pipeline stage's last micro-batch
  // and its bubble until `step_end`). Once, after the run and before writer.finish().
  void finish(sim::Time step_end);

 private:
  struct P2pEnd {  // one side of a model-parallel transfer, until the other side is reported
    std::uint32_t gpu;
    TraceTid tid;
    sim::Time start;
    sim::Time end;
  };
  struct PendingStep {  // a ring step, held until its collective's slice is written (parents first)
    const sim::RingCollective* ring;
    std::uint32_t step;
    sim::Time start;
    sim::Time end;
  };
  struct RankSteps {  // a ring rank's progress through its steps
    std::uint32_t next_step = 0;
    std::vector<std::uint32_t> arrivals;  // [i]: messages of step next_step + i taken in so far
    sim::Time step_start;
    bool started = false;
  };
  struct RingState {
    std::vector<int> gpu_of_rank;  // global GPU rank of each ring rank (-1: filtered out)
    std::vector<RankSteps> ranks;
    std::uint32_t ranks_left = 0;  // traced ranks with steps left; 0: nothing more to trace
  };

  // A pipeline stage's compute thread (step_trace_pipeline.cpp): its kernels and collectives wait
  // here until the micro-batch's forward or backward that encloses them has ended, so that its
  // slice, and a recompute slice within a backward, come first; the time the stream waited on
  // another stage becomes a "bubble" slice.
  struct StageSlice {
    std::uint32_t task;
    sim::Time start;
    sim::Time end;
  };
  struct StageThread {
    std::vector<StageSlice> held;  // the open micro-batch's, in stream order
    std::int32_t micro_batch = -1;  // the open micro-batch; -1: none
    bool backward = false;
    std::uint32_t next_task = 0;  // the task after the last one reported
    sim::Time last_end;           // when the last one reported ended
    // Interleaved 1F1B: the stage's model chunks (0: not counted yet) and, by micro-batch, the
    // forwards and backwards written, which say the chunk of the next (forwards in chunk order,
    // backwards the other way round).
    int chunks = 0;
    std::vector<std::int32_t> forwards, backwards;
  };
  bool keeps(std::uint32_t gpu) const { return gpu < keep_gpu_.size() && keep_gpu_[gpu] != 0; }
  bool is_stage_compute(std::uint32_t gpu, std::uint32_t stream) const {
    return stream == 0 && gpu < stages_.size() && keeps(gpu);
  }
  void hold_stage_task(std::uint32_t gpu, std::uint32_t task, sim::Time start, sim::Time end);
  void write_stage_group(std::uint32_t gpu);
  void finish_stages(sim::Time step_end);
  void write_stage_slice(std::uint32_t gpu, const StageSlice& s);
  void write_bubble(std::uint32_t gpu, sim::Time start, sim::Time end, std::uint8_t waiting_for);
  void write_kernel(std::uint32_t gpu, std::uint32_t stream, std::uint32_t task, sim::Time start,
                    sim::Time end);
  void write_collective(std::uint32_t gpu, std::uint32_t stream, std::uint32_t task, sim::Time start,
                        sim::Time end);
  bool outside_window(sim::Time start, sim::Time end) const;
  void write_metadata();
  void write_p2p(std::uint32_t gpu, std::uint32_t stream, std::uint32_t collective, std::uint32_t rank,
                 sim::Time start, sim::Time end);
  // The receiving side: a wait slice until the data started moving (the send's start, if known),
  // then the transfer slice. Returns where the transfer slice starts.
  sim::Time write_receive(std::uint32_t collective, const P2pEnd& receive,
                          std::optional<sim::Time> send_start);
  void append_p2p_name(std::uint32_t collective, bool sending, int peer);
  const std::string& collective_name(std::uint32_t collective);
  RingState& ring_state(const sim::RingCollective& ring);
  void hold_ring_step(const sim::RingCollective& ring, int gpu, std::uint32_t step, sim::Time start,
                      sim::Time end);
  // Writes the held ring steps of `gpu` that lie in [start, end], the slice of their collective.
  void write_held_steps(std::uint32_t gpu, sim::Time start, sim::Time end);
  void write_counter_samples(sim::LinkId link);
  // The "memory" counter of each GPU (step_trace_memory.cpp): what its MP rank holds while each op's
  // forward and backward runs and at the optimizer, from the memory model (workloads/memory/memory_model.h),
  // sampled at the start of the op's first kernel; back to what stays between steps after the
  // optimizer.
  struct MemoryLevels {
    std::vector<double> forward;   // [op] → GiB (0 for ops on other ranks)
    std::vector<double> backward;  // [op] → GiB
    double optimizer = 0;
    double after_step = 0;
  };
  void init_memory_levels(const StepSetup& setup);
  void init_peak_levels(const workloads::StepMemory& memory);  // StepSetup::memory's: one level a rank
  void write_memory_start(std::uint32_t gpu, sim::Time first);
  void write_memory_sample(std::uint32_t gpu, const workloads::KernelLabel& label, sim::Time start,
                           sim::Time end);

  ChromeTraceWriter& writer_;
  const topology::Topology& topology_;
  const workloads::Profile& profile_;
  const workloads::StepProgram& program_;
  StepTraceOptions options_;
  // The run's own choices, told as it plans each collective (on_plan): a collective's name and args
  // say what ran ("ring", "tree", its protocol), not the scenario's "auto" (hunt44).
  struct Ran {
    workloads::AllReduceAlgorithm algorithm = workloads::AllReduceAlgorithm::Auto;  // Auto: not told
    sim::Protocol protocol = sim::Protocol::Ideal;
  };
  // "ring", "tree", "hierarchical"; "point-to-point" for an all-to-all. Throws InternalError for a
  // collective whose plan the run did not tell.
  std::string_view ran_algorithm(std::uint32_t collective) const;
  std::vector<Ran> ran_;  // by collective index
  TracePid network_pid_;
  std::vector<char> keep_gpu_;     // by global rank
  std::vector<TraceTid> comm_tid_;  // by global rank: the stream of its gradient collectives (0: none)
  std::vector<std::string> label_names_;       // by kernel label
  std::vector<sim::Bytes> optimizer_bytes_;    // by MP rank: parameters its optimizer updates
  std::vector<MemoryLevels> memory_levels_;    // by MP rank
  std::vector<char> memory_started_;           // by global rank: its memory counter has a sample
  std::vector<std::string> collective_names_;  // by collective index, filled when first needed
  std::unordered_map<std::uint32_t, P2pEnd> p2p_pending_;  // by collective index
  std::vector<char> keep_link_;
  std::vector<BusyFractionBins> link_bins_;
  std::vector<BusyFractionBins::Sample> samples_;  // reused
  TrackAllocator link_lanes_;
  std::vector<TrackAllocator::TrackId> link_track_;  // detail messages only
  std::unordered_map<const sim::RingCollective*, RingState> rings_;
  std::vector<std::vector<PendingStep>> held_steps_;  // by global rank: at most one collective's steps
  std::string scratch_;  // reused for names built per event
  std::vector<std::uint8_t> arrivals_;  // by event: pipeline_arrivals (analysis/step/step_metrics.h)
  std::vector<StageThread> stages_;     // by global rank; empty unless the step is a pipeline
};

// Runs the step (build_program + simulate_program) with a StepTraceObserver attached and writes the
// trace to `path` atomically: if the run throws, neither `path` nor a temporary file is left. The
// trace's otherData holds scenario, profile, topology, strategy, algorithm, detail, step_time,
// utilization_bin and options.other_data (which overrides). At detail steps or messages the tracer
// replaces setup.collective.observer for the run. `progress`, if any, is told as for any step
// (analysis/step/step_progress.h). Throws InputError for bad options.
StepResult simulate_step_with_trace(const StepSetup& setup, const std::filesystem::path& path,
                                    const StepTraceOptions& options,
                                    StepTraceSummary* summary = nullptr,
                                    SimulationProgress* progress = nullptr);

// A run of setup.variability.steps steps (analysis/step/step_series.h) with step options.step traced
// (kSlowestStep: the slowest, found by simulating every step untraced first): the result is
// simulate_steps's, and the trace's otherData "traced_step" (and summary->shows) says which step it
// shows. Throws InputError for a step number past the run's steps, before any file is created.
StepResult simulate_steps_with_trace(const StepSetup& setup, const std::filesystem::path& path,
                                     const StepTraceOptions& options, StepTraceSummary* summary = nullptr,
                                     SimulationProgress* progress = nullptr);

}  // namespace hybridsim::analysis
