// The training step as the framework runs it, on a toy V100 profile (4 ops of 1 ms forward and 2 ms
// backward, 4 MiB of gradient each): micro-batches with gradient accumulation, the all-reduce after
// every micro-batch or only the last, apex DDP's three copy passes, and the optimizer update priced
// as the kernels torch.optim launches. Expected values derived by hand in the comments.
#include <doctest/doctest.h>
#include "tests/paths/paths.h"

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "analysis/step/step_runner.h"
#include "scenarios/loader/resolve.h"
#include "scenarios/loader/scenario.h"
#include "sim/error.h"
#include "tests/unit/test_files.h"
#include "tests/unit/toy_profile.h"
#include "topology/presets.h"
#include "workloads/generators/profile_gen.h"
#include "workloads/gpu/optimizer_cost.h"
#include "workloads/profile/profile_io.h"

using namespace hybridsim;
using sim::Bytes;
using sim::Time;

namespace {

workloads::Profile v100_chain() {
  workloads::Profile p = testing::toy_chain(4);
  p.meta.gpu = "V100-SXM2-16GB";
  return p;
}

struct Loop {
  int dp = 1;
  int micro_batches = 1;
  bool every = true;
  int passes = 2;
};

analysis::StepResult run(const workloads::Profile& p, const topology::Topology& t, Loop loop) {
  analysis::StepSetup s;
  s.profile = &p;
  s.topology = &t;
  s.placement = workloads::place_all_on_first(p, 1);
  s.mapping = workloads::default_mapping(t, loop.dp, 1);
  s.step.bucket_size = Bytes::gib(1);  // one bucket, launched after the whole backward
  s.step.accumulation = loop.micro_batches;
  s.step.exchange_every_micro_batch = loop.every;
  s.step.copy_passes = loop.passes;
  return analysis::simulate_step(s);
}

// 2 × 16 MiB of traffic per pass at the V100's 600 GB/s memory-bound rate:
// 33,554,432 × 10^12 / (600 × 10^9) = 55,924,053.3 ps, rounded up.
const Time kPass = Time::ps(55'924'054);
// Two passes at once (apex's flatten and divide before the all-reduce): 111,848,106.7 ps, rounded up.
const Time kTwoPasses = Time::ps(111'848'107);

}  // namespace

TEST_CASE("training loop: one GPU accumulates micro-batches and updates once") {
  const auto p = v100_chain();
  const auto t = topology::presets::fully_connected({.gpus = 2});
  // 8 micro-batches of 4 × (1 + 2) ms, then one update of all 16 MiB.
  const auto r = run(p, t, {.dp = 1, .micro_batches = 8});
  CHECK(r.step_time == Time::ms(12) * 8 + p.optimizer_time(1));
  CHECK(r.accumulation == 8);
  CHECK(r.global_batch == p.meta.batch_per_gpu * 8);
  // Throughput counts every micro-batch's units.
  CHECK(r.units_per_second ==
        doctest::Approx(static_cast<double>(p.meta.units_per_step * 8) / r.step_time.to_seconds()));
}

TEST_CASE("training loop: apex all-reduces every micro-batch, with three copy passes around it") {
  const auto p = v100_chain();
  const auto t =
      topology::presets::fully_connected({.gpus = 2, .bandwidth = sim::Bandwidth::gb_per_second(10)});
  const auto alone = run(p, t, {.dp = 2, .micro_batches = 1, .passes = 3});
  // One micro-batch: 12 ms of kernels, flatten + divide (2 passes), the all-reduce alone (nothing
  // computes beside it), the copy back, the update: the all-reduce is what is left.
  const Time ar = alone.step_time - Time::ms(12) - kTwoPasses - kPass - p.optimizer_time(2);
  CHECK(ar > Time::ms(1));
  CHECK(alone.critical.gradient_copies == kTwoPasses + kPass);
  // Two micro-batches, each exchanging before the next starts; one update.
  const auto two = run(p, t, {.dp = 2, .micro_batches = 2, .passes = 3});
  CHECK(two.step_time == (Time::ms(12) + kTwoPasses + ar + kPass) * 2 + p.optimizer_time(2));
  CHECK(two.critical.gradient_copies == (kTwoPasses + kPass) * 2);
  CHECK(two.global_batch == p.meta.batch_per_gpu * 4);
  // Only the last micro-batch exchanging (PyTorch DDP's no_sync on the others), 2 passes.
  const auto last = run(p, t, {.dp = 2, .micro_batches = 2, .every = false});
  CHECK(last.step_time == Time::ms(24) + kPass + ar + kPass + p.optimizer_time(2));
}

