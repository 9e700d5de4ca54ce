// ZeRO-1 and expert parallelism inside a pipeline (issue 31; workloads/program/pipeline_program.h):
// each stage's data-parallel group (the same stage and TP rank of every replica) reduce-scatters the
// stage's gradients after the flush, its optimizer updates 1/dp of them and the stage's updated
// parameters are all-gathered over the same group (Megatron-LM's distributed optimizer); each
// stage's EP groups run the all-to-alls of the MoE layers that stage holds, and its expert buckets
// go over the dp / ep replicas holding the same experts. Before, the pipeline's step ran none of
// these: ZeRO 0's all-reduces, every stage's whole optimizer and no all-to-all.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>
#include <vector>

#include "analysis/step/step_runner.h"
#include "sim/error.h"
#include "transformer_step_run.h"
#include "workloads/generators/transformer_gen.h"
#include "workloads/gpu/cost_model.h"
#include "workloads/gpu/gpu.h"
#include "workloads/program/pipeline_program.h"
#include "workloads/program/placement.h"
#include "workloads/program/sharded_data_parallel.h"

using namespace hybridsim;
using namespace hybridsim::workloads;

namespace {

const topology::Topology& dgx_h100() { return testing::one_dgx_h100(); }

TransformerCost h100() { return transformer_cost(gpu_by_key("h100"), Precision::Bf16); }

StepOptions pipeline_options(int micro_batches, PipelineOptions pipeline) {
  StepOptions o;
  o.accumulation = micro_batches;
  o.pipeline = std::move(pipeline);
  return o;
}

// A pipeline's step of `step`'s profile on one DGX H100, 4 workers of 2 stages.
analysis::StepSetup pipeline_setup(const TransformerStep& step, const StepOptions& options) {
  analysis::StepSetup s;
  s.profile = &step.profile;
  s.topology = &dgx_h100();
  s.mapping = default_mapping(dgx_h100(), 4, 2);
  s.step = options;
  return s;
}

// 2 replicas × tp 2 × pp 2 of Llama 2 7B's 4-layer slice, 4 micro-batches, on one DGX H100.
struct ZeroCase {
  TransformerStep step = generate_transformer(
      {.model = named_transformer("llama2-7b"), .micro_batch = 1, .tp = 2, .layers_simulated = 4}, h100());
  StepOptions options(int zero) const {
    StepOptions o = pipeline_options(4, {.pp = 2});
    o.tp = 2;
    o.tp_syncs = step.syncs;
    o.zero = zero;
    return o;
  }
  StepProgram build(int zero) const { return analysis::build_program(pipeline_setup(step, options(zero))); }
  analysis::StepResult simulate(int zero) const {
    return analysis::simulate_step(pipeline_setup(step, options(zero)));
  }
  // The parameter bytes of stage s's ops (one TP rank's shard of them).
  sim::Bytes stage_bytes(int s) const {
    const std::vector<int> chunk = pipeline_chunk_of_op(step.profile, options(1).pipeline);
    sim::Bytes b;
    for (std::size_t v = 0; v < chunk.size(); ++v)
      if (chunk[v] == s) b += step.profile.ops[v].gradient_bytes;
    return b;
  }
};

// The GPUs of stage s, TP rank r, one per replica (worker q·tp + r).
std::vector<int> stage_group(const StepProgram& p, int s, int r) {
  std::vector<int> out;
  for (std::size_t g = 0; g < p.gpus.size(); ++g)
    if (p.mp_rank_of_gpu[g] == s && p.worker_of_gpu[g] % p.tp == r) out.push_back(static_cast<int>(g));
  return out;
}

sim::Time optimizer_time(const StepProgram& p, std::size_t gpu) {
  for (const sim::StreamProgram& stream : p.gpus[gpu].streams)
    if (stream.name == "compute")
      for (const sim::Task& t : stream.tasks)
        if (t.kind == sim::TaskKind::Kernel && t.id < p.labels.size() &&
            p.labels[t.id].phase == Phase::Optimizer)
          return t.duration;
  return sim::Time::zero();
}

// The copies of buckets out of their flat buffers on a GPU's compute stream.
std::vector<sim::Task> copies_out(const StepProgram& p, std::size_t gpu) {
  std::vector<sim::Task> out;
  for (const sim::StreamProgram& stream : p.gpus[gpu].streams)
    if (stream.name == "compute")
      for (const sim::Task& t : stream.tasks)
        if (t.kind == sim::TaskKind::Kernel && t.id < p.labels.size() &&
            p.labels[t.id].phase == Phase::GradientCopyOut)
          out.push_back(t);
  return out;
}

sim::Time copy_out_of(const StepProgram& p, std::size_t gpu, std::uint32_t label) {
  for (const sim::Task& t : copies_out(p, gpu))
    if (t.id == label) return t.duration;
  return sim::Time::zero();
}

}  // namespace

