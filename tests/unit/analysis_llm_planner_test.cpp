// The transformer planner: pruning by the closed forms never drops the configuration the simulation
// ranks best (a small grid simulated in full), the explanation names what really differs, and a
// model that fits nowhere is refused naming the option.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>
#include <utility>

#include "analysis/plan/llm_candidate_cost.h"
#include "analysis/plan/llm_planner.h"
#include "analysis/study/study_report.h"
#include "sim/budget.h"
#include "sim/error.h"
#include "sim/units.h"

using namespace hybridsim;

namespace {

// Megatron's 1.2 B GPT (40 layers, hidden 1,536, 16 heads) on one DGX A100, 16 sequences per step;
// micro-batches 1 and 2, recomputation none or full, ZeRO 0 or 3, 1F1B or interleaved with 2 virtual
// stages (tp 1..8, pp 1..8 and sequence parallelism as the table has them): 148 layouts, small
// enough to simulate them all, pipelines and ZeRO-3 included, every GPU if need be.
analysis::LlmPlanRequest small_grid() {
  analysis::LlmPlanOptions o{.model = "megatron-1.2b", .gpus = 8, .gpu = "a100-80gb", .global_batch = 16};
  analysis::LlmPlanRequest r = analysis::make_llm_plan_request(o);
  auto only = [](analysis::PlanDimension& d, std::string_view name, std::vector<std::string> (*values)(
                                                                         const analysis::LlmSpace&)) {
    if (d.name == name) d.values = values;
  };
  for (auto& d : r.dimensions) {
    only(d, "micro_batch", [](const analysis::LlmSpace&) { return std::vector<std::string>{"1", "2"}; });
    only(d, "recompute", [](const analysis::LlmSpace&) { return std::vector<std::string>{"none", "full"}; });
    only(d, "zero", [](const analysis::LlmSpace&) { return std::vector<std::string>{"0", "3"}; });
    only(d, "schedule",
         [](const analysis::LlmSpace&) { return std::vector<std::string>{"1f1b", "interleaved"}; });
    only(d, "virtual_stages", [](const analysis::LlmSpace&) { return std::vector<std::string>{"1", "2"}; });
  }
  r.limits = {"simulation.max_events=0"};  // every candidate simulated, however many events
  r.events_budget_count = 0;
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
  // 148 before ZeRO-3 with a pipeline was left out (as `run` refuses it): its 32 pp > 1 layouts.
  CHECK(all.enumerated == 116);
  CHECK(std::none_of(all.ranked.begin(), all.ranked.end(),
                     [](const auto& c) { return c.layout.pp > 1 && c.layout.zero >= 2; }));
  REQUIRE(all.ranked.size() == all.fitting);
  CHECK(all.skipped.empty());
  CHECK(all.estimated == 0);
  // Pipelines and ZeRO-3 among the simulated.
  CHECK(std::any_of(all.ranked.begin(), all.ranked.end(), [](const auto& c) { return c.layout.pp > 1; }));
  CHECK(std::any_of(all.ranked.begin(), all.ranked.end(), [](const auto& c) { return c.layout.zero == 3; }));
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

TEST_CASE("llm planner: the capacity is named where it came from, --gpu only when given") {
  // run names a preset's GPU "V100-SXM2-16GB of dgx1-v100"; the planner said "V100 (--gpu)" under
  // --cluster dgx1-v100 alone, and led its refusal with "--memory:" though no --memory was given.
  const analysis::LlmPlanRequest cluster =
      analysis::make_llm_plan_request({.model = "gpt3-175b", .gpus = 8, .cluster = "dgx1-v100"});
  CHECK(cluster.memory.source == "V100-SXM2-16GB of dgx1-v100");
  CHECK(cluster.names.memory.empty());
  CHECK(analysis::make_llm_plan_request({.model = "gpt3-175b", .gpus = 8}).memory.source ==
        "A100 80GB of dgx-a100");
  CHECK(analysis::make_llm_plan_request({.model = "gpt3-175b", .gpus = 8, .gpu = "v100"}).memory.source ==
        "V100 (--gpu)");
}

TEST_CASE("llm planner: a preset's own GPU holds the memory, as run checks it (dgx2's 32 GB V100)") {
  // The kernel times of dgx2 are the V100-SXM2-16GB's, but its parts have 32 GiB: the plan checked
  // every layout against 16 GiB while naming "V100-SXM3-32GB of dgx2", and run checks 32 GiB.
  const analysis::LlmPlanRequest dgx2 =
      analysis::make_llm_plan_request({.model = "llama3-8b", .gpus = 16, .cluster = "dgx2"});
  CHECK(dgx2.memory.source == "V100-SXM3-32GB of dgx2");
  CHECK(dgx2.memory.bytes == sim::Bytes::gib(32));
  const analysis::LlmPlanRequest pcie =
      analysis::make_llm_plan_request({.model = "llama3-8b", .gpus = 16, .cluster = "pcie-server"});
  CHECK(pcie.memory.source == "V100-PCIE-16GB of pcie-server");
  CHECK(pcie.memory.bytes == sim::Bytes::gib(16));
  // --gpu names its own part's memory whatever the cluster.
  const analysis::LlmPlanRequest named =
      analysis::make_llm_plan_request({.model = "llama3-8b", .gpus = 16, .gpu = "v100", .cluster = "dgx2"});
  CHECK(named.memory.bytes == sim::Bytes::gib(16));
  // And the kernel times are the V100-SXM2-16GB's: said as run and the 2017 networks' plan say it (the
  // transformer plan said nothing of it).
  CHECK(
      dgx2.gpu_note.starts_with("dgx2 has V100-SXM3-32GB, another part of the V100: the kernel times are "
                                "the V100-SXM2-16GB's"));
  CHECK(pcie.gpu_note.starts_with("pcie-server has V100-PCIE-16GB"));
  CHECK(named.gpu_note.empty());  // --gpu v100 asks for that part's kernels
  CHECK(analysis::make_llm_plan_request({.model = "llama3-8b", .gpus = 16, .cluster = "dgx1-v100"})
            .gpu_note.empty());
}

TEST_CASE("llm planner: refuses when nothing fits, naming the option") {
  analysis::LlmPlanOptions o{.model = "gpt3-175b", .gpus = 1024, .gpu = "a100-80gb"};
  const analysis::LlmPlanRequest r = analysis::make_llm_plan_request(o);
  CHECK(r.global_batch == 1536);  // 3.2 M tokens of 2,048 to a multiple of 256
  // With the pipeline and ZeRO rows, layouts fit in 80 GB (tp <= 8 alone would leave 175 B / 8
  // parameters at 16 bytes each, about 350 GB, on every GPU).
  const auto fit = analysis::llm_fitting_candidates(r, nullptr);
  REQUIRE_FALSE(fit.empty());
  CHECK(
      std::all_of(fit.begin(), fit.end(), [&](const auto& c) { return c.memory.total() <= r.memory.bytes; }));
  CHECK(std::any_of(fit.begin(), fit.end(), [](const auto& c) { return c.layout.pp > 1; }));
  CHECK(std::any_of(fit.begin(), fit.end(), [](const auto& c) { return c.layout.zero == 3; }));
  o.memory = "1 GiB";  // ZeRO-3 over 1,024 GPUs still holds 175 B x 16 / 1024 bytes, 2.7 GB
  try {
    analysis::plan_llm(analysis::make_llm_plan_request(o));
    FAIL("expected a refusal");
  } catch (const analysis::LlmPlanRefused& e) {
    CHECK(e.reason == analysis::LlmPlanRefusal::NothingFits);
    const std::string what = e.what();
    CHECK(what.starts_with("--memory: none of the"));
    CHECK(what.find("fits in 1 GiB") != std::string::npos);
    CHECK(what.find("not searched") == std::string::npos);
  }
  // 97 GPUs: tp and pp 1 (97 divides 8 not, and is more than the 96 layers; 7 GPUs now take pp 7,
  // uneven stages of 13 and 14 layers), dp 97 divides no batch of 1,536: no layout.
  try {
    analysis::plan_llm(
        analysis::make_llm_plan_request({.model = "gpt3-175b", .gpus = 97, .gpu = "a100-80gb"}));
    FAIL("expected a refusal");
  } catch (const analysis::LlmPlanRefused& e) {
    CHECK(e.reason == analysis::LlmPlanRefusal::NoLayout);
    CHECK(std::string(e.what()).starts_with("--gpus 97: no layout of gpt3-175b on 97 GPUs"));
  }
  CHECK_THROWS_WITH_AS(analysis::make_llm_plan_request({.model = "gpt3-175b", .gpus = 8, .gpu = "b200"}),
                       doctest::Contains("--gpu: unknown GPU"), InputError);
}

TEST_CASE("llm planner: a candidate past the events budget is ranked by its closed form, not simulated") {
  analysis::LlmPlanRequest r = small_grid();
  r.limits = {"simulation.max_events=1000"};  // no step of 8 GPUs fits in 1,000 events
  r.events_budget_given = "1000";
  // No cap on the program: every candidate is built and refused by the run's own estimate.
  r.events_budget_count = 0;
  const analysis::LlmPlanResult p = analysis::plan_llm(r);
  REQUIRE_FALSE(p.ranked.empty());
  CHECK(p.estimated == p.ranked.size());
  CHECK(p.skipped.empty());
  // The walk tries 2K candidates at most, best estimate first, all of them estimated.
  CHECK(p.ranked.size() == static_cast<std::size_t>(r.attempts()));
  for (const auto& c : p.ranked) {
    CHECK_FALSE(c.simulated());
    CHECK(c.estimated_only.find("the step would simulate about") != std::string::npos);
    CHECK(c.step_seconds() == c.estimate.step());
  }
  CHECK(p.ranked.front().why.starts_with("estimated, not simulated ("));
  std::ostringstream text;
  analysis::print_llm_plan(p, text);
  CHECK(text.str().find(std::to_string(p.ranked.size()) + " estimated, not simulated") != std::string::npos);
  CHECK(text.str().find("simulated (critical GPU") == std::string::npos);
  // Nothing simulated: the estimates are ranked as estimates, and the verdict says it is one (no
  // "best" claimed as simulated; main printed #1 with no such line).
  CHECK(text.str().find("ranked by their closed form, an estimate)") != std::string::npos);
  CHECK(text.str().find(
            "\nbest by the closed form, an estimate (no layout could be simulated within the plan's "
            "caps): #1 " +
            analysis::layout_label(r.dimensions, p.ranked.front().layout) + ", estimated: ") !=
        std::string::npos);
  CHECK(text.str().find("\nbest: ") == std::string::npos);
  CHECK(text.str().find("\n1    " + analysis::layout_label(r.dimensions, p.ranked.front().layout) + " ") !=
        std::string::npos);
}

TEST_CASE("llm planner: the verdict rests on simulated rows, estimated ones are listed apart after them") {
  // hunt42: `plan --model llama3-8b --gpus 16 --gpu h100` ranked two estimated layouts #1 and #2 (41.19 s
  // by the closed form) above simulated rows of 41.28-41.95 s, while #1's own run took 42.9 s. Here
  // Llama 3 8B on one DGX H100 at 32 sequences a step, the best 20 by the closed form tried: the
  // shared memory budget at the smallest program among them (dp 8, 4 micro-batches of 4 under full
  // recomputation, 8,800 tasks against 24,960; since branch zeroclosed's closed form the 20th by it)
  // leaves the best 19 by the closed form unbuilt.
  analysis::LlmPlanRequest r = analysis::make_llm_plan_request(
      {.model = "llama3-8b", .gpus = 8, .gpu = "h100", .global_batch = 32, .simulate = 10});
  r.threads = 2;
  const auto fit = analysis::llm_fitting_candidates(r, nullptr);
  REQUIRE(fit.size() >= 20);
  std::vector<std::int64_t> cost;
  for (std::size_t i = 0; i < 20; ++i)
    cost.push_back(analysis::llm_plan_candidate_cost(r, fit[i].layout).memory);
  const std::int64_t least = *std::min_element(cost.begin(), cost.end());
  REQUIRE(cost[0] > least);
  r.memory_budget_bytes = least;
  const analysis::LlmPlanResult p = analysis::plan_llm(r);
  const std::size_t k = p.simulated_rows();
  REQUIRE(k > 0);
  REQUIRE(p.estimated > 0);
  CHECK(k + p.estimated == p.ranked.size());
  // Every simulated row before every estimated one, each part best first by tokens/s.
  double best_simulated = 0;
  for (std::size_t i = 0; i < p.ranked.size(); ++i) {
    CAPTURE(i);
    CHECK(p.ranked[i].simulated() == (i < k));
    if (i < k) best_simulated = std::max(best_simulated, p.ranked[i].tokens_per_second);
    if (i > 0 && i != k) CHECK(p.ranked[i - 1].tokens_per_second >= p.ranked[i].tokens_per_second);
  }
  // The case that matters: estimated rows whose closed form beats every simulated row (main ranked
  // them #1). The best layout by the closed form is one of them, unbuilt.
  std::size_t faster = 0;
  for (std::size_t i = k; i < p.ranked.size(); ++i)
    faster += p.ranked[i].tokens_per_second > best_simulated ? 1 : 0;
  REQUIRE(faster > 0);
  CHECK(analysis::llm_estimated_faster(p) == faster);
  CHECK(std::any_of(p.ranked.begin() + static_cast<std::ptrdiff_t>(k), p.ranked.end(),
                    [&](const auto& c) { return c.layout == fit[0].layout; }));
  REQUIRE(p.ranked.front().simulated());
  CHECK(p.ranked.front().tokens_per_second == best_simulated);
  // The runner-up #1 is compared with is simulated too.
  const std::size_t next = analysis::llm_runner_up(p);
  CHECK((next < k || next == p.ranked.size()));
  // How far the closed form ran from the simulator on the simulated rows, quoted beside them.
  double lo = 1e9, hi = 0;
  for (std::size_t i = 0; i < k; ++i) {
    const double ratio = p.ranked[i].estimate.step() / p.ranked[i].step->step_time.to_seconds();
    lo = std::min(lo, ratio);
    hi = std::max(hi, ratio);
  }
  const auto ratio = analysis::llm_closed_form_ratio(p);
  REQUIRE(ratio);
  CHECK(ratio->least == lo);
  CHECK(ratio->largest == hi);
  const std::string range = analysis::format_fixed(lo, 3) == analysis::format_fixed(hi, 3)
                                ? analysis::format_fixed(lo, 3)
                                : analysis::format_fixed(lo, 3) + "-" + analysis::format_fixed(hi, 3);
  const std::string on_rows =
      range + " of the simulated step on the " +
      (k == 1 ? std::string("simulated row") : std::to_string(k) + " simulated rows") + " here";
  std::ostringstream out;
  analysis::print_llm_plan(p, out, 20);
  const std::string text = out.str();
  CAPTURE(text);
  const auto label = [&](std::size_t i) { return analysis::layout_label(r.dimensions, p.ranked[i].layout); };
  CAPTURE(label(0));
  CHECK(text.find("\nbest: #1 " + label(0) + ", simulated: ") != std::string::npos);
  // The ranking numbers the simulated rows alone; the estimated ones come after, under their heading,
  // unnumbered.
  const std::size_t apart = text.find("\nestimated, not simulated: " + std::to_string(p.estimated) +
                                      (p.estimated == 1 ? " layout" : " layouts") +
                                      " by their closed form, listed apart, not ranked against the simulated "
                                      "rows above (the closed form ran " +
                                      on_rows + ")\n");
  REQUIRE(apart != std::string::npos);
  for (std::size_t i = 0; i < p.ranked.size(); ++i) {
    CAPTURE(label(i));
    char rank[16];
    std::snprintf(rank, sizeof rank, "\n%-4zu ", i + 1);
    const std::size_t numbered = text.find(rank + label(i) + " ");
    const std::size_t listed = text.find("\n-    " + label(i) + " ");
    if (i < k) {
      CHECK(numbered < apart);
      CHECK(listed == std::string::npos);
    } else {
      CHECK(listed > apart);
      CHECK(listed != std::string::npos);
      CHECK(text.find(label(i) + ": estimated, not simulated (building and simulating it would hold") >
            apart);
    }
  }
  CHECK(text.find("\n" + std::to_string(faster) + (faster == 1 ? " estimated layout" : " estimated layouts") +
                  " may be faster than #1 by " + (faster == 1 ? "its" : "their") +
                  " closed form (which ran " + on_rows + "): raise the cap") != std::string::npos);
}

TEST_CASE("llm planner: a program past --max-events / kBuildEventsPerTask tasks is not built, and says so") {
  analysis::LlmPlanRequest r = small_grid();
  r.limits = {"simulation.max_events=1000"};
  r.events_budget_given = "1000";
  r.events_budget_count = 1000;
  CHECK(analysis::llm_plan_program_tasks(r) == 1000 / analysis::kBuildEventsPerTask);
  const analysis::LlmPlanResult p = analysis::plan_llm(r);
  REQUIRE_FALSE(p.ranked.empty());
  CHECK(p.estimated == p.ranked.size());
  for (const auto& c : p.ranked) {
    // Megatron 1.2B's 40 layers make about 28 kernels each a micro-batch on each of 8 GPUs: far
    // more than 100 tasks.
    CHECK(c.estimated_only.find("the step's program would hold about") != std::string::npos);
    const std::string k = std::to_string(analysis::kBuildEventsPerTask);
    CHECK(c.estimated_only.find("over the plan's " + std::to_string(1000 / analysis::kBuildEventsPerTask) +
                                " (--max-events / " + k + ")") != std::string::npos);
  }
}

TEST_CASE("llm planner: the header says the events budget as the user set it, one event in the singular") {
  // --max-events 1 printed "over the plan's budget, 1 events a step": the count alone, in the plural,
  // without the option that set it. A budget of 1 or 2 events builds no program (one task at most).
  for (const auto& [given, words] : {std::pair<std::string, std::string>{"1", "1 event a step"},
                                     std::pair<std::string, std::string>{"2", "2 events a step"}}) {
    const analysis::LlmPlanResult p = analysis::plan_llm(analysis::make_llm_plan_request(
        {.model = "megatron-1.2b", .gpus = 8, .gpu = "a100-80gb", .global_batch = 16, .max_events = given}));
    REQUIRE(p.estimated > 0);
    std::ostringstream text;
    analysis::print_llm_plan(p, text);
    CHECK(text.str().find(
              std::to_string(p.estimated) + " estimated, not simulated (over the plan's budget of " + words +
              " (--max-events " + given + ") or --max-sim-memory, or their programs") != std::string::npos);
    CHECK(text.str().find("1 events") == std::string::npos);
  }
}

TEST_CASE("llm planner: a budget under kBuildEventsPerTask events still limits the program, to one task") {
  // The quotient 5 / 12 is 0, which read as no limit: every candidate was built (4 minutes at
  // 65,536 GPUs) before its step's own estimate refused it.
  analysis::LlmPlanRequest r = small_grid();
  r.limits = {"simulation.max_events=5"};
  r.events_budget_given = "5";
  r.events_budget_count = 5;
  CHECK(analysis::llm_plan_program_tasks(r) == 1);
  const analysis::LlmPlanResult p = analysis::plan_llm(r);
  REQUIRE_FALSE(p.ranked.empty());
  CHECK(p.estimated == p.ranked.size());
  for (const auto& c : p.ranked)
    CHECK(c.estimated_only.find("over the plan's 1 (--max-events / ") != std::string::npos);
  r.events_budget_count = 0;  // no limit
  CHECK(analysis::llm_plan_program_tasks(r) == 0);
}

TEST_CASE("llm planner: the table's columns line up whatever the layout labels' length") {
  analysis::LlmPlanRequest r = small_grid();
  r.limits = {"simulation.max_events=1000"};
  r.events_budget_given = "1000";
  r.events_budget_count = 1000;  // nothing built: the table from the closed forms, at once
  const analysis::LlmPlanResult p = analysis::plan_llm(r);
  std::ostringstream text;
  analysis::print_llm_plan(p, text, 8);
  std::istringstream in(text.str());
  std::vector<std::string> table;
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("rank ")) table.push_back(line);
    else if (!table.empty() && !line.empty()) table.push_back(line);
    else if (!table.empty()) break;
  }
  REQUIRE(p.ranked.size() >= 8);
  REQUIRE(table.size() == 9);  // the heading and 8 rows
  std::size_t longest = 0;
  for (std::size_t i = 0; i < 8; ++i)
    longest = std::max(longest, analysis::layout_label(r.dimensions, p.ranked[i].layout).size());
  CHECK(longest > 56);  // every row of the table searched: past the old fixed width
  // Every column right-aligned under its heading: "tokens/s" and "peak GiB" end where the rows'
  // numbers end, so every line is as long as the heading.
  const std::size_t tokens_end = table[0].find("tokens/s") + 8;
  for (const std::string& row : table) {
    CAPTURE(row);
    CHECK(row.size() == table[0].size());
    CHECK(row[tokens_end - 1] != ' ');
    CHECK(row[tokens_end] == ' ');
  }
}