TEST_CASE("training loop: the optimizer update as torch.optim's kernels") {
  using namespace workloads;
  const KernelCostModel v100 = v100_fp32();
  const OptimizerRecipe adam{OptimizerKind::Adam, OptimizerLaunch::PerOp, true, true};
  // Adam's 7 element-wise kernels (72 B), clip's norm and scale (12 B), zero_grad (4 B); under AMP
  // the unscale into FP32 master gradients (6), the master→FP16 copy (6) and a FP16 zero_grad (2).
  CHECK(optimizer_bytes_per_parameter(adam, Precision::Fp32) == 88);
  CHECK(optimizer_bytes_per_parameter(adam, Precision::Amp) == 98);
  CHECK(optimizer_passes(adam, Precision::Fp32).size() == 10);
  // Fused per tensor (TensorFlow's ApplyMomentum): read w, g, m, write w, m.
  CHECK(optimizer_bytes_per_parameter({OptimizerKind::Momentum, OptimizerLaunch::PerTensor},
                                      Precision::Fp32) == 20);
  // 10^6 parameters at the streaming 800 GB/s (4/3 of the V100's 600 GB/s memory-kernel rate):
  // b × 10^6 B take b × 1,250 ns: 4 B 5,000, 8 B 10,000, 12 B 15,000, 16 B 20,000; passes 4, 8 |
  // 8, 12, 8, 12, 8, 8, 16 | 4: 2 × 5,000 + 5 × 10,000 + 2 × 15,000 + 20,000 = 110,000 ns. A
  // tensor of 1,000: every one of the 10 kernels at the 5 us floor.
  const std::vector<std::int64_t> tensors{1'000'000, 1'000};
  CHECK(optimizer_update_time(v100, adam, tensors) == Time::ns(110'000) + Time::us(50));
  // One multi-tensor kernel (apex FusedAdam) instead: 28 B × 1,001,000 at 800 GB/s = 35,035 ns.
  CHECK(optimizer_update_time(v100, {OptimizerKind::Adam, OptimizerLaunch::MultiTensor}, tensors) ==
        Time::ns(35'035));
}

TEST_CASE("training loop: training.global_batch gives the micro-batches, or a located error") {
  const std::string file =
      (std::filesystem::path(HYBRIDSIM_SOURCE_DIR) / "scenarios/dgx1/gnmt-dp8.yaml").string();
  auto resolved = [&](std::vector<std::string> sets) {
    return scenarios::resolve(scenarios::load_scenario(file, sets));
  };
  // 1,024 sentences over 4 workers of 128: 2 micro-batches each; apex's buckets are 10 M FP32 values.
  const auto r = resolved({"parallelism={dp: 4}", "training.global_batch=1024", "communication.ddp=apex"});
  CHECK(r.step.accumulation == 2);
  CHECK(r.step.copy_passes == 3);
  CHECK(r.step.bucket_size == Bytes::of(40'000'000));
  // A written bucket size wins over apex's default; torch's DDP keeps 2 passes.
  const auto t = resolved({"communication.ddp=apex", "communication.bucket_size=25 MB"});
  CHECK(t.step.bucket_size == Bytes::of(25'000'000));
  CHECK(resolved({}).step.copy_passes == 2);
  CHECK(resolved({}).step.accumulation == 1);
  // 1,000 is not a multiple of 128 × 8.
  CHECK_THROWS_WITH_AS(
      resolved({"training.global_batch=1000"}),
      doctest::Contains("training.global_batch: 1000 is not a multiple of batch per worker x dp"),
      InputError);
}

TEST_CASE(
    "training loop: apex's buckets are 10 M elements of the profile's gradient type, however it is spelt") {
  // A profile file of 16-bit gradients under apex DDP: 10 M × 2 B = 20 MB buckets, whether the file
  // says amp, fp16 or bf16 (what `import kineto` writes for a half-precision trace); fp32 and tf32
  // gradients are 4-byte values, 40 MB. The memory model counts 2 bytes a parameter for all three
  // 16-bit names (workloads::parameter_rule), and the buckets follow the same rule.
  const testing::ScratchDir dir;
  auto bucket = [&](const std::string& precision) {
    workloads::Profile p =
        workloads::builtin_profile("gnmt", {.gpu = "v100", .precision = workloads::Precision::Amp});
    p.meta.precision = precision;
    std::ofstream(dir.path / "p.yaml") << workloads::profile_to_yaml(p);
    std::ofstream(dir.path / "s.yaml") << "cluster: {preset: dgx1-v100}\nworkload: {profile: p.yaml}\n"
                                          "parallelism: {dp: 8}\ncommunication: {ddp: apex}\n";
    return scenarios::resolve(scenarios::load_scenario((dir.path / "s.yaml").string(), {})).step.bucket_size;
  };
  CHECK(bucket("amp") == Bytes::of(20'000'000));
  CHECK(bucket("fp16") == Bytes::of(20'000'000));
  CHECK(bucket("bf16") == Bytes::of(20'000'000));
  CHECK(bucket("fp32") == Bytes::of(40'000'000));
  CHECK(bucket("tf32") == Bytes::of(40'000'000));
  // fp8 trains over BF16 gradients (Transformer Engine casts to FP8 for the GEMMs only): 20 MB;
  // fp64's gradients are 8-byte values: 80 MB. Both were 40 MB, as if FP32.
  CHECK(bucket("fp8") == Bytes::of(20'000'000));
  CHECK(bucket("fp64") == Bytes::of(80'000'000));
}
