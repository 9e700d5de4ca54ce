// The memory cap (simulation.max_memory, --max-sim-memory) bounds the steps a study or plan runs at
// once on its threads together, not each alone (issue 31): `plan -m gnmt --gpus 16384` estimated and
// simulated two candidates at once on 2 threads, each within the 4 GiB default, and reached 5.2 GB.
// StepCache holds each step's estimated state against the least cap while it is simulated, so that
// two whose estimates together pass it run one after the other; the most it held at once is read
// back (StepCache::most_memory_held), not the process's memory.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "analysis/run/scenario_run.h"
#include "analysis/step/memory_gate.h"
#include "analysis/step/step_estimate.h"
#include "analysis/step/step_progress.h"
#include "analysis/step/step_runner.h"
#include "analysis/study/study_steps.h"
#include "scenarios/loader/resolve.h"
#include "scenarios/loader/scenario.h"
#include "tests/paths/paths.h"
#include "workloads/generators/profile_gen.h"

using namespace hybridsim;

namespace {

// GNMT on `gpus` GPUs of DGX-1 machines, dp × mp, under `cap` (a simulation.max_memory text).
analysis::StepRequest request(int gpus, int mp, const std::string& cap,
                              const std::string& placement = "stacks") {
  analysis::StepRequest r{"gnmt", analysis::cluster_overlay({}, gpus, topology::presets::kEdrBandwidth)};
  for (auto o : analysis::workload_overlay("gnmt", "", {})) r.overlay.push_back(o);
  for (auto o : analysis::parallelism_overlay(gpus / mp, mp, mp == 1 ? "auto" : placement))
    r.overlay.push_back(o);
  r.overlay.push_back("simulation.max_memory=" + cap);
  return r;
}

// The state its run is estimated to hold (what its run checks against the cap alone).
std::int64_t estimated_memory(const analysis::StepRequest& r) {
  const scenarios::Scenario s = scenarios::parse_scenario("", "overlay", r.overlay);
  return analysis::estimate_step(analysis::step_setup(scenarios::resolve(s))).memory();
}

struct Ran {
  std::int64_t most_held = 0;
  std::vector<double> step_ms;  // by request; -1 where it failed
};

Ran run(const std::vector<analysis::StepRequest>& requests, int threads) {
  const workloads::Profile profile = workloads::builtin_profile("gnmt");
  analysis::StepCache cache;
  const auto refs = cache.simulate(requests, {.profiles = {{"gnmt", &profile}}},
                                   {.threads = threads, .on_progress = {}, .keep_going = true});
  Ran out{cache.most_memory_held(), {}};
  for (const auto& ref : refs)
    out.step_ms.push_back(cache.failure(ref.id) ? -1.0 : cache.at(ref.id).step_time.to_ms());
  return out;
}

}  // namespace

TEST_CASE("shared memory cap: steps whose estimates together pass the cap run one after the other") {
  const std::vector<std::pair<int, int>> shapes = {{16, 1}, {16, 2}, {8, 1}, {8, 2}};
  std::vector<std::int64_t> sizes;
  for (const auto& [gpus, mp] : shapes) sizes.push_back(estimated_memory(request(gpus, mp, "unlimited")));
  std::vector<std::int64_t> sorted = sizes;
  std::sort(sorted.rbegin(), sorted.rend());
  // A cap every step passes alone, that no two of the largest pass together.
  const std::int64_t cap = sorted[0] + (sorted[1] - 1) / 2;
  REQUIRE(cap < sorted[0] + sorted[1]);
  INFO("estimates " << sizes[0] << " " << sizes[1] << " " << sizes[2] << " " << sizes[3] << ", cap " << cap);
  std::vector<analysis::StepRequest> capped, free;
  for (const auto& [gpus, mp] : shapes) {
    capped.push_back(request(gpus, mp, std::to_string(cap) + " B"));
    free.push_back(request(gpus, mp, "unlimited"));
  }
  const Ran under_cap = run(capped, 2);
  // Each step's state was held (on main nothing was: 0), and never two whose sum passes the cap.
  CHECK(under_cap.most_held >= sorted[0]);
  CHECK(under_cap.most_held <= cap);
  // None refused, and the same steps as without a cap: the order of the work changes, not its answers.
  const Ran uncapped = run(free, 2);
  CHECK(under_cap.step_ms == uncapped.step_ms);
  CHECK(std::none_of(under_cap.step_ms.begin(), under_cap.step_ms.end(), [](double ms) { return ms < 0; }));
}