TEST_CASE("llm planner: the shared memory budget is said as the user wrote it, beside the need in bytes") {
  // --max-sim-memory "10 MB" was said "over the plan's 0.01 GiB", "1 MB" "977 KiB" (hunt4).
  for (const std::string given : {"1 MB", "10 MB"}) {
    CAPTURE(given);
    const analysis::LlmPlanRequest r =
        analysis::make_llm_plan_request({.model = "llama3-8b", .gpus = 16, .max_sim_memory = given});
    const auto fit = analysis::llm_fitting_candidates(r, nullptr);
    REQUIRE_FALSE(fit.empty());
    const analysis::LlmCandidateCost cost = analysis::llm_plan_candidate_cost(r, fit.front().layout);
    REQUIRE(cost.memory > sim::parse_memory_cap(given));
    const std::string why = analysis::llm_candidate_refusal(r, cost);
    CHECK(why.starts_with("building and simulating it would hold about " +
                          sim::human_bytes(sim::Bytes::of(cost.memory)) + " ("));
    CHECK(why.ends_with("over the plan's " + given +
                        " (--max-sim-memory, shared by the candidates built at once)"));
  }
}

TEST_CASE("llm planner: a candidate whose program and simulation are past the shared memory budget "
          "is estimated, naming --max-sim-memory") {
  analysis::LlmPlanRequest r = small_grid();
  // The first six by the estimate tried at once (on this grid four of 3.5 MB and two of 4.9 MB by the
  // count), then more while fewer than six are simulated.
  r.simulate = 6;
  const auto fit = analysis::llm_fitting_candidates(r, nullptr);
  REQUIRE(fit.size() >= 8);
  std::vector<analysis::LlmCandidateCost> costs;
  for (std::size_t i = 0; i < 8; ++i) costs.push_back(analysis::llm_plan_candidate_cost(r, fit[i].layout));
  // The count: every kernel forward and backward of the stage's layers, m micro-batches, 8 GPUs.
  CHECK(costs[0].program_tasks > 8 * 40 * 10);
  CHECK(costs[0].memory ==
        static_cast<std::int64_t>(costs[0].program_tasks * analysis::kBytesPerProgramTask));
  const auto by_memory = [](const auto& a, const auto& b) { return a.memory < b.memory; };
  const std::int64_t least = std::min_element(costs.begin(), costs.end(), by_memory)->memory;
  REQUIRE(least < std::max_element(costs.begin(), costs.end(), by_memory)->memory);
  r.memory_budget_bytes = least;  // the least of the eight fits, the largest do not
  const analysis::LlmPlanResult p = analysis::plan_llm(r);
  std::size_t for_memory = 0, simulated = 0;
  for (const auto& c : p.ranked) {
    CAPTURE(analysis::layout_label(r.dimensions, c.layout));
    const bool fits = analysis::llm_plan_candidate_cost(r, c.layout).memory <= r.memory_budget_bytes;
    CHECK(c.simulated() == fits);
    simulated += c.simulated() ? 1 : 0;
    if (fits) continue;
    ++for_memory;
    CHECK(c.estimated_only.starts_with("building and simulating it would hold about"));
    CHECK(c.estimated_only.find("(--max-sim-memory, shared by the candidates built at once)") !=
          std::string::npos);
    CHECK(c.step_seconds() == c.estimate.step());
  }
  CHECK(for_memory > 0);
  CHECK(simulated > 0);
  const auto big = static_cast<std::size_t>(
      std::max_element(costs.begin(), costs.end(), by_memory) - costs.begin());
  const auto same = [&](const analysis::LlmPlanCandidate& c) { return c.layout == fit[big].layout; };
  // The study names its own options.
  r.names.max_sim_memory = "study --max-sim-memory";
  const analysis::LlmPlanResult q = analysis::plan_llm(r);
  CHECK(
      std::find_if(q.ranked.begin(), q.ranked.end(), same)->estimated_only.find("(study --max-sim-memory") !=
      std::string::npos);
}

