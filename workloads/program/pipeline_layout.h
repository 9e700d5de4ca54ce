// The part of a pipeline's step that is the same for every worker (private to
// workloads/program/, for pipeline_program.cpp): its model chunks and their ops, each stage's
// schedule, the kernel labels of every micro-batch, each stage's gradient collectives and copies,
// and how a worker's events are numbered. pipeline_program.cpp builds every worker's streams from it.
//   const pipeline_parts::Layout l = pipeline_parts::lay_out(profile, options, dp);
//   l.event(b, j, pipeline_parts::ForwardDone);  // from the worker's base
#pragma once
#include <cstdint>
#include <vector>

#include "workloads/program/pipeline_schedule.h"
#include "workloads/program/step_program_parts.h"

namespace hybridsim::workloads::pipeline_parts {

// The events of one worker's boundary b (chunk b → b + 1) and micro-batch j, from the worker's base.
enum EventKind : std::uint32_t { ForwardDone, ActivationReceived, GradientReady, GradientReceived, Kinds };

// Everything about the pipeline's step that is the same for every worker.
struct Layout {
  PipelineShape x;
  int chunks = 1;
  std::vector<std::vector<std::uint32_t>> ops_of_chunk;      // [global chunk] → ops, model order
  std::vector<std::vector<PipelineTask>> schedule;           // [stage]
  std::vector<std::vector<std::size_t>> last_backward;       // [stage][chunk] → its last backward
  std::uint32_t stride = 0;                                  // kernel labels per micro-batch
  step_parts::KernelLabels labels;
  std::vector<std::vector<step_parts::GradientCollective>> gradients;  // [stage]; empty for dp = 1
  std::vector<std::vector<std::vector<std::size_t>>> gradients_after;  // [stage][op]
  std::vector<sim::Time> optimizer;                          // [stage]
  std::vector<std::vector<step_parts::GradientCopy>> copies;  // [stage][i]; empty: none
  std::vector<std::uint32_t> first_gradient_event;           // [stage], from the worker's base
  std::vector<std::uint32_t> sends_done_event;               // [stage]: to s + 1, to s - 1
  bool after_flush = false;  // replicas to reduce over (dp > tp workers): after the flush
  std::uint32_t events_per_worker = 0;

  std::uint32_t event(int b, int j, EventKind kind) const {
    return static_cast<std::uint32_t>((b * x.m + j) * Kinds + kind);
  }
  std::uint32_t transfer(int b, int j, bool gradient) const {
    return static_cast<std::uint32_t>((b * x.m + j) * 2 + (gradient ? 1 : 0));
  }
  std::uint32_t label(int j, std::uint32_t first) const {
    return static_cast<std::uint32_t>(j) * stride + first;
  }
};

// The layout of `profile`'s pipeline under `options` (options.pipeline, accumulation, buckets,
// copies) over `dp` workers. InputError for a profile or options the pipeline cannot take.
Layout lay_out(const Profile& profile, const StepOptions& options, int dp);

}  // namespace hybridsim::workloads::pipeline_parts
