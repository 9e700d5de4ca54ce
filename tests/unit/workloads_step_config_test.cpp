// The step fingerprint (the study and planner's step cache key) and StepConfig equality: every
// model input of StepConfig changes both, the descriptions and observers change neither.
#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "workloads/step/step_config.h"

using namespace hybridsim;
using workloads::StepConfig;

namespace {

StepConfig baseline() {
  StepConfig c;
  c.placement.mp = 2;
  c.placement.gpu_of_op = {0, 1, 1};
  c.mapping.dp = 1;
  c.mapping.mp = 2;
  c.mapping.gpu_rank = {{0, 1}};  // one worker: one "mapping.worker" entry in the fingerprint
  return c;
}

// One change per model input, in the fingerprint's order. The count is checked against the
// fingerprint's entries, so that a field added to the fingerprint needs a case here.
const std::vector<std::function<void(StepConfig&)>>& one_change_per_field() {
  static const std::vector<std::function<void(StepConfig&)>> changes = {
      [](StepConfig& c) { c.placement.mp = 3; },
      [](StepConfig& c) { c.placement.gpu_of_op[2] = 0; },
      [](StepConfig& c) { c.mapping.dp = 2; },
      [](StepConfig& c) { c.mapping.mp = 1; },
      [](StepConfig& c) { c.mapping.gpu_rank[0][1] = 5; },
      [](StepConfig& c) { c.step.bucket_size = sim::Bytes::mib(1); },
      [](StepConfig& c) { c.step.recorded_buckets = true; },
      [](StepConfig& c) { c.step.mp_transfer_estimate = sim::Bandwidth::gb_per_second(50); },
      [](StepConfig& c) { c.step.compute_scale = 0.5; },
      [](StepConfig& c) { c.step.gpu_compute_scale = {1.0, 0.8}; },
      [](StepConfig& c) { c.step.gradient_copies = false; },
      [](StepConfig& c) { c.step.copy_passes = 3; },
      [](StepConfig& c) { c.step.accumulation = 8; },
      [](StepConfig& c) { c.step.exchange_every_micro_batch = false; },
      [](StepConfig& c) { c.step.tp = 8; },
      [](StepConfig& c) { c.step.zero = 3; },
      [](StepConfig& c) { c.step.pipeline.pp = 4; },
      [](StepConfig& c) { c.step.pipeline.schedule = workloads::PipelineSchedule::GPipe; },
      [](StepConfig& c) { c.step.pipeline.virtual_stages = 2; },
      [](StepConfig& c) { c.step.pipeline.chunk_layers = {2, 2}; },
      [](StepConfig& c) { c.comm.algorithm = workloads::AllReduceAlgorithm::Tree; },
      [](StepConfig& c) { c.comm.protocol = sim::Protocol::LL128; },
      [](StepConfig& c) { c.comm.channels = 4; },
      [](StepConfig& c) { c.comm.pcie_only = true; },
      [](StepConfig& c) { c.collective.message_size = sim::Bytes::kib(256); },
      [](StepConfig& c) { c.collective.reduction_bandwidth = sim::Bandwidth::gb_per_second(1); },
      [](StepConfig& c) { c.collective.timing.protocol = sim::Protocol::Simple; },
      [](StepConfig& c) { c.collective.timing.link_rate_scale[0] = 0.9; },
      [](StepConfig& c) { c.collective.timing.channel_cap = sim::Bandwidth::gb_per_second(20); },
      [](StepConfig& c) { c.collective.timing.base_latency = sim::Time::us(5); },
      [](StepConfig& c) { c.collective.timing.hop_latency[1] = sim::Time::ns(600); },
      [](StepConfig& c) { c.collective.fast_path = sim::FastPath::Off; },
      [](StepConfig& c) { c.switching = sim::Switching::StoreAndForward; },
      [](StepConfig& c) { c.executor.contention = false; },
      [](StepConfig& c) { c.variability.steps = 4; },
      [](StepConfig& c) { c.variability.seed = 7; },
      [](StepConfig& c) { c.variability.kernel_jitter = 0.05; },
      [](StepConfig& c) { c.variability.lengths = workloads::LengthDistribution::Wmt16EnDe; },
      [](StepConfig& c) { c.variability.batching = workloads::Batching::Random; },
      [](StepConfig& c) { c.variability.length_buckets = 9; },
      [](StepConfig& c) { c.limits.max_events = 1000; },
      [](StepConfig& c) { c.limits.max_memory = 0; },
  };
  return changes;
}

}  // namespace

TEST_CASE("step config: every model input changes the fingerprint and equality") {
  const StepConfig base = baseline();
  const std::string text = fingerprint(base);
  CHECK(base == baseline());
  CHECK(text == fingerprint(baseline()));
  const auto entries = static_cast<std::size_t>(std::count(text.begin(), text.end(), ';'));
  REQUIRE(one_change_per_field().size() == entries);
  std::set<std::string> seen = {text};
  for (std::size_t i = 0; i < entries; ++i) {
    CAPTURE(i);
    StepConfig changed = baseline();
    one_change_per_field()[i](changed);
    const std::string f = fingerprint(changed);
    CHECK(f != text);
    CHECK_FALSE(changed == base);
    CHECK(seen.insert(f).second);  // no two changes collide either
  }
}

TEST_CASE("step config: descriptions change neither") {
  StepConfig c = baseline();
  c.placement.description = "stacks over 2 GPUs";
  c.mapping.description = "on one machine";
  CHECK(c == baseline());
  CHECK(fingerprint(c) == fingerprint(baseline()));
}

TEST_CASE("step config: the fingerprint's text") {
  const std::string text = fingerprint(baseline());
  CHECK(text.starts_with("placement.mp=2;placement.gpu_of_op=0,1,1,;mapping.dp=1;mapping.mp=2;"
                         "mapping.worker=0,1,;step.bucket_size=25000000;"));
  CHECK(text.find(";comm.protocol=auto;comm.channels=auto;") != std::string::npos);
  CHECK(text.ends_with("limits.max_memory=" + std::to_string(sim::kDefaultMaxMemory) + ";"));
}
