// The one declaration of every key of a study file (format hybridsim-study/1; analysis/README.md's
// field reference is generated from this table); the keys it shares with scenarios are those of
// scenarios/loader/shared_keys.h, with a scenario's values, defaults and help. Order matters: it is
// the order of the reference and of "expected one of" lists. Parents come before their children.
#include <string>

#include "analysis/study/study_config.h"
#include "scenarios/loader/efficiency_points.h"
#include "scenarios/loader/shared_keys.h"
#include "sim/collective.h"
#include "topology/preset_registry.h"
#include "workloads/program/step_program.h"

namespace hybridsim::analysis {
namespace {

using K = yaml::FieldKind;
// The cluster, workload and communication keys a study shares with scenarios, declared once.
namespace shared = scenarios::shared_keys;

// A shared key under `path` without its default: the study supplies one that depends on the network
// or the DDP, which `doc` names.
constexpr yaml::FieldSpec without_default(yaml::FieldSpec spec, std::string_view path, std::string_view doc) {
  spec = shared::at(spec, path);
  spec.default_text = {};
  spec.default_fn = nullptr;
  spec.default_doc = doc;
  return spec;
}

constexpr yaml::FieldSpec kFields[] = {
    {.path = "format",
     .kind = K::Text,
     .required = true,
     .type_doc = "hybridsim-study/1",
     .help = "The format and its version; the only one this code reads."},
    {.path = "title",
     .kind = K::Text,
     .default_fn = [] { return "\"" + std::string(kDefaultStudyTitle) + "\""; },
     .help = "The report's title."},
    {.path = "networks",
     .kind = K::List,
     .required = true,
     .type_doc = "a list of built-in network names or network mappings",
     .help = "The networks compared, each at most once."},
    {.path = "networks[]",
     .kind = K::NameOrSection,
     .type_doc = "a built-in network (inception-v3, gnmt, biglstm) or a mapping",
     .help = "A built-in network with its default curve, dataset and placement, or a mapping that "
             "chooses them."},
    {.path = "networks[].name",
     .kind = K::Text,
     .help = "A built-in network, priced by workload.gpu and workload.precision: inception-v3, gnmt "
             "or biglstm. Give either `name` or `profile`."},
    {.path = "networks[].profile",
     .kind = K::Path,
     .help = "A profile file (format hybridsim-profile/1), relative to the study file."},
    {.path = "networks[].efficiency",
     .kind = K::Text,
     .default_doc = "the profile's network",
     .help = "The network whose built-in curves and dataset apply: inception-v3, gnmt or biglstm."},
    {.path = "networks[].variant",
     .kind = K::Text,
     .default_text = "default",
     .help = "The headline curve, a built-in variant (default, optimistic, pessimistic, or a "
             "network's extra such as measured or lars_v06). Not with `curve`."},
    {.path = "networks[].curve",
     .kind = K::Section,
     .help = "A custom curve instead of `variant`: {e_min, b_noise, supported: [min, max]} or "
             "{table: [[batch, epochs], ...]}."},
    {.path = "networks[].curve.e_min",
     .kind = K::Number,
     .min = 0,
     .max = scenarios::kMaxEpochs,
     .min_exclusive = true,
     .help = "Parametric form: epochs at a small batch."},
    {.path = "networks[].curve.b_noise",
     .kind = K::Number,
     .min = 0,
     .min_exclusive = true,
     .help = "Parametric form: the gradient noise scale (critical batch), in samples."},
    {.path = "networks[].curve.supported",
     .kind = K::List,
     .type_doc = "[min, max] global batches",
     .help = "Parametric form: the global batches the curve is supported on."},
    {.path = "networks[].curve.supported[]",
     .kind = K::Integer,
     .min = 1,
     .max = 1e15,
     .help = "A global batch."},
    {.path = "networks[].curve.table",
     .kind = K::List,
     .type_doc = "a list of [global batch, epochs]",
     .help = "Measured points, batches strictly increasing; interpolated in log-log."},
    {.path = "networks[].curve.table[]",
     .kind = K::Any,
     .type_doc = "[global batch, epochs]",
     .help = "One measured point: a whole batch >= 1 and epochs > 0, at most 1,000,000."},
    {.path = "networks[].dataset_samples",
     .kind = K::Integer,
     .default_doc = "the built-in dataset of `efficiency`",
     .min = 1,
     .max = 1e15,
     .help = "Samples per epoch."},
    {.path = "networks[].partitioner",
     .kind = K::Choice,
     .default_doc = "the network's default",
     .choices = "layers|stacks|branches",
     .help = "How a hybrid worker's ops are spread over its mp GPUs (workloads::default_partitioner: "
             "branches for inception-v3, stacks for gnmt, layers otherwise)."},
    {.path = "networks[].sensitivity",
     .kind = K::List,
     .default_doc = "sensitivity.variants",
     .type_doc = "a list of built-in curve variants",
     .help = "This network's own sensitivity curves; a custom curve has none unless listed here."},
    {.path = "networks[].sensitivity[]", .kind = K::Text, .help = "A built-in curve variant."},
    {.path = "networks[].communication",
     .kind = K::Section,
     .help = "The data-parallel settings of this network's framework (a scenario's keys)."},
    without_default(shared::kDdp, "networks[].communication.ddp",
                    "the network's framework (workloads/README.md): apex for gnmt (NVIDIA's GNMT), "
                    "torch for inception-v3 and biglstm (standing for Horovod's and f-lm's exchange)"),
    yaml::required_list("gpus", "a list of GPU counts >= 2, e.g. [8, 16, 32]",
                        "The scaling grid, increasing without repeats (1 GPU is always added)."),
    {.path = "gpus[]", .kind = K::Integer, .min = 2, .max = 1e6, .help = "A GPU count."},
    {.path = "mp",
     .kind = K::List,
     .default_text = "[2, 4]",
     .type_doc = "a list of model-parallel worker sizes >= 2",
     .help = "The hybrid worker sizes, increasing without repeats."},
    {.path = "mp[]", .kind = K::Integer, .min = 2, .max = 1e6, .help = "GPUs per hybrid worker."},
    {.path = "cluster", .kind = K::Section, .help = "The machines and the fabric between them."},
    {.path = "cluster.preset",
     .kind = K::Text,
     .default_fn = [] { return topology::ClusterSpec{}.preset; },
     .type_doc = "a machine preset that can form a cluster",
     .help = "The machines N GPUs run on, as few of them as hold N GPUs (presets: topology/README.md)."},
    {.path = "cluster.ib_bandwidth",
     .kind = K::Rate,
     .default_doc = "the preset's (EDR)",
     .min = 0,
     .min_exclusive = true,
     .help = "InfiniBand bandwidth per link and direction."},
    shared::kFabric,
    shared::kOversubscription,
    {.path = "workload",
     .kind = K::Section,
     .help = "The cost model of the built-in networks (scenarios/README.md, workload.precision and "
             "workload.gpu)."},
    shared::kPrecision,
    shared::kGpu,
    {.path = "communication", .kind = K::Section, .help = "Gradient collectives."},
    shared::kAlgorithm,
    without_default(shared::kBucketSize, "communication.bucket_size",
                    "each network's DDP's: 25 MB (torch) or 10 M elements (apex)"),
    shared::kMessageSize,
    shared::kFastPath,
    {.path = "sensitivity",
     .kind = K::Section,
     .help = "What the results are re-projected or re-simulated with."},
    {.path = "sensitivity.variants",
     .kind = K::List,
     .default_text = "[optimistic, pessimistic]",
     .type_doc = "a list of built-in curve variants",
     .help = "The other built-in efficiency curves every built-in network is projected with."},
    {.path = "sensitivity.variants[]", .kind = K::Text, .help = "A built-in curve variant."},
    {.path = "sensitivity.ib_factors",
     .kind = K::List,
     .default_text = "[]",
     .type_doc = "a list of InfiniBand bandwidth factors > 0",
     .help = "The cluster again with InfiniBand bandwidth × factor (steps simulated again); each factor "
             "once and not 1, for a grid with a GPU count past one machine."},
    {.path = "sensitivity.ib_factors[]",
     .kind = K::Number,
     .min = 0,
     .max = 1000,
     .min_exclusive = true,
     .help = "A factor: 2 doubles the bandwidth."},
    {.path = "output",
     .kind = K::Path,
     .default_fn = [] { return std::string(kDefaultStudyOutput); },
     .help = "The report folder, relative to the working directory."},
    kStudyThreads,
};

constexpr yaml::Schema kSchema{"study", kFields};

}  // namespace

const yaml::Schema& study_schema() { return kSchema; }

}  // namespace hybridsim::analysis
