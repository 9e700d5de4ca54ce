// Internal to sharded data parallelism (sharded_data_parallel.cpp and
// sharded_data_parallel_experts.cpp): what both read of a step program.
//   const sim::StreamProgram* compute = stream_named(gpu, "compute");
//   sim::Bytes b = scattered_bytes(program, gpu);  // the parameters' bytes the GPU updates a shard of
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

#include "sim/units.h"
#include "workloads/program/step_program_types.h"

namespace hybridsim::workloads::sharded_parts {

// The GPU's stream of that name; null where it has none.
sim::StreamProgram* stream_named(sim::GpuProgram& gpu, std::string_view name);

// The parameters a GPU updates a shard of: those whose gradients it reduce-scatters, its buckets'
// bytes (in the profile's precision), each bucket once (stage 2 reduces every micro-batch's round
// of the same buckets). Without a pipeline, every op of the profile (one TP rank's shard where
// tp > 1); in a pipeline, its stage's ops alone. `experts`: only the buckets of those ops.
sim::Bytes scattered_bytes(const StepProgram& p, const sim::GpuProgram& gpu,
                           const std::vector<std::uint32_t>* experts = nullptr);

}  // namespace hybridsim::workloads::sharded_parts