TEST_CASE("pipeline with ZeRO-1: each stage group reduce-scatters and all-gathers that stage's bytes") {
  const ZeroCase c;
  const StepProgram z0 = c.build(0), z1 = c.build(1);
  REQUIRE(z1.tp == 2);
  REQUIRE(z1.dp == 2);
  REQUIRE(c.stage_bytes(0) != c.stage_bytes(1));  // the embedding on one stage, the head on the other
  for (int s = 0; s < 2; ++s)
    for (int r = 0; r < 2; ++r) {
      CAPTURE(s);
      CAPTURE(r);
      const std::vector<int> group = stage_group(z1, s, r);
      REQUIRE(group.size() == 2);
      int gathers = 0;
      sim::Bytes scattered, reduced;
      for (const CollectiveSpec& x : z1.collectives) {
        if (x.members != group) continue;
        if (x.role == CollectiveRole::UpdatedParameterAllGather) {
          ++gathers;
          CHECK(x.op == sim::CollectiveOp::AllGather);
          CHECK(x.size == c.stage_bytes(s));
          CHECK(x.mp_rank == s);
        }
        if (x.role == CollectiveRole::GradientAllReduce) {
          CHECK(x.op == sim::CollectiveOp::ReduceScatter);
          scattered += x.size;
        }
      }
      for (const CollectiveSpec& x : z0.collectives)
        if (x.members == group && x.role == CollectiveRole::GradientAllReduce) {
          CHECK(x.op == sim::CollectiveOp::AllReduce);
          reduced += x.size;
        }
      CHECK(gathers == 1);
      CHECK(scattered == c.stage_bytes(s));
      CHECK(reduced == scattered);
      // The optimizer updates its half of the stage's parameters, and the gather follows it.
      for (const int g : group) {
        const auto gu = static_cast<std::size_t>(g);
        CHECK(optimizer_time(z1, gu).ps() == (optimizer_time(z0, gu).ps() + 1) / 2);
        const sim::TaskList& compute = z1.gpus[gu].streams.front().tasks;
        REQUIRE(compute.size() >= 2);
        const sim::Task last = compute[compute.size() - 1], before = compute[compute.size() - 2];
        CHECK(last.kind == sim::TaskKind::Collective);
        CHECK(z1.collectives[last.id].role == CollectiveRole::UpdatedParameterAllGather);
        CHECK(z1.labels[before.id].phase == Phase::Optimizer);
      }
    }
  std::size_t gathers = 0;
  for (const CollectiveSpec& x : z1.collectives)
    gathers += x.role == CollectiveRole::UpdatedParameterAllGather;
  CHECK(gathers == 4);  // pp × tp groups
}

TEST_CASE("pipeline with ZeRO-1: the step is not ZeRO 0's") {
  const ZeroCase c;
  const analysis::StepResult z0 = c.simulate(0), z1 = c.simulate(1);
  // Half the optimizer, a reduce-scatter and a gather in place of each all-reduce: another step.
  CHECK(z1.step_time != z0.step_time);
  CHECK(z1.events != z0.events);
}

TEST_CASE("pipeline: ZeRO-2 and -3 are refused on a stage's program") {
  const ZeroCase c;
  StepProgram p = c.build(0);
  CHECK_THROWS_WITH_AS(apply_sharded_data_parallel(p, c.step.profile, 2),
                       "sharded data parallelism (zero) 2 needs mp = 1; got mp 2 (zero 1 shards each MP "
                       "rank's optimizer)",
                       InputError);
}

