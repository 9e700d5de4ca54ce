// The study's and planner's steps are scenario overlays resolved as `hybridsim run` resolves a
// scenario file: the same keys give the same step, and the cache tells steps apart by what they
// simulate (the resolved StepConfig, profile and topology), not by how they were asked for.
#include <doctest/doctest.h>

#include <tuple>

#include "analysis/step/step_runner.h"
#include "analysis/study/study_steps.h"
#include "scenarios/loader/resolve.h"
#include "sim/error.h"
#include "workloads/generators/profile_gen.h"
#include "workloads/step/step_config.h"

using namespace hybridsim;

namespace {

analysis::StepRequest gnmt(int gpus, int mp, const std::string& placement, sim::Bandwidth ib) {
  analysis::StepRequest r{"gnmt", analysis::cluster_overlay({}, gpus, ib)};
  for (auto o : analysis::workload_overlay("gnmt", "", {})) r.overlay.push_back(o);
  for (auto o : analysis::parallelism_overlay(gpus / mp, mp, placement)) r.overlay.push_back(o);
  for (auto o :
       analysis::communication_overlay(workloads::AllReduceAlgorithm::Hierarchical, sim::Bytes::of(6'250'000),
                                       sim::Bytes::kib(256), scenarios::kDefaultFastPath))
    r.overlay.push_back(o);
  return r;
}

std::string join(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  return s;
}

}  // namespace

