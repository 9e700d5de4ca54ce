// Mixtures of experts and expert parallelism: the MoE layer's kernels and all-to-alls against the
// closed forms (b·s·h·top_k·capacity values per dispatch, expert FLOPs per token), the program's EP
// groups on one machine and expert gradients over dp / ep replicas, the memory formula, and the
// located errors of bad input.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include "analysis/run/run_outputs.h"
#include "analysis/run/scenario_run.h"
#include "analysis/step/step_runner.h"
#include "scenarios/loader/resolve.h"
#include "scenarios/loader/scenario.h"
#include "sim/error.h"
#include "topology/preset_registry.h"
#include "workloads/generators/transformer_gen.h"
#include "workloads/gpu/gpu.h"
#include "workloads/memory/transformer_memory.h"

using namespace hybridsim;
using namespace hybridsim::workloads;

namespace {

TransformerCost h100() { return transformer_cost(gpu_by_key("h100"), Precision::Bf16); }

TransformerStep mixtral(int ep, int tp = 1, std::int64_t layers = 2) {
  return generate_transformer({.model = named_transformer("mixtral-8x7b"),
                               .micro_batch = 1,
                               .tp = tp,
                               .ep = ep,
                               .layers_simulated = layers},
                              h100());
}

// The summed durations of an op's forward kernels whose names start with `prefix`.
sim::Time time_of(const TransformerStep& s, const std::string& op, const std::string& prefix) {
  sim::Time t;
  for (const Kernel& k : s.profile.ops[s.profile.op_by_name(op)].forward)
    if (k.name.rfind(prefix, 0) == 0) t += k.duration;
  return t;
}

}  // namespace

TEST_CASE("mixture of experts: mixtral-8x7b's shape, parameters and active FLOPs") {
  const TransformerModel m = named_transformer("mixtral-8x7b");
  CHECK(m.experts == 8);
  CHECK(m.top_k == 2);
  // 46.7 B parameters, 12.9 B active (the model card, ../shared/reference/transformers.md).
  CHECK(std::llround(transformer_parameters(m) / 1e8) == 467);
  const std::int64_t h = 4096, f = 14336, kv = 1024;
  const std::int64_t active_layer = 2 * h * h + 2 * h * kv + 2 * 3 * h * f + h * 8 + 2 * h;
  CHECK(std::llround((32 * active_layer + 2 * 32000 * h) / 1e8) == 129);
  // Forward FLOPs per token of a layer: 2 per multiply-add of the attention, the router and top_k
  // experts' three matrices, plus the attention scores 4·s·h.
  const std::int64_t s = 4096;
  CHECK(layer_forward_flop(m, 1) == s * (2 * (2 * h * h + 2 * h * kv + 2 * 3 * h * f + h * 8) + 4 * s * h));
}

TEST_CASE("mixture of experts: each GPU's experts run top_k x capacity of its tokens") {
  const TransformerCost cost = h100();
  for (const int ep : {1, 2, 8}) {
    CAPTURE(ep);
    const TransformerStep st = mixtral(ep);
    const std::int64_t tokens = 4096, h = 4096, f = 14336;
    // 8 / ep experts here, each on its share of the EP group's routed tokens: ep·tokens·2 / 8; so
    // tokens × top_k expert-tokens per GPU whatever ep, each 3 matrices (gate and up, then down).
    const std::int64_t per_expert = ep * tokens * 2 / 8;
    CHECK(per_expert * (8 / ep) == tokens * 2);
    std::int64_t experts_seen = 0;
    for (const Kernel& k : st.profile.ops[st.profile.op_by_name("layer.0.experts")].forward)
      if (k.name.ends_with(".mlp_in")) ++experts_seen;
    CHECK(experts_seen == 8 / ep);
    CHECK(time_of(st, "layer.0.experts", "expert.0.mlp_in") ==
          cost.gemm("", 2 * per_expert * h * f * 2).duration);
    CHECK(time_of(st, "layer.0.experts", "expert.0.mlp_out") ==
          cost.gemm("", 2 * per_expert * f * h).duration);
    CHECK(time_of(st, "layer.0", "router") - time_of(st, "layer.0", "router_topk") ==
          cost.gemm("", 2 * tokens * h * 8).duration);
  }
}