TEST_CASE(
    "shared memory cap: an estimate's later set-ups hold their counts on the shared budget while built") {
  // GNMT dp 8 x mp 8 layers on 8 DGX-1: its fold is given up, its every-GPU try too (two folded rings of
  // other GPUs share a link), and every collective is set up in full, counted before at 8,427,956 B
  // (analysis_step_footprint_test.cpp); the every-GPU set-up at 9,473,604 B, the step bound's walk over
  // its record among them (step_bound_bytes, counted since tidy10; its folds may be bounded, the full
  // way's not). 8,592,916 and 9,638,564 B before an event's state 12 bytes, not 32, since evstate
  // (sim/stream_executor.h): 8,248 events × 20 B fewer. Estimated beside other steps, each of those set-ups
  // holds its count on their shared budget while it is built (one at a time: the most held is the larger
  // count).
  const std::vector<std::string> sets = {"sweep=null", "cluster.nodes=8",
                                         "parallelism={dp: 8, mp: 8, placement: layers}"};
  const scenarios::ResolvedScenario resolved = scenarios::resolve(
      scenarios::load_scenario(HYBRIDSIM_SOURCE_DIR + "/scenarios/cluster-hybrid-vs-dp.yaml", sets));
  analysis::MemoryGate gate(0);
  const analysis::StepEstimate e = analysis::estimate_step(analysis::step_setup(resolved), nullptr, &gate);
  CHECK(e.way == "every GPU and collective simulated in full");
  CHECK(gate.most_held() == 9'473'604);
  CHECK(gate.held() == 0);
  // Estimated alone (no budget shared), nothing is held anywhere and the figures are the same.
  CHECK(analysis::estimate_step(analysis::step_setup(resolved)).memory() == e.memory());
}

// What the estimate of `r` holds at most on a shared budget of its own while its later set-ups are
// built, the way it counts and its events.
struct SetUpHeld {
  std::int64_t most = 0;
  std::string way;
  std::uint64_t events = 0;
};
SetUpHeld set_up_held(const analysis::StepRequest& r) {
  const scenarios::Scenario s = scenarios::parse_scenario("", "overlay", r.overlay);
  analysis::MemoryGate gate(0);
  const analysis::StepEstimate e =
      analysis::estimate_step(analysis::step_setup(scenarios::resolve(s)), nullptr, &gate);
  return {gate.most_held(), std::string(e.way), e.events()};
}

TEST_CASE("shared memory cap: a step its caller reserved for holds its later set-ups' counts while built") {
  // The planner reserves each transformer candidate's memory from its program's tasks
  // (StepRunOptions::memory, analysis/plan/llm_candidate_cost.h) and its estimate held that alone: two
  // Llama 3 8B candidates on 64 H100 reserved 180 MB each and built every-GPU set-ups of about 0.5 GB
  // (counted at 0.82 GB) at once, whatever --max-sim-memory said (tests/bench/MEASUREMENTS.md,
  // planmem). GNMT dp 8 x mp 8 layers on 8 DGX-1 gives its fold up and builds its every-GPU set-up
  // (counted by the fold) before every collective in full; under an events cap one short of that
  // way's it is refused after the every-GPU set-up, not run (as those Llama candidates were).
  // Reserved 1 MB, its hold grows to that count while it is built; on main it stayed at 1 MB.
  analysis::StepRequest r = request(64, 8, "unlimited", "layers");
  const SetUpHeld alone = set_up_held(r);
  REQUIRE(alone.way == "every GPU and collective simulated in full");
  const std::int64_t reserved = 1'000'000;
  REQUIRE(alone.most > 2 * reserved);
  r.overlay.push_back("simulation.max_events=" + std::to_string(alone.events - 1));
  const workloads::Profile profile = workloads::builtin_profile("gnmt");
  analysis::StepCache cache;
  analysis::StepRunOptions options{.threads = 1, .on_progress = {}, .keep_going = true};
  options.memory = {reserved};
  options.memory_budget = std::int64_t{1} << 30;
  const auto refs = cache.simulate({r}, {.profiles = {{"gnmt", &profile}}}, options);
  REQUIRE(cache.failure(refs[0].id) != nullptr);
  CHECK(cache.failure(refs[0].id)->over_budget.has_value());
  CHECK(cache.most_memory_held() == alone.most);
}

