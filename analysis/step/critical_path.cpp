#include "analysis/step/critical_path.h"

#include <set>

#include "sim/error.h"

namespace hybridsim::analysis {

namespace {
constexpr std::int64_t kNotRun = -1;
}

CriticalPathCollector::CriticalPathCollector(const workloads::StepProgram& program) : program_(program) {
  collective_ranks_.resize(program.collectives.size());
  for (std::uint32_t g = 0; g < program.gpus.size(); ++g) {
    first_stream_.push_back(static_cast<std::uint32_t>(streams_.size()));
    for (const sim::StreamProgram& sp : program.gpus[g].streams) {
      const auto s = static_cast<std::uint32_t>(streams_.size());
      streams_.push_back(&sp);
      gpu_of_stream_.push_back(g);
      end_.emplace_back(sp.tasks.size(), kNotRun);
      for (std::uint32_t i = 0; i < sp.tasks.size(); ++i) {
        const sim::Task& t = sp.tasks[i];
        if (t.kind != sim::TaskKind::Collective) continue;
        auto& ranks = collective_ranks_.at(t.id);
        if (ranks.size() <= t.rank) ranks.resize(t.rank + 1);
        ranks[t.rank] = {s, i};
      }
    }
  }
}

void CriticalPathCollector::on_kernel(std::uint32_t gpu, std::uint32_t stream, std::uint32_t task,
                                      sim::Time, sim::Time end) {
  end_[first_stream_[gpu] + stream][task] = end.ps();
}

void CriticalPathCollector::on_collective(std::uint32_t gpu, std::uint32_t stream, std::uint32_t task,
                                          sim::Time, sim::Time end) {
  end_[first_stream_[gpu] + stream][task] = end.ps();
}

CriticalPath CriticalPathCollector::finish(sim::Time step_time) const {
  // Forward: when each stream reached each task, replaying the executor's rules over the observed
  // end times (kernels and collectives start when their stream reaches them).
  const std::size_t n = streams_.size();
  std::vector<std::vector<std::int64_t>> reach(n);
  std::vector<std::vector<bool>> released_by_record(n);
  std::vector<std::uint32_t> position(n, 0);
  std::vector<std::int64_t> now(n, 0);
  std::vector<std::int64_t> recorded_at(program_.event_count, kNotRun);
  std::vector<Location> record_of(program_.event_count);
  std::vector<std::vector<std::uint32_t>> waiters(program_.event_count);
  std::vector<std::uint32_t> ready;
  for (std::uint32_t s = 0; s < n; ++s) {
    reach[s].assign(streams_[s]->tasks.size(), 0);
    released_by_record[s].assign(streams_[s]->tasks.size(), false);
    ready.push_back(static_cast<std::uint32_t>(n - 1 - s));  // stream 0 first
  }
  while (!ready.empty()) {
    const std::uint32_t s = ready.back();
    ready.pop_back();
    const auto& tasks = streams_[s]->tasks;
    for (std::uint32_t& i = position[s]; i < tasks.size(); ++i) {
      const sim::Task& t = tasks[i];
      reach[s][i] = now[s];
      if (t.kind == sim::TaskKind::Kernel || t.kind == sim::TaskKind::Collective) {
        if (end_[s][i] == kNotRun) throw InternalError("critical path: a task of the step never ran");
        now[s] = end_[s][i];
      } else if (t.kind == sim::TaskKind::Record) {
        recorded_at[t.id] = now[s];
        record_of[t.id] = {s, i};
        for (const std::uint32_t w : waiters[t.id]) ready.push_back(w);
        waiters[t.id].clear();
      } else if (recorded_at[t.id] == kNotRun) {  // a wait for an event not yet recorded
        waiters[t.id].push_back(s);
        break;
      } else if (recorded_at[t.id] > now[s]) {
        released_by_record[s][i] = true;
        now[s] = recorded_at[t.id];
      }
    }
  }

  // The stream that finished last (the first such, for a deterministic path).
  std::uint32_t s = 0;
  bool found = false;
  for (std::uint32_t k = 0; k < n && !found; ++k)
    if (position[k] == streams_[k]->tasks.size() && now[k] == step_time.ps() && !streams_[k]->tasks.empty()) {
      s = k;
      found = true;
    }
  CriticalPath path;
  if (!found) return path;

  // Backward: from the last task, through whatever released each task, to the step's start.
  std::set<std::uint32_t> gpus{gpu_of_stream_[s]};
  std::int64_t compute = 0, gradients = 0, transfers = 0, gaps = 0;
  auto move_to = [&](Location to) {
    if (gpu_of_stream_[to.first] != gpu_of_stream_[s]) ++path.gpu_changes;
    s = to.first;
    gpus.insert(gpu_of_stream_[s]);
    return to.second;
  };
  for (std::int64_t i = static_cast<std::int64_t>(streams_[s]->tasks.size()) - 1; i >= 0; --i) {
    const auto task = static_cast<std::uint32_t>(i);
    const sim::Task& t = streams_[s]->tasks[task];
    switch (t.kind) {
      case sim::TaskKind::Kernel:
        compute += end_[s][task] - reach[s][task] - t.launch_delay.ps();
        gaps += t.launch_delay.ps();
        break;
      case sim::TaskKind::Record:
        break;
      case sim::TaskKind::Wait:
        if (released_by_record[s][task]) i = move_to(record_of[t.id]);  // then past the record
        break;
      case sim::TaskKind::Collective: {
        // The rank that joined last (this one on a tie) held everyone up until then.
        Location last{s, task};
        for (const Location& r : collective_ranks_[t.id])
          if (reach[r.first][r.second] > reach[last.first][last.second]) last = r;
        const std::int64_t span = end_[s][task] - reach[last.first][last.second];
        const auto role = program_.collectives[t.id].role;
        if (role == workloads::CollectiveRole::GradientAllReduce ||
            role == workloads::CollectiveRole::GradientAllGather)
          gradients += span;
        else
          transfers += span;
        if (last.first != s) i = move_to(last);
        break;
      }
    }
  }
  path.compute = sim::Time::ps(compute);
  path.gradient_communication = sim::Time::ps(gradients);
  path.model_parallel_transfers = sim::Time::ps(transfers);
  path.launch_gaps = sim::Time::ps(gaps);
  path.gpus_visited = static_cast<int>(gpus.size());
  return path;
}

}  // namespace hybridsim::analysis
