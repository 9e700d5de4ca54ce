// `hybridsim plan --model gpt3-175b --gpus 1024 --gpu a100-80gb`: the names of the command line made
// into an LlmPlanRequest (the model's published batch and training tokens, the GPU's machine, its
// cost model and memory).
#include <cmath>
#include <sstream>

#include "analysis/plan/llm_planner.h"
#include "analysis/plan/planner.h"
#include "analysis/study/study_config.h"
#include "scenarios/loader/scenario.h"
#include "sim/budget.h"
#include "sim/error.h"
#include "sim/units.h"
#include "topology/preset_registry.h"
#include "workloads/gpu/gpu.h"
#include "workloads/gpu/gpu_part_note.h"
#include "workloads/gpu/transformer_cost.h"
#include "workloads/memory/memory_model.h"

namespace hybridsim::analysis {
namespace {

// What the models trained on (../shared/reference/transformers.md, "Statistical efficiency"):
// GPT-3 3.2 M-token batches and 300 B tokens (Brown et al. 2020); Llama 2 4 M-token batches and 2 T
// tokens; Llama 3 15 T tokens (its batch is not given there: Llama 2's 4 M is assumed). Others: 1 M
// tokens per batch, no training tokens (no time to train).
struct Published {
  double batch_tokens = 1e6;
  double training_tokens = 0;
};
Published published(const std::string& model) {
  if (model.starts_with("gpt3")) return {3.2e6, 300e9};
  if (model.starts_with("llama2")) return {4e6, 2e12};
  if (model.starts_with("llama3")) return {4e6, 15e12};
  return {};
}

// "a100-80gb" is the 80 GB A100, workload.gpu's "a100".
// `option`: how the caller names --gpu (gpu in Python), for the refusal of an unknown one.
const workloads::Gpu& gpu_of(const std::string& key, const std::string& option) {
  if (workloads::find_gpu(key) == nullptr && key.ends_with("-80gb"))
    return gpu_of(key.substr(0, key.size() - 5), option);
  return workloads::gpu_by_key(key, option);
}

// The DGX/HGX machine of a GPU chip.
std::string machine_of(const workloads::Gpu& gpu) {
  if (gpu.chip == "v100") return "dgx2";
  if (gpu.chip.starts_with("a100")) return "dgx-a100";
  if (gpu.chip == "h200") return "hgx-h200";
  return "dgx-h100";
}

// A GPU's NVLink bandwidth per direction within the machine (the presets' descriptions,
// topology/preset_registry.cpp): 12 NVLink3 on a DGX A100, 18 NVLink4 on H100/H200 machines, 6 NVLink2
// on a DGX-2; anything else is taken as PCIe Gen3 x16.
double nvlink_bytes_per_second(const std::string& preset) {
  if (preset == "dgx-a100") return 300e9;
  if (preset == "dgx-h100" || preset == "hgx-h200") return 450e9;
  if (preset == "dgx2") return 150e9;
  return 16e9;
}

// --global-batch, --critical-batch and --simulate, refused in the caller's spelling (Python's
// global_batch=...). Below 0 was taken for the published batch, as 0 is; past the key's bound it was
// refused as a "--set training.global_batch=..." that was never typed.
void check_batch_options(const LlmPlanOptions& o) {
  if (o.global_batch < 0 || o.global_batch > scenarios::kMaxGlobalBatch)
    throw InputError(o.spelling.name("global-batch") + ": expected sequences a step, from 1 to " +
                     std::to_string(scenarios::kMaxGlobalBatch) + " (0: the model's published batch), got " +
                     std::to_string(o.global_batch));
  if (const auto& critical = o.critical_batch_tokens;
      critical && !(*critical >= kCriticalBatchTokensMin && *critical <= kCriticalBatchTokensMax))
    throw InputError(o.spelling.said_number("critical-batch", (std::ostringstream() << *critical).str()) +
                     ": expected tokens from 1 to 1e15");
  if (o.simulate < 0)
    throw InputError(o.spelling.name("simulate") + ": expected 0 (all) or more, got " +
                     std::to_string(o.simulate));
}

}  // namespace

bool is_llm_plan_model(const std::string& model) { return workloads::is_transformer_model_name(model); }

LlmPlanRequest make_llm_plan_request(const LlmPlanOptions& o) {
  LlmPlanRequest r;
  r.model = o.model;
  r.setting.model = workloads::named_transformer(o.model);
  if (o.gpus < 1)
    throw InputError(o.spelling.said_number("gpus", std::to_string(o.gpus)) + ": expected 1 GPU or more");
  r.gpus = o.gpus;
  const std::string preset_gpu =
      o.cluster.empty()
          ? std::string()
          : std::string(topology::preset_by_name(plan_cluster_preset(o.cluster, o.spelling)).gpu);
  const workloads::Gpu& gpu =
      o.gpu.empty()
          ? workloads::gpu_by_key(workloads::auto_gpu_key(preset_gpu.empty() ? "A100-SXM4-80GB" : preset_gpu))
          : gpu_of(o.gpu, o.spelling.name("gpu"));
  r.gpu = o.gpu.empty() ? std::string() : std::string(gpu.key);
  r.cluster.preset = o.cluster.empty() ? machine_of(gpu) : o.cluster;
  build_cluster(r.cluster, 1, topology::ib_bandwidth_of(r.cluster));  // checks the preset
  check_plan_gpus(r.cluster, o.gpus,
                  o.spelling);  // before "no layout" or a candidate's cluster.nodes refusal
  if (o.ib_bandwidth)
    r.cluster.links[sim::LinkKind::InfiniBand].bandwidth = ib_bandwidth_option(*o.ib_bandwidth, o.spelling);
  const workloads::TransformerCost cost = workloads::transformer_cost(
      gpu, gpu.chip == "v100" ? workloads::Precision::Fp16 : workloads::Precision::Bf16);
  r.setting.value_bytes = cost.value_bytes();
  r.machine = {
      .gemm_flop_per_second = static_cast<double>(cost.gemm_flop_per_second),
      .gemm_half_flop = static_cast<double>(cost.gemm_half_flop),
      .nvlink_bytes_per_second = nvlink_bytes_per_second(r.cluster.preset),
      .ib_bytes_per_second = static_cast<double>(topology::ib_share_per_gpu(r.cluster).bytes_per_second()),
      .gpus_per_machine = topology::gpus_per_machine(r.cluster),
      .kernels = cost};
  // The capacity named where it came from, as run names it ("V100-SXM2-16GB of dgx1-v100"): it said
  // "V100 (--gpu)" under --cluster dgx1-v100 with no --gpu given.
  const std::string source = !o.gpu.empty() ? std::string(gpu.name) + " (" + o.spelling.name("gpu") + ")"
                                            : (preset_gpu.empty() ? std::string(gpu.name) : preset_gpu) +
                                                  " of " + r.cluster.preset;
  // Without --gpu the preset's own part holds the memory, as run checks it: dgx2's V100-SXM3-32GB was
  // checked against the 16 GiB of the V100 whose kernel times price it (the source said 32GB's).
  const auto preset_capacity =
      o.gpu.empty() && !preset_gpu.empty() ? workloads::preset_gpu_capacity(r.cluster.preset) : std::nullopt;
  r.memory = o.memory          ? memory_what_if(*o.memory, o.spelling)
             : preset_capacity ? *preset_capacity
                               : workloads::MemoryCapacity{gpu.memory(), source};
  if (o.gpu.empty() && !preset_gpu.empty())
    r.gpu_note = workloads::other_part_note(r.cluster.preset, preset_gpu, gpu.model).value_or("");
  // --gpu a100-40gb --cluster dgx-h100: the A100 on the H100 machine's links, as run says it.
  if (!o.gpu.empty() && !o.cluster.empty())
    r.gpu_note = workloads::named_gpu_note(o.cluster, gpu.model, o.spelling.name("gpu")).value_or("");
  // "--memory: none of the layouts fits" led a refusal where no --memory was given.
  if (!o.memory) r.names.memory.clear();
  const Published pub = published(o.model);
  const auto seq = static_cast<double>(r.setting.model.sequence);
  // The published batch in sequences, to a multiple of 256 (GPT-3's 3.2 M tokens: 1,536 sequences).
  r.reference_batch = std::max<std::int64_t>(256, std::llround(pub.batch_tokens / seq / 256) * 256);
  check_batch_options(o);
  r.global_batch = o.global_batch > 0 ? o.global_batch : r.reference_batch;
  r.training_tokens = pub.training_tokens;
  r.critical_batch_tokens = o.critical_batch_tokens;
  r.simulate = o.simulate;
  r.threads = o.threads;
  // A candidate whose step would simulate past the budget keeps its closed form, listed apart.
  const std::string events = o.max_events.empty() ? std::to_string(kPlanCandidateEvents) : o.max_events;
  r.limits = limit_overlay(events, o.max_sim_memory, o.spelling);
  r.budget_knobs = study_budget_knobs(o.spelling);
  r.events_budget_count = sim::parse_events_cap(events);
  r.events_budget_given = o.max_events;
  // The same figure bounds what the candidates built at once hold together (limit_overlay has
  // checked the text).
  if (!o.max_sim_memory.empty()) r.memory_budget_bytes = sim::parse_memory_cap(o.max_sim_memory);
  r.memory_budget_given = o.max_sim_memory;
  return r;
}

}  // namespace hybridsim::analysis
