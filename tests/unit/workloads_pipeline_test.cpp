// Pipeline parallelism (workloads/program/pipeline_schedule.h, pipeline_program.h): the schedules'
// orders, the located problems, and the bubble that comes out of simulating a uniform pipeline
// with free communication — (p − 1)/m of the ideal time under GPipe and 1F1B, (p − 1)/(v·m)
// interleaved (Narayanan et al. 2021, §2.2).
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "analysis/step/step_runner.h"
#include "sim/error.h"
#include "tests/unit/toy_profile.h"
#include "topology/presets.h"
#include "workloads/generators/transformer_gen.h"
#include "workloads/gpu/gpu.h"
#include "workloads/program/pipeline_program.h"
#include "workloads/program/tensor_parallel.h"

using namespace hybridsim;
using sim::Time;
using workloads::PipelineSchedule;
using workloads::PipelineTask;
using workloads::TpSync;

namespace {

// `layers` equal layers of 1 ms forward and 2 ms backward, without gradients (no optimizer).
workloads::Profile uniform_layers(int layers, sim::Bytes grad = sim::Bytes()) {
  workloads::Profile p = testing::toy_profile();
  for (int i = 0; i < layers; ++i)
    p.ops.push_back(testing::toy_op(
        "layer." + std::to_string(i),
        i == 0 ? std::vector<std::uint32_t>{} : std::vector<std::uint32_t>{std::uint32_t(i - 1)}, Time::ms(1),
        Time::ms(2), grad, sim::Bytes::of(1)));
  workloads::validate_profile(p);
  return p;
}

analysis::StepResult simulate(const workloads::Profile& p, const topology::Topology& t, int dp,
                              workloads::PipelineOptions pipeline, int m) {
  analysis::StepSetup s;
  s.profile = &p;
  s.topology = &t;
  s.mapping = workloads::default_mapping(t, dp, pipeline.pp);
  s.step.pipeline = pipeline;
  s.step.accumulation = m;
  return analysis::simulate_step(s);
}

// Communication as good as free: links of 10^9 GB/s without latency (a 1-byte transfer takes
// well under a picosecond's rounding).
topology::Topology free_links(int gpus) {
  return topology::presets::fully_connected(
      {.gpus = gpus, .bandwidth = sim::Bandwidth::gb_per_second(1e9), .latency = Time::zero()});
}

}  // namespace

TEST_CASE("pipeline schedules: 1F1B warms up p - s - 1 forwards, then alternates") {
  const auto last = workloads::stage_schedule(PipelineSchedule::OneFOneB, {.p = 4, .v = 1, .m = 3}, 3);
  CHECK(last == std::vector<PipelineTask>{{0, 0, false}, {0, 0, true}, {0, 1, false},
                                          {0, 1, true},  {0, 2, false}, {0, 2, true}});
  const auto first = workloads::stage_schedule(PipelineSchedule::OneFOneB, {.p = 4, .v = 1, .m = 5}, 0);
  CHECK(first == std::vector<PipelineTask>{{0, 0, false}, {0, 1, false}, {0, 2, false}, {0, 3, false},
                                           {0, 0, true},  {0, 4, false}, {0, 1, true},  {0, 2, true},
                                           {0, 3, true},  {0, 4, true}});
  const auto gpipe = workloads::stage_schedule(PipelineSchedule::GPipe, {.p = 2, .v = 1, .m = 2}, 1);
  CHECK(gpipe == std::vector<PipelineTask>{{0, 0, false}, {0, 1, false}, {0, 0, true}, {0, 1, true}});
}

TEST_CASE("pipeline schedules: interleaved runs every chunk of every micro-batch once each way") {
  for (const int stage : {0, 1, 3}) {
    CAPTURE(stage);
    const auto order =
        workloads::stage_schedule(PipelineSchedule::Interleaved, {.p = 4, .v = 2, .m = 8}, stage);
    REQUIRE(order.size() == 2u * 2 * 8);
    // Megatron-LM's order: micro-batches 0-3 through chunk 0, then 0-3 through chunk 1, then 4-7 ...
    CHECK(order[0] == PipelineTask{0, 0, false});
    CHECK(order[4] == PipelineTask{1, 0, false});
    for (int c = 0; c < 2; ++c)
      for (int j = 0; j < 8; ++j)
        for (const bool b : {false, true})
          CHECK(std::count(order.begin(), order.end(), PipelineTask{c, j, b}) == 1);
  }
  // The last stage's first backward is its last chunk's of micro-batch 0, after (v − 1)·p forwards.
  const auto last = workloads::stage_schedule(PipelineSchedule::Interleaved, {.p = 4, .v = 2, .m = 8}, 3);
  CHECK(last[5] == PipelineTask{1, 0, true});
}