namespace {

// Mixtral's 2-layer slice, 4 replicas × pp 2 on one DGX H100 at ep 2: stage 0 holds layer 0's
// attention and router only (pipeline.stages 1, 3 of the 4 "layer." ops), stage 1 its experts and
// all of layer 1.
struct EpCase {
  TransformerStep step = generate_transformer(
      {.model = named_transformer("mixtral-8x7b"), .micro_batch = 1, .ep = 2, .layers_simulated = 3}, h100());
  StepOptions options(int ep) const {
    // Layer 0 on stage 0, layers 1 and 2 on stage 1, each with its experts (a stage list counts
    // layers, not ops: {1, 3} over 2 layers cut layer 0's experts from its attention).
    StepOptions o = pipeline_options(2, {.pp = 2, .chunk_layers = {1, 2}});
    o.ep = {.ep = ep, .syncs = step.ep_syncs, .expert_ops = step.expert_ops};
    return o;
  }
  analysis::StepSetup setup(int ep) const { return pipeline_setup(step, options(ep)); }
};

}  // namespace

TEST_CASE("pipeline with ep: the all-to-alls on the stage holding the experts, expert buckets over dp / ep") {
  const EpCase c;
  const analysis::StepSetup setup = c.setup(2);
  const StepProgram p = analysis::build_program(setup);
  std::size_t a2a_by_stage[2] = {0, 0}, expert_buckets = 0, dense_buckets = 0;
  for (const CollectiveSpec& x : p.collectives) {
    std::set<int> stages, workers;
    for (const int g : x.members) {
      stages.insert(p.mp_rank_of_gpu[static_cast<std::size_t>(g)]);
      workers.insert(p.worker_of_gpu[static_cast<std::size_t>(g)]);
    }
    if (x.role == CollectiveRole::ExpertParallel) {
      REQUIRE(stages.size() == 1);
      ++a2a_by_stage[*stages.begin()];
      CHECK(x.op == sim::CollectiveOp::AllToAll);
      // EP block 0 is replicas 0 and 1, block 1 replicas 2 and 3.
      const bool block = workers == std::set<int>{0, 1} || workers == std::set<int>{2, 3};
      CHECK(block);
    } else if (x.role == CollectiveRole::GradientAllReduce &&
               std::ranges::find(c.step.expert_ops, x.op_index) != c.step.expert_ops.end()) {
      ++expert_buckets;
      CHECK(stages.size() == 1);
      // The same experts: EP rank 0 (replicas 0 and 2) or 1 (1 and 3).
      const bool same = workers == std::set<int>{0, 2} || workers == std::set<int>{1, 3};
      CHECK(same);
    } else if (x.role == CollectiveRole::GradientAllReduce) {
      ++dense_buckets;
      CHECK(x.members.size() == 4);
      CHECK(stages.size() == 1);
    }
  }
  // 2 EP blocks × 2 micro-batches × the stage's MoE layers × 4 (dispatch, combine; forward, backward).
  CHECK(a2a_by_stage[0] == 2 * 2 * 1 * 4);
  CHECK(a2a_by_stage[1] == 2 * 2 * 2 * 4);
  CHECK(expert_buckets == 3 * 2);  // 3 expert ops, each over 2 EP ranks
  CHECK(dense_buckets > 0);
  const analysis::StepResult r = analysis::simulate_program(setup, p);
  const analysis::StepResult without = analysis::simulate_step(c.setup(1));
  CHECK(r.step_time != without.step_time);
  REQUIRE(r.per_gpu.size() == 8);
  for (std::size_t g = 0; g < 8; ++g) {
    CAPTURE(g);
    CHECK(r.per_gpu[g].ep_communication > sim::Time::zero());  // both stages hold MoE layers
    CHECK(without.per_gpu[g].ep_communication == sim::Time::zero());
  }
}

