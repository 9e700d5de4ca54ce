// A column-parallel linear's backward under tensor parallelism, as the transformer generator emits
// it and the program builder runs it (workloads/profile/tp_sync.h): a small GPT's step on one DGX
// H100, and readers of its program and of when GPU 0 ran what.
//   const TransformerStep step = column_backward::generate(2, false);
//   const StepProgram p = analysis::build_program(column_backward::setup_of(step, 1, 2));
#pragma once
#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "analysis/step/step_runner.h"
#include "transformer_step_run.h"
#include "workloads/generators/transformer_gen.h"
#include "workloads/gpu/gpu.h"

namespace hybridsim::testing::column_backward {

// 2 layers, hidden 1,024, 16 heads, GELU ffn 4,096, GPT's vocabulary, sequence 1,024.
inline workloads::TransformerModel small_gpt() {
  return {"small-gpt", 2, 1024, 16, 16, 4096, workloads::FfnKind::Gelu, 50'257, 1024};
}

// One all-reduce's (or all-gather's, reduce-scatter's) whole buffer: s·b·h BF16 values.
constexpr std::int64_t kBuffer = 1024 * 1 * 1024 * 2;  // 2,097,152 B

inline workloads::TransformerStep generate(int tp, bool sp) {
  return workloads::generate_transformer(
      {.model = small_gpt(), .micro_batch = 1, .tp = tp, .sequence_parallel = sp},
      workloads::transformer_cost(workloads::gpu_by_key("h100"), workloads::Precision::Bf16));
}

inline analysis::StepSetup setup_of(const workloads::TransformerStep& step, int dp, int tp) {
  analysis::StepSetup s;
  s.profile = &step.profile;
  s.topology = &one_dgx_h100();
  s.placement = workloads::place_all_on_first(step.profile, 1);
  s.mapping = workloads::default_mapping(one_dgx_h100(), dp * tp, 1);
  s.step.tp = tp;
  s.step.tp_syncs = step.syncs;
  s.step.tp_gradients = step.tp_gradients;
  return s;
}

inline const sim::StreamProgram* stream_named(const workloads::StepProgram& p, int g,
                                              const std::string& name) {
  for (const sim::StreamProgram& s : p.gpus[static_cast<std::size_t>(g)].streams)
    if (s.name == name) return &s;
  return nullptr;
}

// A kernel task's name in its op ("" for anything else).
inline std::string kernel_name(const workloads::Profile& profile, const workloads::StepProgram& p,
                               const sim::Task& t) {
  if (t.kind != sim::TaskKind::Kernel || t.id >= p.labels.size()) return "";
  const workloads::KernelLabel& l = p.labels[t.id];
  const workloads::Op& op = profile.ops[l.op];
  if (l.phase == workloads::Phase::Forward) return op.forward[l.kernel].name;
  return l.phase == workloads::Phase::Backward ? op.backward[l.kernel].name : "";
}

// GPU g's TP-stream tasks i, i + 1, i + 2: a wait, a collective `op` of s·b·h (kBuffer) that op
// `op_name` issues over g's TP group (tp consecutive GPUs) at g's rank, a record.
inline void check_side_collective(const workloads::TransformerStep& step, const workloads::StepProgram& p,
                                  const sim::TaskList& tasks, std::size_t i, int g, int tp,
                                  sim::CollectiveOp op, const char* op_name) {
  CHECK(tasks[i].kind == sim::TaskKind::Wait);
  CHECK(tasks[i + 2].kind == sim::TaskKind::Record);
  REQUIRE(tasks[i + 1].kind == sim::TaskKind::Collective);
  const workloads::CollectiveSpec& spec = p.collectives[tasks[i + 1].id];
  CHECK(spec.role == workloads::CollectiveRole::TensorParallel);
  CHECK(spec.op == op);
  CHECK(spec.size.count() == kBuffer);
  CHECK(spec.op_index == step.profile.op_by_name(op_name));
  REQUIRE(spec.members.size() == static_cast<std::size_t>(tp));
  CHECK(spec.members[0] == g / tp * tp);
  CHECK(tasks[i + 1].rank == static_cast<std::uint32_t>(g % tp));
}

// Each of GPUs 0 to gpus - 1 has a TP stream of `per_linear` tasks for each column-parallel linear,
// in backward order (the LM head, then layer 1's MLP-in and QKV, then layer 0's): check(tasks, the
// linear's first task, g, its op's name) for each.
template <class Check>
void for_each_side_linear(const workloads::StepProgram& p, int gpus, std::size_t per_linear,
                          const Check& check) {
  static const char* const ops[] = {"lm_head", "layer.1", "layer.1", "layer.0", "layer.0"};
  for (int g = 0; g < gpus; ++g) {
    CAPTURE(g);
    const sim::StreamProgram* side = stream_named(p, g, "tensor-parallel");
    REQUIRE(side != nullptr);
    REQUIRE(side->tasks.size() == 5 * per_linear);
    for (std::size_t j = 0; j < 5; ++j) {
      CAPTURE(j);
      check(side->tasks, j * per_linear, g, ops[j]);
    }
  }
}

// Where GPU g's TP stream records and waits for each event: the task's place there.
struct SideEvents {
  std::map<std::uint32_t, std::size_t> recorded, waited;
};

// For GPUs 0 and 1 of the small GPT at tp 2, dp 1: check(compute stream, TP stream, its events).
template <class Check>
void for_each_rank_of_tp2(const workloads::StepProgram& p, const Check& check) {
  for (int g = 0; g < 2; ++g) {
    CAPTURE(g);
    const sim::TaskList& side = stream_named(p, g, "tensor-parallel")->tasks;
    SideEvents events;
    for (std::size_t i = 0; i < side.size(); ++i) {
      if (side[i].kind == sim::TaskKind::Record) events.recorded[side[i].id] = i;
      if (side[i].kind == sim::TaskKind::Wait) events.waited[side[i].id] = i;
    }
    check(p.gpus[static_cast<std::size_t>(g)].streams[0].tasks, side, events);
  }
}

// When GPU 0 ran each kernel (by name, the last time; and all in order) and each TP-stream
// collective (in order).
class Times final : public sim::StreamObserver {
 public:
  Times(const workloads::Profile& profile, const workloads::StepProgram& p) : profile_(profile), p_(p) {}
  void on_kernel(std::uint32_t gpu, std::uint32_t stream, std::uint32_t task, sim::Time start,
                 sim::Time end) override {
    if (gpu != 0) return;
    const std::string name = kernel_name(profile_, p_, p_.gpus[0].streams[stream].tasks[task]);
    kernel[name] = {start, end};
    order.push_back({name, end - start});
  }
  void on_collective(std::uint32_t gpu, std::uint32_t stream, std::uint32_t, sim::Time start,
                     sim::Time end) override {
    if (gpu == 0 && p_.gpus[0].streams[stream].name == "tensor-parallel") side.push_back({start, end});
  }
  std::map<std::string, std::pair<sim::Time, sim::Time>> kernel;
  std::vector<std::pair<std::string, sim::Time>> order;  // name, duration
  std::vector<std::pair<sim::Time, sim::Time>> side;

 private:
  const workloads::Profile& profile_;
  const workloads::StepProgram& p_;
};

// The small GPT at tp 2, dp 1, simulated with GPU 0's times observed (not copied: `times` reads the
// step's profile and program where they are).
struct TimedRun {
  explicit TimedRun(bool sp)
      : step(generate(2, sp)),
        setup(setup_of(step, 1, 2)),
        program(analysis::build_program(setup)),
        times(step.profile, program) {
    analysis::simulate_program(setup, program, {.stream = &times});
  }
  TimedRun(const TimedRun&) = delete;
  TimedRun& operator=(const TimedRun&) = delete;
  workloads::TransformerStep step;
  analysis::StepSetup setup;
  workloads::StepProgram program;
  Times times;
};

}  // namespace hybridsim::testing::column_backward
