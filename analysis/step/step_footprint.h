// What a step's run holds beside its collectives' own state and its messages in flight (sim/budget.h;
// step_estimate.h counts those): its program (each GPU's task lists, a shared list once, and every
// collective's spec), the attempt's arrays of one entry a collective, a stream, a GPU, an event and a
// task (the executor's, the fold's, the execution record's), its network's per-link state, and where
// its folds may be bounded the step bound's walk over the record (step_bound.h).
// Counted from sizes and counts, before any of the attempt is allocated, so that a step's estimate
// grows with its GPUs where its run does (a GPT-3 pipeline at 4,096 GPUs grows by its 213 collectives
// a GPU, each a spec, a slot in every per-collective array and a per-rank table: issue 31, memp), and
// so that a set-up too large for the memory cap is refused before it is built.
//   const std::int64_t before = program_bytes(program) + attempt_bytes(program, fold, shape);
#pragma once
#include <cstddef>
#include <cstdint>

#include "sim/stream_executor.h"
#include "workloads/program/step_program.h"

namespace hybridsim::analysis {

// The step's program: every GPU's streams and tasks (a list shared by several streams counted once,
// a ZeRO-1 GPU's own copy counted for each), its collectives' specs and members, its kernel labels.
std::int64_t program_bytes(const workloads::StepProgram& program);

// What an attempt's arrays hold, whichever collectives it builds: `fold` as the attempt runs it
// (empty: every GPU simulated); `links` its network's; `loads` whether it keeps a load a collective
// (sim::StreamExecutorOptions::contention); `bounds` whether its folded collectives may state bounds
// (fast_path: bounded), which the step's bound then carries through its record, beside the
// executor's arrays (step_bound_bytes, step_bound.h). Its collectives' own state
// (full_cost().state_bytes) is not in it.
struct AttemptShape {
  std::size_t links = 0;
  bool loads = false;
  bool bounds = false;
};
std::int64_t attempt_bytes(const workloads::StepProgram& program, const sim::StepFold& fold,
                           const AttemptShape& shape);

}  // namespace hybridsim::analysis
