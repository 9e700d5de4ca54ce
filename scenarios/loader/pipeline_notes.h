// A note on a pipeline that runs fewer micro-batches a step than it has stages: most of its step is
// the pipeline's bubble. `run` and `sweep` say it with the scenario's other notes; it refuses nothing
// (a sweep over the global batch may start there on purpose).
//   if (auto note = few_micro_batches_note(s)) std::cerr << "note: " << *note << "\n";
#pragma once
#include <optional>
#include <string>

#include "scenarios/loader/scenario.h"

namespace hybridsim::scenarios {

// parallelism.pp = p > 1 under GPipe or 1F1B with m = training.global_batch / (dp × micro_batch)
// micro-batches a step, m < p (training.global_batch left out is one micro-batch a replica): each
// stage idles p − 1 of the m + p − 1 micro-batch slots of a step, (p − 1)/(m + p − 1) of it (Huang
// et al.'s GPipe bubble, 1F1B's too: Narayanan et al. 2021), at least half of it. None otherwise
// (an interleaved schedule needs m a multiple of p, and the run refuses it before).
std::optional<std::string> few_micro_batches_note(const Scenario& s);

}  // namespace hybridsim::scenarios