TEST_CASE("llm planner: candidates within the shared memory budget are simulated, two threads sharing it") {
  analysis::LlmPlanRequest r = small_grid();
  r.simulate = 4;
  r.threads = 2;
  const auto fit = analysis::llm_fitting_candidates(r, nullptr);
  REQUIRE(fit.size() >= 4);
  std::int64_t largest = 0;
  for (std::size_t i = 0; i < 4; ++i)
    largest = std::max(largest, analysis::llm_plan_candidate_cost(r, fit[i].layout).memory);
  // Room for the largest alone: each is built and simulated, one at a time where two do not fit.
  r.memory_budget_bytes = largest;
  const analysis::LlmPlanResult p = analysis::plan_llm(r);
  CHECK(p.estimated == 0);
  CHECK(p.ranked.size() == 4);
  const analysis::LlmPlanResult unbounded = [&] {
    analysis::LlmPlanRequest u = r;
    u.memory_budget_bytes = 0;
    return analysis::plan_llm(u);
  }();
  REQUIRE(unbounded.ranked.size() == p.ranked.size());
  for (std::size_t i = 0; i < p.ranked.size(); ++i) {  // the same answers whatever waited
    CHECK(p.ranked[i].layout == unbounded.ranked[i].layout);
    CHECK(p.ranked[i].step->step_time == unbounded.ranked[i].step->step_time);
  }
}
