#include "analysis/step/step_progress.h"

namespace hybridsim::analysis {

void SimulationProgress::tick(std::string_view what, sim::Time simulated, std::uint64_t events) {
  poll();
  const Clock::time_point now = Clock::now();
  if (now < next_) return;
  next_ = now + every_;
  report({what, simulated, events, std::chrono::duration<double>(now - start_).count()});
}

void run_with_progress(sim::EventQueue& queue, SimulationProgress* progress, std::string_view what) {
  if (progress == nullptr) {
    queue.run();
    return;
  }
  // step() processes the events run() would, in the same order (nothing in a step calls stop()).
  const std::uint64_t first = queue.events_processed();
  std::uint32_t count = 0;
  while (queue.step())
    if (++count % SimulationProgress::kTickEvents == 0)
      progress->tick(what, queue.now(), queue.events_processed() - first);
}

}  // namespace hybridsim::analysis
