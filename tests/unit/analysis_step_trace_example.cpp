// The example trace committed at scenarios/examples/trace-2node-hybrid.json is exactly what the code
// writes today (a golden file: the same setup gives the same bytes). After a change to the model,
// regenerate it with
//   HYBRIDSIM_REGENERATE_TRACE_EXAMPLE=1 ./build/tests/hybridsim_tests -tc='*example trace*'
#include <doctest/doctest.h>
#include "tests/paths/paths.h"

#include <cstdlib>

#include "analysis/trace/step_trace.h"
#include "analysis_step_trace_check.h"
#include "sim/time_window.h"
#include "topology/gpu_list.h"
#include "topology/preset_registry.h"
#include "workloads/generators/profile_gen.h"

using namespace hybridsim;
using namespace step_trace_test;

namespace {

// Inception-V3, dp 8 × mp 2 (branches split over an NVLink pair), on two DGX-1 V100 machines; the
// trace keeps one worker per machine (GPUs 0 and 3, 8 and 11) at detail steps, so it stays small.
struct Example {
  workloads::Profile profile = workloads::builtin_profile("inception-v3");
  topology::Topology topology = topology::build_cluster({.preset = "dgx1-v100", .nodes = 2});
  analysis::StepSetup setup;
  analysis::StepTraceOptions options;
  Example() {
    setup.profile = &profile;
    setup.topology = &topology;
    setup.mapping = workloads::default_mapping(topology, 8, 2);
    setup.placement = workloads::partition(profile, 2, workloads::default_partitioner(profile));
    options.detail = analysis::TraceDetail::Steps;
    options.gpus = topology::parse_gpu_list("0,3,8,11");
    options.other_data = {{"scenario", "Inception-V3, dp 8 × mp 2 on 2 DGX-1 V100 "
                                       "(tests/unit/analysis_step_trace_example.cpp)"}};
  }
};

}  // namespace

TEST_CASE("the committed example trace is what the code writes") {
  const Example ex;
  TempDir dir;
  analysis::StepTraceSummary summary;
  const auto result =
      analysis::simulate_step_with_trace(ex.setup, dir.path / "example.json", ex.options, &summary);
  const std::string text = read_whole_file(dir.path / "example.json");
  MESSAGE("example trace: " << summary.bytes << " bytes, " << summary.events << " events, step "
                            << sim::format_time(result.step_time));
  CHECK(summary.bytes < 2'000'000);

  const Trace t = check_trace(text);
  // Workers 0 and 4 (default_mapping pairs GPUs 0 and 3, 8 and 11 over doubled NVLinks) and the
  // network; activations flow within each worker; the all-reduces span both machines (8 GPUs).
  CHECK(t.process_names.size() == 5);
  CHECK(t.process_names.at(1) == "GPU 0 · node 0");
  CHECK(t.process_names.at(12) == "GPU 11 · node 1");  // global ranks, the machine after
  CHECK(t.flows > 0);
  CHECK(t.on(1, 2).front().name.find(" · 8 GPUs · ring") != std::string::npos);

  const std::string committed =
      std::string(HYBRIDSIM_SOURCE_DIR) + "/scenarios/examples/trace-2node-hybrid.json";
  if (std::getenv("HYBRIDSIM_REGENERATE_TRACE_EXAMPLE") != nullptr)
    std::ofstream(committed, std::ios::binary) << text;
  const bool same = read_whole_file(committed) == text;  // not CHECK(a == b): doctest would print both files
  CHECK_MESSAGE(same, "regenerate with HYBRIDSIM_REGENERATE_TRACE_EXAMPLE=1 (see the top of this file)");
}
