// The transformer planner: pruning by the closed forms never drops the configuration the simulation
// ranks best (a small grid simulated in full), the explanation names what really differs, and a
// model that fits nowhere is refused naming the option.
#include <doctest/doctest.h>

#include <algorithm>

#include "analysis/plan/llm_planner.h"
#include "sim/error.h"

using namespace hybridsim;

namespace {

// Megatron's 1.2 B GPT (40 layers, hidden 1,536, 16 heads) on one DGX A100, 16 sequences per step;
// micro-batches 1 and 2, recomputation none or full (tp 1..8 and sequence parallelism as the table
// has them): 28 layouts, small enough to simulate them all.
analysis::LlmPlanRequest small_grid() {
  analysis::LlmPlanOptions o{.model = "megatron-1.2b", .gpus = 8, .gpu = "a100-80gb", .global_batch = 16};
  analysis::LlmPlanRequest r = analysis::make_llm_plan_request(o);
  for (auto& d : r.dimensions) {
    if (d.name == "micro_batch")
      d.values = [](const analysis::LlmSpace&) { return std::vector<std::string>{"1", "2"}; };
    if (d.name == "recompute")
      d.values = [](const analysis::LlmSpace&) { return std::vector<std::string>{"none", "full"}; };
  }
  r.threads = 2;
  return r;
}

}  // namespace

TEST_CASE("llm planner: the closed-form pruning keeps the configuration the simulation ranks best") {
  analysis::LlmPlanRequest r = small_grid();
  REQUIRE(r.cluster.preset == "dgx-a100");
  REQUIRE(r.memory.bytes == sim::Bytes::gib(80));
  r.simulate = 0;  // every layout that fits
  const analysis::LlmPlanResult all = analysis::plan_llm(r);
  CHECK(all.enumerated == 28);
  REQUIRE(all.ranked.size() == all.fitting);
  CHECK(all.skipped.empty());
  // The default keeps the best 8 by the estimate: the simulated best must be among them.
  const auto kept = analysis::llm_fitting_candidates(small_grid(), nullptr);
  REQUIRE(kept.size() >= 8);
  const auto best = all.ranked.front().layout;
  CHECK(std::any_of(kept.begin(), kept.begin() + 8, [&](const auto& c) { return c.layout == best; }));
  const analysis::LlmPlanResult pruned = analysis::plan_llm(small_grid());
  REQUIRE(pruned.ranked.size() == 8);
  CHECK(pruned.ranked.front().layout == best);
  // Ranked by tokens/s (no critical batch), best first.
  CHECK_FALSE(pruned.by_time_to_train);
  for (std::size_t i = 1; i < pruned.ranked.size(); ++i)
    CHECK(pruned.ranked[i - 1].tokens_per_second >= pruned.ranked[i].tokens_per_second);
}

TEST_CASE("llm planner: the explanation names the real differences with the runner-up") {
  const analysis::LlmPlanResult r = analysis::plan_llm(small_grid());
  const std::size_t next = analysis::llm_runner_up(r);
  REQUIRE(next < r.ranked.size());
  CHECK(r.ranked[next].step->id != r.ranked[0].step->id);  // another simulated step
  for (std::size_t i = 1; i < next; ++i) CHECK(r.ranked[i].step->id == r.ranked[0].step->id);
  const auto& a = r.ranked[0].layout;
  const auto& b = r.ranked[next].layout;
  const std::string& why = r.ranked[0].why;
  const std::string head = "vs #" + std::to_string(next + 1) + " (";
  const std::size_t vs = why.find(head);
  REQUIRE(vs != std::string::npos);
  const std::string diff = why.substr(vs + head.size(), why.find(')', vs) - vs - head.size());
  int differing = 0;
  for (const auto& d : r.request.dimensions) {
    const bool differs = d.get(a) != d.get(b);
    differing += differs ? 1 : 0;
    CAPTURE(d.name);
    CHECK((diff.find(std::string(d.name) + " " + d.get(a) + "->" + d.get(b)) != std::string::npos) ==
          differs);
  }
  CHECK(differing > 0);
  CHECK(why.find("tokens/s") != std::string::npos);
  // The simulated split and the closed-form terms are both there.
  CHECK(why.find("exposed communication") != std::string::npos);
  CHECK(why.find("compute") != std::string::npos);
}

TEST_CASE("llm planner: refuses when nothing fits, naming the option and what is not searched yet") {
  analysis::LlmPlanOptions o{.model = "gpt3-175b", .gpus = 1024, .gpu = "a100-80gb"};
  const analysis::LlmPlanRequest r = analysis::make_llm_plan_request(o);
  CHECK(r.global_batch == 1536);  // 3.2 M tokens of 2,048 to a multiple of 256
  // tp <= 8 alone leaves 175 B / 8 parameters at 16 bytes each, about 350 GB, on every GPU.
  try {
    analysis::plan_llm(r);
    FAIL("expected a refusal");
  } catch (const InputError& e) {
    const std::string what = e.what();
    CHECK(what.starts_with("--memory: none of the"));
    CHECK(what.find("fits in 80 GiB (A100 80GB (--gpu))") != std::string::npos);
    CHECK(what.find("not searched yet: pp, zero, schedule, virtual_stages, ep") != std::string::npos);
  }
  // With the pipeline and ZeRO rows enabled (once their keys are in the loader), layouts fit.
  analysis::LlmPlanRequest all = r;
  all.dimensions = analysis::llm_plan_dimensions_all_enabled();
  const auto fit = analysis::llm_fitting_candidates(all, nullptr);
  REQUIRE_FALSE(fit.empty());
  CHECK(
      std::all_of(fit.begin(), fit.end(), [&](const auto& c) { return c.memory.total() <= r.memory.bytes; }));
  CHECK(std::any_of(fit.begin(), fit.end(), [](const auto& c) { return c.layout.pp > 1; }));
  CHECK_THROWS_WITH_AS(analysis::make_llm_plan_request({.model = "gpt3-175b", .gpus = 8, .gpu = "b200"}),
                       doctest::Contains("--gpu: unknown GPU"), InputError);
}
