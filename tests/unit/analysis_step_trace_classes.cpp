// What a step trace shows and how its step was simulated (analysis/README.md, "Step traces"): by
// default a step that folds onto representative GPUs is traced as it runs untraced, one GPU per
// class, and the trace names the GPUs each stands for; every GPU on request; a window after the
// step refused.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "analysis/run/scenario_run.h"
#include "analysis/step/step_series.h"
#include "analysis/trace/step_trace.h"
#include "analysis_step_trace_check.h"
#include "scenarios/loader/resolve.h"
#include "scenarios/loader/scenario.h"
#include "sim/error.h"
#include "sim/time_window.h"
#include "tests/paths/paths.h"
#include "topology/preset_registry.h"
#include "workloads/comm/comm_plan.h"
#include "workloads/generators/profile_gen.h"

using namespace hybridsim;
using namespace step_trace_test;
namespace fs = std::filesystem;

namespace {

// Inception-V3 data-parallel over every GPU of `nodes` DGX-1. On two, GPU g of machine 0 and GPU
// g + 8 of machine 1 run the same program on the same wiring, so untraced the step folds onto
// machine 0's eight GPUs.
struct Machines {
  workloads::Profile profile = workloads::builtin_profile("inception-v3");
  topology::Topology topology;
  analysis::StepSetup setup;
  explicit Machines(int nodes) : topology(topology::build_cluster({.preset = "dgx1-v100", .nodes = nodes})) {
    setup.profile = &profile;
    setup.topology = &topology;
    setup.placement = workloads::place_all_on_first(profile, 1);
    setup.mapping = workloads::default_mapping(topology, 8 * nodes, 1);
  }
};

sim::Time sum_of(const std::vector<Slice>& slices) {
  std::int64_t ns = 0;
  for (const Slice& s : slices) ns += s.dur;
  return sim::Time::ns(ns);
}

}  // namespace

TEST_CASE("step trace: a folded step is traced as it runs untraced, one GPU per class, naming its members") {
  const Machines m(2);
  const analysis::StepResult untraced = analysis::simulate_step(m.setup);
  REQUIRE(untraced.simulation.strategy == "folded onto representative GPUs");
  TempDir dir;
  analysis::StepTraceSummary summary;
  const analysis::StepResult traced =
      analysis::simulate_step_with_trace(m.setup, dir.path / "t.json", {}, &summary);
  // The same path as untraced: the same strategy, time and events (the fold's events counted once).
  CHECK(traced.simulation.strategy == untraced.simulation.strategy);
  CHECK(traced.step_time == untraced.step_time);
  CHECK(traced.events == untraced.events);
  const Trace t = check_trace(read_whole_file(dir.path / "t.json"));
  std::map<std::int64_t, std::string> names;
  for (int g = 0; g < 8; ++g) names[g + 1] = "GPU " + std::to_string(g) + " · node 0 · for 2 GPUs";
  CHECK(t.process_names == names);  // no network process: the folded rings send no messages
  CHECK(
      t.doc["otherData"]["gpu_classes"] ==
      "GPU 0: 0,8; GPU 1: 1,9; GPU 2: 2,10; GPU 3: 3,11; GPU 4: 4,12; GPU 5: 5,13; GPU 6: 6,14; GPU 7: 7,15");
  CHECK(t.doc["otherData"]["simulation"] == "folded onto representative GPUs");
  CHECK(t.doc["otherData"]["network"].get<std::string>().starts_with("not traced"));
  const std::string critical = t.doc["otherData"]["critical_gpu"];
  CHECK(critical == "GPU " + std::to_string(traced.critical.gpu) + ", shown as GPU " +
                        std::to_string(traced.critical.gpu % 8));
  CHECK(summary.shows.starts_with("one GPU per class of alike GPUs, 8 of 16"));
  CHECK(t.doc["otherData"]["gpus_shown"] == summary.shows);
  // Each shown GPU's kernels add up to its compute, and to its class members' (the same timeline).
  for (int g = 0; g < 8; ++g) {
    CAPTURE(g);
    // Each slice rounds its ends to the ns: at most 1 ns per kernel off the run's picoseconds.
    const analysis::GpuStepMetrics& gpu = traced.per_gpu[static_cast<std::size_t>(g)];
    const sim::Time sum = sum_of(t.on(g + 1, 1));
    CHECK(sim::max(sum, gpu.compute) - sim::min(sum, gpu.compute) <= sim::Time::ns(gpu.kernels));
    CHECK(gpu.kernels > 100);
    CHECK(traced.per_gpu[static_cast<std::size_t>(g + 8)].compute ==
          traced.per_gpu[static_cast<std::size_t>(g)].compute);
  }
}

