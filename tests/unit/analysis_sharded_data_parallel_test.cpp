// Sharded data parallelism (ZeRO 1/2/3, FSDP) end to end: a Llama 2 7B layer-slice on one DGX A100
// (dp 8, or tp 2 x dp 4), the bytes its collectives move per layer and per step against the closed
// forms of Rajbhandari et al. 2020 (ZeRO-1/2 move an all-reduce's 2(n-1)/n of the parameters, ZeRO-3
// 3(n-1)/n), its memory per GPU against the same paper's (2 + 2 + K)Ψ divisions, and the orderings
// of step times that must hold.
#include <doctest/doctest.h>

#include <map>
#include <set>

#include "scenarios/loader/resolve.h"
#include "sim/error.h"
#include "topology/preset_registry.h"
#include "transformer_step_run.h"
#include "workloads/memory/transformer_memory.h"
#include "workloads/program/sharded_data_parallel.h"

using namespace hybridsim;
using namespace hybridsim::workloads;

namespace {

using Run = testing::TransformerStepRun;

struct Setting {
  int zero = 0;
  int dp = 8;
  int tp = 1;
  int accumulation = 1;
  bool free_network = false;  // links a million times faster, no latency, no reduction cost
  bool copies = false;
};

topology::Topology machine(bool free_network) {
  topology::ClusterSpec spec{.preset = "dgx-a100", .nodes = 1};
  if (free_network)
    spec.links[sim::LinkKind::NVSwitch] = {.bandwidth = sim::Bandwidth::gb_per_second(300'000'000),
                                           .latency = sim::Time::zero()};
  return topology::build_cluster(spec);
}

Run run(const Setting& s) {
  static const topology::Topology real = machine(false), free = machine(true);
  return testing::run_transformer_step({.model = "llama2-7b",
                                        .gpu = "a100",
                                        .dp = s.dp,
                                        .tp = s.tp,
                                        .zero = s.zero,
                                        .accumulation = s.accumulation,
                                        .gradient_copies = s.copies,
                                        .ideal_collectives = s.free_network},
                                       s.free_network ? free : real);
}

// What one rank of a ring sends, times n: 2(n-1)·S for an all-reduce, (n-1)·S for a reduce-scatter
// or an all-gather (S the whole buffer); per role, over the collectives GPU 0 takes part in.
std::map<CollectiveRole, std::int64_t> sent_times_n(const StepProgram& p) {
  std::map<CollectiveRole, std::int64_t> out;
  for (const CollectiveSpec& c : p.collectives) {
    if (c.role == CollectiveRole::TensorParallel || c.members.front() != 0) continue;
    const auto n = static_cast<std::int64_t>(c.members.size());
    out[c.role] += (c.op == sim::CollectiveOp::AllReduce ? 2 : 1) * (n - 1) * c.size.count();
  }
  return out;
}

std::int64_t total(const std::map<CollectiveRole, std::int64_t>& m) {
  std::int64_t t = 0;
  for (const auto& [role, bytes] : m) t += bytes;
  return t;
}

}  // namespace

TEST_CASE("zero: stages 1 and 2 move an all-reduce's bytes, stage 3 one and a half times them") {
  const Run z0 = run({.zero = 0}), z1 = run({.zero = 1}), z2 = run({.zero = 2}), z3 = run({.zero = 3});
  const std::int64_t psi_bytes = z0.step.profile.parameter_bytes().count();  // Ψ × 2 B (BF16)
  const std::int64_t n = 8;
  // ZeRO-0: the dense gradients all-reduced once: 2(n-1)/n·Ψ per rank.
  CHECK(total(sent_times_n(z0.program)) == 2 * (n - 1) * psi_bytes);
  for (const Run* z : {&z1, &z2}) {
    const auto sent = sent_times_n(z->program);
    CHECK(sent.at(CollectiveRole::GradientAllReduce) == (n - 1) * psi_bytes);  // now reduce-scatters
    CHECK(sent.at(CollectiveRole::UpdatedParameterAllGather) == (n - 1) * psi_bytes);
    CHECK(total(sent) == total(sent_times_n(z0.program)));
    for (const CollectiveSpec& c : z->program.collectives)
      if (c.role == CollectiveRole::GradientAllReduce) CHECK(c.op == sim::CollectiveOp::ReduceScatter);
  }
  const auto sent3 = sent_times_n(z3.program);
  CHECK(2 * total(sent3) == 3 * total(sent_times_n(z0.program)));
  CHECK(sent3.at(CollectiveRole::ParameterAllGather) == 2 * (n - 1) * psi_bytes);
  // Per layer: two gathers (forward, backward) and one reduce-scatter, each of the layer's parameters.
  for (std::uint32_t v = 0; v < z3.step.profile.ops.size(); ++v) {
    const Op& op = z3.step.profile.ops[v];
    if (!op.has_gradient()) continue;
    int gathers = 0, scatters = 0;
    for (const CollectiveSpec& c : z3.program.collectives) {
      if (c.op_index != v || c.role == CollectiveRole::TensorParallel) continue;
      CHECK(c.size == op.gradient_bytes);
      CHECK(c.members.size() == 8);
      gathers += c.role == CollectiveRole::ParameterAllGather;
      scatters += c.op == sim::CollectiveOp::ReduceScatter;
    }
    CAPTURE(op.name);
    CHECK(gathers == 2);
    CHECK(scatters == 1);
  }
}

