#include "workloads/gpu/gpu_part_note.h"

#include "topology/preset_registry.h"
#include "workloads/gpu/gpu.h"

namespace hybridsim::workloads {

std::optional<std::string> other_part_note(std::string_view machine, std::string_view machine_gpu,
                                           std::string_view kernels_gpu) {
  if (machine_gpu == kernels_gpu) return std::nullopt;
  const Gpu* has = find_gpu(kernels_gpu);
  const Gpu* cluster = find_gpu(machine_gpu);
  if (has == nullptr || cluster == nullptr || has->chip != cluster->chip) return std::nullopt;
  return std::string(machine) + " has " + std::string(machine_gpu) + ", another part of the " +
         std::string(has->name) + ": the kernel times are the " + std::string(kernels_gpu) +
         "'s, not scaled to its clocks (workload.compute_speed scales them)";
}

std::optional<std::string> preset_part_note(std::string_view preset, std::string_view kernels_gpu) {
  const topology::PresetInfo* info = topology::find_preset(preset);
  if (info == nullptr) return std::nullopt;
  return other_part_note(preset, info->gpu, kernels_gpu);
}

}  // namespace hybridsim::workloads