TEST_CASE("step trace: every GPU on request, a list or a detail that needs every message, said why") {
  const Machines m(2);
  const analysis::StepResult untraced = analysis::simulate_step(m.setup);
  TempDir dir;
  SUBCASE("all GPUs") {
    analysis::StepTraceSummary summary;
    const analysis::StepResult r =
        analysis::simulate_step_with_trace(m.setup, dir.path / "a.json", {.all_gpus = true}, &summary);
    CHECK(r.step_time == untraced.step_time);
    CHECK(r.simulation.strategy != "folded onto representative GPUs");
    const Trace t = check_trace(read_whole_file(dir.path / "a.json"));
    CHECK(t.process_names.size() == 17);  // 16 GPUs and the network
    CHECK(t.process_names.at(17) == "network");
    CHECK(t.process_names.at(16) == "GPU 15 · node 1");
    // And how much more than the untraced run, which folds onto one GPU per class (it said nothing;
    // then only in GPUs): the estimate's events of both ways, each within its factor of 2 of what its
    // run simulates (18,808 and 37,456 events), and their ratio the runs' within 5%.
    CHECK(summary.shows ==
          "every GPU (--trace-gpus all), each simulated in full; the untraced run simulates 8 of these 16 "
          "GPUs, where its fold holds (by its estimate about 25128 events, against about 50096 in full)");
    CHECK(untraced.events * 2 > 25128);
    CHECK(r.events * 2 > 50096);
    CHECK(untraced.events < 25128);
    CHECK(r.events < 50096);
    const double runs = static_cast<double>(r.events) / static_cast<double>(untraced.events);
    CHECK(runs == doctest::Approx(50096.0 / 25128.0).epsilon(0.05));
    CHECK(t.doc["otherData"]["gpus_shown"] == summary.shows);
  }
  SUBCASE("a list of GPUs") {
    analysis::StepTraceSummary summary;
    analysis::simulate_step_with_trace(m.setup, dir.path / "l.json", {.gpus = std::vector<int>{0, 9}},
                                       &summary);
    CHECK(summary.shows.starts_with("GPUs 0,9, with every GPU simulated in full"));
    CHECK(
        summary.shows.ends_with("; the untraced run simulates 8 of these 16 GPUs, where its fold holds (by "
                                "its estimate about 25128 events, against about 50096 in full)"));
  }
  SUBCASE("detail steps") {
    analysis::StepTraceSummary summary;
    analysis::simulate_step_with_trace(m.setup, dir.path / "s.json", {.detail = analysis::TraceDetail::Steps},
                                       &summary);
    CHECK(summary.shows ==
          "every GPU, simulated in full (detail steps records every ring message, which a folded step "
          "does not send); the untraced run simulates 8 of these 16 GPUs, where its fold holds (by its "
          "estimate about 25128 events, against about 50096 in full)");
  }
}

