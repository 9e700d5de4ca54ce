// workload.precision and workload.gpu: which cost model prices a built-in network (the preset's GPU
// when auto), what the run summary says of it, and located errors when a profile file disagrees.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "scenarios/loader/resolve.h"
#include "sim/error.h"
#include "workloads/generators/gpu_choice.h"
#include "workloads/generators/profile_gen.h"
#include "workloads/profile/profile_io.h"

using namespace hybridsim;
using namespace hybridsim::scenarios;
using workloads::Precision;

namespace {

ResolvedScenario resolve_text(const std::string& text, const std::filesystem::path& base = ".") {
  return resolve(parse_scenario(text, "s.yaml", {}, base));
}

std::string resolve_error(const std::string& text, const std::filesystem::path& base = ".") {
  try {
    resolve_text(text, base);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

bool has_setting(const ResolvedScenario& r, const std::string& key) {
  for (const auto& kv : key_settings(r))
    if (kv.first == key) return true;
  return false;
}

}  // namespace

TEST_CASE(
    "workload.precision and workload.gpu: absent, a built-in network is the V100 FP32 profile as before") {
  const ResolvedScenario r = resolve_text("cluster: {preset: dgx1-v100}\nworkload: {network: gnmt}\n");
  CHECK(r.profile == workloads::builtin_profile("gnmt"));
  CHECK(r.profile.meta.gpu == "V100-SXM2-16GB");
  CHECK(r.profile.meta.precision == "fp32");
  // Nothing new in the summaries of scenarios that name neither key on a V100 machine.
  CHECK_FALSE(kernel_times_setting(r));
  CHECK_FALSE(has_setting(r, "GPU, precision"));
  // The dgx2 and pcie-server presets carry V100s too (SXM3 32 GB, PCIe 16 GB): the V100 model.
  CHECK(resolve_text("cluster: {preset: pcie-server}\nworkload: {network: gnmt}\n").profile ==
        workloads::builtin_profile("gnmt"));
  CHECK_FALSE(kernel_times_setting(resolve_text("cluster: {preset: dgx2}\nworkload: {network: gnmt}\n")));
}

TEST_CASE("workload.precision and workload.gpu: the chosen, or the preset's, cost model") {
  // amp on a DGX-1: the V100 AMP profile, calibrated on GNMT AMP (68,312 tokens/s).
  const ResolvedScenario amp =
      resolve_text("cluster: {preset: dgx1-v100}\nworkload: {network: gnmt, precision: amp}\n");
  CHECK(amp.profile == workloads::builtin_profile("gnmt", {.gpu = "v100", .precision = Precision::Amp}));
  const auto note = kernel_times_setting(amp);
  REQUIRE(note);
  CHECK(note->first == "GPU, precision");
  CHECK(note->second ==
        "V100 (V100-SXM2-16GB), amp: kernel times calibrated on one V100 (workloads/README.md)");
  CHECK(has_setting(amp, "GPU, precision"));
  // gpu auto on a DGX H100: the preset's H100, an estimate by peak ratios.
  const ResolvedScenario h100 =
      resolve_text("cluster: {preset: dgx-h100}\nworkload: {network: gnmt, precision: amp}\n");
  CHECK(h100.profile == workloads::builtin_profile("gnmt", {.gpu = "h100", .precision = Precision::Amp}));
  CHECK(h100.profile.meta.gpu == "H100-SXM5-80GB");
  const auto estimate = kernel_times_setting(h100);
  REQUIRE(estimate);
  CHECK(estimate->second.starts_with("H100 (H100-SXM5-80GB), amp: kernel times are an ESTIMATE"));
  // Without precision the newer preset still says what prices it: its GPU in FP32 (TF32 GEMMs).
  const ResolvedScenario a100 =
      resolve_text("cluster: {preset: dgx-a100}\nworkload: {network: inception-v3}\n");
  CHECK(a100.profile.meta.gpu == "A100-SXM4-80GB");
  CHECK(a100.profile.meta.precision == "fp32");
  CHECK(kernel_times_setting(a100));
  CHECK(resolve_text("cluster: {preset: hgx-h200}\nworkload: {network: biglstm}\n").profile.meta.gpu ==
        "H200-SXM-141GB");
  // An explicit GPU wins over the preset's: H100 kernels on DGX-1 links (a what-if).
  const ResolvedScenario what_if =
      resolve_text("cluster: {preset: dgx1-v100}\nworkload: {network: gnmt, gpu: h100}\n");
  CHECK(what_if.profile == workloads::builtin_profile("gnmt", {.gpu = "h100", .precision = Precision::Fp32}));
  // BigLSTM on the V100 is not calibrated on a figure of its own: an estimate, said so.
  const auto biglstm = kernel_times_setting(
      resolve_text("cluster: {preset: dgx1-v100}\nworkload: {network: biglstm, gpu: v100}\n"));
  REQUIRE(biglstm);
  CHECK(biglstm->second.starts_with("V100 (V100-SXM2-16GB), fp32: kernel times are an ESTIMATE"));
}

TEST_CASE("workload.precision and workload.gpu: a profile file must agree, else a located error") {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("hybridsim-scenario-gpu-precision-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "p.yaml") << workloads::profile_to_yaml(workloads::builtin_profile("gnmt"));
  const std::string head = "cluster: {preset: dgx1-v100}\nworkload:\n  profile: p.yaml\n";
  // "  gpu: h100": the value in column 8 of line 4.
  CHECK(resolve_error(head + "  gpu: h100\n", dir) ==
        "s.yaml:4:8: workload.gpu: the profile's kernels are for the V100-SXM2-16GB, not the h100; expected "
        "v100 "
        "(the profile's GPU) or auto (another GPU needs a built-in network, workload.network)");
  // "  precision: amp": column 14.
  CHECK(resolve_error(head + "  precision: amp\n", dir) ==
        "s.yaml:4:14: workload.precision: the profile's kernels are in fp32, not amp; expected fp32 (the "
        "profile's) "
        "or no precision (another precision needs a built-in network, workload.network)");
  // Agreeing keys are accepted, and the file is used as it is; so is gpu auto on an H100 machine.
  CHECK(resolve_text(head + "  gpu: v100\n  precision: fp32\n", dir).profile ==
        workloads::builtin_profile("gnmt"));
  CHECK(resolve_text("cluster: {preset: dgx-h100}\nworkload: {profile: p.yaml}\n", dir).profile ==
        workloads::builtin_profile("gnmt"));
  // Unknown values are schema errors naming the choices.
  CHECK(resolve_error("cluster: {preset: dgx1-v100}\nworkload: {network: gnmt, gpu: b200}\n")
            .starts_with("s.yaml:2:32: workload.gpu: unknown value \"b200\""));
  std::filesystem::remove_all(dir);
}

TEST_CASE("workload.precision and workload.gpu: written back as given, absent when not given") {
  const Scenario given = parse_scenario(
      "cluster: {preset: dgx-h100}\nworkload: {network: gnmt, precision: amp, gpu: h100}\n", "s.yaml");
  const std::string yaml = scenario_to_yaml(given);
  CHECK(yaml.find("  precision: amp\n  gpu: h100\n") != std::string::npos);
  CHECK(parse_scenario(yaml, "s.yaml").workload == given.workload);
  const std::string plain =
      scenario_to_yaml(parse_scenario("cluster: {preset: dgx1-v100}\nworkload: {network: gnmt}\n", "s.yaml"));
  CHECK(plain.find("precision") == std::string::npos);
  CHECK(plain.find("gpu:") == std::string::npos);
}