TEST_CASE("pipeline: balanced stages give the middle stages the extra layers") {
  CHECK(workloads::balanced_layers(96, 8) == std::vector<int>(8, 12));
  CHECK(workloads::balanced_layers(10, 4) == std::vector<int>{2, 3, 3, 2});
  CHECK_THROWS_AS(workloads::balanced_layers(3, 4), InputError);
}

TEST_CASE("pipeline: the simulated bubble is (p - 1)/m of the ideal time with free communication") {
  for (const auto schedule : {PipelineSchedule::GPipe, PipelineSchedule::OneFOneB})
    for (const int p : {2, 4})
      for (const int m : {1, 4, 8}) {
        CAPTURE(p);
        CAPTURE(m);
        CAPTURE(workloads::pipeline_schedule_name(schedule));
        const auto profile = uniform_layers(2 * p);
        const auto t = free_links(p);
        const auto r = simulate(profile, t, 1, {.pp = p, .schedule = schedule}, m);
        // Each stage: 2 layers, 2 ms forward and 4 ms backward per micro-batch.
        const Time ideal = Time::ms(6) * m;
        CHECK(r.step_time.to_seconds() / ideal.to_seconds() - 1 ==
              doctest::Approx((p - 1.0) / m).epsilon(1e-9));
      }
}

TEST_CASE("pipeline: the interleaved bubble is (p - 1)/(v m) of the ideal time with free communication") {
  for (const int p : {2, 4})
    for (const int v : {2, 3})
      for (const int groups : {1, 2}) {
        const int m = groups * p;
        CAPTURE(p);
        CAPTURE(v);
        CAPTURE(m);
        const auto profile = uniform_layers(p * v);  // one layer per chunk: 1 ms forward, 2 ms backward
        const auto t = free_links(p);
        const auto r = simulate(profile, t, 1, {.pp = p, .schedule = PipelineSchedule::Interleaved,
                                                .virtual_stages = v}, m);
        const Time ideal = Time::ms(3) * v * m;
        CHECK(r.step_time.to_seconds() / ideal.to_seconds() - 1 ==
              doctest::Approx((p - 1.0) / (v * m)).epsilon(1e-9));
      }
}

TEST_CASE("pipeline: located problems name their key") {
  const auto problem = [](workloads::PipelineOptions o, int layers, int m) {
    const auto found = workloads::pipeline_problem(o, layers, m);
    return found ? found->key : std::string();
  };
  CHECK(problem({.pp = 8}, 4, 8) == "parallelism.pp");
  CHECK(problem({.pp = 2, .virtual_stages = 2}, 8, 8) == "pipeline.virtual_stages");
  CHECK(problem({.pp = 4, .schedule = PipelineSchedule::Interleaved, .virtual_stages = 2}, 8, 6) ==
        "training.global_batch");
  // Interleaved with one chunk a stage is not interleaving: refused, as the planner leaves it out.
  CHECK(problem({.pp = 4, .schedule = PipelineSchedule::Interleaved}, 8, 8) == "pipeline.schedule");
  CHECK(problem({.pp = 4, .schedule = PipelineSchedule::Interleaved, .virtual_stages = 2}, 8, 8).empty());
  CHECK(problem({.pp = 2, .chunk_layers = {3, 3}}, 8, 4) == "pipeline.stages");
  CHECK(problem({.pp = 2, .chunk_layers = {3, 3, 2}}, 8, 4) == "pipeline.stages");
  CHECK(problem({.pp = 2, .chunk_layers = {5, 3}}, 8, 4).empty());
  CHECK(problem({.pp = 4}, 8, 3).empty());  // 1F1B with fewer micro-batches than stages: a big bubble
}

