// A tensor-parallel step's trace: each TP collective is a slice on the compute stream of each GPU
// of its group, named after the layer that issues it and right after one of that layer's kernels;
// the backward's input-gradient all-reduces on the GPU's tensor-parallel stream.
#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "analysis/trace/step_trace.h"
#include "analysis_step_trace_check.h"
#include "topology/preset_registry.h"
#include "transformer_step_run.h"

using namespace hybridsim;
using namespace step_trace_test;

TEST_CASE("tensor parallel trace: TP collectives sit under the layers that issue them") {
  const topology::Topology machine = topology::build_cluster({.preset = "dgx-h100", .nodes = 1});
  const testing::TransformerStepSpec spec{.model = "llama3-8b", .gpu = "h100", .tp = 2};
  const workloads::TransformerStep step = testing::transformer_step(spec);
  const analysis::StepSetup setup = testing::transformer_step_setup(spec, machine, step);
  TempDir dir;
  analysis::StepTraceSummary summary;
  analysis::simulate_step_with_trace(setup, dir.path / "tp.json", {}, &summary);
  const Trace t = check_trace(read_whole_file(dir.path / "tp.json"));
  for (const int pid : {1, 2}) {  // GPUs 0 and 1, the TP group; their compute streams
    CAPTURE(pid);
    REQUIRE(t.thread_names.at({pid, 1}) == "compute");
    std::vector<Slice> compute;  // the stream's own slices (none nest in them at this detail)
    for (const Slice& s : t.on(pid, 1))
      if (s.depth == 0) compute.push_back(s);
    std::map<std::string, int> per_layer;
    for (std::size_t i = 0; i < compute.size(); ++i) {
      const Slice& s = compute[i];
      if (s.cat != "collective") continue;
      const std::string op = s.args["last_op"];
      CHECK(s.name.starts_with("all-reduce " + op + " · "));
      CHECK(s.args["gpus"] == 2);
      // Issued by a kernel of its own layer: the slice before it on the stream is one of them.
      REQUIRE(i > 0);
      CHECK(compute[i - 1].cat != "collective");
      CHECK(compute[i - 1].args["op"] == op);
      ++per_layer[op];
    }
    // Megatron's two all-reduces per layer forward (no recomputation here); the backward's two, each
    // column-parallel linear's input gradient, run beside its weight-gradient GEMM on the GPU's
    // tensor-parallel stream.
    CHECK(per_layer.at("layer.0") == 2);
    CHECK(per_layer.at("layer.1") == 2);
    int side = -1;
    for (const auto& [thread, name] : t.thread_names)
      if (thread.first == pid && name == "tensor-parallel") side = thread.second;
    REQUIRE(side > 0);
    std::map<std::string, int> beside;
    for (const Slice& s : t.on(pid, side))
      if (s.depth == 0 && s.cat == "collective") {
        CHECK(s.name.starts_with("all-reduce " + std::string(s.args["last_op"]) + " · "));
        ++beside[s.args["last_op"]];
      }
    CHECK(beside.at("layer.0") == 2);
    CHECK(beside.at("layer.1") == 2);
  }
}