TEST_CASE("shared memory cap: a reserved step's grown hold waits while it does not fit beside another's") {
  // The reservation rule between two steps estimated at once: the step above, its caller holding 1 MB
  // for it, grows its hold to its every-GPU count before that set-up is built. Beside another hold
  // that leaves less than that count of the budget, it waits (queued on the gate) until the other is
  // let go; beside one that leaves enough, it runs at once.
  const analysis::StepRequest r = request(64, 8, "unlimited", "layers");
  const std::int64_t counted = set_up_held(r).most;
  const scenarios::Scenario s = scenarios::parse_scenario("", "overlay", r.overlay);
  const scenarios::ResolvedScenario resolved = scenarios::resolve(s);  // the set-up points into it
  const analysis::StepSetup setup = analysis::step_setup(resolved);
  const std::int64_t budget = 2 * counted;
  const auto estimate_beside = [&](std::int64_t other) {
    analysis::MemoryGate gate(budget);
    std::optional<analysis::MemoryGate::Hold> beside;
    beside.emplace(&gate, other);
    std::atomic<bool> done{false};
    std::int64_t most = 0;
    std::thread estimating([&] {
      analysis::MemoryGate::Hold hold(&gate, 1'000'000);
      analysis::estimate_step(setup, nullptr, &gate, &hold);
      most = gate.most_held();
      done = true;
    });
    // Either it finishes beside the other hold, or it queues for it to be let go.
    while (!done && gate.waiting() == 0) std::this_thread::yield();
    const bool waited = !done;
    beside.reset();
    estimating.join();
    CHECK(gate.held() == 0);
    return std::make_pair(waited, most);
  };
  const auto [waited, most] = estimate_beside(budget - counted + 1);  // one byte too many
  CHECK(waited);
  CHECK(most <= budget);
  const auto [ran_at_once, together] = estimate_beside(budget - counted);  // fits exactly
  CHECK_FALSE(ran_at_once);
  CHECK(together == budget);
}

TEST_CASE(
    "shared memory cap: a set-up that no try counted before it is built holds the whole shared budget") {
  // GNMT dp 64 on 8 DGX-1 with hierarchical all-reduces: its fold is refused while its
  // collectives are made ("a collective they share is not a ring"), before any count of the every-GPU
  // way, whose set-up is then built uncounted. It holds the whole budget while it is built, so that it
  // runs when nothing else is held; before, it held nothing, and GNMT dp 4,096 x mp 4 hierarchical on
  // 16,384 GPUs built its 2.15 GB beside another candidate's 2.1 GB (tests/bench/MEASUREMENTS.md,
  // plan16k3).
  const std::vector<std::string> sets = {"sweep=null", "cluster.nodes=8", "parallelism={dp: 64}",
                                         "communication.algorithm=hierarchical"};
  const scenarios::ResolvedScenario resolved = scenarios::resolve(
      scenarios::load_scenario(HYBRIDSIM_SOURCE_DIR + "/scenarios/cluster-hybrid-vs-dp.yaml", sets));
  const std::int64_t budget = std::int64_t{1} << 30;
  analysis::MemoryGate gate(budget);
  const analysis::StepEstimate e = analysis::estimate_step(analysis::step_setup(resolved), nullptr, &gate);
  // Its every-GPU try is then foreseen crossed (the inter-machine rings of GPUs 0 and 1 through one
  // NIC, CrossingForecast) and counted as the run ends, every collective in full, held as that try
  // counted it.
  CHECK(e.way == "every GPU and collective simulated in full");
  CHECK(gate.most_held() == budget);  // 0 on main e1c62a4
  CHECK(gate.held() == 0);
  // The same estimate as alone.
  CHECK(analysis::estimate_step(analysis::step_setup(resolved)).memory() == e.memory());
}