TEST_CASE("pipeline: stages hold whole layers, the embedding with the first and the head with the last") {
  workloads::Profile p = testing::toy_profile();
  const std::vector<std::string> names = {"embedding", "layer.0", "layer.1", "layer.2", "lm_head"};
  for (std::uint32_t i = 0; i < names.size(); ++i)
    p.ops.push_back(testing::toy_op(names[i],
                                    i == 0 ? std::vector<std::uint32_t>{} : std::vector<std::uint32_t>{i - 1},
                                    Time::ms(1), Time::ms(2), sim::Bytes::mib(1)));
  CHECK(workloads::pipeline_chunk_of_op(p, {.pp = 2}) == std::vector<int>{0, 0, 1, 1, 1});
  CHECK(workloads::pipeline_chunk_of_op(p, {.pp = 2, .chunk_layers = {2, 1}}) ==
        std::vector<int>{0, 0, 0, 1, 1});
  p.ops[3].inputs = {0};
  CHECK_THROWS_WITH_AS(workloads::pipeline_chunk_of_op(p, {.pp = 2}), doctest::Contains("chain"), InputError);
}

TEST_CASE("pipeline: a mixture's layer is one layer, its experts op in its stage") {
  // Mixtral's 3-layer slice: each layer is two ops, "layer.N" (attention, router) and
  // "layer.N.experts". Both were counted as layers: pipeline.stages counted ops, and 3 layers over
  // pp 2 cut layer 1 between the stages while the memory model gave them 1 and 2 layers.
  const workloads::TransformerStep step = workloads::generate_transformer(
      {.model = workloads::named_transformer("mixtral-8x7b"), .micro_batch = 1, .layers_simulated = 3},
      workloads::transformer_cost(workloads::gpu_by_key("h100"), workloads::Precision::Bf16));
  CHECK(workloads::pipeline_layer_count(step.profile) == 3);
  const auto chunk_of = [&](const std::vector<int>& chunks, const std::string& name) {
    for (std::size_t v = 0; v < step.profile.ops.size(); ++v)
      if (step.profile.ops[v].name == name) return chunks[v];
    FAIL("no op " << name);
    return -1;
  };
  const std::vector<int> balanced = workloads::pipeline_chunk_of_op(step.profile, {.pp = 2});
  CHECK(workloads::balanced_layers(3, 2) == std::vector<int>{1, 2});  // as the memory model splits them
  for (int l = 0; l < 3; ++l) {
    const std::string layer = "layer." + std::to_string(l);
    CHECK(chunk_of(balanced, layer) == (l == 0 ? 0 : 1));
    CHECK(chunk_of(balanced, layer + ".experts") == chunk_of(balanced, layer));
  }
  const std::vector<int> listed =
      workloads::pipeline_chunk_of_op(step.profile, {.pp = 2, .chunk_layers = {2, 1}});
  CHECK(chunk_of(listed, "layer.1.experts") == 0);
  CHECK(chunk_of(listed, "layer.2") == 1);
  CHECK_THROWS_WITH_AS(workloads::pipeline_chunk_of_op(step.profile, {.pp = 2, .chunk_layers = {2, 4}}),
                       doctest::Contains("the model has 3"), InputError);
}

