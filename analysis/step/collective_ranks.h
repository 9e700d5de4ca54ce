// Where each collective's ranks lie in a step's execution record: for collective c and rank r, the
// (stream, task) that ran it, numbered as sim::ExecutionRecord numbers them (streams GPU by GPU).
// The critical path walks back through them (a rank ends only after its last rank joined) and the
// step's bound carries lateness forward through them (analysis/step/step_bound.h).
//   const auto ranks = collective_ranks(program, fold.representative);
//   for (TaskRef r : ranks[c]) if (r.stream != kRankNotRun) record.reached(r.stream, r.task);
#pragma once
#include <cstdint>
#include <vector>

#include "sim/execution_record.h"
#include "workloads/program/step_program.h"

namespace hybridsim::analysis {

// Marks a rank run by no stream that ran (a folded step's member).
inline constexpr std::uint32_t kRankNotRun = UINT32_MAX;

// Each collective's ranks; a folded step's members (`representative[g] != g`) ran nothing, so their
// ranks stay kRankNotRun and their tasks are not read. An empty `representative`: every GPU ran.
std::vector<std::vector<sim::ExecutionRecord::TaskRef>> collective_ranks(
    const workloads::StepProgram& program, const std::vector<std::uint32_t>& representative);

}  // namespace hybridsim::analysis
