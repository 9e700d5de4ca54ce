// The size of a step as every report gives it (results.csv, summary.json, Python's step figures):
// its GPUs, its data-parallel workers, the GPUs of one worker, and a transformer's tp, pp, ep and ZeRO
// stage. One definition, so that the three agree (issue 31: RunResult.mp and to_dict()["mp"] once
// disagreed), and so that dp × mp = gpus for a 2017 network and a transformer alike:
//   const WorkerShape s = worker_shape(step);
//   csv += std::to_string(s.gpus_per_worker);  // "mp"
//   if (s.transformer) csv += std::to_string(s.transformer->tp);
#pragma once
#include <optional>

#include "analysis/step/step_runner.h"

namespace hybridsim::analysis {

struct WorkerShape {
  // A transformer's dimensions (StepOptions); a 2017 network has none of them.
  struct Transformer {
    int tp = 1, pp = 1, ep = 1, zero = 0;
  };
  int gpus = 1;
  int dp = 1;
  // The reports' "mp": a 2017 network's model-parallel ranks, a transformer's tp × pp (the step's own
  // mp is its pp alone, and a replica's tp GPUs process the same samples).
  int gpus_per_worker = 1;
  std::optional<Transformer> transformer;
};

// From the step's own dimensions: `mp` its stages (pp) or a 2017 network's model-parallel ranks.
WorkerShape worker_shape(int gpus, int dp, int mp, int tp, bool transformer, int pp, int ep, int zero);
WorkerShape worker_shape(const StepResult& step);

}  // namespace hybridsim::analysis