TEST_CASE("step trace: with no GPUs alike, a step whose collectives fold untraced says so") {
  // Llama 3 8B at tp 8 on one DGX H100 (two layers): no two GPUs are alike in program and machine, so
  // untraced every GPU is simulated too, but the tensor-parallel collectives fold onto representative
  // ranks, bounded; the trace records every message, so it runs them in full. It said "the untraced
  // run simulates every GPU too" alone, where the figures differed by picoseconds and the critical
  // GPU by a tie (review7: 426,930.733 us and GPU 0 against 426,930.723 us and GPU 5).
  const std::vector<std::string> sets = {"workload.model.layers_simulated=2"};
  const scenarios::ResolvedScenario resolved = scenarios::resolve(
      scenarios::load_scenario(HYBRIDSIM_SOURCE_DIR + "/scenarios/llm/llama3-8b-dgx-h100-tp8.yaml", sets));
  const analysis::StepSetup setup = analysis::step_setup(resolved);  // points into `resolved`
  const analysis::StepResult untraced = analysis::simulate_step(setup);
  REQUIRE(untraced.simulation.strategy == "every GPU simulated");
  REQUIRE(untraced.simulation.folded > 0);
  TempDir dir;
  analysis::StepTraceSummary summary;
  const analysis::StepResult traced =
      analysis::simulate_step_with_trace(setup, dir.path / "t.json", {}, &summary);
  CHECK(traced.simulation.folded == 0);
  CHECK(traced.events > untraced.events);
  // Folded, a collective's ranks finish no earlier than in full (sim/README.md, "Folding"): the
  // untraced step is as late or later, within the bound it states. Each tensor-parallel all-reduce
  // waits on the compute after the last, so their bounds add up: the largest collective's own (348
  // ps), stated before, was passed (880 ps late).
  MESSAGE("untraced " << untraced.step_time.ps() << " ps, traced " << traced.step_time.ps()
                      << " ps, stated bound " << untraced.simulation.bound.ps() << " ps");
  CHECK(untraced.step_time >= traced.step_time);
  CHECK(untraced.step_time - traced.step_time <= untraced.simulation.bound);
  CHECK(untraced.simulation.bound < sim::Time::ns(100));
  CHECK(summary.shows.starts_with(
      "every GPU (no GPUs alike in program and machine: the untraced run simulates every GPU too, but folds "
      "the collectives that fold, which this trace runs in full to record their messages (by its estimate "
      "about "));
  CHECK(summary.shows.ends_with(
      "in full): where that fold is bounded its figures may be later than these (by at most the bound it "
      "states) and its critical GPU another of a tie)"));
}

TEST_CASE("step trace: a window that starts after the step is refused and leaves no file") {
  const Machines m(2);
  TempDir dir;
  analysis::StepTraceOptions o;
  o.window = sim::parse_time_window("10 s:");
  for (const bool all : {false, true}) {
    o.all_gpus = all;
    CHECK_THROWS_WITH_AS(analysis::simulate_step_with_trace(m.setup, dir.path / "w.json", o),
                         doctest::Contains("starts after the step, which ends at"), InputError);
    CHECK(dir.entries().empty());
  }
}

TEST_CASE("step trace: a run of several steps traces the first, a numbered or the slowest step") {
  // Inception-V3 dp 8 on one DGX-1, 5% kernel jitter, 3 steps: each step draws its own noise.
  Machines m(1);
  analysis::StepSetup& setup = m.setup;
  setup.variability.steps = 3;
  setup.variability.kernel_jitter = 0.05;
  std::vector<sim::Time> times;  // each step alone
  for (int i = 0; i < 3; ++i) {
    analysis::StepSetup one = setup;
    one.step_index = i;
    times.push_back(analysis::simulate_step(one).step_time);
  }
  const int slowest = static_cast<int>(std::max_element(times.begin(), times.end()) - times.begin());
  REQUIRE(times[0] != times[1]);  // the jitter makes the steps differ
  const analysis::StepResult untraced = analysis::simulate_steps(setup);
  TempDir dir;
  for (const int step : {analysis::kSlowestStep, 2}) {
    CAPTURE(step);
    analysis::StepTraceSummary summary;
    const analysis::StepResult r =
        analysis::simulate_steps_with_trace(setup, dir.path / "t.json", {.step = step}, &summary);
    CHECK(r.step_time == untraced.step_time);  // the mean of the three, as untraced
    CHECK(r.spread.max == untraced.spread.max);
    const Trace t = check_trace(read_whole_file(dir.path / "t.json"));
    const int shown = step == analysis::kSlowestStep ? slowest : 1;
    CHECK(t.doc["otherData"]["step_time"] == sim::format_time(times[static_cast<std::size_t>(shown)]));
    const std::string which = "step " + std::to_string(shown + 1) + " of 3" +
                              (step == analysis::kSlowestStep ? " (the slowest)" : "") +
                              "; the run's figures are the mean of all 3";
    CHECK(t.doc["otherData"]["traced_step"] == which);
    CHECK(summary.shows.starts_with(which + "; "));
  }
  CHECK_THROWS_WITH_AS(
      analysis::simulate_steps_with_trace(setup, dir.path / "u.json", {.step = 4}),
      "trace step 4: the run has 3 steps (variability.steps); expected first, slowest or 1 to 3", InputError);
  CHECK_FALSE(fs::exists(dir.path / "u.json"));
  CHECK(analysis::parse_trace_step("first") == 1);
  CHECK(analysis::parse_trace_step("slowest") == analysis::kSlowestStep);
  CHECK(analysis::parse_trace_step("12") == 12);
  for (const char* bad : {"0", "-1", "last", "2x", ""})
    CHECK_THROWS_AS(analysis::parse_trace_step(bad), InputError);
}

