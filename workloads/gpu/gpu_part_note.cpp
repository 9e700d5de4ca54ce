#include "workloads/gpu/gpu_part_note.h"

#include <cstdio>

#include "topology/preset_registry.h"
#include "workloads/gpu/gpu.h"

namespace hybridsim::workloads {

std::optional<std::string> other_part_note(std::string_view machine, std::string_view machine_gpu,
                                           std::string_view kernels_gpu, double compute_speed) {
  if (machine_gpu == kernels_gpu) return std::nullopt;
  const Gpu* has = find_gpu(kernels_gpu);
  const Gpu* cluster = find_gpu(machine_gpu);
  if (has == nullptr || cluster == nullptr || has->chip != cluster->chip) return std::nullopt;
  std::string scaled = "not scaled to its clocks (workload.compute_speed scales them)";
  if (compute_speed != 1) {
    char speed[32];
    std::snprintf(speed, sizeof speed, "%g", compute_speed);
    scaled = "scaled by workload.compute_speed " + std::string(speed);
  }
  return std::string(machine) + " has " + std::string(machine_gpu) + ", another part of the " +
         std::string(has->name) + ": the kernel times are the " + std::string(kernels_gpu) + "'s, " + scaled;
}

std::optional<std::string> preset_part_note(std::string_view preset, std::string_view kernels_gpu,
                                            double compute_speed) {
  const topology::PresetInfo* info = topology::find_preset(preset);
  if (info == nullptr) return std::nullopt;
  return other_part_note(preset, info->gpu, kernels_gpu, compute_speed);
}

std::optional<std::string> named_gpu_note(std::string_view preset, std::string_view named_gpu,
                                          std::string_view named_by) {
  const topology::PresetInfo* info = topology::find_preset(preset);
  const Gpu* named = find_gpu(named_gpu);
  if (info == nullptr || named == nullptr) return std::nullopt;
  const Gpu* machine = find_gpu(info->gpu);
  // The same rule as the capacity a run checks (workload_gpu_capacity): the named GPU's own where
  // it is not the preset's.
  if (machine == named || (machine != nullptr && machine->chip == named->chip)) return std::nullopt;
  return std::string(preset) + " has " + std::string(info->gpu) + ", not the " + std::string(named->model) +
         " that " + std::string(named_by) + " names: a what-if, with the " + std::string(named->model) +
         "'s kernel times and memory on " + std::string(preset) + "'s links";
}

}  // namespace hybridsim::workloads
