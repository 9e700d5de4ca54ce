#include "workloads/program/pipeline_schedule.h"

#include <algorithm>
#include <numeric>

#include "sim/error.h"

namespace hybridsim::workloads {

std::string_view pipeline_schedule_name(PipelineSchedule s) {
  switch (s) {
    case PipelineSchedule::GPipe: return "gpipe";
    case PipelineSchedule::OneFOneB: return "1f1b";
    case PipelineSchedule::Interleaved: return "interleaved";
  }
  return "?";
}

PipelineSchedule pipeline_schedule_by_name(std::string_view name) {
  for (const auto s : {PipelineSchedule::GPipe, PipelineSchedule::OneFOneB, PipelineSchedule::Interleaved})
    if (pipeline_schedule_name(s) == name) return s;
  throw InputError("unknown pipeline schedule \"" + std::string(name) +
                   "\": expected gpipe, 1f1b or interleaved");
}

namespace {

// Megatron-LM's interleaved order (schedules.py, get_model_chunk_id and the micro-batch of the
// k-th forward or backward): groups of p micro-batches go through chunk 0, 1, ..., v − 1 forward
// and v − 1, ..., 0 backward.
PipelineTask interleaved_task(PipelineShape x, int k, bool backward) {
  const int in_group = k % (x.p * x.v);
  const int chunk = in_group / x.p;
  return {backward ? x.v - 1 - chunk : chunk, k / (x.p * x.v) * x.p + in_group % x.p, backward};
}

}  // namespace

std::vector<PipelineTask> stage_schedule(PipelineSchedule schedule, PipelineShape x, int stage) {
  if (x.p < 1 || x.v < 1 || x.m < 1 || stage < 0 || stage >= x.p)
    throw InternalError("pipeline schedule: a stage outside the pipeline");
  std::vector<PipelineTask> out;
  if (schedule == PipelineSchedule::GPipe) {
    for (const bool backward : {false, true})
      for (int j = 0; j < x.m; ++j) out.push_back({0, j, backward});
    return out;
  }
  const bool interleaved = schedule == PipelineSchedule::Interleaved;
  const int total = x.m * x.v;
  int warmup = interleaved ? (x.p - stage - 1) * 2 + (x.v - 1) * x.p : x.p - stage - 1;
  if (interleaved && x.m == x.p) warmup = total;
  warmup = std::min(warmup, total);
  auto task = [&](int k, bool backward) {
    return interleaved ? interleaved_task(x, k, backward) : PipelineTask{0, k, backward};
  };
  for (int k = 0; k < warmup; ++k) out.push_back(task(k, false));
  for (int k = 0; k < total - warmup; ++k) {
    out.push_back(task(k + warmup, false));
    out.push_back(task(k, true));
  }
  for (int k = total - warmup; k < total; ++k) out.push_back(task(k, true));
  return out;
}

std::vector<int> balanced_layers(int layers, int chunks) {
  if (chunks < 1 || chunks > layers)
    throw InputError(std::to_string(chunks) + " pipeline chunks for " + std::to_string(layers) + " layers");
  std::vector<int> out(static_cast<std::size_t>(chunks), layers / chunks);
  for (int c = 0; c < layers % chunks; ++c) ++out[static_cast<std::size_t>((c + 1) % chunks)];
  return out;
}

std::string balanced_layers_text(int layers, int chunks) {
  const std::vector<int> split = balanced_layers(layers, chunks);
  std::string out;
  for (std::size_t i = 0; i < split.size();) {
    std::size_t j = i;
    while (j < split.size() && split[j] == split[i]) ++j;
    out += (out.empty() ? "" : ", ") + std::to_string(split[i]) +
           (j - i > 1 ? " x" + std::to_string(j - i) : std::string());
    i = j;
  }
  return out;
}

std::optional<PipelineProblem> pipeline_problem(const PipelineOptions& o, int layers, int m) {
  const std::string ls = std::to_string(layers);
  if (o.pp > layers)
    return PipelineProblem{"parallelism.pp", "pp " + std::to_string(o.pp) + " is larger than the model's " +
                                                 ls + " layers; expected at most one stage per layer"};
  if (o.virtual_stages > 1 && o.schedule != PipelineSchedule::Interleaved)
    return PipelineProblem{"pipeline.virtual_stages",
                           std::to_string(o.virtual_stages) + " model chunks per stage need "
                           "pipeline.schedule: interleaved; expected 1 with " +
                               std::string(pipeline_schedule_name(o.schedule))};
  // With one chunk per stage the interleaved order is 1F1B's with twice its warm-up: the same
  // bubble, more micro-batches held. Megatron-LM interleaves only with two or more chunks; so does
  // the planner (analysis/plan/llm_closed_forms.cpp).
  if (o.schedule == PipelineSchedule::Interleaved && o.virtual_stages < 2)
    return PipelineProblem{"pipeline.schedule",
                           "interleaved needs pipeline.virtual_stages of 2 or more (got " +
                               std::to_string(o.virtual_stages) +
                               "): one model chunk a stage is 1F1B with twice its warm-up; expected "
                               "pipeline.virtual_stages: 2 or more, or pipeline.schedule: 1f1b"};
  const int chunks = o.pp * o.virtual_stages;
  if (chunks > layers)
    return PipelineProblem{"pipeline.virtual_stages",
                           "pp x virtual_stages = " + std::to_string(chunks) + " model chunks for " + ls +
                               " layers; expected at most one chunk per layer"};
  if (o.schedule == PipelineSchedule::Interleaved && m % o.pp != 0)
    return PipelineProblem{"training.global_batch",
                           "the interleaved schedule runs micro-batches in groups of pp = " +
                               std::to_string(o.pp) + ", but the step has " + std::to_string(m) +
                               "; expected a multiple of " + std::to_string(o.pp) + " micro-batches"};
  if (o.chunk_layers.empty()) return std::nullopt;
  if (static_cast<int>(o.chunk_layers.size()) != chunks)
    return PipelineProblem{"pipeline.stages", "lists " + std::to_string(o.chunk_layers.size()) +
                                                  " stages; expected pp x virtual_stages = " +
                                                  std::to_string(chunks)};
  if (std::any_of(o.chunk_layers.begin(), o.chunk_layers.end(), [](int n) { return n < 1; }))
    return PipelineProblem{"pipeline.stages", "a stage without layers; expected at least 1 layer each"};
  const int sum = std::accumulate(o.chunk_layers.begin(), o.chunk_layers.end(), 0);
  if (sum != layers)
    return PipelineProblem{"pipeline.stages", "the stages hold " + std::to_string(sum) +
                                                  " layers, but the model has " + ls +
                                                  "; expected them to sum to " + ls};
  return std::nullopt;
}

}  // namespace hybridsim::workloads