TEST_CASE("step trace: a step that does not fold shows one GPU per class and its critical GPU") {
  // Inception-V3 dp 32 on four DGX-1 with the hierarchical all-reduce: alike GPUs, but the step does
  // not fold (its inter-machine collective is not a ring of the classes). Every GPU is simulated as
  // untraced; the trace keeps GPU g of machine 0 for GPUs g, g + 8, g + 16, g + 24, and the
  // critical GPU of the untraced run in full.
  Machines m(4);
  m.setup.comm.algorithm = workloads::AllReduceAlgorithm::Hierarchical;
  const analysis::StepResult untraced = analysis::simulate_step(m.setup);
  REQUIRE(untraced.simulation.strategy != "folded onto representative GPUs");
  TempDir dir;
  analysis::StepTraceSummary summary;
  const analysis::StepResult r =
      analysis::simulate_step_with_trace(m.setup, dir.path / "t.json", {}, &summary);
  CHECK(r.step_time == untraced.step_time);
  CHECK(r.simulation.strategy == untraced.simulation.strategy);
  const Trace t = check_trace(read_whole_file(dir.path / "t.json"));
  const int critical = untraced.critical.gpu;
  REQUIRE(critical >= 0);
  for (int g = 0; g < 8; ++g)
    CHECK(t.process_names.at(g + 1) == "GPU " + std::to_string(g) + " · node 0 · for 4 GPUs");
  CHECK(t.process_names.size() == (critical < 8 ? 8u : 9u));
  if (critical >= 8)
    CHECK(t.process_names.at(critical + 1) == "GPU " + std::to_string(critical) + " · node " +
                                                  std::to_string(critical / 8));
  CHECK(t.doc["otherData"]["critical_gpu"] ==
        "GPU " + std::to_string(critical) + ", shown as GPU " + std::to_string(critical));
  CHECK(
      t.doc["otherData"]["gpu_classes"].get<std::string>().starts_with("GPU 0: 0,8,16,24; GPU 1: 1,9,17,25"));
  CHECK(summary.shows.starts_with("one GPU per class of alike GPUs, " +
                                  std::to_string(t.process_names.size()) +
                                  " of 32 with the critical GPU (every GPU simulated, as untraced, not "
                                  "folded onto representative GPUs: "));
  // Nor are its collectives said to fold: this step runs them in full, untraced or traced ("as untraced:
  // folded onto representative GPUs" and "its collectives fold as untraced, without messages").
  REQUIRE(untraced.simulation.strategy == "every GPU and collective simulated in full");
  CHECK(t.doc["otherData"]["simulation"] == untraced.simulation.strategy);
  CHECK(t.doc["otherData"]["network"].get<std::string>().starts_with(
      "not traced: its collectives run as untraced, their messages not recorded ("));
}