TEST_CASE("pipeline with ZeRO-1 and ep: the experts' state is sharded over the dp / ep replicas holding it") {
  // Each expert lives on the 2 replicas of one EP rank: its gradients were reduce-scattered over
  // those, but its updated parameters were gathered over all 4 replicas and its optimizer ran on a
  // quarter of it, as a dense op's; now half, and a gather over the same 2 replicas.
  const EpCase c;
  StepOptions o0 = c.options(2), o1 = c.options(2);
  o1.zero = 1;
  const StepProgram z0 = analysis::build_program(pipeline_setup(c.step, o0));
  const StepProgram z1 = analysis::build_program(pipeline_setup(c.step, o1));
  const std::vector<int> chunk = pipeline_chunk_of_op(c.step.profile, o1.pipeline);
  for (int s = 0; s < 2; ++s) {
    CAPTURE(s);
    std::int64_t dense = 0, experts = 0;
    for (std::size_t v = 0; v < chunk.size(); ++v)
      if (chunk[v] == s)
        (std::ranges::count(c.step.expert_ops, v) > 0 ? experts : dense) +=
            c.step.profile.ops[v].gradient_bytes.count();
    REQUIRE(experts > 0);
    std::size_t dense_gathers = 0, expert_gathers = 0;
    for (const CollectiveSpec& x : z1.collectives) {
      if (x.role != CollectiveRole::UpdatedParameterAllGather || x.mp_rank != s) continue;
      std::set<int> workers;
      for (const int g : x.members) workers.insert(z1.worker_of_gpu[static_cast<std::size_t>(g)]);
      if (std::ranges::count(c.step.expert_ops, x.op_index) > 0) {
        ++expert_gathers;
        CHECK(x.size.count() == experts);
        const bool same = workers == std::set<int>{0, 2} || workers == std::set<int>{1, 3};
        CHECK(same);
      } else {
        ++dense_gathers;
        CHECK(x.size.count() == dense);
        CHECK(workers == std::set<int>{0, 1, 2, 3});
      }
    }
    CHECK(dense_gathers == 1);
    CHECK(expert_gathers == 2);  // one per EP rank
    for (std::size_t g = 0; g < z1.gpus.size(); ++g) {
      if (z1.mp_rank_of_gpu[g] != s) continue;
      CAPTURE(g);
      // ZeRO 0's update: the dense share on 1/4, the experts' on 1/2 (within rounding).
      const double whole = static_cast<double>(optimizer_time(z0, g).ps());
      const double expected = whole * (static_cast<double>(dense) / 4 + static_cast<double>(experts) / 2) /
                              static_cast<double>(dense + experts);
      CHECK(std::abs(static_cast<double>(optimizer_time(z1, g).ps()) - expected) <= 4);
      // Each copy out of a bucket brings back the shard the GPU updates: 1/2 of an expert bucket.
      std::size_t expert_copies = 0;
      for (const sim::Task& t : copies_out(z1, g)) {
        const std::uint32_t bucket = z1.labels[t.id].kernel;
        const bool expert = std::ranges::count(c.step.expert_ops, z1.collectives[bucket].op_index) > 0;
        expert_copies += expert;
        const sim::Time whole = copy_out_of(z0, g, t.id);
        REQUIRE(whole > sim::Time::zero());
        CHECK(t.duration ==
              max(kernel_launch_floor(), sim::Time::ps((whole.ps() + (expert ? 1 : 3)) / (expert ? 2 : 4))));
      }
      CHECK(expert_copies > 0);
    }
  }
  CHECK(analysis::simulate_program(pipeline_setup(c.step, o1), z1).step_time !=
        analysis::simulate_step(pipeline_setup(c.step, o0)).step_time);
}

TEST_CASE("ZeRO-3 with ep: an expert op's parameters are gathered over the replicas holding it") {
  // Mixtral's 2-layer slice over 4 replicas at ep 2, no pipeline: each op's gather before its
  // forward and backward ran over all 4 replicas, two of which hold other experts.
  const TransformerStep step = generate_transformer(
      {.model = named_transformer("mixtral-8x7b"), .micro_batch = 1, .ep = 2, .layers_simulated = 2}, h100());
  StepOptions o;
  o.zero = 3;
  o.ep = {.ep = 2, .syncs = step.ep_syncs, .expert_ops = step.expert_ops};
  analysis::StepSetup s;
  s.profile = &step.profile;
  s.topology = &dgx_h100();
  s.placement = place_all_on_first(step.profile, 1);
  s.mapping = default_mapping(dgx_h100(), 4, 1);
  s.step = sharded_layout_options(o);
  const StepProgram p = analysis::build_program(s);
  std::size_t expert_gathers = 0, dense_gathers = 0;
  for (const CollectiveSpec& x : p.collectives) {
    if (x.role != CollectiveRole::ParameterAllGather) continue;
    std::set<int> workers;
    for (const int g : x.members) workers.insert(p.worker_of_gpu[static_cast<std::size_t>(g)]);
    if (std::ranges::count(step.expert_ops, x.op_index) > 0) {
      ++expert_gathers;
      const bool same = workers == std::set<int>{0, 2} || workers == std::set<int>{1, 3};
      CHECK(same);
    } else {
      ++dense_gathers;
      CHECK(workers == std::set<int>{0, 1, 2, 3});
    }
  }
  CHECK(expert_gathers == 2 * 2 * step.expert_ops.size());  // forward and backward, each EP rank
  CHECK(dense_gathers > 0);
  CHECK(analysis::simulate_program(s, p).step_time > sim::Time::zero());
}
