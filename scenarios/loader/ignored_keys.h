// Keys whose value would change nothing in the scenario as written are refused at the key, naming
// the key that makes them moot (ignored_keys.cpp); resolve_step_config and load_workload_profile
// call these.
//   refuse_transformer_keys(s);  // training.recompute: full on gnmt → "...: transformers only, ..."
#pragma once
#include <string>

#include "scenarios/loader/scenario.h"
#include "workloads/profile/profile.h"
#include "workloads/program/mapping.h"

namespace hybridsim::scenarios {

// variability.trace_step past the steps; drawn lengths without an encoder-decoder; batching,
// length_buckets or seed with nothing drawn.
void check_variability(const Scenario& s, const workloads::Profile& profile);
// workload.gpu_speeds[i] (at `path`) for a GPU that runs no worker of `mapping`.
void refuse_idle_gpu_speed(const Scenario& s, const workloads::WorkerMapping& mapping, int gpu,
                           const std::string& path);
// workload.model.* and training.recompute written for a 2017 network: only a transformer reads them.
void refuse_transformer_keys(const Scenario& s);

}  // namespace hybridsim::scenarios
