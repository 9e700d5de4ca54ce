#include "analysis/step/collective_ranks.h"

#include <span>

namespace hybridsim::analysis {

std::vector<std::vector<sim::ExecutionRecord::TaskRef>> collective_ranks(
    const workloads::StepProgram& program, const std::vector<std::uint32_t>& representative) {
  std::vector<std::vector<sim::ExecutionRecord::TaskRef>> ranks(program.collectives.size());
  std::uint32_t s = 0;
  for (std::uint32_t g = 0; g < program.gpus.size(); ++g)
    for (const sim::StreamProgram& sp : program.gpus[g].streams) {
      const bool member = !representative.empty() && representative[g] != g;
      // Read as stored, only collectives shifted: through operator[] every task of every stream
      // was copied out with its shifts.
      const std::span<const sim::Task> stored = member ? std::span<const sim::Task>() : sp.tasks.stored();
      for (std::uint32_t i = 0; i < stored.size(); ++i) {
        if (stored[i].kind != sim::TaskKind::Collective) continue;
        const sim::Task t = sp.tasks.shifted(stored[i]);
        auto& r = ranks.at(t.id);
        if (r.size() <= t.rank) r.resize(t.rank + 1, {kRankNotRun, 0});
        r[t.rank] = {s, i};
      }
      ++s;
    }
  return ranks;
}

}  // namespace hybridsim::analysis
