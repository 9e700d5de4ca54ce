// The step bound's walk (analysis/step/step_bound.h) over a collective that is not "every join
// first", of 256 to 4,096 ranks (tests/unit/staggered_join_step.h: each rank ends before the next
// joins): how its time grows with the collective's ranks.
//   build/tests/bench_step_bound --benchmark_filter=BM_StepBoundStaggered
#include <benchmark/benchmark.h>

#include "analysis/step/step_bound.h"
#include "tests/unit/staggered_join_step.h"

using namespace hybridsim;

namespace {

void BM_StepBoundStaggered(benchmark::State& state) {
  const testing::StaggeredJoinStep s(static_cast<std::uint32_t>(state.range(0)));
  sim::Time bound;
  for (auto _ : state) {
    bound = analysis::step_bound(s.program, s.record, s.own, {});
    benchmark::DoNotOptimize(bound);
  }
  if (bound != s.expected()) state.SkipWithError("the walk's bound is not the hand-derived one");
  state.counters["ranks"] = static_cast<double>(state.range(0));
  state.counters["bound_ps"] = static_cast<double>(bound.ps());
}
BENCHMARK(BM_StepBoundStaggered)->Arg(256)->Arg(1024)->Arg(4096)->Unit(benchmark::kMillisecond);

}  // namespace