TEST_CASE("expert parallel: 4 all-to-alls per MoE layer of b·s·h·top_k·capacity values") {
  for (const double capacity : {1.0, 1.25}) {
    TransformerModel m = named_transformer("mixtral-8x7b");
    m.capacity_factor = capacity;
    const TransformerStep st =
        generate_transformer({.model = m, .micro_batch = 2, .ep = 8, .layers_simulated = 3}, h100());
    CHECK(st.ep_syncs.size() == 3 * 4);
    CHECK(st.syncs.empty());
    const double values = 2.0 * 4096 * 4096 * 2 * capacity;
    for (const TpSync& s : st.ep_syncs) {
      CHECK(s.kind == sim::CollectiveOp::AllToAll);
      CHECK(s.bytes.count() == std::llround(values * 2));  // BF16
    }
  }
  CHECK(mixtral(1).ep_syncs.empty());
}

TEST_CASE("expert parallel: EP groups on one machine, expert gradients over dp / ep replicas") {
  static const topology::Topology two = topology::build_cluster({.preset = "dgx-h100", .nodes = 2});
  const TransformerStep st = mixtral(8, 1, 1);
  analysis::StepSetup setup;
  setup.profile = &st.profile;
  setup.topology = &two;
  setup.placement = place_all_on_first(st.profile, 1);
  setup.mapping = default_mapping(two, 16, 1);
  setup.step.ep = {.ep = 8, .syncs = st.ep_syncs, .expert_ops = st.expert_ops};
  const StepProgram p = analysis::build_program(setup);
  const std::uint32_t experts = st.expert_ops.front();
  std::size_t a2a = 0, expert_buckets = 0, dense_buckets = 0;
  for (const auto& c : p.collectives) {
    if (c.role == CollectiveRole::ExpertParallel) {
      ++a2a;
      REQUIRE(c.members.size() == 8);
      CHECK(c.op == sim::CollectiveOp::AllToAll);
      CHECK(std::set<int>{c.members.front() / 8, c.members.back() / 8}.size() == 1);
    } else if (c.role == CollectiveRole::GradientAllReduce && c.op_index == experts) {
      ++expert_buckets;
      // The same expert on each machine: GPU g and g + 8.
      REQUIRE(c.members.size() == 2);
      CHECK(c.members[1] == c.members[0] + 8);
      CHECK(c.size == st.profile.ops[experts].gradient_bytes);
    } else if (c.role == CollectiveRole::GradientAllReduce) {
      ++dense_buckets;
      CHECK(c.members.size() == 16);
    }
  }
  CHECK(a2a == 2 * 4);  // two EP groups (machines), 4 all-to-alls each
  CHECK(expert_buckets == 8);
  CHECK(dense_buckets > 0);
  const analysis::StepResult r = analysis::simulate_program(setup, p);
  CHECK(r.step_time > sim::Time::zero());
  // The step's parts: the all-to-alls are EP communication, not TP (tp 1 here), and with no
  // pipeline the exposed parts are exactly the communication no kernel hides.
  REQUIRE(r.per_gpu.size() == 16);
  for (const analysis::GpuStepMetrics& g : r.per_gpu) {
    CHECK(g.tp_communication == sim::Time::zero());
    CHECK(g.ep_communication > sim::Time::zero());
    CHECK(g.pipeline_bubble == sim::Time::zero());
    CHECK(g.tp_communication + g.ep_communication + g.dp_communication == g.exposed_communication);
  }
}

TEST_CASE("expert parallel: memory divides expert state by ep and keeps the experts' tokens") {
  const TransformerModel m = named_transformer("mixtral-8x7b");
  const TransformerMemory one = transformer_memory({.model = m, .ep = 1});
  const TransformerMemory eight = transformer_memory({.model = m, .ep = 8});
  const std::int64_t expert = 32LL * 8 * 3 * 4096 * 14336;
  // BF16 weights: 2 bytes per parameter; 7/8 of the experts leave each GPU at ep 8.
  CHECK(one.weights.count() - eight.weights.count() == 2 * (expert - expert / 8));
  CHECK(one.optimizer.count() - eight.optimizer.count() == 12 * (expert - expert / 8));
  // Activations per layer: Korthikanti's 34·s·b·h less the MLP's 18·s·b·h, the experts' tokens
  // (s·b·top_k of them, each h + 3·ffn values) and the FP32 router logits.
  const std::int64_t s = 4096, h = 4096, f = 14336;
  const std::int64_t layer = 16 * s * h + 2 * (2 * s) * (h + 3 * f) + 4 * s * 8;
  CHECK(layer_activation_bytes({.model = m, .ep = 8}) == layer);
  CHECK(layer_activation_bytes({.model = m, .ep = 1}) == layer);
}

