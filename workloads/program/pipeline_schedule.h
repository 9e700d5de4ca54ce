// Pipeline parallelism's schedules and stages: which micro-batch's forward or backward each stage
// runs next under GPipe, 1F1B (PipeDream-Flush) or Megatron-LM's interleaved 1F1B, and how a
// model's layers split into stages (or, interleaved, into pp × v model chunks, chunk c on stage
// c mod pp). The step program (pipeline_program.h) follows these orders on each stage's compute
// stream, so that the bubble comes out of the simulation rather than a formula.
//   stage_schedule(PipelineSchedule::OneFOneB, {.p = 4, .v = 1, .m = 8}, 3)   // F0 B0 F1 B1 ...
//   balanced_layers(96, 8)   // 12 layers per stage
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hybridsim::workloads {

enum class PipelineSchedule : std::uint8_t { GPipe, OneFOneB, Interleaved };
std::string_view pipeline_schedule_name(PipelineSchedule s);     // "gpipe", "1f1b", "interleaved"
PipelineSchedule pipeline_schedule_by_name(std::string_view name);  // InputError for anything else

// A pipeline of a step (StepOptions::pipeline); pp = 1 is none (the MP placements' step program).
// Micro-batches per step are StepOptions::accumulation.
struct PipelineOptions {
  int pp = 1;
  PipelineSchedule schedule = PipelineSchedule::OneFOneB;
  int virtual_stages = 1;  // model chunks per stage (interleaved 1F1B)
  // Layers per model chunk, in model order (pp × virtual_stages of them); empty: balanced_layers.
  std::vector<int> chunk_layers = {};
  bool operator==(const PipelineOptions&) const = default;
};

// One entry of a stage's compute order: model chunk `chunk` (0 .. v−1 of this stage) of
// micro-batch `micro_batch`, forward or backward.
struct PipelineTask {
  int chunk = 0;
  int micro_batch = 0;
  bool backward = false;
  bool operator==(const PipelineTask&) const = default;
};

struct PipelineShape {
  int p = 1;  // stages
  int v = 1;  // model chunks per stage
  int m = 1;  // micro-batches per step
};

// The order stage `stage` runs its 2·v·m tasks in:
//   GPipe: every forward, then every backward (micro-batches in order);
//   1F1B: p − stage − 1 forwards to warm up, then one forward and one backward in turn, then the
//   remaining backwards (Narayanan et al. 2021, PipeDream-Flush);
//   interleaved: Megatron-LM's forward_backward_pipelining_with_interleaving — groups of p
//   micro-batches pass through chunk 0, then chunk 1, ...; (p − stage − 1)·2 + (v − 1)·p forwards
//   to warm up (all of them when m = p), then 1F1B, backwards through the chunks in reverse.
std::vector<PipelineTask> stage_schedule(PipelineSchedule schedule, PipelineShape shape, int stage);

// `layers` split into `chunks` as evenly as possible; the chunks after the first take the extra
// layers (the first holds the embedding as well). InputError when chunks > layers.
std::vector<int> balanced_layers(int layers, int chunks);
// balanced_layers(layers, chunks) as reports write it, runs of equal counts folded: "7, 8 x14, 7"
// (Llama 3 405B's 126 layers over 16 stages), "5 x16" where they divide.
std::string balanced_layers_text(int layers, int chunks);

// What is wrong with a pipeline, and the scenario key at fault (the loader locates it): pp larger
// than the layers, virtual stages without the interleaved schedule (or more chunks than layers),
// interleaved with m not a multiple of p, chunk_layers of the wrong count, sum or with an empty
// chunk. nullopt: nothing.
struct PipelineProblem {
  std::string key;   // "parallelism.pp", "pipeline.virtual_stages", "training.global_batch", ...
  std::string what;  // the message after "key: "
};
std::optional<PipelineProblem> pipeline_problem(const PipelineOptions& options, int layers,
                                                int micro_batches);

}  // namespace hybridsim::workloads
