#include "scenarios/loader/resolve_transformer.h"

#include "sim/error.h"
#include "topology/preset_registry.h"
#include "workloads/generators/gpu_choice.h"

namespace hybridsim::scenarios {
namespace {

[[noreturn]] void fail(const Scenario& s, const std::string& path, const std::string& what) {
  throw InputError(location_of(s, path) + ": " + path + ": " + what);
}

workloads::TransformerModel model_of(const Scenario& s) {
  const TransformerSettings& t = s.workload.model;
  const bool custom = s.workload.network == "transformer";
  workloads::TransformerModel m =
      custom ? workloads::TransformerModel{} : workloads::named_transformer(s.workload.network);
  const std::pair<const char*, std::pair<const std::optional<std::int64_t>*, std::int64_t*>> sizes[] = {
      {"layers", {&t.layers, &m.layers}},       {"hidden", {&t.hidden, &m.hidden}},
      {"heads", {&t.heads, &m.heads}},          {"kv_heads", {&t.kv_heads, &m.kv_heads}},
      {"ffn_hidden", {&t.ffn_hidden, &m.ffn_hidden}}, {"vocab", {&t.vocab, &m.vocab}},
      {"sequence", {&t.sequence, &m.sequence}}};
  for (const auto& [name, field] : sizes) {
    if (*field.first) *field.second = **field.first;
    else if (custom && std::string(name) != "kv_heads")
      fail(s, "workload.model." + std::string(name), "required with network: transformer");
  }
  if (custom && !t.kv_heads) m.kv_heads = m.heads;
  if (!t.ffn.empty() && t.ffn != "auto") m.ffn = workloads::ffn_kind_by_name(t.ffn);
  if (t.experts) m.experts = *t.experts;
  if (t.top_k) m.top_k = *t.top_k;
  m.capacity_factor = t.capacity_factor;
  // A capacity factor sizes the experts' share of tokens: without experts it would change nothing.
  if (m.experts == 1 && t.capacity_factor != 1 &&
      s.provenance.where.contains("workload.model.capacity_factor"))
    fail(s, "workload.model.capacity_factor",
         m.name +
             " has no experts (experts 1), so a capacity factor has no tokens to size; expected it left "
             "out, or workload.model.experts > 1");
  if (t.layers_simulated > m.layers)
    fail(s, "workload.model.layers_simulated",
         "got " + std::to_string(t.layers_simulated) + ", but " + m.name + " has " +
             std::to_string(m.layers) + " layers; expected 0 (every layer) or 1 to " +
             std::to_string(m.layers));
  return m;
}

// workload.precision, unset or amp: mixed precision as Megatron runs it, BF16 (FP16 on a V100).
workloads::Precision precision_of(const Scenario& s, const workloads::Gpu& gpu) {
  const auto asked = s.workload.gpu_choice.precision;
  if (asked && *asked != workloads::Precision::Amp) return *asked;
  return gpu.chip == "v100" ? workloads::Precision::Fp16 : workloads::Precision::Bf16;
}

// Experts divisible by ep, top_k within experts, ep dividing the data-parallel replicas.
void check_expert_parallel(const Scenario& s, const workloads::TransformerModel& model) {
  try {
    workloads::check_experts(model, s.parallelism.ep);
  } catch (const InputError& e) {
    const std::string what = e.what();
    fail(s,
         what.find(" ep ") != std::string::npos    ? "parallelism.ep"
         : what.find("top_k") != std::string::npos ? "workload.model.top_k"
                                                   : "workload.model",
         what);
  }
  // Megatron-LM refuses a mixture under TP without sequence parallelism (its arguments' check, "When
  // using MoE and tensor parallelism, sequence parallelism must be used"; MoELayer raises it too):
  // hybridsim ran it, a what-if Megatron never runs. Refused at the key written (sequence_parallel:
  // false, else tp), as the planner leaves such layouts out (analysis/plan llm_layout_problem).
  if (model.is_moe() && s.parallelism.tp > 1 && !s.parallelism.sequence_parallel)
    fail(s,
         s.provenance.where.contains("parallelism.sequence_parallel") ? "parallelism.sequence_parallel"
                                                                      : "parallelism.tp",
         "tp " + std::to_string(s.parallelism.tp) + " with " + model.name + "'s mixture of " +
             std::to_string(model.experts) +
             " experts needs sequence parallelism, as Megatron-LM requires (\"When using MoE and tensor "
             "parallelism, sequence parallelism must be used\"); expected parallelism.sequence_parallel: "
             "true, or tp 1");
  if (s.parallelism.dp % s.parallelism.ep != 0)
    fail(s, "parallelism.ep",
         "ep " + std::to_string(s.parallelism.ep) + " does not divide dp " +
             std::to_string(s.parallelism.dp) +
             " (EP groups are carved out of the data-parallel replicas); expected ep dividing dp");
}

// Where a refusal of check_transformer ("llama3-8b: kv_heads 3 does not divide heads 32") is located:
// at the size it names where the user wrote that key itself, else at workload.model; one against tp
// at parallelism.tp, unless the size was given by --set (the later word: ffn_hidden set to 14337 by
// --set was located at the file's parallelism.tp line). One of two sizes ("hidden 4096 is not divisible
// by heads 33") is located at heads where the user wrote heads and not the first, or set it by --set
// (`--set workload.model.heads=33` was located at the file's workload.model line, which names no size).
std::string model_check_path(const Scenario& s, const std::string& model_name, const std::string& what) {
  const std::string prefix = model_name + ": ";
  std::string size;
  if (what.starts_with(prefix))
    size = what.substr(prefix.size(), what.find(' ', prefix.size()) - prefix.size());
  const std::string field = "workload.model." + size;
  const auto written = s.provenance.where.find(field);
  const bool given = !size.empty() && written != s.provenance.where.end();
  if (what.find(" tp ") != std::string::npos)
    return given && written->second.starts_with("--set") ? field : "parallelism.tp";
  const std::string heads = "workload.model.heads";
  const auto heads_written = s.provenance.where.find(heads);
  const bool names_heads = what.find(" heads ") != std::string::npos && size != "heads";
  if (names_heads && heads_written != s.provenance.where.end() &&
      (!given || heads_written->second.starts_with("--set")))
    return heads;
  return given ? field : "workload.model";
}

}  // namespace

bool is_transformer(const Scenario& s) {
  return workloads::is_transformer_network(s.workload.network);
}

TransformerResolution resolve_transformer(const Scenario& s) {
  const workloads::TransformerModel model = model_of(s);
  const std::string cluster_gpu = s.cluster.topology.empty()
                                      ? std::string(topology::preset_by_name(s.cluster.preset).gpu)
                                      : std::string();
  const workloads::GpuChoice& choice = s.workload.gpu_choice;
  const workloads::Gpu& gpu =
      workloads::gpu_by_key(choice.gpu ? *choice.gpu : workloads::auto_gpu_key(cluster_gpu));
  const std::string precision_path = "workload.precision";
  workloads::TransformerCost cost = [&] {
    try {
      return workloads::transformer_cost(gpu, precision_of(s, gpu));
    } catch (const InputError& e) {
      fail(s, precision_path, e.what());
    }
  }();
  const workloads::TransformerConfig config{.model = model,
                                            .micro_batch = s.training.micro_batch,
                                            .tp = s.parallelism.tp,
                                            .ep = s.parallelism.ep,
                                            .sequence_parallel = s.parallelism.sequence_parallel,
                                            .recompute = workloads::recompute_by_name(s.training.recompute),
                                            .flash_attention = s.workload.model.attention != "unfused",
                                            .layers_simulated = s.workload.model.layers_simulated};
  try {
    workloads::check_transformer(model, s.parallelism.tp);
    workloads::check_transformer_counts(model, s.training.micro_batch);
  } catch (const InputError& e) {
    const std::string what = e.what();
    fail(s, model_check_path(s, model.name, what), what);
  }
  if (s.parallelism.sequence_parallel) {
    try {
      workloads::check_sequence_parallel(model, s.parallelism.tp);
    } catch (const InputError& e) {
      fail(s, "parallelism.sequence_parallel", e.what());
    }
  }
  check_expert_parallel(s, model);
  TransformerResolution r{workloads::generate_transformer(config, cost), cost, 0, 0};
  workloads::TransformerModel slice = model;
  slice.layers = r.step.layers_simulated;
  const bool full = config.recompute == workloads::Recompute::Full;
  // A sequence's FLOPs (linear in the batch) times the micro-batch, in double: in int64 a 405B
  // micro-batch of 512 printed -271.1 TFLOP/s per GPU.
  const auto micro_batch = static_cast<double>(config.micro_batch);
  r.model_flop_per_micro_batch = workloads::model_flop_per_iteration(slice, 1, full) * micro_batch;
  r.mfu_flop_per_micro_batch = workloads::model_flop_per_iteration(slice, 1, false) * micro_batch;
  return r;
}

int zero_stage(const Scenario& s) {
  const std::string& z = s.parallelism.zero;
  return z == "fsdp" ? 3 : z.empty() ? 0 : std::stoi(z);  // the schema allows 0|1|2|3|fsdp only
}

workloads::TransformerMemoryInput transformer_memory_input(const Scenario& s,
                                                           const TransformerResolution& t) {
  const workloads::TransformerConfig& c = t.step.config;
  workloads::TransformerModel slice = c.model;
  slice.layers = t.step.layers_simulated;
  return {.model = slice, .micro_batch = c.micro_batch, .tp = c.tp, .sequence_parallel = c.sequence_parallel,
          .recompute = c.recompute, .flash_attention = c.flash_attention, .value_bytes = t.cost.value_bytes(),
          .zero = zero_stage(s), .dp = s.parallelism.dp, .ep = c.ep};
}

void check_transformer_memory(const Scenario& s, const TransformerResolution& t,
                              const std::optional<workloads::MemoryCapacity>& capacity, int gpus,
                              int per_machine) {
  if (!capacity) return;
  const workloads::TransformerMemoryInput in = transformer_memory_input(s, t);
  const std::string& name = t.step.config.model.name;
  try {
    workloads::check_transformer_fits(workloads::transformer_memory(in), capacity->bytes, name,
                                      capacity->source);
  } catch (const InputError& e) {
    const workloads::TransformerMemoryInput least = workloads::largest_sharding(in, gpus, per_machine);
    const sim::Bytes needs = workloads::transformer_memory(least).total();
    if (needs <= capacity->bytes) fail(s, "workload.model", e.what());
    const std::string zero = least.zero == 3 ? ", ZeRO-3 over dp " + std::to_string(least.dp) : "";
    fail(s, "workload.model",
         name + " does not fit even at the largest sharding of these " + std::to_string(gpus) + " GPUs (tp " +
             std::to_string(least.tp) + zero + ", sequence parallel, full recomputation): it needs " +
             workloads::format_gib(needs) + " per GPU but the GPU has " +
             workloads::format_gib(capacity->bytes) + " (" + capacity->source +
             "); expected more GPUs, GPUs with more memory, a smaller micro_batch or sequence");
  }
}

}  // namespace hybridsim::scenarios
