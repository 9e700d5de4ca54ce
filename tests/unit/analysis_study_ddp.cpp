// A study network's networks[].communication.ddp: its default is the network's framework's wrapper
// (workloads/README.md: apex for GNMT, torch for the others), a written value reaches the steps the
// study simulates, and a bad one is a located error.
#include <doctest/doctest.h>

#include <string>

#include "analysis/study/study.h"
#include "analysis/study/study_config.h"
#include "sim/error.h"

using namespace hybridsim;

namespace {

// GNMT's study on 2 GPUs (1 GPU, dp 2, dp 1 x mp 2), its network entry being `network`.
analysis::StudyConfig gnmt_study(const std::string& network) {
  return analysis::parse_study_config(
      "format: hybridsim-study/1\nnetworks: [" + network + "]\ngpus: [2]\nmp: [2]\n", "s.yaml");
}

// The dp 2 step of the study's only network.
sim::Time dp2_step(const analysis::StudyConfig& config) {
  const analysis::StudyResult result = analysis::run_study(config, {.threads = 2});
  for (const auto& row : result.networks.at(0).main().rows)
    if (row.gpus == 2 && row.mp == 1) return row.step.step_time;
  FAIL("no dp 2 row");
  return {};
}

}  // namespace

TEST_CASE("study config: each network's DDP defaults to its framework's and can be written") {
  const auto builtin = analysis::parse_study_config(
      "format: hybridsim-study/1\nnetworks: [inception-v3, gnmt, biglstm]\ngpus: [8]\n", "s.yaml");
  CHECK(builtin.networks[0].ddp == workloads::Ddp::Torch);
  CHECK(builtin.networks[1].ddp == workloads::Ddp::Apex);
  CHECK(builtin.networks[2].ddp == workloads::Ddp::Torch);
  CHECK_FALSE(builtin.bucket_size);  // each DDP's own bucket unless the study writes one
  CHECK(gnmt_study("{name: gnmt}").networks[0].ddp == workloads::Ddp::Apex);
  CHECK(gnmt_study("{name: gnmt, communication: {ddp: torch}}").networks[0].ddp == workloads::Ddp::Torch);
}

TEST_CASE("study steps: a network's DDP reaches its data-parallel step") {
  const sim::Time apex = dp2_step(gnmt_study("gnmt"));
  const sim::Time torch = dp2_step(gnmt_study("{name: gnmt, communication: {ddp: torch}}"));
  // apex's third copy pass over GNMT's 643 MB of FP32 gradients (a read and a write of 321 MB at
  // 600 GB/s: about 1.1 ms) and its 40 MB buckets make the step longer than torch's 2 passes.
  CHECK(apex > torch);
  CHECK(apex.ps() - torch.ps() > sim::Time::us(500).ps());
  CHECK(apex == dp2_step(gnmt_study("{name: gnmt, communication: {ddp: apex}}")));
}

TEST_CASE("study config: a bad DDP is an error at its place") {
  try {
    gnmt_study("{name: gnmt, communication: {ddp: horovod}}");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()) ==
          "s.yaml:2:46: networks[0].communication.ddp: unknown value \"horovod\"; expected one of: "
          "torch, apex");
  }
}
