// What a GPU runs in one simulated training step: streams of tasks, CUDA-style. A stream runs its
// tasks in order; streams of one GPU overlap. Tasks: a compute kernel of a given duration, recording
// a (CUDA-like) event, waiting for an event recorded anywhere (another stream or GPU), and taking
// part in a collective as one of its ranks (a communication kernel that lasts until that rank is done).
// A kernel may carry a launch delay: the stream first sits idle that long (the GPU waiting for the
// CPU to launch it; not scaled, not reported to observers), then runs the kernel. A kernel says what
// bounds it (SMs or memory bandwidth), which decides how communication on its GPU slows it
// (sim/stream_executor.h), and whether its work grows with the batch's samples.
//   GpuProgram p;  p.streams = {{"compute", {Task::kernel(Time::us(40), 0), Task::record(3)}},
//                               {"communication", {Task::wait(3), Task::collective(0, /*rank=*/2)}}};
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "sim/time.h"
#include "sim/units.h"

namespace hybridsim::sim {

enum class TaskKind : std::uint8_t { Kernel, Record, Wait, Collective };

// What limits a kernel's rate: its SMs (GEMMs, convolutions) or memory bandwidth (element-wise,
// normalization, pooling, copies, the optimizer).
enum class KernelBound : std::uint8_t { Compute, Memory };

struct Task {
  TaskKind kind = TaskKind::Kernel;
  KernelBound bound = KernelBound::Compute;  // Kernel only
  bool per_sample = true;  // Kernel only: its work grows with the batch's samples (GpuProgram::sample_scale)
  std::uint32_t id = 0;    // Kernel: a label for observers; Record/Wait: event; Collective: index
  std::uint32_t rank = 0;  // Collective: this GPU's rank in it
  Time duration;           // Kernel only
  Time launch_delay{};     // Kernel only: idle time on the stream before the kernel starts

  static Task kernel(Time duration, std::uint32_t label, Time launch_delay = Time::zero(),
                     KernelBound bound = KernelBound::Compute) {
    return {TaskKind::Kernel, bound, true, label, 0, duration, launch_delay};
  }
  static Task record(std::uint32_t event) {
    return {TaskKind::Record, KernelBound::Compute, true, event, 0, Time::zero()};
  }
  static Task wait(std::uint32_t event) {
    return {TaskKind::Wait, KernelBound::Compute, true, event, 0, Time::zero()};
  }
  static Task collective(std::uint32_t index, std::uint32_t rank) {
    return {TaskKind::Collective, KernelBound::Compute, true, index, rank, Time::zero()};
  }
  // The same kernel, its work independent of the batch (an optimizer, a gradient copy).
  Task fixed_work() const {
    Task t = *this;
    t.per_sample = false;
    return t;
  }
};

struct StreamProgram {
  std::string name;  // "compute", "communication", "p2p"
  std::vector<Task> tasks;
};

// What collectives running on a GPU compete with its kernels for (sim/stream_executor.h). Zero
// SMs: not modelled (kernels never slow down).
struct GpuResources {
  std::uint32_t sms = 0;             // streaming multiprocessors (V100: 80)
  Bandwidth memory_bandwidth;        // peak (V100 HBM2: 900 GB/s)
  Bandwidth memory_kernel_bandwidth; // what a memory-bound kernel reaches alone (V100: 600 GB/s)
  bool operator==(const GpuResources&) const = default;
};

struct GpuProgram {
  std::vector<StreamProgram> streams;
  // Kernel durations are multiplied by this (0.5 = a GPU twice as fast).
  double compute_scale = 1.0;
  // Kernels with per_sample work are multiplied by this too (a batch of longer sequences).
  double sample_scale = 1.0;
  GpuResources resources;
};

}  // namespace hybridsim::sim
