#include "scenarios/loader/resolve_pipeline.h"

#include "sim/error.h"
#include "workloads/memory/pipeline_memory.h"
#include "workloads/program/pipeline_program.h"

namespace hybridsim::scenarios {
namespace {

[[noreturn]] void fail(const Scenario& s, const std::string& path, const std::string& what) {
  throw InputError(location_of(s, path) + ": " + path + ": " + what);
}

}  // namespace

workloads::WorkerMapping pipeline_mapping(const Scenario& s, const topology::Topology& topology) {
  const ParallelismSettings& p = s.parallelism;
  if (!is_transformer(s))
    fail(s, "parallelism.pp",
         "pipeline parallelism needs a transformer network (workload.network: "
         "llama3-8b, ..., or transformer); the MP placements are the 2017 networks' pipelines");
  if (p.mapping) fail(s, "parallelism.mapping", "a pipeline's GPUs follow from dp, tp and pp; expected auto");
  const long long workers = static_cast<long long>(p.dp) * p.tp, gpus = workers * p.pp;
  const auto have = static_cast<long long>(topology.gpus().size());
  if (gpus > have)
    fail(s, "parallelism.pp",
         "dp × tp × pp = " + std::to_string(p.dp) + " × " + std::to_string(p.tp) + " × " +
             std::to_string(p.pp) + " = " + std::to_string(gpus) + " GPUs, but the cluster " +
             topology.name() + " has " + std::to_string(have) + "; expected at most " + std::to_string(have));
  std::vector<std::vector<int>> rows(static_cast<std::size_t>(workers));
  for (long long w = 0; w < workers; ++w)
    for (int st = 0; st < p.pp; ++st)
      rows[static_cast<std::size_t>(w)].push_back(static_cast<int>(st * workers + w));
  // Described, with its placement, by transformer_layout_text (resolve_step_config).
  return workloads::custom_mapping(topology, static_cast<int>(workers), p.pp, std::move(rows));
}

void apply_pipeline_settings(const Scenario& s, const workloads::Profile& profile,
                             workloads::StepOptions& step, workloads::MpPlacement& placement) {
  const ParallelismSettings& p = s.parallelism;
  if (p.pp == 1) {
    if (p.pipeline.virtual_stages > 1)
      fail(s, "pipeline.virtual_stages", "needs parallelism.pp > 1; expected it left out");
    if (!p.pipeline.stages.empty())
      fail(s, "pipeline.stages", "needs parallelism.pp > 1; expected it left out");
    // One stage runs its micro-batches in the same order under every schedule: a schedule written
    // with pp 1 would change nothing (a transformer's and a 2017 network's alike).
    if (p.pipeline.schedule != workloads::PipelineSchedule::OneFOneB &&
        s.provenance.where.contains("pipeline.schedule"))
      fail(s, "pipeline.schedule",
           std::string(workloads::pipeline_schedule_name(p.pipeline.schedule)) +
               " needs parallelism.pp > 1 (one stage runs its micro-batches alike under every schedule); "
               "expected it left out, or pp > 1");
    return;
  }
  step.pipeline = {.pp = p.pp, .schedule = p.pipeline.schedule, .virtual_stages = p.pipeline.virtual_stages,
                   .chunk_layers = p.pipeline.stages};
  const int layers = workloads::pipeline_layer_count(profile);
  if (const auto problem = workloads::pipeline_problem(step.pipeline, layers, step.accumulation)) {
    std::string what = problem->what;
    if (problem->key == "parallelism.pp" && s.workload.model.layers_simulated != 0)
      what += " (workload.model.layers_simulated: " + std::to_string(layers) + ")";
    fail(s, problem->key, what);
  }
  try {
    placement = {p.pp, {}, {}};  // described by transformer_layout_text (resolve_step_config)
    for (const int chunk : workloads::pipeline_chunk_of_op(profile, step.pipeline))
      placement.gpu_of_op.push_back(static_cast<std::uint32_t>(chunk % p.pp));
  } catch (const InputError& e) {
    fail(s, "parallelism.pp", e.what());
  }
}

std::vector<workloads::StageMemory> pipeline_stage_memory(const Scenario& s, const TransformerResolution& t,
                                                          int micro_batches) {
  return workloads::pipeline_memory(transformer_memory_input(s, t),
                                    {.pp = s.parallelism.pp,
                                     .schedule = s.parallelism.pipeline.schedule,
                                     .virtual_stages = s.parallelism.pipeline.virtual_stages,
                                     .chunk_layers = s.parallelism.pipeline.stages},
                                    micro_batches);
}

void check_pipeline_memory(const Scenario& s, const TransformerResolution& t,
                           const std::optional<workloads::MemoryCapacity>& capacity, int micro_batches) {
  if (!capacity) return;
  const auto stages = pipeline_stage_memory(s, t, micro_batches);
  try {
    workloads::check_pipeline_fits(stages, capacity->bytes, t.step.config.model.name, capacity->source);
  } catch (const InputError& e) {
    fail(s, "workload.model", e.what());
  }
}

}  // namespace hybridsim::scenarios
