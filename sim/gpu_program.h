// What a GPU runs in one simulated training step: streams of tasks, CUDA-style. A stream runs its
// tasks in order; streams of one GPU overlap. Tasks: a compute kernel of a given duration, recording
// a (CUDA-like) event, waiting for an event recorded anywhere (another stream or GPU), and taking
// part in a collective as one of its ranks (a communication kernel that lasts until that rank is done).
// A kernel may carry a launch delay: the stream first sits idle that long (the GPU waiting for the
// CPU to launch it; not scaled, not reported to observers), then runs the kernel.
//   GpuProgram p;  p.streams = {{"compute", {Task::kernel(Time::us(40), 0), Task::record(3)}},
//                               {"communication", {Task::wait(3), Task::collective(0, /*rank=*/2)}}};
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "sim/time.h"

namespace hybridsim::sim {

enum class TaskKind : std::uint8_t { Kernel, Record, Wait, Collective };

struct Task {
  TaskKind kind = TaskKind::Kernel;
  std::uint32_t id = 0;    // Kernel: a label for observers; Record/Wait: event; Collective: index
  std::uint32_t rank = 0;  // Collective: this GPU's rank in it
  Time duration;           // Kernel only
  Time launch_delay{};     // Kernel only: idle time on the stream before the kernel starts

  static Task kernel(Time duration, std::uint32_t label, Time launch_delay = Time::zero()) {
    return {TaskKind::Kernel, label, 0, duration, launch_delay};
  }
  static Task record(std::uint32_t event) { return {TaskKind::Record, event, 0, Time::zero()}; }
  static Task wait(std::uint32_t event) { return {TaskKind::Wait, event, 0, Time::zero()}; }
  static Task collective(std::uint32_t index, std::uint32_t rank) {
    return {TaskKind::Collective, index, rank, Time::zero()};
  }
};

struct StreamProgram {
  std::string name;  // "compute", "communication", "p2p"
  std::vector<Task> tasks;
};

struct GpuProgram {
  std::vector<StreamProgram> streams;
  // Kernel durations are multiplied by this (0.5 = a GPU twice as fast).
  double compute_scale = 1.0;
};

}  // namespace hybridsim::sim
