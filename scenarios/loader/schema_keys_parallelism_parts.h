// The scenario table's part for the `parallelism` and `pipeline` sections (how the work is split over GPUs,
// and a pipeline's schedule): a slice of the one declaration of every key, in table order. schema_table.cpp
// assembles the table from the parts; they are files of their own only to keep each a readable size. Internal
// to scenarios/loader.
#pragma once
#include "scenarios/loader/schema_keys_common_parts.h"

namespace hybridsim::scenarios::schema_keys {

inline constexpr ScenarioKey kParallelism[] = {
    {{.path = "parallelism", .kind = K::Section, .help = "How the work is split over GPUs."}},
    {{.path = "parallelism.dp",
      .kind = K::Integer,
      .default_text = "1",
      .min = 1,
      .max = kMaxCount,
      .help = "Data-parallel workers. dp × mp must not exceed the cluster's GPUs."},
     bind<Member<&Scenario::parallelism, &ParallelismSettings::dp>>()},
    {{.path = "parallelism.mp",
      .kind = K::Integer,
      .default_text = "1",
      .min = 1,
      .max = 4096,
      .help = "GPUs per worker (model parallelism: a 2017 network's ops placed over them); a "
              "transformer splits its model with tp and pp, and takes mp 1."},
     bind<Member<&Scenario::parallelism, &ParallelismSettings::mp>>()},
    {{.path = "parallelism.placement",
      .kind = K::List,
      .default_text = "auto",
      .words = "auto|layers|stacks|branches",
      .type_doc = "auto, layers, stacks, branches or a list of rules",
      .help = "Which of a worker's mp GPUs runs each op. auto: the network's default partitioner "
              "(branches for inception-v3, stacks for gnmt, layers otherwise); layers: contiguous "
              "layers with balanced compute; stacks: each stack of layers (enc.*, dec.*) split by "
              "depth; branches: parallel branches spread over the GPUs; a list: rules "
              "tried in order, first match wins, every op must match one."},
     {.read = read_placement, .write = write_placement}},
    {{.path = "parallelism.placement[]", .kind = K::Section, .help = "One placement rule."}},
    {{.path = "parallelism.placement[].match",
      .kind = K::Text,
      .required = true,
      .help = "A glob (*, ?, [...]) matched against op names and layer names (\"enc.L*\", \"*\")."}},
    {{.path = "parallelism.placement[].gpu",
      .kind = K::Integer,
      .required = true,
      .min = 0,
      .max = 4095,
      .help = "The worker-local GPU, 0 to mp - 1."}},
    {{.path = "parallelism.mapping",
      .kind = K::List,
      .default_text = "auto",
      .words = "auto",
      .type_doc = "auto or a list of dp lists of mp (a transformer: tp) GPU ranks",
      .help = "Which physical GPUs each worker uses: [[0, 3], [1, 2], ...] gives worker w's model-"
              "parallel rank k the global GPU rank in row w, column k (machine-major numbering); a "
              "transformer's row is a replica's TP group, TP rank r in column r (with pp > 1: auto only). "
              "auto: a worker's GPUs on the fastest links of one machine (where mp does not divide a "
              "machine's GPUs, consecutive GPUs; the run's mapping line says which workers span machines)."},
     {.read = read_mapping, .write = write_mapping}},
    {{.path = "parallelism.mapping[]",
      .kind = K::List,
      .type_doc = "a list of mp (a transformer: tp) GPU ranks",
      .help = "One worker's GPUs."}},
    {{.path = "parallelism.mapping[][]",
      .kind = K::Integer,
      .min = 0,
      .max = kMaxCount,
      .help = "A global GPU rank."}},

    {{.path = "parallelism.tp",
      .kind = K::Integer,
      .default_text = "1",
      .min = 1,
      .max = 4096,
      .help = "Tensor parallel (transformers): GPUs per data-parallel replica, consecutive GPUs (one "
              "machine's NVLink under the default mapping, where tp divides a machine's GPUs; else a "
              "TP group spans machines, and the run's mapping line says so); dp x tp GPUs in all."},
     bind_unless_default<Member<&Scenario::parallelism, &ParallelismSettings::tp>>()},
    {{.path = "parallelism.sequence_parallel",
      .kind = K::Boolean,
      .default_text = "false",
      .help = "With tp > 1 (refused with tp 1, where it would change nothing): each all-reduce becomes "
              "a reduce-scatter and an all-gather, and norms and dropout run on s/t of the sequence "
              "(Korthikanti et al. 2022)."},
     bind_unless_default<Member<&Scenario::parallelism, &ParallelismSettings::sequence_parallel>>()},
    {{.path = "parallelism.zero",
      .kind = K::Choice,
      .default_text = "0",
      .choices = "0|1|2|3|fsdp",
      .help = "Transformers, dp > 1: ZeRO stage. 1 shards the optimizer state over dp, 2 also the "
              "gradients (reduce-scatter per bucket in backward), 3 or fsdp also the parameters "
              "(all-gathered per layer before its forward and its backward, one layer ahead). With "
              "accumulation, 1 reduces after the last micro-batch, 2 and 3 after every one. A pipeline "
              "(pp > 1) takes 0 or 1 only, as DeepSpeed's pipeline engine: with 1 each stage "
              "reduce-scatters its gradients after the flush over the same stage of every replica, "
              "updates its 1/dp and all-gathers its parameters (Megatron-LM's distributed optimizer)."},
     bind_unless_default<Member<&Scenario::parallelism, &ParallelismSettings::zero>>()},
    {{.path = "parallelism.ep",
      .kind = K::Integer,
      .default_text = "1",
      .min = 1,
      .max = 4096,
      .help = "Expert parallel (mixtures of experts): experts / ep on each GPU; an EP group is ep "
              "consecutive data-parallel replicas (one machine under the default mapping) that trade "
              "tokens by all-to-all; ep must divide dp and experts. In a pipeline each stage's EP "
              "groups are its own, and a stage's all-to-alls are those of the MoE layers it holds."},
     bind_unless_default<Member<&Scenario::parallelism, &ParallelismSettings::ep>>()},
    {{.path = "parallelism.pp",
      .kind = K::Integer,
      .default_text = "1",
      .min = 1,
      .max = 1024,
      .help = "Pipeline stages (transformers): each replica's layers cut into pp stages of whole layers, "
              "each stage a TP group on its own GPUs (stage s on GPUs s x dp x tp onwards); "
              "dp x tp x pp GPUs in all. Micro-batches per step: training.global_batch / "
              "(dp x micro_batch)."},
     bind_unless_default<Member<&Scenario::parallelism, &ParallelismSettings::pp>>()},
    {{.path = "pipeline",
      .kind = K::Section,
      .help = "How parallelism.pp's stages run their micro-batches (workloads/README.md, \"Pipelines\")."}},
    {{.path = "pipeline.schedule",
      .kind = K::Choice,
      .default_text = "1f1b",
      .choices = "gpipe|1f1b|interleaved",
      .help = "gpipe: every forward, then every backward; 1f1b: PipeDream-Flush (at most p micro-batches "
              "of activations on the first stage); interleaved: Megatron-LM's interleaved 1F1B over "
              "pipeline.virtual_stages model chunks per stage (2 or more; micro-batches a multiple of pp)."},
     bind_unless_default<
         Member<&Scenario::parallelism, &ParallelismSettings::pipeline, &PipelineSettings::schedule>>()},
    {{.path = "pipeline.virtual_stages",
      .kind = K::Integer,
      .default_text = "1",
      .min = 1,
      .max = 64,
      .help = "Model chunks per stage (interleaved only): the bubble shrinks by this factor, the "
              "point-to-point transfers grow by it."},
     bind_unless_default<Member<&Scenario::parallelism, &ParallelismSettings::pipeline,
                                &PipelineSettings::virtual_stages>>()},
    {{.path = "pipeline.stages",
      .kind = K::List,
      .default_text = "auto",
      .words = "auto",
      .type_doc = "auto or a list of pp x virtual_stages layer counts",
      .help = "Layers per stage (per model chunk, interleaved), in model order, summing to the layers "
              "simulated; the embedding goes with the first, the LM head and loss with the last. auto: "
              "balanced, the middle stages taking any extra layers."},
     {.read = read_pipeline_stages, .write = write_pipeline_stages}},
    {{.path = "pipeline.stages[]",
      .kind = K::Integer,
      .min = 1,
      .max = kMaxCount,
      .help = "A stage's layers."}},
};

}  // namespace hybridsim::scenarios::schema_keys
