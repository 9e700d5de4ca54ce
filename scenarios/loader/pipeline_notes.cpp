#include "scenarios/loader/pipeline_notes.h"

#include <cstdio>

namespace hybridsim::scenarios {

std::optional<std::string> few_micro_batches_note(const Scenario& s) {
  const int p = s.parallelism.pp;
  if (p <= 1 || s.parallelism.pipeline.schedule == workloads::PipelineSchedule::Interleaved)
    return std::nullopt;
  const std::int64_t per_step = static_cast<std::int64_t>(s.parallelism.dp) * s.training.micro_batch;
  if (per_step <= 0) return std::nullopt;
  const std::int64_t m = s.training.global_batch ? *s.training.global_batch / per_step : 1;
  if (m < 1 || m >= p) return std::nullopt;
  auto percent = [](std::int64_t idle, std::int64_t slots) {
    char text[16];
    std::snprintf(text, sizeof text, "%.1f%%",
                  100.0 * static_cast<double>(idle) / static_cast<double>(slots));
    return std::string(text);
  };
  const std::string where = s.training.global_batch
                                ? "training.global_batch (" + location_of(s, "training.global_batch") + ") " +
                                      std::to_string(*s.training.global_batch) + " is"
                                : "training.global_batch is not written, so it is";
  return where + " " + std::to_string(m) + " micro-batch" + (m == 1 ? "" : "es") + " a step of dp " +
         std::to_string(s.parallelism.dp) + " × micro_batch " + std::to_string(s.training.micro_batch) +
         ", fewer than the pp " + std::to_string(p) + " stages: each stage idles " + std::to_string(p - 1) +
         " of every " + std::to_string(m + p - 1) + " micro-batch slots, " + percent(p - 1, m + p - 1) +
         " of the step (the pipeline's bubble, (pp − 1)/(m + pp − 1)); at training.global_batch " +
         std::to_string(per_step * p) + " (pp micro-batches) it is " + percent(p - 1, 2 * p - 1) +
         ", and less with more";
}

}  // namespace hybridsim::scenarios