TEST_CASE(
    "shared memory cap: a run's later ways hold their counts on the shared budget before they are built") {
  // GNMT dp 8 x mp 8 layers on 8 DGX-1, as above: its run tries the fold, then every GPU, then every
  // collective in full, whose set-ups pass what a folded step's estimate would have held. Two such runs
  // on two threads, each holding nothing for its estimate, under a budget one in-full set-up passes
  // alone and two do not: each set-up is held before it is built (on main nothing was: 0), and never
  // two at once.
  const std::vector<std::string> sets = {"sweep=null", "cluster.nodes=8",
                                         "parallelism={dp: 8, mp: 8, placement: layers}"};
  const scenarios::ResolvedScenario resolved = scenarios::resolve(
      scenarios::load_scenario(HYBRIDSIM_SOURCE_DIR + "/scenarios/cluster-hybrid-vs-dp.yaml", sets));
  const analysis::StepSetup setup = analysis::step_setup(resolved);
  const std::int64_t in_full = analysis::estimate_step(setup).memory();
  REQUIRE(in_full == 8'427'956);  // 8,592,916 with 32-byte event states
  const std::int64_t budget = in_full + in_full / 2;
  analysis::MemoryGate gate(budget);
  std::vector<analysis::StepResult> results(2);
  std::vector<std::thread> threads;
  for (analysis::StepResult& result : results)
    threads.emplace_back([&] {
      analysis::MemoryGate::Hold hold(&gate, 0);
      result = analysis::simulate_step(setup, {.shared = &hold});
    });
  for (std::thread& t : threads) t.join();
  for (const analysis::StepResult& r : results)
    CHECK(r.simulation.strategy == "every GPU and collective simulated in full");
  CHECK(gate.most_held() >= in_full);
  CHECK(gate.most_held() <= budget);
  CHECK(gate.held() == 0);
  // The same step as run alone, with no budget shared.
  const analysis::StepResult alone = analysis::simulate_step(setup);
  CHECK(results[0].step_time == alone.step_time);
  CHECK(results[1].events == alone.events);
}

namespace {

// Samples the shared budget's hold as each of the ladder's ways starts its set-up (its first line; a
// line is due at every tick here), by the way's name.
struct HeldAtSetUp : analysis::SimulationProgress {
  explicit HeldAtSetUp(const analysis::MemoryGate& gate)
      : SimulationProgress(std::chrono::seconds(0), std::chrono::seconds(0)), gate(gate) {}
  void report(const analysis::SimulationProgressReport& r) override {
    for (const char* way : {"every GPU simulated", "every GPU and collective simulated in full"})
      if (r.what.ends_with(way) && !held.contains(way)) held[way] = gate.held();
  }
  const analysis::MemoryGate& gate;
  std::map<std::string, std::int64_t> held;
};

}  // namespace

TEST_CASE(
    "shared memory cap: the in-full way is held before it is built where no folded try counted "
    "every GPU") {
  // BigLSTM dp 16 x mp 4 on 8 DGX-1, trees under auto: no fold is tried (the estimate counts every GPU),
  // so the every-GPU way grows nothing (no folded try counted it: its count is the step's estimate, which
  // a study's or plan's run holds, run_todo); its run is crossed and the step goes to every collective
  // in full, which the every-GPU try counted (4,884,976 B; 4,940,016 before an event's state 12 bytes, not
  // 32, since evstate (sim/stream_executor.h): 2,752 events × 20 B fewer) and holds before its set-up,
  // whichever way came before. Holding nothing for its estimate here, the hold as that set-up starts is its
  // count.
  const std::vector<std::string> sets = {"sweep=null", "workload.network=biglstm",
                                         "parallelism={dp: 16, mp: 4}", "communication.fast_path=auto",
                                         "communication.algorithm=tree"};
  const scenarios::ResolvedScenario resolved = scenarios::resolve(
      scenarios::load_scenario(HYBRIDSIM_SOURCE_DIR + "/scenarios/cluster-hybrid-vs-dp.yaml", sets));
  const analysis::StepSetup setup = analysis::step_setup(resolved);
  const analysis::StepEstimate estimate = analysis::estimate_step(setup);
  CHECK(estimate.way == "every GPU simulated");
  CHECK(estimate.memory() == 4'884'976);
  analysis::MemoryGate gate(estimate.memory() * 3 / 2);
  HeldAtSetUp seen(gate);
  analysis::StepResult r;
  {
    analysis::MemoryGate::Hold hold(&gate, 0);
    r = analysis::simulate_step(setup, {.progress = &seen, .shared = &hold});
  }
  CHECK(r.simulation.strategy == "every GPU and collective simulated in full");
  CHECK(seen.held["every GPU simulated"] == 0);  // the step's estimate: its caller's to hold
  CHECK(seen.held["every GPU and collective simulated in full"] == 4'884'976);  // 0 without the growth
  CHECK(gate.held() == 0);
  const analysis::StepResult alone = analysis::simulate_step(setup);
  CHECK(r.step_time == alone.step_time);
  CHECK(r.events == alone.events);
}
