// The strategy planner: the known best on a toy case, what it searches and skips, and that it
// matches or beats every configuration the study simulates at the same GPU count.
#include <doctest/doctest.h>

#include <algorithm>
#include <sstream>

#include "analysis/plan/planner.h"
#include "analysis/study/study.h"
#include "analysis/study/study_report.h"
#include "sim/error.h"
#include "tests/unit/toy_profile.h"
#include "workloads/program/strategy_label.h"

using namespace hybridsim;
using sim::Bytes;
using sim::Time;

namespace {

// One block "blk": an input op, two independent branches of 5 ops (1 ms forward, 2 ms backward,
// 16 MiB of gradients each) and a join. All ops share one layer, so the layers and stacks
// partitioners cannot split it (they leave a GPU empty) and only the branches partitioner can.
workloads::Profile two_branches() {
  workloads::Profile p = testing::toy_profile("toy-branches");
  auto op = [&](const std::string& name, std::vector<std::uint32_t> inputs, Time f, Time b, Bytes grad) {
    p.ops.push_back(testing::toy_op(name, std::move(inputs), f, b, grad, Bytes::kib(64), "blk"));
    return static_cast<std::uint32_t>(p.ops.size() - 1);
  };
  const auto in = op("in", {}, Time::us(10), Time::us(10), Bytes::of(0));
  std::vector<std::uint32_t> ends;
  for (int b = 0; b < 2; ++b) {
    auto prev = in;
    for (int i = 0; i < 5; ++i)
      prev = op("br" + std::to_string(b) + "." + std::to_string(i), {prev}, Time::ms(1), Time::ms(2),
                Bytes::mib(16));
    ends.push_back(prev);
  }
  op("join", ends, Time::us(10), Time::us(10), Bytes::of(0));
  workloads::validate_profile(p);
  return p;
}

// The branches profile on 2 GPUs. Epochs quadruple from B = 32 to 64: DP on 2 GPUs (B = 64) must
// run 4x the epochs of one 2-GPU MP worker (B = 32).
analysis::PlanRequest two_branches_request(std::int64_t dataset_samples) {
  analysis::PlanRequest req;
  req.model = "toy-branches";
  req.profile = two_branches();
  req.curve = analysis::EfficiencyCurve{"toy", "custom", "test", false,
                                        analysis::StatisticalEfficiency::table({{32, 1}, {64, 4}})};
  req.dataset = analysis::TrainingDataset{"toy", "toy", "sample", dataset_samples, "test"};
  req.gpus = 2;
  req.threads = 2;
  return req;
}

}  // namespace

