// Which GPU and precision a run prices a built-in network for (`workload.gpu`, `workload.precision`
// of scenarios and studies), and the check that a profile file agrees with what was asked: a file's
// kernels were measured or modelled on one GPU at one precision, so neither can be changed for it.
//   GpuChoice c{.gpu = std::nullopt, .precision = Precision::Amp};           // gpu: auto
//   Profile p = builtin_profile("gnmt", builtin_options(c, "H100-SXM5-80GB"));  // H100 AMP
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "workloads/generators/profile_gen.h"
#include "workloads/gpu/cost_model.h"
#include "workloads/profile/profile.h"

namespace hybridsim::workloads {

struct GpuChoice {
  std::optional<std::string> gpu = {};        // a key of the GPU facts table; nullopt: auto
  std::optional<Precision> precision = {};    // nullopt: fp32 (a profile file: its own)
  bool operator==(const GpuChoice&) const = default;
};

// What `workload.gpu` accepts: "auto", then every key of the GPU facts table.
std::vector<std::string> gpu_choice_names();
// "auto": the GPU the cluster carries (a preset's `gpu`, e.g. "H100-SXM5-80GB") when the facts table
// knows it, else the calibrated V100 (custom topologies, unknown models).
std::string auto_gpu_key(std::string_view cluster_gpu);
// The cost model a built-in network gets: the choice's GPU (or auto_gpu_key) and precision (or fp32).
BuiltinProfileOptions builtin_options(const GpuChoice& choice, std::string_view cluster_gpu);
// What is wrong when a profile file contradicts an explicit choice, nullopt when it agrees, in the
// two parts a located refusal writes as "problem; expected ..." at the key (a run's resolve and a
// study's workload section both): problem "the profile's kernels are for the V100-SXM2-16GB, not the
// h100", expected "v100 (the profile's GPU) or auto (...)".
struct ProfileMismatch {
  std::string problem;
  std::string expected;
};
std::optional<ProfileMismatch> gpu_mismatch(const Profile& profile, std::string_view gpu_key);
std::optional<ProfileMismatch> precision_mismatch(const Profile& profile, Precision precision);
// How a profile's kernel times are known, for run summaries: "H100, amp: an ESTIMATE (...)",
// "V100, fp32: calibrated on one V100", or "... as the profile file records them" for a file that
// hybridsim did not generate. The GPU's short name when the facts table knows it, else its name.
std::string kernel_times_note(const Profile& profile);

}  // namespace hybridsim::workloads
