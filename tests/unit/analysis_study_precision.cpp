// The study's workload section: the shipped AMP and DGX H100 study files price their built-in
// networks with the chosen (or the preset's) cost model, and a profile file that disagrees is a
// located error.
#include <doctest/doctest.h>
#include "tests/paths/paths.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "analysis/study/study_config.h"
#include "sim/error.h"
#include "topology/preset_registry.h"
#include "workloads/generators/profile_gen.h"
#include "workloads/profile/profile_io.h"

using namespace hybridsim;
using workloads::Precision;

TEST_CASE("study config: the AMP and DGX H100 study files price their networks as they say") {
  const std::filesystem::path dir = std::filesystem::path(HYBRIDSIM_SOURCE_DIR) / "scenarios" / "study";
  // FP32 on the V100 when the section is absent (quick.yaml): the profiles every study used.
  const auto fp32 = analysis::load_study_config(dir / "quick.yaml");
  CHECK_FALSE(fp32.gpu_choice.precision);
  CHECK(fp32.networks[1].profile == workloads::builtin_profile("gnmt"));
  const auto amp = analysis::load_study_config(dir / "quick-amp.yaml");
  CHECK(amp.gpu_choice.precision == Precision::Amp);
  REQUIRE(amp.networks.size() == 3);
  CHECK(amp.networks[1].profile ==
        workloads::builtin_profile("gnmt", {.gpu = "v100", .precision = Precision::Amp}));
  CHECK(amp.networks[0].profile.meta.precision == "amp");
  // gpu auto on dgx-h100: the preset's H100, on NDR 400 Gb/s = 50 GB/s links (the preset's own).
  const auto h100 = analysis::load_study_config(dir / "quick-h100-amp.yaml");
  CHECK(h100.networks[2].profile ==
        workloads::builtin_profile("biglstm", {.gpu = "h100", .precision = Precision::Amp}));
  CHECK(topology::ib_bandwidth_of(h100.cluster) == sim::Bandwidth::gb_per_second(50));
  CHECK(h100.gpus == amp.gpus);
  CHECK(h100.mp == amp.mp);
}

TEST_CASE("study config: a profile file must match workload.gpu and workload.precision") {
  const auto dir =
      std::filesystem::temp_directory_path() / ("hybridsim-study-precision-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  {
    std::ofstream out(dir / "g.yaml");
    workloads::save_profile(workloads::builtin_profile("gnmt"), out);
  }
  const std::string head = "format: hybridsim-study/1\nnetworks:\n  - {profile: g.yaml}\ngpus: [8]\n";
  auto error = [&](const std::string& tail) {
    try {
      analysis::parse_study_config(head + tail, "s.yaml", dir);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  // "workload: {gpu: a100}": a100 in column 17 of line 5.
  CHECK(error("workload: {gpu: a100}\n") ==
        "s.yaml:5:17: workload.gpu: the profile's kernels are for the V100-SXM2-16GB, not the a100; expected "
        "v100 (the "
        "profile's GPU) or auto (another GPU needs a built-in network, workload.network)");
  CHECK(error("workload: {precision: amp}\n") ==
        "s.yaml:5:23: workload.precision: the profile's kernels are in fp32, not amp; expected fp32 (the "
        "profile's) or "
        "no precision (another precision needs a built-in network, workload.network)");
  CHECK(error("workload: {gpu: v100, precision: fp32}\n") == "no error");
  std::filesystem::remove_all(dir);
}
