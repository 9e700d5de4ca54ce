// How one training step is set up, apart from the profile and the topology it runs on: the MP
// placement of a worker's ops, the mapping of workers onto GPUs, and the options of the step
// program, the collectives, the network and the stream executor. A scenario resolves into one
// (scenarios::ResolvedScenario is one); run, sweep, study and planner simulate one
// (analysis::StepSetup adds the profile and topology). Its fingerprint names every model input it
// holds, so that the study and planner's step cache tells two steps apart by what they simulate.
//   StepConfig c{.placement = partition(profile, 2, Partitioner::Stacks),
//                .mapping = default_mapping(topology, 4, 2)};
//   fingerprint(c) == fingerprint(c2)   // the same step (on the same profile and topology)
#pragma once
#include <string>

#include "sim/budget.h"
#include "sim/collective.h"
#include "sim/network.h"
#include "sim/stream_executor.h"
#include "workloads/comm/comm_plan.h"
#include "workloads/program/mapping.h"
#include "workloads/program/placement.h"
#include "workloads/program/step_program.h"
#include "workloads/program/variability.h"

namespace hybridsim::workloads {

struct StepConfig {
  MpPlacement placement = {};
  WorkerMapping mapping = {};
  StepOptions step = {};              // bucket size, compute scales
  CommOptions comm = {};              // algorithm, channels, pcie_only
  sim::CollectiveConfig collective = {};  // message size, reduction rate
  sim::Switching switching = sim::Switching::CutThrough;
  sim::StreamExecutorOptions executor = {};  // compute contention
  Variability variability = {};              // steps, seed, kernel jitter, sequence lengths
  sim::SimulationLimits limits = {};         // caps on one step's events and memory (sim/budget.h)
};

// Every model input of `config` as one text ("placement.mp=2;placement.gpu_of_op=0,0,1;..."): equal
// texts simulate the same step on the same profile and topology. Descriptions and observers (the
// collective's trace observer and budget) are left out: they change no result. The fields come
// from one list (step_fields in step_config.cpp) that names every member of StepConfig and its
// parts through structured bindings: a member added to any of them does not compile until it is
// listed there, as a model input or as left out.
std::string fingerprint(const StepConfig& config);
// Equal model inputs (the same fields as the fingerprint): the same step on the same profile and
// topology. Descriptions and observers are ignored.
bool operator==(const StepConfig& a, const StepConfig& b);

}  // namespace hybridsim::workloads