TEST_CASE("expert parallel: ZeRO shards the experts over the dp / ep replicas that hold them") {
  // Mixtral at ep 8 over dp 16: each expert lives on 16 / 8 = 2 replicas (the expert gradients'
  // reduce-scatters run over those two), so ZeRO divides its state by 2, the rest by 16. Dividing
  // all by 16 counted the whole model at 63.5 GiB a GPU under ZeRO-1, "fits" in 80 GiB; it needs 91.1.
  const TransformerModel m = named_transformer("mixtral-8x7b");
  const std::int64_t expert = 32LL * (8 * 3 * 4096 * 14336 / 8);  // one GPU's eighth of the experts
  const TransformerMemory none = transformer_memory({.model = m, .dp = 16, .ep = 8});
  const std::int64_t params = none.weights.count() / 2, dense = params - expert;
  for (int zero = 1; zero <= 3; ++zero) {
    CAPTURE(zero);
    const TransformerMemory z = transformer_memory({.model = m, .zero = zero, .dp = 16, .ep = 8});
    CHECK(z.optimizer.count() == 12 * dense / 16 + 12 * expert / 2);
    CHECK(z.gradients.count() == (zero >= 2 ? 2 * dense / 16 + 2 * expert / 2 : 2 * params));
    if (zero == 3)
      CHECK(z.weights.count() ==
            2 * dense / 16 + 2 * expert / 2 +
                zero3_gathered_bytes({.model = m, .zero = 3, .dp = 16, .ep = 8}, 32, true, true));
  }
  // ep 1: every replica holds every expert, all of it over dp, as a dense model's.
  CHECK(transformer_memory({.model = m, .zero = 1, .dp = 16, .ep = 1}).optimizer.count() ==
        12 * transformer_memory({.model = m, .dp = 16, .ep = 1}).weights.count() / 2 / 16);
  // The rule the run prints says so.
  CHECK(transformer_memory_rule({.model = m, .zero = 1, .dp = 16, .ep = 8}) ==
        "Korthikanti et al. 2022's activations; weights, gradients, optimizer / tp 1 (the experts' also / "
        "ep 8); ZeRO-1 over dp 16: optimizer / 16 (the experts' / 2, the dp / ep replicas that hold them)");
}

