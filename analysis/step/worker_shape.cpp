#include "analysis/step/worker_shape.h"

namespace hybridsim::analysis {

WorkerShape worker_shape(int gpus, int dp, int mp, int tp, bool transformer, int pp, int ep, int zero) {
  WorkerShape s;
  s.gpus = gpus;
  s.dp = dp;
  s.gpus_per_worker = mp * tp;
  if (transformer) s.transformer = WorkerShape::Transformer{tp, pp, ep, zero};
  return s;
}

WorkerShape worker_shape(const StepResult& step) {
  return worker_shape(step.gpus, step.dp, step.mp, step.tp, step.transformer, step.pp, step.ep, step.zero);
}

}  // namespace hybridsim::analysis
