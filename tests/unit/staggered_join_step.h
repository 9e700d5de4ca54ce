// Test helper: a step whose one large collective is not "every join first" (analysis/step/
// step_bound.h): each GPU's rank ends before the next GPU's joins, so that the step bound's walk
// takes each rank's end with the ranks joined by then. For the walk's unit test at 2,048 ranks
// (analysis_step_lateness_test.cpp) and its benchmark (tests/bench/bench_step_bound.cpp).
//   StaggeredJoinStep s(2048);  step_bound(s.program, s.record, s.own, {}) == s.expected();
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "analysis/step/step_bound.h"
#include "sim/execution_record.h"
#include "workloads/program/step_program.h"

namespace hybridsim::testing {

// GPU g, one stream: [collective g + 1 (its rank alone, bounded by own(g)), collective 0 (rank g),
// kernel]. Collective g + 1 ends at 10 g + 10 ps, rank g of collective 0 (bounded by 1,000 ps) joins
// then and ends 5 ps later, before rank g + 1 joins; the kernel ends at 10 g + 20 ps.
struct StaggeredJoinStep {
  static constexpr std::int64_t kLargeBound = 1000;
  workloads::StepProgram program;
  sim::ExecutionRecord record;
  analysis::OwnBounds own;  // by collective

  // Collective g + 1's own bound: 1 to 997 ps, in no order along the GPUs.
  static std::int64_t own_of(std::uint32_t g) { return static_cast<std::int64_t>(g) * 7919 % 997 + 1; }

  explicit StaggeredJoinStep(std::uint32_t gpus)
      : record(std::vector<std::uint32_t>(gpus, 3), [&] {
          std::vector<std::uint32_t> g(gpus);
          for (std::uint32_t i = 0; i < gpus; ++i) g[i] = i;
          return g;
        }()) {
    using sim::Task;
    using sim::Time;
    program.collectives.resize(gpus + 1);
    own.emplace_back(0, Time::ps(kLargeBound));
    for (std::uint32_t g = 0; g < gpus; ++g) {
      program.gpus.emplace_back().streams.push_back(
          {"compute", {Task::collective(g + 1, 0), Task::collective(0, g), Task::kernel(Time::ps(5), 0)}});
      const std::int64_t at = 10 * static_cast<std::int64_t>(g) + 10;
      record.set_ended(g, 0, Time::ps(at));
      record.set_ended(g, 1, Time::ps(at + 5));
      record.set_ended(g, 2, Time::ps(at + 10));
      own.emplace_back(g + 1, Time::ps(own_of(g)));
      program.collectives[0].members.push_back(static_cast<int>(g));
      program.collectives[g + 1].members = {static_cast<int>(g)};
    }
  }

  // Rank g's end carries the most its ranks joined by then were late by, the largest own(j), j <= g,
  // plus collective 0's own; the kernel after it as much. The step: the largest of those, the last
  // GPU's. (Had the walk stalled, every bound added up: about half a million ps at 1,024 GPUs.)
  sim::Time expected() const {
    std::int64_t most = 0;
    for (std::uint32_t g = 0; g + 1 < own.size(); ++g) most = std::max(most, own_of(g));
    return sim::Time::ps(most + kLargeBound);
  }
};

}  // namespace hybridsim::testing
