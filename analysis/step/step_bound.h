// How late a step with bounded folds may end against its full simulation (sim/README.md, "The
// bound, carried through the step"). A folded collective's own bound holds for its ranks' finishes
// given their joins; a join made late by an earlier bounded collective carries that lateness on,
// through the record's own dependencies: a task is reached when the one before it on its stream
// ends, a wait passes when the record that released it passed (ExecutionRecord::released_by), and a
// collective's rank ends after its ranks joined. The largest collective's own bound was stated
// before: Llama 3 8B at tp 8, whose tensor-parallel all-reduces each wait on the compute after the
// last, ran 880 ps late under "bounded, within 348 ps".
//   sim::Time b = step_bound(program, executor.record(), {{c, bound}, ...}, fold.representative);
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "sim/execution_record.h"
#include "sim/stream_executor.h"
#include "sim/time.h"
#include "workloads/program/step_program.h"

namespace hybridsim::analysis {

// Collective c's own bound (those above zero, by collective, in order: a step of millions of
// transfers has a few bounded collectives). Each task's end is late by at most L against the full
// simulation:
// - a kernel, record or collective rank's join: L of the task before it on its stream;
// - a wait released by a record at t2 (late by L2) after its stream reached it at t1 (late by L1):
//   t2 - max(t1 - L1, t2 - L2), since in full it passed at the later of the two;
// - a collective's rank end: the largest L of the ranks joined by then, plus c's own bound.
// The step's bound is the largest L of a stream's last task. A folded step's members
// (`representative[g] != g`) ran nothing and repeat their representatives' timelines. Zero where no
// collective has a bound; the tasks are walked only otherwise. Where the walk stalls (a rank's end
// and another's join at one time, the join caused by the end), the walked collectives' own bounds
// added up, which bound any chain of them.
using OwnBounds = std::vector<std::pair<std::uint32_t, sim::Time>>;
sim::Time step_bound(const workloads::StepProgram& program, const sim::ExecutionRecord& record,
                     const OwnBounds& own_bound, const std::vector<std::uint32_t>& representative);

// What step_bound's walk holds at most, for the step's memory model before the run
// (step_footprint.h): per stream its place, per walked stream (a GPU that ran: not a member of
// `fold`) its walk, its records' lateness and a slot among the ready, per collective of the program
// its place, and per collective that may be walked (not a shadow) its walk and, per member, its join
// and a slot among the blocked. The walk takes each array at its size; a folded step's collective
// with members among its ranks is counted at all its members, an upper bound.
std::int64_t step_bound_bytes(const workloads::StepProgram& program, const sim::StepFold& fold);

}  // namespace hybridsim::analysis
