// A machine whose GPU is another part of the chip whose kernel times run (pcie-server's
// V100-PCIE-16GB, dgx2's V100-SXM3-32GB, both running the V100-SXM2-16GB's kernels under
// workload.gpu auto or v100): the note that says so, which run, sweep (scenarios/loader/describe.cpp),
// plan and study print alike, whether the GPU was named or not; they ran them unscaled without a word
// (issue 31), and then run and sweep said it only under auto, study never.
//   other_part_note("pcie-server", "V100-PCIE-16GB", "V100-SXM2-16GB")
//   // "pcie-server has V100-PCIE-16GB, another part of the V100: the kernel times are the ..."
//   preset_part_note("dgx2", "V100-SXM2-16GB")  // the same, for the preset's own GPU
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace hybridsim::workloads {

// The note where `machine_gpu` and `kernels_gpu` (a profile's meta.gpu) are two parts of one chip of
// the GPU table; nullopt where they are the same part, or not parts of one known chip. A
// workload.compute_speed other than 1 is said as the scale the times ran at ("not scaled ... (
// workload.compute_speed scales them)" was said beside a compute_speed of 1.0567).
std::optional<std::string> other_part_note(std::string_view machine, std::string_view machine_gpu,
                                           std::string_view kernels_gpu, double compute_speed = 1);
// other_part_note for a machine preset's GPU; nullopt for a name that is no preset (a topology file).
std::optional<std::string> preset_part_note(std::string_view preset, std::string_view kernels_gpu,
                                            double compute_speed = 1);
// The note where the user named a GPU (`named_by`: "workload.gpu", "--gpu") of another chip than a
// machine preset's: a what-if that runs the named GPU's kernel times and memory on the preset's links.
// A100-40GB on dgx-h100 ran with no word that the machine holds H100s, where a V100 profile under
// auto says it (issue 31). nullopt for the preset's own GPU, another part of its chip
// (other_part_note's), an unknown GPU or a name that is no preset.
//   named_gpu_note("dgx-h100", "A100-SXM4-40GB", "workload.gpu")
//   // "dgx-h100 has H100-SXM5-80GB, not the A100-SXM4-40GB that workload.gpu names: a what-if ..."
std::optional<std::string> named_gpu_note(std::string_view preset, std::string_view named_gpu,
                                          std::string_view named_by);

}  // namespace hybridsim::workloads