TEST_CASE("expert parallel: ZeRO-3 at dp = ep gathers no expert, as a hand count of Mixtral says") {
  // Mixtral 8x7B (../shared/reference/transformers.md: hidden 4,096, 32 heads of which 8 KV heads,
  // SwiGLU FFN 14,336 per expert, 8 experts, vocabulary 32,000) over dp 2 x ep 2 x tp 8, 2-layer
  // slice, BF16. One GPU holds per layer the attention (q and o 4096^2, k and v 4096 x 1024) over tp
  // 8, and the two norms (2 x 4096) and the router (4096 x 8) whole, as Megatron-LM keeps them on
  // every TP rank: 5,283,840 (5,276,672 when the norms were divided by tp, 5,248,000 when the router
  // was too); its 4 experts (8 / ep 2) of 3 x 4096 x 14336 over tp 8: 88,080,384; the embedding and
  // the LM head, vocabulary padded to 32,768 (a multiple of 128 x tp), 32768 x 4096 / 8 = 16,777,216
  // each, the head with the final norm (4096) whole. ZeRO-3 shards the dense part over dp 2 and the
  // experts over dp / ep = 1 (held whole): nothing of them is gathered, so the pair in flight is the
  // last layer's attention with the head (the final norm makes it 4096 more than the embedding with
  // layer 0's). Before, the experts' op was counted as
  // gathered too: 0.56 GiB of weights, more than the 0.41 GiB of no ZeRO at all.
  const auto weights = [](const std::string& zero, bool whole) {
    const scenarios::ResolvedScenario r = scenarios::resolve(scenarios::parse_scenario(
        "cluster: {preset: dgx-h100, nodes: 2}\n"
        "workload: {network: mixtral-8x7b, model: {layers_simulated: 2}}\n"
        "parallelism: {dp: 2, ep: 2, tp: 8, sequence_parallel: true, zero: " +
            zero + "}\ntraining: {micro_batch: 1, global_batch: 2, recompute: none}\n",
        "s.yaml"));
    REQUIRE(r.transformer);
    REQUIRE(r.transformer->slice);
    const workloads::MemoryBreakdown& peak =
        whole ? r.transformer->slice->whole_model : r.transformer->memory.ranks.front().peak;
    return peak[MemoryPart::Weights].count();
  };
  const std::int64_t attention = (2 * 4096LL * 4096 + 2 * 4096LL * 1024) / 8 + 2 * 4096 + 4096 * 8;
  const std::int64_t experts = 4 * 3 * 4096LL * 14336 / 8, vocab = 32768LL * 4096 / 8, head = vocab + 4096;
  CHECK(attention == 5'283'840);
  const std::int64_t pair = 2 * (attention + head);  // BF16: 2 bytes a parameter
  const auto zero3 = [&](std::int64_t layers) {
    return 2 * (layers * attention + vocab + head) / 2 + 2 * layers * experts + pair;
  };
  CHECK(weights("3", false) == zero3(2));  // 440,578,048 B, 0.41 GiB
  // Against no ZeRO's 2 x (2 x attention + 2 x experts + vocab + head): the dense half ZeRO-3 shards
  // away at dp 2, (2 x attention + vocab + head) / 2, is the pair in flight (attention + head) less
  // half the final norm, (head - vocab) / 2 = 2,048 parameters: this 2-layer slice holds 4,096 B more
  // under ZeRO-3 (the two were equal when the head held no final norm); the whole model holds less.
  CHECK(weights("3", false) - weights("0", false) == 2 * 2'048);
  CHECK(weights("3", true) == zero3(32));  // 5,883,916,288 B, 5.48 GiB (5.63 without ZeRO)
  CHECK(weights("3", true) < weights("0", true));
  // At dp 4 x ep 2 each expert lives on 2 replicas, sharded and gathered: the pair is the last
  // layer's experts with the LM head, as before.
  const TransformerModel m = named_transformer("mixtral-8x7b");
  CHECK(zero3_gathered_bytes({.model = m, .tp = 8, .zero = 3, .dp = 4, .ep = 2}, 2, true, true) ==
        2 * (experts + head));
}

TEST_CASE("mixture of experts: bad input is refused with its numbers") {
  TransformerModel m = named_transformer("mixtral-8x7b");
  CHECK_THROWS_WITH_AS(check_experts(m, 3), doctest::Contains("experts 8 are not divisible by ep 3"),
                       InputError);
  m.top_k = 9;
  CHECK_THROWS_WITH_AS(check_experts(m, 1), doctest::Contains("top_k 9 must be from 1 to experts 8"),
                       InputError);
  CHECK_THROWS_WITH_AS(check_experts(named_transformer("llama3-8b"), 2), doctest::Contains("has no experts"),
                       InputError);
}

TEST_CASE("expert parallel: a scenario's bad ep or top_k is refused at its key") {
  const auto resolve_text = [](const std::string& parallelism, const std::string& model) {
    return scenarios::resolve(
        scenarios::parse_scenario("cluster: {preset: dgx-h100, nodes: 2}\n"
                                  "workload: {network: mixtral-8x7b, model: {layers_simulated: 1" +
                                      model +
                                      "}}\n"
                                      "parallelism: {" +
                                      parallelism + "}\n",
                                  "s.yaml"));
  };
  CHECK_THROWS_WITH_AS(resolve_text("dp: 12, ep: 8", ""),
                       doctest::Contains("s.yaml:3:27: parallelism.ep: ep 8 does not divide dp 12"),
                       InputError);
  CHECK_THROWS_WITH_AS(resolve_text("dp: 12, ep: 3", ""),
                       doctest::Contains("parallelism.ep: mixtral-8x7b: experts 8 are not divisible by ep 3"),
                       InputError);
  CHECK_THROWS_WITH_AS(
      resolve_text("dp: 16, ep: 8", ", top_k: 9"),
      doctest::Contains("workload.model.top_k: mixtral-8x7b: top_k 9 must be from 1 to experts 8"),
      InputError);
  CHECK_NOTHROW(resolve_text("dp: 16, ep: 8", ""));
}

TEST_CASE("expert parallel: a fixed LL128 or LL is said not to reach the all-to-alls, which run Simple") {
  // Mixtral on one DGX H100 (NVSwitch inside the machine, so NCCL enables LL128 there): the run's
  // settings labelled the expert all-to-alls ll128 although every all-to-all runs Simple, NCCL's
  // point-to-point protocol (issue 31). The settings now say so, under ll and ll128 only.
  const auto resolve = [](const std::string& protocol, int ep) {
    return scenarios::resolve(scenarios::parse_scenario(
        "cluster: {preset: dgx-h100}\nworkload: {network: mixtral-8x7b, model: {layers_simulated: 1}}\n"
        "parallelism: {dp: 8, ep: " +
            std::to_string(ep) + "}\ncommunication: {protocol: " + protocol + "}\n",
        "m.yaml"));
  };
  const auto settings = [&](const std::string& protocol, int ep) {
    const scenarios::ResolvedScenario r = resolve(protocol, ep);
    std::string note = "(none)";
    for (const auto& [k, v] : scenarios::key_settings(r))
      if (k == "expert all-to-alls") note = v;
    return note;
  };
  CHECK(settings("ll128", 8) ==
        "Simple, not the LL128 of communication.protocol: NCCL sends an all-to-all as grouped point-to-point "
        "copies, which it runs on Simple only; the other collectives run LL128");
  CHECK(settings("ll", 8).starts_with("Simple, not the LL of communication.protocol"));
  for (const std::string p : {"auto", "simple", "ideal"}) CHECK(settings(p, 8) == "(none)");
  CHECK(settings("ll128", 1) == "(none)");  // no all-to-all
  // The run's summary shows it, as it shows the GPU's notes.
  const scenarios::ResolvedScenario r = resolve("ll128", 8);
  CHECK(analysis::run_summary(analysis::run_scenario(r, {}), r.scenario).table.find(
            "  expert all-to-alls              Simple, not the LL128") != std::string::npos);
  // What the note says is what runs: under a fixed LL128 the planner times an all-to-all over the
  // machine as Simple and an all-reduce over the same GPUs as LL128.
  static const topology::Topology one = topology::build_cluster({.preset = "dgx-h100"});
  workloads::CommPlanner planner(one, {.protocol = sim::Protocol::LL128});
  const std::vector<int> gpus{0, 1, 2, 3, 4, 5, 6, 7};
  CHECK(planner.plan({.op = sim::CollectiveOp::AllToAll, .size = sim::Bytes::mib(64), .members = gpus})
            .protocol == sim::Protocol::Simple);
  CHECK(planner.plan({.op = sim::CollectiveOp::AllReduce, .size = sim::Bytes::mib(64), .members = gpus})
            .protocol == sim::Protocol::LL128);
}

TEST_CASE("mixture of experts: the tokens past capacity are dropped, said so and not counted in MFU") {
  // Below capacity 1 each expert runs capacity × its share of the routed tokens; the rest skip it.
  // Model FLOPs counted all top_k experts of every token, so MFU rose as capacity fell (25.5% at 1,
  // 39.6% at 0.01 on one DGX H100: MEASUREMENTS.md, hunt7). The experts' part, 2·s·top_k·3·h·f a
  // sequence, now counts min(1, capacity) of itself; the padding above 1 was never counted.
  TransformerModel m = named_transformer("mixtral-8x7b");
  const std::int64_t s = 4096, h = 4096, f = 14336;
  const std::int64_t experts = 2 * s * 2 * 3 * h * f, full = layer_forward_flop(m, 1);
  for (const double capacity : {0.5, 0.1, 1.25}) {
    CAPTURE(capacity);
    m.capacity_factor = capacity;
    const double kept = std::min(capacity, 1.0);
    CHECK(layer_forward_flop(m, 1) == full - experts + std::llround(static_cast<double>(experts) * kept));
    CHECK(dropped_token_share(m) == doctest::Approx(1 - kept));
  }
  CHECK(dropped_token_share(named_transformer("llama3-8b")) == 0);
  // The run says it, in its summary's table and settings, and MFU counts what runs.
  const auto run_at = [](const std::string& capacity) {
    const scenarios::ResolvedScenario r = scenarios::resolve(scenarios::parse_scenario(
        "cluster: {preset: dgx-h100}\nworkload: {network: mixtral-8x7b, model: {layers_simulated: 1, "
        "capacity_factor: " +
            capacity + "}}\nparallelism: {dp: 8, ep: 8}\n",
        "c.yaml"));
    return std::pair{r.transformer->mfu_flop_per_micro_batch,
                     analysis::run_summary(analysis::run_scenario(r, {}), r.scenario).table};
  };
  const auto [at_one, table_one] = run_at("1");
  const auto [at_half, table_half] = run_at("0.5");
  // One layer, forward and backward (3 forwards): half the experts' FLOPs are gone.
  CHECK(at_one - at_half == doctest::Approx(3.0 * static_cast<double>(experts) / 2).epsilon(1e-12));
  CHECK(table_one.find("token dropping") == std::string::npos);
  CHECK(table_half.find("  token dropping ") != std::string::npos);
  CHECK(table_half.find("capacity_factor 0.5: 50% of the tokens routed to each MoE layer's experts are "
                        "dropped") != std::string::npos);
  CHECK(table_half.find("MFU count only the 50% of the experts' FLOPs that run") != std::string::npos);
}