TEST_CASE("planner: finds the known best on a toy case and explains it") {
  // DP has only half as many steps per epoch as the MP worker (3,200 samples an epoch).
  analysis::PlanRequest req = two_branches_request(3'200);
  const auto r = analysis::plan(req);
  CHECK(r.mp_searched == std::vector<int>{1, 2});  // divisors of 2
  // DP: 3 buckets × 2 algorithms, of which the 3 hierarchical ones run as the ring on one machine
  // and are left out; MP 1 × 2 with the branches placement: one key (no gradient exchange, so
  // buckets and algorithms do not matter). Layers and stacks leave GPU 1 empty.
  REQUIRE(r.ranked.size() == 4);
  CHECK(r.skipped.size() == 2);
  CHECK(r.as_ring.size() == 3);
  CHECK(r.skipped[0] == "mp = 2 layers: gives only 1 of its 2 GPUs ops (GPU 0 would stay idle)");

  // The best: 1 × 2 with the branches placement. Each GPU runs one branch: 5 × 3 ms = 15 ms plus
  // the input, join, two 64 KiB transfers and half the optimizer (80 MiB at 1 ms/GiB = 0.08 ms).
  // Time to train: 1 epoch × 100 steps × ~15.1 ms ≈ 1.5 s. DP needs 4 epochs × 50 steps × at
  // least 30 ms = 6 s: the MP worker wins by about 4x.
  const auto& best = r.ranked[0];
  CHECK(best.step.label.mp == 2);
  CHECK(best.step.label.partitioner == workloads::Partitioner::Branches);
  CHECK(best.step.step_time > Time::ms(15));
  CHECK(best.step.step_time < Time::us(15'300));
  REQUIRE(best.ttt);
  CHECK(best.ttt->epochs == 1);
  CHECK(best.ttt->steps_per_epoch == 100);
  CHECK(r.ranked[1].step.label.mp == 1);
  CHECK(r.ranked[1].ttt->seconds > 3.9 * best.ttt->seconds);
  CHECK(best.why.find("best DP alone") != std::string::npos);
  std::ostringstream out;
  analysis::print_plan(r, out, 3);
  CHECK(out.str().find("1 x 2") != std::string::npos);
  CHECK(out.str().find("#1 step") != std::string::npos);

  // By throughput the MP worker still wins, narrowly (about 2%): DP does the same 30 ms of kernels
  // for twice the samples, but its last gradient bucket's all-reduce is exposed and its optimizer
  // updates all 160 MiB of parameters where each MP GPU updates half. Among the DP candidates,
  // smaller buckets expose less of the all-reduce (only the last bucket waits after backward), so
  // they rank 6.25 MB, then 25 MB, then 100 MB.
  req.objective = analysis::PlanObjective::Throughput;
  const auto t = analysis::plan(req);
  REQUIRE(t.ranked.size() == 4);
  for (std::size_t i = 1; i < t.ranked.size(); ++i)
    CHECK(t.ranked[i - 1].samples_per_second >= t.ranked[i].samples_per_second);
  CHECK(t.ranked[0].step.label.mp == 2);
  CHECK(t.ranked[0].samples_per_second < 1.05 * t.ranked[1].samples_per_second);
  CHECK(t.ranked[1].step.label.bucket_bytes == 6'250'000);
  CHECK(t.ranked[3].step.label.bucket_bytes == 100'000'000);
  CHECK(t.ranked[1].step.critical.exposed_communication < t.ranked[3].step.critical.exposed_communication);
}

TEST_CASE("planner: the hierarchical all-reduce is ranked only where its GPUs can run it") {
  // On one machine every data-parallel all-reduce of "hierarchical" runs as the ring (a ring within
  // each machine, then one across: one machine has no second level): the same step as the ring's
  // row, with more NCCL buffers counted. It tied with that row "differing in algorithm"; now it is
  // left out, saying why. On 2 DGX-1 of 8 GPUs each (16 GPUs: dp 16, and dp 8 × mp 2, whose groups
  // hold 4 GPUs on each machine) it runs as itself and is ranked.
  const auto one = analysis::plan(two_branches_request(3'200));
  for (const auto& c : one.ranked)
    CHECK(c.step.label.algorithm != workloads::AllReduceAlgorithm::Hierarchical);
  REQUIRE(one.as_ring.size() == 3);  // 2 x 1 with buckets of 6.25, 25 and 100 MB
  for (const auto& a : one.as_ring) {
    CHECK(a.label.algorithm == workloads::AllReduceAlgorithm::Hierarchical);
    CHECK(a.why == "all on machine 0");
  }
  std::ostringstream printed;
  analysis::print_plan(one, printed, 5);
  CHECK(printed.str().find("; 5 left out\n") != std::string::npos);  // 2 placements and 3 of these
  CHECK(
      printed.str().find("left out: 3 hierarchical configurations (2 x 1), the same steps as their ring "
                         "rows: each ran its all-reduces as the ring, their GPUs being all on machine 0 (") !=
      std::string::npos);
  analysis::PlanRequest two = two_branches_request(3'200);
  two.gpus = 16;
  const auto r = analysis::plan(two);
  const auto hierarchical =
      std::count_if(r.ranked.begin(), r.ranked.end(), [](const analysis::PlanCandidate& c) {
        return c.step.label.algorithm == workloads::AllReduceAlgorithm::Hierarchical;
      });
  CHECK(hierarchical == 6);  // 16 x 1 and 8 x 2 branches, 3 bucket sizes each
  CHECK(r.as_ring.empty());
}

TEST_CASE("planner: a candidate whose global batch is over the dataset counts steps from samples") {
  // 48 samples an epoch. The MP worker (B = 32): ceil(48 / 32) = 2 steps × 1 epoch. DP on 2 GPUs
  // (B = 64 > 48): 4 epochs × 48 samples in 192 / 64 = 3 steps (one step an epoch said 4), an epoch
  // 0.75 of a step; its line says so ("4.00 epochs of 0.75 steps").
  const auto r = analysis::plan(two_branches_request(48));
  REQUIRE(r.ranked.size() == 4);  // the hierarchical three run as the ring: left out
  for (const auto& c : r.ranked) {
    REQUIRE(c.ttt);
    CAPTURE(c.step.label.mp);
    CHECK(c.ttt->total_steps == (c.step.label.mp == 2 ? 2.0 : 3.0));
    CHECK(c.ttt->seconds == doctest::Approx(c.ttt->total_steps * c.step.step_time.to_seconds()));
  }
  std::ostringstream out;
  analysis::print_plan(r, out, 7);
  CHECK(out.str().find("4.00 epochs of 0.75 steps") != std::string::npos);
}

TEST_CASE("planner: matches or beats every study configuration at the same N") {
  // The study's configurations (default placement, 25 MB buckets, ring) are part of the planner's
  // search, so with a shared cache its best can only be as fast or faster.
  analysis::StudyConfig config;
  config.source = "test";
  config.networks.push_back(analysis::builtin_study_network("biglstm", {}));
  config.networks.push_back(analysis::builtin_study_network("gnmt", {}));
  config.gpus = {16};
  config.mp = {2, 4};
  config.algorithm = workloads::AllReduceAlgorithm::Ring;  // one the planner searches
  analysis::StepCache cache;
  const auto study = analysis::run_study(config, {.threads = 2}, cache);
  for (const auto& ns : study.networks) {
    const auto& net = study.network(ns);
    CAPTURE(net.name);
    analysis::PlanRequest req;
    req.model = net.name;
    req.profile = net.profile;
    req.curve = net.curve;
    req.dataset = net.dataset;
    req.gpus = 16;
    req.threads = 2;
    req.search.bucket_sizes = {Bytes::of(25'000'000), Bytes::of(100'000'000)};
    const auto p = analysis::plan(req, &cache);
    CHECK(p.mp_searched == std::vector<int>{1, 2, 4, 8});
    REQUIRE_FALSE(p.ranked.empty());
    for (const auto& row : ns.main().rows) CHECK(p.ranked[0].ttt->seconds <= row.ttt.seconds);
  }
}

TEST_CASE("planner: requests from names, and their errors") {
  const auto r = analysis::make_plan_request({.model = "gnmt", .gpus = 64});
  CHECK(r.model == "gnmt");
  CHECK(r.curve->network == "gnmt");
  CHECK(r.dataset->samples == 3'964'928);
  CHECK(r.objective == analysis::PlanObjective::TimeToTrain);
  CHECK(analysis::plan_mp_values(r) == std::vector<int>{1, 2, 4, 8});
  CHECK_THROWS_WITH_AS(analysis::make_plan_request({.model = "resnet"}),
                       doctest::Contains("--model \"resnet\": unknown; expected"), InputError);
  // A name that reads as a path and is no file was "unknown" too: it is refused as run refuses a
  // missing scenario, with the reason; a file that is not a profile has its own error.
  CHECK_THROWS_WITH_AS(analysis::make_plan_request({.model = "/nonexistent.yaml"}),
                       "--model: cannot open profile file \"/nonexistent.yaml\": No such file or directory",
                       InputError);
  CHECK_THROWS_WITH_AS(analysis::make_plan_request({.model = "nonexistent.csv"}),
                       doctest::Contains("\"nonexistent.csv\": No such file or directory"), InputError);
  CHECK_THROWS_WITH_AS(analysis::make_plan_request({.model = "no/such/profile"}),
                       doctest::Contains("\"no/such/profile\": No such file or directory"), InputError);
  CHECK_THROWS_WITH_AS(analysis::make_plan_request({.model = "/"}),
                       "--model: cannot open profile file \"/\": is a directory", InputError);
  CHECK_THROWS_WITH_AS(analysis::make_plan_request({.model = "gnmt", .cluster = "ideal-ring"}),
                       doctest::Contains("ideal-ring"), InputError);
  CHECK_THROWS_WITH_AS(analysis::make_plan_request({.model = "gnmt", .objective = "speed"}),
                       doctest::Contains("expected time-to-train or throughput"), InputError);
  CHECK_THROWS_AS(analysis::make_plan_request({.model = "gnmt", .variant = "wild"}), InputError);
  const auto ib = analysis::make_plan_request({.model = "biglstm", .gpus = 16, .ib_bandwidth = "200 Gb/s"});
  CHECK(topology::ib_bandwidth_of(ib.cluster) == sim::Bandwidth::bytes_per_second(25'000'000'000));
}

TEST_CASE("planner: one GPU, one configuration and one step are said in the singular") {
  // `plan --gpus 1` printed "gnmt on 1 GPUs", "1 configurations ranked", "1 steps simulated".
  analysis::PlanRequest req = two_branches_request(3'200);
  req.gpus = 1;
  const auto r = analysis::plan(req);
  std::ostringstream out;
  analysis::print_plan(r, out, 3);
  const std::string text = out.str();
  CHECK(text.find("plan: toy-branches on 1 GPU of ") != std::string::npos);
  CHECK(text.find("1 GPUs") == std::string::npos);
  const std::string ranked = std::to_string(r.ranked.size()) +
                             (r.ranked.size() == 1 ? " configuration ranked" : " configurations ranked");
  CHECK(text.find("\n" + ranked + " (mp in 1; ") != std::string::npos);
  const std::string steps =
      std::to_string(r.simulated) + (r.simulated == 1 ? " step simulated" : " steps simulated");
  CHECK(text.find("; " + steps + ")") != std::string::npos);
  CHECK(workloads::gpus_text(1) == "1 GPU");
  CHECK(workloads::gpus_text(8) == "8 GPUs");
  CHECK(workloads::strategy_label({.gpus = 1}) == "dp 1 × mp 1 = 1 GPU");
}

TEST_CASE("planner: a V100 machine of another part (pcie-server) says whose kernel times ran") {
  // run and sweep say it in their settings (scenarios/loader/describe.cpp); plan said nothing.
  analysis::PlanRequest req =
      analysis::make_plan_request({.model = "gnmt", .gpus = 2, .cluster = "pcie-server"});
  req.threads = 1;
  req.search.bucket_sizes = {Bytes::of(25'000'000)};
  const auto p = analysis::plan(req);
  CHECK(p.kernel_times.ends_with(
      "; pcie-server has V100-PCIE-16GB, another part of the V100: the kernel times are the "
      "V100-SXM2-16GB's, not scaled to its clocks (workload.compute_speed scales them)"));
  std::ostringstream printed;
  analysis::print_plan(p, printed, 1);
  CHECK(printed.str().find("\nGPU, precision V100 (V100-SXM2-16GB), fp32: ") != std::string::npos);
  // The part the kernels are for says nothing.
  req = analysis::make_plan_request({.model = "gnmt", .gpus = 2});
  req.threads = 1;
  req.search.bucket_sizes = {Bytes::of(25'000'000)};
  CHECK(analysis::plan(req).kernel_times.empty());
}

TEST_CASE("planner and study say whose data-parallel wrapper their GNMT steps model") {
  // plan (and run) model PyTorch DDP; the study runs GNMT under apex DDP, NVIDIA's GNMT's (study_ddp):
  // at 16 GPUs dp 16 ring 25 MB plan's step read 309.957 ms and the study's 312.784 ms (40 MB
  // buckets), with nothing in either output saying why.
  analysis::PlanRequest req = analysis::make_plan_request({.model = "gnmt", .gpus = 1});
  const auto r = analysis::plan(req);
  std::ostringstream out;
  analysis::print_plan(r, out, 1);
  // The header's InfiniBand is the port's, then a GPU's share: 4 EDR NICs on 12 GB/s PCIe for 8 GPUs.
  CHECK(
      out.str().starts_with("plan: gnmt on 1 GPU of dgx1-v100 machines (InfiniBand 12.5 GB/s a NIC port, 6 "
                            "GB/s a GPU), objective"));
  CHECK(out.str().find("\ndata parallelism as PyTorch DDP (communication.ddp torch, as hybridsim run's "
                       "default); hybridsim study runs gnmt under apex DDP, its framework's "
                       "(networks[].communication.ddp), whose steps differ\n") != std::string::npos);
  // A network the study also runs under torch: no second clause.
  std::ostringstream toy;
  analysis::print_plan(analysis::plan(two_branches_request(3'200)), toy, 1);
  CHECK(toy.str().find("\ndata parallelism as PyTorch DDP (communication.ddp torch, as hybridsim run's "
                       "default)\n") != std::string::npos);
  // The study's headline table says each network's.
  analysis::StudyConfig config;
  config.source = "test";
  config.gpus = {2};
  config.mp = {2};
  config.networks.push_back(analysis::builtin_study_network("gnmt", {}));
  config.networks.push_back(analysis::builtin_study_network("inception-v3", {}));
  std::ostringstream study;
  analysis::print_headline_table(analysis::run_study(config), study);
  CHECK(study.str().find("\ndata parallelism as each network's framework's wrapper "
                         "(networks[].communication.ddp): gnmt: apex, inception-v3: torch; hybridsim plan "
                         "and run default to torch\n") != std::string::npos);
}