TEST_CASE("step requests: an overlay is the scenario file with the same keys") {
  const auto request = gnmt(16, 2, "stacks", sim::parse_bandwidth("200 Gb/s"));
  std::string joined;
  for (const auto& o : request.overlay) joined += o + "\n";
  CHECK(joined == join({"cluster.preset=dgx1-v100", "cluster.nodes=2", "cluster.fabric=fat-tree",
                               "cluster.oversubscription=1", "cluster.links.infiniband.bandwidth=25 GB/s",
                               "workload.network=gnmt", "parallelism.dp=8", "parallelism.mp=2",
                               "parallelism.placement=stacks", "communication.algorithm=hierarchical",
                               "communication.bucket_size=6.25 MB", "communication.message_size=256 KiB",
                        "communication.fast_path=bounded"}));
  // The same keys as a file, run's way: parse, resolve, simulate.
  const auto file = scenarios::resolve(scenarios::parse_scenario(R"(
cluster: {preset: dgx1-v100, nodes: 2, links: {infiniband: {bandwidth: 200 Gb/s}}}
workload: {network: gnmt}
parallelism: {dp: 8, mp: 2, placement: stacks}
communication: {algorithm: hierarchical, bucket_size: 6.25 MB, message_size: 256 KiB}
)", "same.yaml"));
  analysis::StepSetup setup;
  static_cast<workloads::StepConfig&>(setup) = file;
  setup.profile = &file.profile;
  setup.topology = &file.topology;
  const analysis::StepResult run = analysis::simulate_step(setup);

  const workloads::Profile profile = workloads::builtin_profile("gnmt");
  analysis::StepCache cache;
  const auto refs =
      cache.simulate({request}, {.profiles = {{"gnmt", &profile}}}, {.threads = 1, .on_progress = {}});
  const analysis::StepPoint p = cache.point(refs.at(0));
  CHECK(p.step_time == run.step_time);
  CHECK(p.events == run.events);
  CHECK(analysis::describe(p.label) == "gnmt N=16 dp=8 mp=2 stacks ib=25 GB/s bucket=6.25 MB hierarchical "
                                       "message=256 KiB");
  // The resolved configuration is what identifies the step: run's has the same fingerprint.
  const auto s = scenarios::parse_scenario("", "overlay", request.overlay);
  CHECK(workloads::fingerprint(scenarios::resolve_step_config(s, file.topology, profile)) ==
        workloads::fingerprint(file));
}

TEST_CASE("step requests: one step for requests that configure it alike, each with its own label") {
  const workloads::Profile profile = workloads::builtin_profile("gnmt");
  const analysis::StepRunContext context{.profiles = {{"gnmt", &profile}}};
  const sim::Bandwidth edr = topology::presets::kEdrBandwidth;
  analysis::StepCache cache;
  // On one machine the InfiniBand bandwidth changes no link: the same topology, the same step.
  // Across two machines it does. mp = 1 places every op on the worker's one GPU, whatever the
  // partitioner named.
  const auto refs =
      cache.simulate({gnmt(8, 1, "auto", edr), gnmt(8, 1, "auto", edr * 2), gnmt(8, 1, "stacks", edr),
                      gnmt(16, 1, "auto", edr), gnmt(16, 1, "auto", edr * 2)},
                     context, {.threads = 2, .on_progress = {}});
  REQUIRE(refs.size() == 5);
  CHECK(refs[0].id == refs[1].id);
  CHECK(refs[0].id == refs[2].id);
  CHECK(refs[3].id != refs[4].id);
  CHECK(refs[0].id != refs[3].id);
  CHECK(cache.simulated() == 3);
  CHECK(cache.point(refs[1]).label.ib_bytes_per_second == 2 * edr.bytes_per_second());
  CHECK(cache.point(refs[0]).step_time == cache.point(refs[1]).step_time);
  // Asking again simulates nothing.
  cache.simulate({gnmt(16, 1, "auto", edr)}, context);
  CHECK(cache.simulated() == 3);
}

TEST_CASE("step requests: a request that does not resolve names its key") {
  const workloads::Profile profile = workloads::builtin_profile("gnmt");
  const analysis::StepRunContext context{.profiles = {{"gnmt", &profile}}};
  auto bad = gnmt(8, 1, "auto", topology::presets::kEdrBandwidth);
  bad.overlay.push_back("parallelism.dp=9");  // 9 GPUs on one DGX-1
  analysis::StepCache cache;
  CHECK_THROWS_WITH_AS(cache.simulate({bad}, context),
                       doctest::Contains("--set parallelism.dp=9: parallelism: dp × mp = 9 × 1"), InputError);
  const auto refs = cache.simulate({bad}, context, {.threads = 0, .on_progress = {}, .keep_going = true});
  const analysis::StepFailure* f = cache.failure(refs.at(0).id);
  REQUIRE(f != nullptr);
  CHECK(f->overlay.ends_with("parallelism.dp=9"));
  CHECK(f->why.find("expected dp × mp <= 8") != std::string::npos);
  CHECK_FALSE(f->over_budget);  // not a refusal for its caps
  CHECK(cache.simulated() == 0);
}

TEST_CASE("step requests: a step refused for its caps keeps the cap, its estimate and the words apart") {
  // GNMT dp 16 on 2 DGX-1. At 1000 events its worker's kernels alone pass the cap (refused before it
  // resolves); with no events cap and 1 kB of simulation state its estimate's state passes that cap.
  // Each failure keeps the cap as given, an estimate past it, and the refusal's words from the
  // estimate on, which its text says after the step's name (what the planner's "not simulated" rows
  // read, where they cut the text at "the step would").
  const workloads::Profile profile = workloads::builtin_profile("gnmt");
  const analysis::StepRunContext context{.profiles = {{"gnmt", &profile}}};
  auto events = gnmt(16, 1, "auto", topology::presets::kEdrBandwidth);
  events.overlay.push_back("simulation.max_events=1000");
  auto memory = gnmt(16, 1, "auto", topology::presets::kEdrBandwidth);
  memory.overlay.push_back("simulation.max_events=0");
  memory.overlay.push_back("simulation.max_memory=1 kB");
  analysis::StepCache cache;
  const auto refs =
      cache.simulate({events, memory}, context, {.threads = 1, .on_progress = {}, .keep_going = true});
  REQUIRE(refs.size() == 2);
  using Kind = sim::BudgetExceeded::Kind;
  for (const auto& [ref, kind, words] : {std::tuple{refs[0], Kind::Events, "the step would simulate about "},
                                         std::tuple{refs[1], Kind::Memory, "the step would hold about "}}) {
    const analysis::StepFailure* f = cache.failure(ref.id);
    REQUIRE(f != nullptr);
    REQUIRE(f->over_budget);
    CHECK(f->over_budget->kind == kind);
    CHECK(f->over_budget->limit == 1000);
    CHECK(f->over_budget->estimate > 1000);
    CHECK(f->over_budget->words.starts_with(words));
    CHECK(f->why == analysis::describe(ref.label) + ": " + f->over_budget->words);
    CHECK_FALSE(f->in_run);
  }
  CHECK(cache.failure(refs[0].id)->over_budget->words.find("over the limit --max-events = 1000") !=
        std::string::npos);
  CHECK(cache.simulated() == 0);
}