TEST_CASE("zero: tp 2 x dp 4 shards each TP rank's parameters over its 4 replicas") {
  const Run z0 = run({.zero = 0, .dp = 4, .tp = 2}), z3 = run({.zero = 3, .dp = 4, .tp = 2});
  const std::int64_t psi_rank = z3.step.profile.parameter_bytes().count();  // one TP rank's shard
  const auto sent = sent_times_n(z3.program);
  CHECK(sent.at(CollectiveRole::ParameterAllGather) == 2 * 3 * psi_rank);
  CHECK(2 * total(sent) == 3 * total(sent_times_n(z0.program)));
  for (const CollectiveSpec& c : z3.program.collectives)
    if (c.role == CollectiveRole::ParameterAllGather) CHECK(c.members.size() == 4);
}

TEST_CASE("zero: under accumulation stage 3 gathers per micro-batch, stage 2 reduces per micro-batch") {
  const Run z2 = run({.zero = 2, .accumulation = 2}), z3 = run({.zero = 3, .accumulation = 2});
  const Run z1 = run({.zero = 1, .accumulation = 2});
  const std::int64_t psi_bytes = z3.step.profile.parameter_bytes().count(), n = 8;
  const auto sent3 = sent_times_n(z3.program), sent2 = sent_times_n(z2.program);
  CHECK(sent3.at(CollectiveRole::ParameterAllGather) == 2 * 2 * (n - 1) * psi_bytes);
  CHECK(sent3.at(CollectiveRole::GradientAllReduce) == 2 * (n - 1) * psi_bytes);
  CHECK(sent2.at(CollectiveRole::GradientAllReduce) == 2 * (n - 1) * psi_bytes);
  // Stage 1 reduces once, after the last micro-batch; every stage gathers the update once.
  CHECK(sent_times_n(z1.program).at(CollectiveRole::GradientAllReduce) == (n - 1) * psi_bytes);
  CHECK(sent2.at(CollectiveRole::UpdatedParameterAllGather) == (n - 1) * psi_bytes);
  CHECK(z3.result.step_time > run({.zero = 3}).result.step_time);
}

