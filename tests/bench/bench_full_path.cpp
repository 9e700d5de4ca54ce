// The full (unfolded) path against the event core, in one run (issue 30 item 4): GNMT data parallel
// on 1,024 V100 (128 DGX-1, EDR fat tree), NCCL's algorithm choice (`auto`), two steps with 5%
// kernel jitter, so no GPU repeats another and every message is simulated; and the event queue's
// hold model at N = 10^5 (bench_event_queue's `BM_Hold/100000`). Target: the step's end-to-end
// events/s (events over the wall time of `simulate_steps`, planning included) at least half the
// hold rate. The same case from the command line:
//   hybridsim run scenarios/examples/dgx1-gnmt-dp8.yaml --set cluster.nodes=128
//     --set parallelism.dp=1024 --set communication.algorithm=auto
//     --set variability="{steps: 2, kernel_jitter: 0.05}"      (one line)
//   ./bench_full_path --benchmark_repetitions=3
#include <benchmark/benchmark.h>

#include <string>

#include "analysis/step/step_series.h"
#include "tests/bench/hold_model.h"
#include "topology/preset_registry.h"
#include "workloads/generators/profile_gen.h"

using namespace hybridsim;

namespace {

void BM_CoreHold(benchmark::State& state) { bench::hold(state, bench::make_delays()); }
BENCHMARK(BM_CoreHold)->Arg(100'000);
// The same for a fixed number of steps, for instructions an event under valgrind: the two runs
// differ by 2,000,000 steps (set-up and warm-up are the same), e.g.
//   valgrind --tool=callgrind ./bench_full_path --benchmark_filter='Hold/100000/iterations:1$'
BENCHMARK(BM_CoreHold)->Arg(100'000)->Iterations(1);
BENCHMARK(BM_CoreHold)->Arg(100'000)->Iterations(2'000'001);

void BM_JitteredStep(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  const workloads::Profile profile = workloads::builtin_profile("gnmt");
  const topology::Topology t = topology::build_cluster({.preset = "dgx1-v100", .nodes = nodes});
  analysis::StepResult r;
  for (auto _ : state) {
    analysis::StepSetup s;
    s.profile = &profile;
    s.topology = &t;
    s.placement = workloads::partition(profile, 1, workloads::default_partitioner(profile));
    s.mapping = workloads::default_mapping(t, nodes * 8, 1);
    s.variability = {.steps = 2, .kernel_jitter = 0.05};
    r = analysis::simulate_steps(s);
  }
  std::string how = r.simulation.strategy;
  for (const std::string& refused : r.simulation.refused) how += "; " + refused;
  state.SetLabel(how);
  state.counters["gpus"] = nodes * 8;
  state.counters["step_ms"] = r.step_time.to_ms();
  state.counters["events"] = static_cast<double>(r.events);
  state.counters["gpus_simulated"] = static_cast<double>(r.simulation.gpus_simulated);
  state.counters["events_per_second"] = benchmark::Counter(
      static_cast<double>(r.events) * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_JitteredStep)->Arg(16)->Arg(128)->Unit(benchmark::kSecond)->Iterations(1);

}  // namespace