namespace {

// 3 replicas of pp 2 × tp 2 over 4 uniform layers: 12 GPUs. The program as built, its replicas sharing
// one replica's streams, against every list a copy of its own before the TP collectives go in, one
// GPU at a time: the same tasks and collectives. Returns the shared program.
workloads::StepProgram shared_as_if_built_gpu_by_gpu(const std::vector<TpSync>& syncs) {
  const workloads::Profile p = uniform_layers(4, sim::Bytes::of(1000));
  const topology::Topology t = free_links(12);
  workloads::StepOptions o;
  o.accumulation = 2;
  o.pipeline.pp = 2;
  o.tp = 2;
  o.tp_syncs = syncs;
  const workloads::WorkerMapping mapping = workloads::default_mapping(t, 6, 2);
  workloads::StepProgram shared = workloads::build_pipeline_program(p, mapping, 12, o);
  workloads::StepOptions plain = o;
  plain.tp = 1;
  workloads::StepProgram reference = workloads::build_pipeline_program(p, mapping, 12, plain);
  for (auto& gpu : reference.gpus)
    for (auto& stream : gpu.streams) stream.tasks.mutate();
  workloads::apply_tensor_parallel(reference, o.tp_syncs, 2);
  REQUIRE(shared.collectives.size() == reference.collectives.size());
  for (std::size_t c = 0; c < shared.collectives.size(); ++c) {
    CHECK(shared.collectives[c].members == reference.collectives[c].members);
    CHECK(shared.collectives[c].role == reference.collectives[c].role);
  }
  std::vector<const void*> distinct;
  for (std::size_t g = 0; g < 12; ++g) {
    CAPTURE(g);
    REQUIRE(shared.gpus[g].streams.size() == reference.gpus[g].streams.size());
    for (std::size_t s = 0; s < shared.gpus[g].streams.size(); ++s) {
      CHECK(shared.gpus[g].streams[s].name == reference.gpus[g].streams[s].name);
      const sim::TaskList& a = shared.gpus[g].streams[s].tasks;
      const sim::TaskList& b = reference.gpus[g].streams[s].tasks;
      REQUIRE(a.size() == b.size());
      for (std::size_t i = 0; i < a.size(); ++i) {
        CHECK(a[i].kind == b[i].kind);
        // Events are laid out alike for shared lists (GroupInserter::plan_events), one after another
        // for lists of their own: compared by what they pair (below).
        if (a[i].kind != sim::TaskKind::Record && a[i].kind != sim::TaskKind::Wait) CHECK(a[i].id == b[i].id);
        CHECK(a[i].rank == b[i].rank);
      }
      if (shared.gpus[g].streams[s].name != "compute") continue;
      CHECK(a.is_shared());
      if (std::find(distinct.begin(), distinct.end(), a.same_tasks()) == distinct.end())
        distinct.push_back(a.same_tasks());
    }
  }
  CHECK(distinct.size() == 4);  // pp × tp compute streams, whatever the replicas
  // Each event a GPU waits for is recorded on it, and on no other GPU.
  std::map<std::uint32_t, std::size_t> recorded_on;
  for (std::size_t g = 0; g < 12; ++g)
    for (const auto& stream : shared.gpus[g].streams)
      for (const sim::Task& t : stream.tasks)
        if (t.kind == sim::TaskKind::Record) CHECK(recorded_on.try_emplace(t.id, g).first->second == g);
  for (std::size_t g = 0; g < 12; ++g)
    for (const auto& stream : shared.gpus[g].streams)
      for (const sim::Task& t : stream.tasks)
        if (t.kind == sim::TaskKind::Wait) CHECK(recorded_on.at(t.id) == g);
  return shared;
}

bool has_stream(const sim::GpuProgram& gpu, const std::string& name) {
  return std::any_of(gpu.streams.begin(), gpu.streams.end(), [&](const auto& s) { return s.name == name; });
}

}  // namespace

TEST_CASE("pipeline with tp: the replicas share one replica's streams, exactly as if built GPU by GPU") {
  // Every layer's forward and backward issues a TP all-reduce.
  std::vector<TpSync> syncs;
  for (std::uint32_t op = 0; op < 4; ++op)
    for (const bool backward : {false, true})
      syncs.push_back({op, backward, 0, sim::CollectiveOp::AllReduce, sim::Bytes::of(64)});
  const workloads::StepProgram p = shared_as_if_built_gpu_by_gpu(syncs);
  for (const sim::GpuProgram& gpu : p.gpus) CHECK_FALSE(has_stream(gpu, "tensor-parallel"));
}

TEST_CASE("pipeline with tp: a TP stream only on the stages whose ops overlap a collective") {
  // The last stage's layers (2 and 3) all-reduce beside their backward kernel (issued before it,
  // TpSync::kBeforeFirst, waited for after it); the first stage's block. Its GPUs had a TP stream
  // all the same where a replica shared the first's: the builder took the GPU's last stream for it
  // (a copy of the pipeline's own, a second time, named "tensor-parallel").
  std::vector<TpSync> syncs;
  for (std::uint32_t op = 0; op < 4; ++op)
    syncs.push_back({op, true, op < 2 ? 0 : TpSync::kBeforeFirst, sim::CollectiveOp::AllReduce,
                     sim::Bytes::of(64), op < 2 ? 0U : 1U});
  const workloads::StepProgram p = shared_as_if_built_gpu_by_gpu(syncs);
  for (std::size_t g = 0; g < p.gpus.size(); ++g) {
    CAPTURE(g);
    CHECK(has_stream(p.gpus[g], "tensor-parallel") == (p.mp_rank_of_gpu[g] == 1));
  }
}