TEST_CASE("zero: memory per GPU divides weights, gradients and optimizer as each stage does") {
  // Rajbhandari et al. 2020, section 5: (2 + 2 + K)·Ψ with K = 12 for mixed-precision Adam; stage 1
  // divides the K·Ψ by Nd, stage 2 also the gradients' 2Ψ, stage 3 also the weights' 2Ψ.
  const TransformerModel m = named_transformer("llama2-7b");
  // Layers, the untied embedding and head, the final RMSNorm (h).
  const std::int64_t psi = m.layers * layer_parameters(m) + 2 * m.vocab * m.hidden + m.hidden, nd = 64;
  CHECK(psi > 6'700'000'000);  // Llama 2 7B: 6.74 B parameters (untied embedding and head)
  CHECK(psi < 6'800'000'000);
  const auto persistent = [&](int zero) {
    const TransformerMemory r = transformer_memory({.model = m, .zero = zero, .dp = static_cast<int>(nd)});
    return r.weights.count() + r.gradients.count() + r.optimizer.count();
  };
  CHECK(persistent(0) == 16 * psi);
  CHECK(persistent(1) == 4 * psi + 12 * psi / nd);
  CHECK(persistent(2) == 2 * psi + (2 * psi) / nd + 12 * psi / nd);
  // Stage 3 also holds two ops' gathered 16-bit parameters at once, the one computed and the one
  // prefetched: for Llama 2 7B two layers (2·(4h² + 3·h·11,008 + 2h) = 404,766,720 parameters)
  // outweigh the embedding and a layer (32,000·h + 202,383,360).
  const std::int64_t in_flight = 2 * 404'766'720;
  CHECK(persistent(3) == (2 * psi) / nd + (2 * psi) / nd + 12 * psi / nd + in_flight);
  // What run prints: the same four parts, nothing else.
  const StepMemory s = transformer_step_memory({.model = m, .zero = 3, .dp = 64});
  REQUIRE(s.ranks.size() == 1);
  CHECK(s.ranks[0].peak[MemoryPart::Weights].count() == 2 * psi / nd + in_flight);
  CHECK(s.ranks[0].peak[MemoryPart::GradientBuckets].count() == 0);
  CHECK(s.ranks[0].peak[MemoryPart::CommBuffers].count() == 0);
  CHECK(s.ranks[0].peak.total() == transformer_memory({.model = m, .zero = 3, .dp = 64}).total());
}

TEST_CASE("zero: stage 3's gathered parameters in flight are the largest two adjacent ops, per TP rank") {
  // Llama 3 8B: a layer's GEMMs (2h² + 2·h·1,024 + 3·h·14,336 = 218,103,808) / tp 8 with its two
  // RMSNorms (2h = 8,192) whole, 27,271,168; the embedding is Megatron's padded one, the one the step
  // computes on: 128,256 rows rounded up to a multiple of 128·tp = 1,024, 129,024, times 4,096 / tp 8
  // = 66,060,288 parameters (the unpadded 525,336,576 / 8 was counted before), and the LM head the
  // same with the final RMSNorm (h) whole. The last layer and the head outweigh two layers and the
  // embedding with the first; 2 bytes each.
  const TransformerModel m = named_transformer("llama3-8b");
  const TransformerMemoryInput in{.model = m, .tp = 8, .zero = 3, .dp = 8};
  const std::int64_t layer = 218'103'808 / 8 + 8'192, head = 528'482'304 / 8 + 4'096;
  CHECK(zero3_gathered_bytes(in, m.layers, true, true) == 2 * (head + layer));
  CHECK(zero3_gathered_bytes(in, m.layers, true, false) == 2 * (528'482'304 / 8 + layer));
  // A middle pipeline stage's (layers only): two layers; one layer alone: that layer.
  CHECK(zero3_gathered_bytes(in, 4, false, false) == 2 * 2 * layer);
  CHECK(zero3_gathered_bytes(in, 1, false, false) == 2 * layer);
  // Nothing is gathered below stage 3 or without replicas to gather from.
  CHECK(zero3_gathered_bytes({.model = m, .tp = 8, .zero = 2, .dp = 8}, m.layers, true, true) == 0);
  CHECK(zero3_gathered_bytes({.model = m, .tp = 8, .zero = 3, .dp = 1}, m.layers, true, true) == 0);
  // In FP32 the gathered values take 4 bytes.
  CHECK(zero3_gathered_bytes({.model = m, .tp = 8, .value_bytes = 4, .zero = 3, .dp = 8}, 4, false, false) ==
        4 * 2 * layer);
}

TEST_CASE("zero: with a free network, stage 3 is stage 0's compute plus the optimizer on 1/dp") {
  const Run z0 = run({.zero = 0, .free_network = true}), z3 = run({.zero = 3, .free_network = true});
  const Profile& p = z0.step.profile;
  const sim::Time kernels = p.forward_time() + p.backward_time();
  const sim::Time update = p.optimizer_time();
  CHECK(z0.result.step_time.to_seconds() == doctest::Approx((kernels + update).to_seconds()).epsilon(0.002));
  const sim::Time sharded = sim::Time::ps((update.ps() + 7) / 8);
  CHECK(z3.result.step_time.to_seconds() == doctest::Approx((kernels + sharded).to_seconds()).epsilon(0.002));
  CHECK(z3.result.step_time < z0.result.step_time);
}

TEST_CASE("zero: on the real network stage 1 (reduce after backward) is no faster than stage 2") {
  const Run z1 = run({.zero = 1, .copies = true}), z2 = run({.zero = 2, .copies = true});
  const Run z3 = run({.zero = 3, .copies = true}), z3free = run({.zero = 3, .free_network = true});
  CHECK(z1.result.step_time >= z2.result.step_time);
  CHECK(z3.result.step_time > z3free.result.step_time);
}

TEST_CASE("zero: stage 3's gathers run one op ahead on their own stream") {
  const Run z3 = run({.zero = 3});
  const sim::GpuProgram& gpu = z3.program.gpus[0];
  const sim::StreamProgram* gather = nullptr;
  for (const auto& s : gpu.streams)
    if (s.name == "parameters") gather = &s;
  REQUIRE(gather != nullptr);
  // gather, record; then (wait for the compute stream to start the previous op, gather, record)...
  REQUIRE(gather->tasks.size() >= 5);
  CHECK(gather->tasks[0].kind == sim::TaskKind::Collective);
  CHECK(gather->tasks[1].kind == sim::TaskKind::Record);
  CHECK(gather->tasks[2].kind == sim::TaskKind::Wait);
  CHECK(gather->tasks[3].kind == sim::TaskKind::Collective);
  StepProgram copy = z3.program;
  CHECK_THROWS_AS(apply_sharded_data_parallel(copy, z3.step.profile, 4), InputError);
}

TEST_CASE("zero: the replicas' compute streams stay one shared list, each GPU's events its own") {
  for (const int zero : {1, 3}) {
    CAPTURE(zero);
    const Run z = run({.zero = zero, .accumulation = 2});
    std::vector<int> records(z.program.event_count, 0), waits(z.program.event_count, 0);
    const void* first = nullptr;
    for (const sim::GpuProgram& gpu : z.program.gpus)
      for (const sim::StreamProgram& stream : gpu.streams) {
        if (stream.name == "compute") {
          // Stage 1's all-gather after the optimizer, each GPU's rank, is the list's own collective.
          CHECK(stream.tasks.is_shared());
          if (first == nullptr) first = stream.tasks.same_tasks();
          CHECK(stream.tasks.same_tasks() == first);
        }
        for (const sim::Task t : stream.tasks) {
          if (t.kind == sim::TaskKind::Record) ++records.at(t.id);
          if (t.kind == sim::TaskKind::Wait) ++waits.at(t.id);
        }
      }
    // Every event waited for is recorded exactly once: no two GPUs share one.
    for (std::size_t e = 0; e < records.size(); ++e)
      if (waits[e] > 0) CHECK(records[e] == 1);
    for (const int n : records) CHECK(n <= 1);
  }
}

TEST_CASE("zero: stages 1 and 2 keep compute lists shared as stage 0 does, each GPU gathering as itself") {
  // The all-gather of the updated parameters goes on each GPU's compute stream with its own rank in
  // its group (and, under tp, its own group's collective): it was a copy of the list a GPU (N lists
  // of N x tasks at N GPUs), now the list's own collective (sim::TaskList::own_collective).
  for (const int tp : {1, 2}) {
    const auto distinct_compute_lists = [](const StepProgram& p) {
      std::set<const void*> lists;
      for (const sim::GpuProgram& gpu : p.gpus)
        for (const sim::StreamProgram& stream : gpu.streams)
          if (stream.name == "compute") lists.insert(stream.tasks.same_tasks());
      return lists.size();
    };
    const Run z0 = run({.zero = 0, .dp = 8 / tp, .tp = tp});
    for (const int zero : {1, 2}) {
      CAPTURE(tp);
      CAPTURE(zero);
      const Run z = run({.zero = zero, .dp = 8 / tp, .tp = tp});
      CHECK(distinct_compute_lists(z.program) == distinct_compute_lists(z0.program));
      CHECK(distinct_compute_lists(z.program) < z.program.gpus.size());
      for (std::size_t g = 0; g < z.program.gpus.size(); ++g) {
        int gathers = 0;
        for (const sim::StreamProgram& stream : z.program.gpus[g].streams)
          for (const sim::Task t : stream.tasks) {
            if (t.kind != sim::TaskKind::Collective) continue;
            const CollectiveSpec& c = z.program.collectives.at(t.id);
            if (c.role != CollectiveRole::UpdatedParameterAllGather) continue;
            ++gathers;
            CHECK(stream.name == "compute");
            REQUIRE(t.rank < c.members.size());
            CHECK(c.members[t.rank] == static_cast<int>(g));
          }
        CHECK(gathers == 1);
      }
    }
  }
}

TEST_CASE("zero: training.global_batch counts each replica's micro-batches once, tp GPUs sharing them") {
  // 4 replicas of tp 2 at micro-batch 1: a global batch of 16 is 4 micro-batches per replica.
  const scenarios::ResolvedScenario r = scenarios::resolve(scenarios::parse_scenario(
      "cluster: {preset: dgx-a100}\n"
      "workload: {network: llama2-7b, model: {layers_simulated: 2}}\n"
      "parallelism: {dp: 4, tp: 2, zero: fsdp}\n"
      "training: {micro_batch: 1, global_batch: 16}\n",
      "zero.yaml", {}, "."));
  CHECK(r.step.accumulation == 4);
  CHECK(r.step.zero == 3);
}
