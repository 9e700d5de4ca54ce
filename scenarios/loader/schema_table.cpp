// The one declaration of every scenario key (those studies and validation cases share too come from
// shared_keys.h, declared there once), each bound to the member of Scenario that holds it
// (key_binding.h): reading, writing back and describing are loops over this table. Order matters: it
// is the order of the field reference, of "expected one of" lists, of reading (a key's checks may use
// the keys before it) and of scenario_to_yaml's output. Parents come before their children.
#include <array>
#include <functional>
#include <string>
#include <vector>

#include "scenarios/loader/custom_codecs.h"
#include "scenarios/loader/schema.h"
#include "scenarios/loader/shared_keys.h"
#include "sim/budget.h"
#include "sim/collective.h"
#include "sim/error.h"
#include "topology/preset_registry.h"
#include "workloads/generators/gpu_choice.h"
#include "workloads/generators/profile_gen.h"
#include "workloads/generators/transformer_model.h"
#include "workloads/program/step_program.h"

namespace hybridsim::scenarios {
namespace {

std::vector<std::string> preset_choices() {
  std::vector<std::string> out;
  for (const auto name : topology::preset_names()) out.emplace_back(name);
  return out;
}

std::vector<std::string> network_choices() {
  std::vector<std::string> out = workloads::builtin_profile_names();
  for (auto& name : workloads::transformer_model_names()) out.push_back(std::move(name));
  out.emplace_back("transformer");
  return out;
}

using K = FieldKind;
constexpr double kMaxCount = 1 << 20;
// A link's latency, at most 1 s: far beyond any real link, and far inside 64-bit picoseconds even
// summed over a step's hops.
constexpr double kMaxLinkLatencyPs = sim::limits::kLinkLatency.value;
// GPU speeds from a thousandth to a thousand times the profiled GPU's: kernel times stay inside
// 64-bit picoseconds.
constexpr double kMinSpeed = 1.0 / sim::limits::kSpeed.value;
constexpr double kMaxSpeed = sim::limits::kSpeed.value;

constexpr ScenarioKey kKeys[] = {
    {{.path = "name",
      .kind = K::Text,
      .default_doc = "the file name without .yaml",
      .help = "A title for reports and traces."},
     read_by(bind<Member<&Scenario::name>>(), read_name)},
    {{.path = "description", .kind = K::Text, .help = "Free text, copied into reports."},
     bind<Member<&Scenario::description>>()},

    {{.path = "cluster",
      .kind = K::Section,
      .required = true,
      .help = "The machines: a preset (optionally several of them joined by InfiniBand) or a custom "
              "topology file."},
     {.check = check_cluster}},
    {{.path = "cluster.preset",
      .kind = K::Choice,
      .dynamic_choices = preset_choices,
      .help = "A built-in machine. Give either `preset` or `topology`."},
     bind<Member<&Scenario::cluster, &ClusterSettings::preset>>()},
    {{.path = "cluster.topology",
      .kind = K::Path,
      .help = "A custom topology YAML file (format: topology/README.md), relative to the scenario "
              "file. Cannot be combined with nodes, gpus_per_node, fabric or links."},
     read_by(bind<Member<&Scenario::cluster, &ClusterSettings::topology>>(), read_topology_file)},
    {{.path = "cluster.nodes",
      .kind = K::Integer,
      .default_text = "1",
      .min = 1,
      .max = 8192,  // topology::kMaxNodes
      .help = "Machines; more than one joins them by an InfiniBand fabric (ideal-ring and "
              "fully-connected are single machines). With 1 the fabric keys (fabric, oversubscription, "
              "leaf_radix, spines, links.infiniband) change nothing, and run and sweep say so in a note."},
     bind<Member<&Scenario::cluster, &ClusterSettings::nodes>, Value, preset_cluster>()},
    {{.path = "cluster.gpus_per_node",
      .kind = K::Integer,
      .default_text = "auto",
      .words = "auto",
      .min = 1,
      .max = 65536,
      .help = "GPUs per machine where the preset allows it (dgx1-v100, dgx-a100, dgx-h100 and hgx-h200 "
              "have exactly 8; dgx2 and pcie-server 1 to 4096, ideal-ring 2 to 65536, fully-connected 1 to "
              "512); auto: the "
              "preset's (dgx2 16, pcie-server 8, ideal-ring 8, fully-connected 8)."},
     bind<Member<&Scenario::cluster, &ClusterSettings::gpus_per_node>, Value, preset_cluster>()},
    {shared_keys::kFabric,
     bind<Member<&Scenario::cluster, &ClusterSettings::fabric>, Value, preset_cluster>()},
    {shared_keys::kOversubscription,
     bind<Member<&Scenario::cluster, &ClusterSettings::oversubscription>, Value, preset_cluster>()},
    {{.path = "cluster.leaf_radix",
      .kind = K::Integer,
      .default_fn = [] { return std::to_string(topology::presets::kDefaultLeafRadix); },
      .min = 1,
      .max = 4096,
      .help = "NIC ports per leaf switch."},
     bind<Member<&Scenario::cluster, &ClusterSettings::leaf_radix>, Value, preset_cluster>()},
    {{.path = "cluster.spines",
      .kind = K::Integer,
      .default_text = "auto",
      .words = "auto",
      .min = 1,
      .max = 4096,
      .help = "Spine switches; auto: leaf_radix / oversubscription, rounded, at least 1."},
     bind<Member<&Scenario::cluster, &ClusterSettings::spines>, Value, preset_cluster>()},
    {{.path = "cluster.gpu_memory",
      .kind = K::Size,
      .default_text = "auto",
      .words = "auto",
      .min = 0,
      .min_exclusive = true,
      .help = "Memory of each GPU, for the per-GPU memory check (workloads/README.md, \"Memory per "
              "GPU\"): a what-if such as 32 GiB; auto: the preset's GPU (dgx1-v100 16 GiB, dgx2 32 GiB), "
              "or the profile's GPU with a topology file. Write GiB: a data sheet's \"16 GB\" is 16 GiB, "
              "while 16 GB here is 16 × 10^9 B."},
     bind<Member<&Scenario::cluster, &ClusterSettings::gpu_memory>>()},
    {{.path = "cluster.links",
      .kind = K::Section,
      .help = "Per link kind, overrides of the preset's bandwidth (per physical link, per "
              "direction) and latency. A kind the preset does not have is an error; infiniband "
              "applies only when nodes > 1."},
     {.read = read_preset_links}},
    {{.path = "cluster.links.nvlink",
      .kind = K::Section,
      .help = "NVLink between GPUs (dgx1-v100: 25 GB/s, 700 ns per link)."},
     {.read = read_if_present}},
    {{.path = "cluster.links.nvlink.bandwidth",
      .kind = K::Rate,
      .default_doc = "the preset's",
      .min = 0,
      .min_exclusive = true,
      .help = "Per NVLink, per direction."},
     bind<LinkMember<sim::LinkKind::NVLink, &LinkOverride::bandwidth>>()},
    {{.path = "cluster.links.nvlink.latency",
      .kind = K::Duration,
      .default_doc = "the preset's",
      .max = kMaxLinkLatencyPs,
      .help = "Per hop."},
     bind<LinkMember<sim::LinkKind::NVLink, &LinkOverride::latency>>()},
    {{.path = "cluster.links.nvswitch",
      .kind = K::Section,
      .help = "A GPU's NVLinks into an NVSwitch fabric (25 GB/s each, 350 ns; dgx2: 6 links per GPU, "
              "dgx-a100: 12, dgx-h100 and hgx-h200: 18)."},
     {.read = read_if_present}},
    {{.path = "cluster.links.nvswitch.bandwidth",
      .kind = K::Rate,
      .default_doc = "the preset's",
      .min = 0,
      .min_exclusive = true,
      .help = "Per NVLink into the switch, per direction (a GPU has 6, 12 or 18)."},
     bind<LinkMember<sim::LinkKind::NVSwitch, &LinkOverride::bandwidth>>()},
    {{.path = "cluster.links.nvswitch.latency",
      .kind = K::Duration,
      .default_doc = "the preset's",
      .max = kMaxLinkLatencyPs,
      .help = "Per GPU-switch hop."},
     bind<LinkMember<sim::LinkKind::NVSwitch, &LinkOverride::latency>>()},
    {{.path = "cluster.links.pcie",
      .kind = K::Section,
      .help = "PCIe links: GPU and NIC to PCIe switch, switch to CPU (Gen3 12 GB/s; dgx-a100 Gen4 "
              "24 GB/s; dgx-h100, hgx-h200 Gen5 48 GB/s; 500 ns)."},
     {.read = read_if_present}},
    {{.path = "cluster.links.pcie.bandwidth",
      .kind = K::Rate,
      .default_doc = "the preset's",
      .min = 0,
      .min_exclusive = true,
      .help = "Per x16 link, per direction."},
     bind<LinkMember<sim::LinkKind::PCIe, &LinkOverride::bandwidth>>()},
    {{.path = "cluster.links.pcie.latency",
      .kind = K::Duration,
      .default_doc = "the preset's",
      .max = kMaxLinkLatencyPs,
      .help = "Per hop."},
     bind<LinkMember<sim::LinkKind::PCIe, &LinkOverride::latency>>()},
    {{.path = "cluster.links.cpu",
      .kind = K::Section,
      .help = "Links between CPU sockets: QPI (dgx1-v100, pcie-server: 2 × 19.2 GB/s) or UPI "
              "(dgx2, dgx-a100, dgx-h100, hgx-h200: 3 × 20.8 GB/s)."},
     {.read = read_if_present}},
    {{.path = "cluster.links.cpu.bandwidth",
      .kind = K::Rate,
      .default_doc = "the preset's",
      .min = 0,
      .min_exclusive = true,
      .help = "Per QPI/UPI link, per direction."},
     bind<LinkMember<sim::LinkKind::CpuInterconnect, &LinkOverride::bandwidth>>()},
    {{.path = "cluster.links.cpu.latency",
      .kind = K::Duration,
      .default_doc = "the preset's",
      .max = kMaxLinkLatencyPs,
      .help = "Per hop."},
     bind<LinkMember<sim::LinkKind::CpuInterconnect, &LinkOverride::latency>>()},
    {{.path = "cluster.links.infiniband",
      .kind = K::Section,
      .help = "The fabric between machines, 500 ns a hop (the V100 machines: EDR 100 Gb/s; dgx-a100: HDR "
              "200 Gb/s; dgx-h100, hgx-h200: NDR 400 Gb/s)."},
     {.read = read_if_present}},
    {{.path = "cluster.links.infiniband.bandwidth",
      .kind = K::Rate,
      .default_doc = "the preset's",
      .min = 0,
      .min_exclusive = true,
      .help = "Per NIC port and per switch cable, per direction."},
     bind<LinkMember<sim::LinkKind::InfiniBand, &LinkOverride::bandwidth>>()},
    {{.path = "cluster.links.infiniband.latency",
      .kind = K::Duration,
      .default_doc = "the preset's",
      .max = kMaxLinkLatencyPs,
      .help = "Per NIC-leaf or leaf-spine hop."},
     bind<LinkMember<sim::LinkKind::InfiniBand, &LinkOverride::latency>>()},
    {{.path = "cluster.links.generic",
      .kind = K::Section,
      .help = "The idealized links of ideal-ring and fully-connected (25 GB/s, 1 us)."},
     {.read = read_if_present}},
    {{.path = "cluster.links.generic.bandwidth",
      .kind = K::Rate,
      .default_doc = "the preset's",
      .min = 0,
      .min_exclusive = true,
      .help = "Per link, per direction."},
     bind<LinkMember<sim::LinkKind::Generic, &LinkOverride::bandwidth>>()},
    {{.path = "cluster.links.generic.latency",
      .kind = K::Duration,
      .default_doc = "the preset's",
      .max = kMaxLinkLatencyPs,
      .help = "Per hop."},
     bind<LinkMember<sim::LinkKind::Generic, &LinkOverride::latency>>()},

    {{.path = "workload",
      .kind = K::Section,
      .required = true,
      .help = "What is trained: a built-in network or a profile file."}},
    {{.path = "workload.network",
      .kind = K::Choice,
      .dynamic_choices = network_choices,
      .help = "A built-in network, priced by the cost model of `gpu` and `precision` "
              "(workloads/README.md). Give either `network` or `profile`."},
     bind<Member<&Scenario::workload, &WorkloadSettings::network>>()},
    {{.path = "workload.profile",
      .kind = K::Path,
      .help = "A profile file (format hybridsim-profile/1), relative to the scenario file."},
     read_by(bind<Member<&Scenario::workload, &WorkloadSettings::profile>>(), read_profile_file)},
    {shared_keys::kPrecision,
     bind<Member<&Scenario::workload, &WorkloadSettings::gpu_choice, &workloads::GpuChoice::precision>>()},
    {shared_keys::kGpu,
     read_by(bind<Member<&Scenario::workload, &WorkloadSettings::gpu_choice, &workloads::GpuChoice::gpu>>(),
             read_gpu_name)},
    {{.path = "workload.batch_per_worker",
      .kind = K::Integer,
      .default_text = "auto",
      .words = "auto",
      .min = 1,
      .max = 1e9,
      .help = "Samples per data-parallel worker per step; auto: the profile's batch. Kernel times and "
              "activation sizes scale linearly with it (launch floors ignored); gradient sizes and "
              "the optimizer do not change."},
     bind<Member<&Scenario::workload, &WorkloadSettings::batch_per_worker>>()},
    {{.path = "workload.compute_speed",
      .kind = K::Number,
      .default_text = "1",
      .min = kMinSpeed,
      .max = kMaxSpeed,
      .help = "GPU speed relative to the profiled one: 2 halves every kernel's duration."},
     bind<Member<&Scenario::workload, &WorkloadSettings::compute_speed>>()},
    {{.path = "workload.gpu_speeds",
      .kind = K::List,
      .default_text = "[]",
      .type_doc = "a list of {gpu, speed}",
      .help = "Per-GPU speed on top of compute_speed, for a straggler or mixed GPUs: "
              "[{gpu: 3, speed: 0.8}] runs GPU 3's kernels at 80% of the others' speed."},
     bind<Member<&Scenario::workload, &WorkloadSettings::gpu_speeds>, GpuSpeedsCodec>()},
    {{.path = "workload.gpu_speeds[]", .kind = K::Section, .help = "One GPU's speed."}},
    {{.path = "workload.gpu_speeds[].gpu",
      .kind = K::Integer,
      .required = true,
      .min = 0,
      .max = kMaxCount * 64,
      .help = "Global GPU rank (as in the topology: node × GPUs per node + local)."}},
    {{.path = "workload.gpu_speeds[].speed",
      .kind = K::Number,
      .required = true,
      .min = kMinSpeed,
      .max = kMaxSpeed,
      .help = "Relative speed: 0.5 doubles this GPU's kernel durations."}},

    {{.path = "workload.model",
      .kind = K::Section,
      .help = "A transformer's architecture and how it runs (workloads/README.md, \"Transformers\"): "
              "with network: transformer every size is given; with a named model (llama3-8b, ...) "
              "only those that differ."}},
    {{.path = "workload.model.layers",
      .kind = K::Integer,
      .default_text = "auto",
      .words = "auto",
      .min = 1,
      .max = 1e9,
      .help = "Transformer layers; auto: the named model's."},
     bind_unless_default<
         Member<&Scenario::workload, &WorkloadSettings::model, &TransformerSettings::layers>>()},
    {{.path = "workload.model.hidden",
      .kind = K::Integer,
      .default_text = "auto",
      .words = "auto",
      .min = 1,
      .max = 1e9,
      .help = "Hidden size h; auto: the named model's."},
     bind_unless_default<
         Member<&Scenario::workload, &WorkloadSettings::model, &TransformerSettings::hidden>>()},
    {{.path = "workload.model.heads",
      .kind = K::Integer,
      .default_text = "auto",
      .words = "auto",
      .min = 1,
      .max = 1e9,
      .help = "Attention heads; auto: the named model's."},
     bind_unless_default<
         Member<&Scenario::workload, &WorkloadSettings::model, &TransformerSettings::heads>>()},
    {{.path = "workload.model.kv_heads",
      .kind = K::Integer,
      .default_text = "auto",
      .words = "auto",
      .min = 1,
      .max = 1e9,
      .help = "Key/value heads (grouped-query attention); auto: the named model's."},
     bind_unless_default<
         Member<&Scenario::workload, &WorkloadSettings::model, &TransformerSettings::kv_heads>>()},
    {{.path = "workload.model.ffn_hidden",
      .kind = K::Integer,
      .default_text = "auto",
      .words = "auto",
      .min = 1,
      .max = 1e9,
      .help = "MLP hidden size; auto: the named model's."},
     bind_unless_default<
         Member<&Scenario::workload, &WorkloadSettings::model, &TransformerSettings::ffn_hidden>>()},
    {{.path = "workload.model.vocab",
      .kind = K::Integer,
      .default_text = "auto",
      .words = "auto",
      .min = 1,
      .max = 1e9,
      .help = "Vocabulary; auto: the named model's."},
     bind_unless_default<
         Member<&Scenario::workload, &WorkloadSettings::model, &TransformerSettings::vocab>>()},
    {{.path = "workload.model.sequence",
      .kind = K::Integer,
      .default_text = "auto",
      .words = "auto",
      .min = 1,
      .max = 1e9,
      .help = "Tokens per sequence; auto: the named model's."},
     bind_unless_default<
         Member<&Scenario::workload, &WorkloadSettings::model, &TransformerSettings::sequence>>()},
    {{.path = "workload.model.ffn",
      .kind = K::Choice,
      .default_text = "auto",
      .choices = "auto|gelu|swiglu",
      .help = "The MLP: gelu (2 matrices) or swiglu (3); auto: the named model's."},
     bind_unless_default<Member<&Scenario::workload, &WorkloadSettings::model, &TransformerSettings::ffn>>()},
    {{.path = "workload.model.attention",
      .kind = K::Choice,
      .default_text = "flash",
      .choices = "flash|unfused",
      .help = "flash: one fused kernel; unfused: scores GEMM, fused softmax-dropout, context GEMM."},
     bind_unless_default<
         Member<&Scenario::workload, &WorkloadSettings::model, &TransformerSettings::attention>>()},
    {{.path = "workload.model.layers_simulated",
      .kind = K::Integer,
      .default_text = "0",
      .min = 0,
      .max = 1e6,
      .help = "Simulate a layer-slice of this many layers (with the embedding, head and their "
              "optimizer); 0: every layer. Results are the slice's."},
     bind_unless_default<
         Member<&Scenario::workload, &WorkloadSettings::model, &TransformerSettings::layers_simulated>>()},
    {{.path = "workload.model.experts",
      .kind = K::Integer,
      .default_text = "auto",
      .words = "auto",
      .min = 1,
      .max = 1e6,
      .help = "Experts per layer (a mixture of experts when > 1: each layer's MLP is that many MLPs of "
              "ffn_hidden and a router); auto: the named model's (mixtral-8x7b: 8), 1 otherwise."},
     bind_unless_default<
         Member<&Scenario::workload, &WorkloadSettings::model, &TransformerSettings::experts>>()},
    {{.path = "workload.model.top_k",
      .kind = K::Integer,
      .default_text = "auto",
      .words = "auto",
      .min = 1,
      .max = 1e6,
      .help = "Experts each token is routed to, at most experts; auto: the named model's (mixtral-8x7b: 2)."},
     bind_unless_default<
         Member<&Scenario::workload, &WorkloadSettings::model, &TransformerSettings::top_k>>()},
    {{.path = "workload.model.capacity_factor",
      .kind = K::Number,
      .default_text = "1",
      .min = 0.01,
      .max = 1000,
      .help = "Tokens an expert takes, relative to its even share tokens x top_k / experts (the "
              "experts' GEMMs run on that many; the all-to-alls carry them)."},
     bind_unless_default<
         Member<&Scenario::workload, &WorkloadSettings::model, &TransformerSettings::capacity_factor>>()},

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
      .help = "GPUs per worker (model parallelism)."},
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
      .type_doc = "auto or a list of dp lists of mp GPU ranks",
      .help = "Which physical GPUs each worker uses: [[0, 3], [1, 2], ...] gives worker w's model-"
              "parallel rank k the global GPU rank in row w, column k (machine-major numbering). "
              "auto: a worker's GPUs on the fastest links of one machine."},
     {.read = read_mapping, .write = write_mapping}},
    {{.path = "parallelism.mapping[]",
      .kind = K::List,
      .type_doc = "a list of mp GPU ranks",
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
              "machine's NVLink under the default mapping); dp x tp GPUs in all."},
     bind_unless_default<Member<&Scenario::parallelism, &ParallelismSettings::tp>>()},
    {{.path = "parallelism.sequence_parallel",
      .kind = K::Boolean,
      .default_text = "false",
      .help = "With tp: each all-reduce becomes a reduce-scatter and an all-gather, and norms and "
              "dropout run on s/t of the sequence (Korthikanti et al. 2022)."},
     bind_unless_default<Member<&Scenario::parallelism, &ParallelismSettings::sequence_parallel>>()},
    {{.path = "parallelism.zero",
      .kind = K::Choice,
      .default_text = "0",
      .choices = "0|1|2|3|fsdp",
      .help = "Transformers, dp > 1: ZeRO stage. 1 shards the optimizer state over dp, 2 also the "
              "gradients (reduce-scatter per bucket in backward), 3 or fsdp also the parameters "
              "(all-gathered per layer before its forward and its backward, one layer ahead). With "
              "accumulation, 1 reduces after the last micro-batch, 2 and 3 after every one."},
     bind_unless_default<Member<&Scenario::parallelism, &ParallelismSettings::zero>>()},
    {{.path = "parallelism.ep",
      .kind = K::Integer,
      .default_text = "1",
      .min = 1,
      .max = 4096,
      .help = "Expert parallel (mixtures of experts): experts / ep on each GPU; an EP group is ep "
              "consecutive data-parallel replicas (one machine under the default mapping) that trade "
              "tokens by all-to-all; ep must divide dp and experts."},
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
              "pipeline.virtual_stages model chunks per stage (micro-batches a multiple of pp)."},
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

    {{.path = "communication", .kind = K::Section, .help = "Gradient collectives and the network model."}},
    {shared_keys::kAlgorithm, bind<Member<&Scenario::communication, &CommunicationSettings::algorithm>>()},
    {{.path = "communication.protocol",
      .kind = K::Choice,
      .default_text = "auto",
      .choices = "auto|ll|ll128|simple|ideal",
      .help = "NCCL protocol of the gradient collectives: auto, NCCL's choice per call; ll, ll128, "
              "simple: fixed (their bandwidth factors and latencies from NCCL's model); ideal: "
              "links at line rate with only their own latencies (the alpha-beta model). "
              "Model-parallel copies always move at line rate."},
     bind<Member<&Scenario::communication, &CommunicationSettings::protocol>>()},
    {{.path = "communication.channels",
      .kind = K::Integer,
      .default_text = "auto",
      .words = "auto",
      .min = 1,
      .max = sim::limits::kChannels.value,
      .help = "Rings per collective; auto: as NCCL would (DGX-1: 6 on one machine, one per NIC "
              "across machines)."},
     bind<Member<&Scenario::communication, &CommunicationSettings::channels>>()},
    {shared_keys::kMessageSize,
     bind<Member<&Scenario::communication, &CommunicationSettings::message_size>>()},
    {shared_keys::kBucketSize, bind<Member<&Scenario::communication, &CommunicationSettings::bucket_size>>()},
    {{.path = "communication.reduction_bandwidth",
      .kind = K::Rate,
      .default_fn = [] { return sim::format_bandwidth(sim::CollectiveConfig{}.reduction_bandwidth); },
      .words = "off",
      .min = 0,
      .min_exclusive = true,
      .help = "A receiving rank reduces bytes at this rate (V100: 900 GB/s HBM2 / 4); off: free."},
     bind<Member<&Scenario::communication, &CommunicationSettings::reduction_bandwidth>>()},
    {{.path = "communication.switching",
      .kind = K::Choice,
      .default_text = "cut-through",
      .choices = "cut-through|store-and-forward",
      .help = "cut-through: a message's head moves on after one link latency; store-and-forward: "
              "each hop waits for the whole message."},
     bind<Member<&Scenario::communication, &CommunicationSettings::switching>>()},
    {shared_keys::kFastPath,
     bind_unless_default<Member<&Scenario::communication, &CommunicationSettings::fast_path>>()},
    {{.path = "communication.compute_contention",
      .kind = K::Choice,
      .default_text = "on",
      .choices = "on|off",
      .help = "on: while a collective runs on a GPU, its kernels hold one SM per channel (compute-bound "
              "kernels get the rest) and its memory traffic shares HBM with memory-bound kernels "
              "(sim/README.md); off: kernels never slow down beside communication."},
     bind<Member<&Scenario::communication, &CommunicationSettings::compute_contention>>()},
    {{.path = "communication.gradient_copies",
      .kind = K::Choice,
      .default_text = "on",
      .choices = "on|off",
      .help = "on: each data-parallel gradient bucket (or sparse gather) is copied into a flat buffer "
              "before its collective and back after it, as PyTorch DDP and Horovod do: 2 passes over "
              "its bytes each way at the GPU's memory-bound kernel bandwidth (workloads/README.md); "
              "off: gradients are the buckets (DDP's gradient_as_bucket_view)."},
     bind<Member<&Scenario::communication, &CommunicationSettings::gradient_copies>>()},
    {shared_keys::kDdp, bind<Member<&Scenario::communication, &CommunicationSettings::ddp>>()},
    {{.path = "communication.exchange",
      .kind = K::Choice,
      .default_text = "every-micro-batch",
      .choices = "every-micro-batch|last-micro-batch",
      .help = "With gradient accumulation (training.global_batch): all-reduce after every "
              "micro-batch (apex DDP; PyTorch DDP by default) or only after the last one (PyTorch "
              "DDP's no_sync on the others). last-micro-batch without accumulation (one micro-batch, "
              "the last) is refused."},
     bind<Member<&Scenario::communication, &CommunicationSettings::exchange_every_micro_batch>>()},
    {{.path = "communication.pcie_only",
      .kind = K::Boolean,
      .default_text = "false",
      .help = "Keep collectives and model-parallel transfers off NVLink (PCIe and the network only)."},
     bind<Member<&Scenario::communication, &CommunicationSettings::pcie_only>>()},

    {{.path = "training",
      .kind = K::Section,
      .help = "Statistical efficiency, for time-to-train projections."}},
    {{.path = "training.network",
      .kind = K::Text,
      .default_text = "auto",
      .words = "auto",
      .help = "Whose built-in efficiency curve and dataset to use (gnmt, inception-v3, biglstm; inception_v3 "
              "is read as inception-v3); "
              "auto: the workload's network."},
     bind<Member<&Scenario::training, &TrainingSettings::network>>()},
    {{.path = "training.efficiency",
      .kind = K::NameOrSection,
      .default_text = "default",
      .type_doc = "a curve variant name or a mapping",
      .help = "Epochs to the quality target as a function of the global batch: a built-in variant "
              "(default, optimistic, pessimistic, or a network's extra such as measured or "
              "lars_v06), or {e_min, b_noise} (McCandlish et al.: epochs = e_min × (1 + B / "
              "b_noise)), or {table: [[B, epochs], ...]}. A curve the network does not have, or a training "
              "key written for a network without one, is refused (no time to train); left at default, such "
              "a network has no time to train."},
     bind<Member<&Scenario::training, &TrainingSettings::efficiency>, EfficiencyCodec>()},
    {{.path = "training.efficiency.e_min",
      .kind = K::Number,
      .min = 0,
      .min_exclusive = true,
      .help = "Parametric form: epochs at a small batch."}},
    {{.path = "training.efficiency.b_noise",
      .kind = K::Number,
      .min = 0,
      .min_exclusive = true,
      .help = "Parametric form: the gradient noise scale, in samples."}},
    {{.path = "training.efficiency.table",
      .kind = K::List,
      .type_doc = "a list of [global batch, epochs]",
      .help = "Measured points, batches strictly increasing (at least two); interpolated in log-log."}},
    {{.path = "training.efficiency.table[]",
      .kind = K::Any,
      .type_doc = "[global batch, epochs]",
      .help = "One measured point: a whole batch >= 1 and epochs > 0."}},
    {{.path = "training.efficiency.min_batch",
      .kind = K::Integer,
      .default_doc = "table: its first batch",
      .min = 1,
      .max = 1e15,
      .help = "The smallest global batch the curve is supported on (outside: flagged as "
              "extrapolated)."}},
    {{.path = "training.efficiency.max_batch",
      .kind = K::Integer,
      .default_doc = "table: its last batch",
      .min = 1,
      .max = 1e15,
      .help = "The largest supported global batch."}},
    {{.path = "training.dataset_samples",
      .kind = K::Integer,
      .default_text = "auto",
      .words = "auto",
      .min = 1,
      .max = 1e15,
      .help = "Samples per epoch; auto: the built-in dataset of training.network."},
     bind<Member<&Scenario::training, &TrainingSettings::dataset_samples>>()},
    {{.path = "training.global_batch",
      .kind = K::Integer,
      .default_text = "auto",
      .words = "auto",
      .min = 1,
      .max = 1'000'000'000,
      .help = "Samples per optimizer update over all workers; a multiple of batch per worker x dp: "
              "the quotient is the micro-batches each worker runs per step (gradient accumulation, "
              "mp = 1 only); auto: batch per worker x dp (no accumulation)."},
     bind<Member<&Scenario::training, &TrainingSettings::global_batch>>()},
    {{.path = "training.micro_batch",
      .kind = K::Integer,
      .default_text = "1",
      .min = 1,
      .max = 1e6,
      .help = "Transformers: sequences per micro-batch per data-parallel replica (training.global_batch "
              "sets the micro-batches per step). The 2017 networks: workload.batch_per_worker."},
     bind_unless_default<Member<&Scenario::training, &TrainingSettings::micro_batch>>()},
    {{.path = "training.recompute",
      .kind = K::Choice,
      .default_text = "none",
      .choices = "none|selective|full",
      .help = "Transformers' activation recomputation: selective (attention's softmax and dropout) or "
              "full (each layer's forward again in backward)."},
     bind_unless_default<Member<&Scenario::training, &TrainingSettings::recompute>>()},

    {{.path = "variability",
      .kind = K::Section,
      .help = "What makes the workers of a synchronous step differ (workloads/README.md, "
              "\"Variability\"): several steps are simulated, each with its own draws, and the run "
              "reports their mean and p95 step time."}},
    {{.path = "variability.steps",
      .kind = K::Integer,
      .default_text = "1",
      .min = 1,
      .max = 10000,
      .help = "Steps to simulate; the step time reported is their mean (throughput and time to "
              "train follow it), with p95, min and max."},
     bind<Member<&Scenario::variability, &workloads::Variability::steps>>()},
    {{.path = "variability.seed",
      .kind = K::Integer,
      .default_text = "1",
      .min = 0,
      .max = 9e15,
      .help = "Seeds every draw; the same seed gives the same bytes."},
     bind<Member<&Scenario::variability, &workloads::Variability::seed>>()},
    {{.path = "variability.kernel_jitter",
      .kind = K::Number,
      .default_text = "0",
      .min = 0,
      .max = 1,
      .help = "Coefficient of variation of a log-normal factor of mean 1, drawn per GPU per step "
              "and applied to all its kernels (0.05: a 5% noisy cluster); 0 is off."},
     bind<Member<&Scenario::variability, &workloads::Variability::kernel_jitter>>()},
    {{.path = "variability.sequence_lengths",
      .kind = K::Choice,
      .default_text = "fixed",
      .choices = "fixed|wmt16-en-de",
      .help = "fixed: the profile's lengths; wmt16-en-de: each worker's batch is padded to its "
              "longest pair, lengths drawn from WMT16 En-De (47.9 tokens per pair on average, at "
              "most 50 per side); for encoder-decoder profiles (gnmt)."},
     bind<Member<&Scenario::variability, &workloads::Variability::lengths>>()},
    {{.path = "variability.batching",
      .kind = K::Choice,
      .default_text = "bucketed",
      .choices = "bucketed|random",
      .help = "How batches are formed from the lengths: bucketed, as NVIDIA's GNMT sampler (pairs "
              "binned by length; all workers of a step draw from one bin), or random."},
     bind<Member<&Scenario::variability, &workloads::Variability::batching>>()},
    {{.path = "variability.length_buckets",
      .kind = K::Integer,
      .default_text = "5",
      .min = 1,
      .max = 50,
      .help = "Bins of the bucketed sampler (NVIDIA's default 5: widths of 10 tokens)."},
     bind<Member<&Scenario::variability, &workloads::Variability::length_buckets>>()},
    {{.path = "variability.trace_step",
      .kind = K::Integer,
      .default_text = "first",
      .words = "first|slowest",
      .min = 1,
      .max = 10000,
      .help = "Which step a trace (outputs.trace, or hybridsim run --trace) shows, as hybridsim run "
              "--trace-step, which overrides it: first, slowest (every step simulated untraced "
              "first, then the slowest again, traced) or a step number up to variability.steps."},
     bind_unless_default<Member<&Scenario::trace_step>, TraceStepCodec>()},

    {{.path = "simulation",
      .kind = K::Section,
      .help = "Caps on what simulating one step may take, checked before the work (README.md, \"Limits\"): "
              "the events it would process and the memory its state would hold, estimated before the "
              "step starts and again as a collective starts in full; and the threads it may use."}},
    {{.path = "simulation.max_events",
      .kind = K::Integer,
      .default_fn = [] { return std::to_string(sim::kDefaultMaxEvents); },
      .words = "unlimited",
      .min = 0,
      .max = 1e18,
      .help = "Events one step may simulate (the default, 2000000000, is about 7 minutes at the 5 "
              "million events a second measured on this machine); 0 or unlimited: no cap. Also "
              "--max-events. communication.fast_path: auto keeps most rings far below it."},
     bind_unless_default<Member<&Scenario::simulation, &sim::SimulationLimits::max_events>>()},
    {{.path = "simulation.max_memory",
      .kind = K::Size,
      .default_fn = [] { return sim::format_bytes(sim::Bytes::of(sim::kDefaultMaxMemory)); },
      .words = "unlimited",
      .min = 0,
      .help = "Memory one step's simulation state may hold: per-rank and per-route state of its "
              "collectives and their messages in flight at once; 0 B or unlimited: no cap. Also "
              "--max-sim-memory."},
     bind_unless_default<Member<&Scenario::simulation, &sim::SimulationLimits::max_memory>>()},
    {{.path = "simulation.model_threads",
      .kind = K::Integer,
      .default_text = "0",
      .min = 0,
      .max = 64,
      .help = "Threads for a folded step's tree model runs (NCCL trees under fast_path: bounded), "
              "computed ahead of need; the same results whatever the number. 0: min(2, the machine's "
              "hardware threads); 1: only the simulation's own. Sweeps and studies that run points "
              "on several threads use 1. Also --model-threads."},
     bind_unless_default<Member<&Scenario::simulation, &sim::SimulationLimits::model_threads>>()},

    {{.path = "outputs", .kind = K::Section, .help = "What a run writes."}},
    {{.path = "outputs.directory",
      .kind = K::Path,
      .default_text = "auto",
      .words = "auto",
      .help = "Where files go, relative to the current directory; auto: out/<scenario file name>."},
     read_by(bind<Member<&Scenario::outputs, &OutputSettings::directory>>(), read_output_directory)},
    {{.path = "outputs.formats",
      .kind = K::List,
      .default_text = "[table]",
      .type_doc = "a list of table, json, csv",
      .help = "Result formats."},
     bind<Member<&Scenario::outputs, &OutputSettings::formats>, FormatsCodec>()},
    {{.path = "outputs.formats[]",
      .kind = K::Choice,
      .choices = "table|json|csv",
      .help = "table: printed and saved as text; json and csv: saved."}},
    {{.path = "outputs.trace",
      .kind = K::Section,
      .help = "A Chrome/Perfetto trace of the step (of every point, in a sweep); absent: no "
              "trace."},
     {.read = read_trace_section}},
    {{.path = "outputs.trace.file",
      .kind = K::Path,
      .default_text = "trace.json",
      .help = "Relative to outputs.directory (or --out). A sweep writes one trace per point, the "
              "point's index before the extension: trace-0.json, trace-1.json, ..."},
     bind<TraceMember<&TraceSettings::file>, Value, has_trace>()},
    {{.path = "outputs.trace.detail",
      .kind = K::Choice,
      .default_text = "kernels",
      .choices = "kernels|steps|messages",
      .help = "kernels: kernels, collectives and transfers per GPU stream, link utilization; steps: "
              "also each ring step inside its collective; messages: also every message on every "
              "link (large)."},
     bind<TraceMember<&TraceSettings::detail>, Value, has_trace>()},
    {{.path = "outputs.trace.gpus",
      .kind = K::Text,
      .default_text = "classes",
      .words = "classes|all",
      .type_doc = "classes, all or GPU ranks such as \"0-7\" or \"0,2,4-7\"",
      .help = "Which GPUs' tracks to keep, as hybridsim run --trace-gpus; classes: where the step "
              "folds onto one GPU per class of alike GPUs, those GPUs (each named with how many it "
              "stands for) and the critical GPU, else every GPU; all: every GPU, simulated in full."},
     bind<TraceMember<&TraceSettings::gpus>, GpuListCodec, has_trace>()},
    {{.path = "outputs.trace.window",
      .kind = K::Text,
      .default_text = "all",
      .words = "all",
      .type_doc = "all or \"START:END\" times such as \"0 ms:50 ms\"",
      .help = "Keep only events in [START, END); slices crossing it are clipped."},
     bind<TraceMember<&TraceSettings::window>, WindowCodec, has_trace>()},
    {{.path = "outputs.trace.gzip",
      .kind = K::Boolean,
      .default_text = "false",
      .help = "Compress the trace; .gz is added to a file name that lacks it (a name ending in .gz "
              "is compressed anyway)."},
     bind<TraceMember<&TraceSettings::gzip>, Value, has_trace>()},

    {{.path = "sweep",
      .kind = K::Section,
      .help = "Run the scenario at several values of some fields; each point is the scenario with "
              "the point's values set as by --set."},
     {.read = read_if_present}},
    {{.path = "sweep.mode",
      .kind = K::Choice,
      .default_text = "product",
      .choices = "product|zip",
      .help = "product: every combination, the last parameter varying fastest; zip: the i-th values "
              "of all parameters together (equal lengths)."},
     bind<Member<&Scenario::sweep, &SweepSettings::mode>, Value, has_sweep>()},
    {{.path = "sweep.parameters",
      .kind = K::List,
      .required = true,
      .type_doc = "a list of {path, values}",
      .help = "The fields to vary, at least one."},
     {.read = read_sweep_parameters, .write = write_sweep_parameters}},
    {{.path = "sweep.parameters[]", .kind = K::Section, .help = "One varied field."}},
    {{.path = "sweep.parameters[].path",
      .kind = K::Text,
      .required = true,
      .help = "A field path as for --set (cluster.links.nvlink.bandwidth, parallelism); not in "
              "sweep, not overlapping another parameter's path."}},
    {{.path = "sweep.parameters[].values",
      .kind = K::List,
      .required = true,
      .type_doc = "a list of values",
      .help = "Values in order; each is any YAML value valid at that path (a mapping too)."}},
    {{.path = "sweep.parameters[].values[]",
      .kind = K::Any,
      .type_doc = "a value for that path",
      .help = "One value."}},
};

// The declarations alone, for the mechanics every file type shares (sim/yaml/schema.h).
constexpr auto kSpecs = [] {
  std::array<FieldSpec, std::size(kKeys)> specs{};
  for (std::size_t i = 0; i < specs.size(); ++i) specs[i] = kKeys[i].spec;
  return specs;
}();

constexpr yaml::Schema kScenarioSchema{"scenario", kSpecs};

}  // namespace

const yaml::Schema& scenario_schema() { return kScenarioSchema; }

std::span<const ScenarioKey> scenario_keys() { return kKeys; }

std::size_t key_index(const FieldSpec& spec) {
  const FieldSpec* first = kSpecs.data();
  const std::less<const FieldSpec*> before;  // a total order, also for a FieldSpec of another table
  if (before(&spec, first) || !before(&spec, first + kSpecs.size()))
    throw InternalError("key_index: " + std::string(spec.path) + " is not a field of the scenario table");
  return static_cast<std::size_t>(&spec - first);
}

}  // namespace hybridsim::scenarios
