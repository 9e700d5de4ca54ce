// The study file reader: the located tree checked against study_schema(), and the resolution of
// network names into profiles, curves and datasets.
#include "analysis/study/study_config.h"

#include <algorithm>
#include <cmath>

#include "analysis/training/epochs_limit.h"
#include "scenarios/loader/efficiency_points.h"
#include "sim/error.h"
#include "sim/yaml/field_reader.h"
#include "sim/yaml/input_file.h"
#include "topology/preset_registry.h"
#include "workloads/generators/gpu_choice.h"
#include "workloads/generators/profile_gen.h"
#include "workloads/gpu/gpu.h"
#include "workloads/profile/profile_io.h"

namespace hybridsim::analysis {
namespace {

using yaml::describe_node;
using yaml::fail_at;
using yaml::FieldReader;
using yaml::TreeNode;

std::string item_path(const std::string& list, std::size_t i) { return list + "[" + std::to_string(i) + "]"; }

// Runs `f`; an InputError from it is rethrown located at `at`, naming `path`.
template <typename F>
auto located(const TreeNode& at, const std::string& path, F f, const std::string& expected = {}) {
  try {
    return f();
  } catch (const InputError& e) {
    fail_at(at.where, path, e.what(), expected);
  }
}

// A list of whole numbers within the declared bounds, increasing without repeats.
std::vector<int> ascending_ints(const FieldReader& r, const TreeNode& list, const std::string& path) {
  std::vector<int> out;
  for (std::size_t i = 0; i < r.to_list(list, path, 1).items.size(); ++i) {
    const TreeNode& item = list.items[i];
    const auto v = r.to_integer(item, item_path(path, i));
    if (!out.empty() && v <= out.back())
      fail_at(item.where, item_path(path, i),
              "got " + std::to_string(v) + " after " + std::to_string(out.back()),
              "values in increasing order without repeats");
    out.push_back(static_cast<int>(v));
  }
  return out;
}

// A list of texts, each once: a repeat would project the same curve twice.
std::vector<std::string> texts(const FieldReader& r, const TreeNode& list, const std::string& path) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < r.to_list(list, path, 0).items.size(); ++i) {
    out.push_back(r.to_text(list.items[i], item_path(path, i)));
    for (std::size_t j = 0; j < i; ++j)
      if (out[j] == out[i])
        fail_at(list.items[i].where, item_path(path, i),
                "repeats " + item_path(path, j) + " (" + out[i] + ")", "each value once");
  }
  return out;
}

// sensitivity.ib_factors: each once, none 1 (the cluster as it is: the headline itself), and only
// for a grid with a GPU count past one machine (else no step crosses InfiniBand and the re-simulated
// steps would be the headline's again).
std::vector<double> read_ib_factors(const FieldReader& r, const TreeNode& factors, const StudyConfig& c) {
  const std::string path = "sensitivity.ib_factors";
  std::vector<double> out;
  for (std::size_t i = 0; i < factors.items.size(); ++i) {
    const TreeNode& item = factors.items[i];
    out.push_back(r.to_number(item, item_path(path, i)));
    if (out[i] == 1)
      fail_at(item.where, item_path(path, i), "1 is the cluster as it is (the headline)", "another factor");
    for (std::size_t j = 0; j < i; ++j)
      if (out[j] == out[i])
        fail_at(item.where, item_path(path, i), "repeats " + item_path(path, j), "each factor once");
  }
  const int per_machine = topology::gpus_per_machine(c.cluster);
  if (!out.empty() && c.gpus.back() <= per_machine)
    fail_at(factors.where, path,
            "every GPU count of the grid (up to " + std::to_string(c.gpus.back()) + ") fits one " +
                c.cluster.preset + " machine of " + std::to_string(per_machine) +
                " GPUs, so no step crosses InfiniBand",
            "it left out, or a GPU count above " + std::to_string(per_machine));
  return out;
}

StatisticalEfficiency read_table(const FieldReader& r, const TreeNode& table, const std::string& path) {
  std::vector<BatchEpochs> points;
  for (const auto& [batch, epochs] : scenarios::read_efficiency_points(r, table, path))
    points.push_back({batch, epochs});
  return StatisticalEfficiency::table(std::move(points));
}

StatisticalEfficiency read_curve(FieldReader& r, const TreeNode& n, const std::string& path) {
  r.check_section(n, path);
  const char* parametric[] = {"e_min", "b_noise", "supported"};
  if (const TreeNode* table = r.written(&n, path + ".table")) {
    for (const char* key : parametric)
      if (const TreeNode* w = r.written(&n, path + "." + key))
        fail_at(w->where, path + "." + key, "cannot be combined with table",
                "either table or e_min, b_noise, supported");
    return read_table(r, *table, path + ".table");
  }
  for (const char* key : parametric)
    if (r.written(&n, path + "." + key) == nullptr)
      fail_at(n.where, path + "." + key,
              "missing required field (the parametric form needs e_min, b_noise and supported)",
              r.expected(path + "." + key) + ", or give table instead");
  const double e_min = r.number(&n, path + ".e_min");
  const double b_noise = r.number(&n, path + ".b_noise");
  const std::string sp = path + ".supported";
  const TreeNode& s = r.to_list(*r.written(&n, sp), sp, 2);
  if (s.items.size() != 2)
    fail_at(s.where, sp, "got " + std::to_string(s.items.size()) + " items", r.expected(sp));
  const BatchRange range{r.to_integer(s.items[0], sp + "[0]"), r.to_integer(s.items[1], sp + "[1]")};
  if (range.max < range.min) fail_at(s.where, sp, "max below min", "[min, max] with min <= max");
  return StatisticalEfficiency::parametric(e_min, b_noise, range);
}

// The name of a built-in profile; "did you mean" for any other.
std::string builtin_name(const FieldReader& r, const TreeNode& node, const std::string& path) {
  std::string name = r.to_text(node, path);
  const auto names = workloads::builtin_profile_names();
  if (std::find(names.begin(), names.end(), name) == names.end()) r.fail_unknown(node, path, names);
  return name;
}

// The network's curve: `curve` (custom) or the built-in `variant`.
EfficiencyCurve read_network_curve(FieldReader& r, const TreeNode& n, const std::string& path,
                                   const std::string& eff) {
  const TreeNode* curve = r.written(&n, path + ".curve");
  const TreeNode* variant = r.written(&n, path + ".variant");
  if (curve != nullptr && variant != nullptr)
    fail_at(variant->where, path + ".variant", "given with curve", "either variant or curve");
  if (curve != nullptr)
    return EfficiencyCurve{eff, "custom", "Given in " + curve->where + ".", false,
                           read_curve(r, *curve, path + ".curve")};
  const std::string name = r.text(&n, path + ".variant");
  return located(variant != nullptr ? *variant : n, path + ".variant",
                 [&] { return efficiency_curve_by_name(eff, name); });
}

// A custom curve held to the epochs limit at every global batch the study projects (1 GPU, mp alone
// and each grid point: data-parallel replicas × the profile's batch), before any step runs; a tiny
// b_noise or a steep table printed "inf h" to train. Built-in curves stay far inside it.
void check_curve_at_grid(const StudyConfig& c, const StudyNetwork& net, const TreeNode& written,
                         const std::string& path) {
  const TreeNode* curve = written.is_map() ? written.find("curve") : nullptr;
  if (curve == nullptr) return;
  std::vector<int> replicas{1};
  for (const int gpus : c.gpus) {
    replicas.push_back(gpus);
    for (const int mp : c.mp)
      if (gpus % mp == 0) replicas.push_back(gpus / mp);
  }
  for (const int dp : replicas) {
    const std::int64_t global_batch = std::int64_t{dp} * net.profile.meta.batch_per_gpu;
    if (const std::string problem = epochs_limit_problem(net.curve.efficiency, global_batch);
        !problem.empty())
      fail_at(curve->where, path,
              problem + " (" + std::to_string(dp) + " data-parallel worker" + (dp == 1 ? ")" : "s)"),
              "a curve within it at every global batch of the grid");
  }
}

// What a study's workload section asks of every network: the cost model of built-in ones, and
// where each key was written (nullptr: not given), to locate a profile file's disagreement.
struct StudyWorkload {
  workloads::BuiltinProfileOptions options;
  workloads::GpuChoice choice;
  const TreeNode* gpu = nullptr;
  const TreeNode* precision = nullptr;
};

// A profile file must have the GPU and precision the workload section names.
void check_profile_file(const workloads::Profile& profile, const StudyWorkload& w) {
  if (w.choice.gpu)
    if (const auto problem = workloads::gpu_mismatch(profile, *w.choice.gpu))
      fail_at(w.gpu->where, "workload.gpu", problem->problem, problem->expected);
  if (w.choice.precision)
    if (const auto problem = workloads::precision_mismatch(profile, *w.choice.precision))
      fail_at(w.precision->where, "workload.precision", problem->problem, problem->expected);
}

StudyNetwork read_network(FieldReader& r, const TreeNode& n, const std::string& path,
                          const std::vector<std::string>& sensitivity, const TreeNode* sensitivity_written,
                          const std::filesystem::path& base_dir, const StudyWorkload& w) {
  if (n.is_scalar()) {
    const std::string builtin = builtin_name(r, n, path);
    // A study-wide variant the network lacks ("measured" is GNMT's) is refused where it was written.
    if (sensitivity_written != nullptr)
      for (std::size_t i = 0; i < sensitivity.size(); ++i)
        located(sensitivity_written->items[i], item_path("sensitivity.variants", i), [&] {
          return efficiency_curve_by_name(workloads::canonical_network_name(builtin), sensitivity[i]);
        });
    return located(n, path, [&] { return builtin_study_network(builtin, sensitivity, w.options); });
  }
  r.check_section(n, path);
  const TreeNode* name = r.written(&n, path + ".name");
  const TreeNode* file = r.written(&n, path + ".profile");
  if ((name == nullptr) == (file == nullptr))
    fail_at(n.where, path, name != nullptr ? "both name and profile given" : "neither name nor profile given",
            "exactly one of name (a built-in profile) or profile (a file)");
  workloads::Profile profile;
  std::string profile_source = "built-in (workloads/generators/profile_gen.h)";
  if (name != nullptr) {
    profile = workloads::builtin_profile(builtin_name(r, *name, path + ".name"), w.options);
  } else {
    profile_source = (base_dir / r.to_text(*file, path + ".profile")).string();
    profile = located(*file, path + ".profile", [&] { return workloads::load_profile(profile_source); });
    check_profile_file(profile, w);
  }
  const auto partitioner = r.choice_opt(&n, path + ".partitioner");
  const TreeNode* efficiency = r.written(&n, path + ".efficiency");
  const std::string eff = workloads::canonical_network_name(
      efficiency != nullptr ? r.to_text(*efficiency, path + ".efficiency") : profile.meta.network);
  if (efficiency != nullptr)
    if (const auto mismatch = curve_family_mismatch(profile.meta.network, eff))
      fail_at(efficiency->where, path + ".efficiency", mismatch->problem, mismatch->expected);
  EfficiencyCurve curve = read_network_curve(r, n, path, eff);
  // A custom curve has no built-in siblings: only variants listed on the network itself.
  const TreeNode* own = r.written(&n, path + ".sensitivity");
  const std::vector<std::string> variants =
      own != nullptr ? texts(r, *own, path + ".sensitivity")
                     : (r.written(&n, path + ".curve") != nullptr ? std::vector<std::string>{} : sensitivity);
  std::vector<EfficiencyCurve> sensitivity_curves;
  // A variant the network lacks is located where it was written: on the network, or in the study's
  // sensitivity.variants (not at the network, which names none).
  for (std::size_t i = 0; i < variants.size(); ++i) {
    const bool global = own == nullptr && sensitivity_written != nullptr;
    sensitivity_curves.push_back(located(own != nullptr ? own->items[i]
                                         : global       ? sensitivity_written->items[i]
                                                        : n,
                                         own != nullptr ? path + ".sensitivity"
                                         : global       ? item_path("sensitivity.variants", i)
                                                        : path,
                                         [&] { return efficiency_curve_by_name(eff, variants[i]); }));
  }
  TrainingDataset dataset;
  if (const auto samples = r.integer_opt(&n, path + ".dataset_samples"))
    dataset = {eff, "custom", "sample", *samples,
               "Given in " + r.written(&n, path + ".dataset_samples")->where + "."};
  else
    dataset = located(efficiency != nullptr ? *efficiency : n, path + ".efficiency",
                      [&] { return training_dataset_by_name(eff); },
                      "a network with a built-in dataset, or dataset_samples");
  const workloads::Partitioner placement =
      partitioner ? workloads::parse_partitioner(*partitioner) : workloads::default_partitioner(profile);
  const TreeNode* cm = r.section(&n, path + ".communication");
  const auto ddp = r.choice_opt(cm, path + ".communication.ddp");
  std::string network = profile.meta.network;
  return StudyNetwork{.name = std::move(network),
                      .profile = std::move(profile),
                      .profile_source = std::move(profile_source),
                      .partitioner = placement,
                      .curve = std::move(curve),
                      .sensitivity_curves = std::move(sensitivity_curves),
                      .dataset = std::move(dataset),
                      .ddp = ddp ? workloads::ddp_by_name(*ddp) : study_ddp(eff)};
}

void read_cluster(FieldReader& r, const TreeNode& root, ClusterSpec& c) {
  const TreeNode* cl = r.section(&root, "cluster");
  c.preset = r.text(cl, "cluster.preset");
  c.links[sim::LinkKind::InfiniBand].bandwidth = r.rate_opt(cl, "cluster.ib_bandwidth");
  c.fabric = topology::presets::parse_fabric(r.choice(cl, "cluster.fabric"));
  c.oversubscription = r.number(cl, "cluster.oversubscription");
  if (const TreeNode* preset = r.written(cl, "cluster.preset"))  // one whose machines the study can build
    located(*preset, "cluster.preset",
            [&] { return build_cluster(c, 1, topology::ib_bandwidth_of(c)).gpus().size(); });
}

// A GPU count more than the largest cluster holds is refused at the count, in GPUs (not in the
// machines it would take).
void check_gpu_counts(const TreeNode& list, const StudyConfig& c) {
  const int per_machine = topology::gpus_per_machine(c.cluster);
  const long long most = static_cast<long long>(per_machine) * topology::kMaxNodes;
  for (std::size_t i = 0; i < c.gpus.size(); ++i)
    if (c.gpus[i] > most)
      fail_at(list.items[i].where, item_path("gpus", i),
              "got " + std::to_string(c.gpus[i]) + " GPUs, more than " + std::to_string(topology::kMaxNodes) +
                  " " + c.cluster.preset + " machines of " + std::to_string(per_machine) + " GPUs hold",
              "at most " + std::to_string(most) + " GPUs");
}

// The keys of the fabric between machines, on a grid whose every GPU count fits one machine: as
// sensitivity.ib_factors there (and plan's --ib-bandwidth on one machine), refused at the key; a study
// of cluster.ib_bandwidth 200 Gb/s on 2 to 8 GPUs of a DGX-1 ran without a word of it.
// cluster.oversubscription likewise where the grid's largest count's machines all plug into one leaf
// switch (32 GPUs of DGX-1: 4 machines of 4 NICs, a leaf of 16 ports): no step crosses a spine.
void check_fabric_used(FieldReader& r, const TreeNode& root, const StudyConfig& c) {
  const int per_machine = topology::gpus_per_machine(c.cluster);
  const TreeNode* cl = r.section(&root, "cluster");
  if (c.gpus.back() > per_machine) {
    const TreeNode* key = r.written(cl, "cluster.oversubscription");
    topology::ClusterSpec spec = topology::cluster_for_gpus(c.cluster, c.gpus.back());
    if (!key || topology::fabric_leaves(spec) != 1) return;
    const int machines = spec.nodes;
    while (topology::fabric_leaves(spec) == 1) ++spec.nodes;  // the fewest machines past one leaf
    fail_at(key->where, "cluster.oversubscription",
            "every NIC of the grid's largest count, " + std::to_string(c.gpus.back()) + " GPUs on " +
                std::to_string(machines) + " " + c.cluster.preset +
                " machines, plugs into one leaf switch of " + std::to_string(spec.leaf_radix) +
                " ports, so no step crosses a spine",
            "it left out, or a GPU count above " + std::to_string((spec.nodes - 1) * per_machine));
  }
  for (const char* path : {"cluster.ib_bandwidth", "cluster.fabric", "cluster.oversubscription"})
    if (const TreeNode* key = r.written(cl, path))
      fail_at(key->where, path,
              "every GPU count of the grid (up to " + std::to_string(c.gpus.back()) + ") fits one " +
                  c.cluster.preset + " machine of " + std::to_string(per_machine) +
                  " GPUs, so no step crosses InfiniBand",
              "it left out, or a GPU count above " + std::to_string(per_machine));
}

StudyWorkload read_workload(FieldReader& r, const TreeNode& root, StudyConfig& c) {
  const TreeNode* ws = r.section(&root, "workload");
  StudyWorkload w;
  if (const auto precision = r.choice_opt(ws, "workload.precision"))
    c.gpu_choice.precision = workloads::precision_by_name(*precision);
  const std::string gpu = r.choice(ws, "workload.gpu");
  if (gpu != "auto") c.gpu_choice.gpu = gpu;
  w.choice = c.gpu_choice;
  w.gpu = r.written(ws, "workload.gpu");
  w.precision = r.written(ws, "workload.precision");
  w.options = workloads::builtin_options(c.gpu_choice, topology::preset_by_name(c.cluster.preset).gpu);
  return w;
}

void read_communication(FieldReader& r, const TreeNode& root, StudyConfig& c) {
  const TreeNode* cm = r.section(&root, "communication");
  c.algorithm = workloads::parse_algorithm(r.choice(cm, "communication.algorithm"));
  c.bucket_size = r.size_opt(cm, "communication.bucket_size");
  c.message_size = r.size(cm, "communication.message_size");
  c.fast_path = sim::parse_fast_path(r.choice(cm, "communication.fast_path"));
}

}  // namespace

workloads::Ddp study_ddp(std::string_view efficiency_network) {
  return efficiency_network == "gnmt" ? workloads::Ddp::Apex : workloads::Ddp::Torch;
}

StudyNetwork builtin_study_network(std::string_view name, const std::vector<std::string>& sensitivity,
                                   const workloads::BuiltinProfileOptions& options) {
  workloads::Profile profile = workloads::builtin_profile(name, options);
  const std::string eff = workloads::canonical_network_name(profile.meta.network);
  std::vector<EfficiencyCurve> sensitivity_curves;
  for (const auto& v : sensitivity) sensitivity_curves.push_back(efficiency_curve_by_name(eff, v));
  const workloads::Partitioner partitioner = workloads::default_partitioner(profile);
  return StudyNetwork{.name = profile.meta.network,
                      .profile = std::move(profile),
                      .profile_source = "built-in (workloads/generators/profile_gen.h)",
                      .partitioner = partitioner,
                      .curve = efficiency_curve_by_name(eff, "default"),
                      .sensitivity_curves = std::move(sensitivity_curves),
                      .dataset = training_dataset_by_name(eff),
                      .ddp = study_ddp(eff)};
}

StudyConfig parse_study_config(std::string_view yaml, const std::string& source_name,
                               const std::filesystem::path& base_dir) {
  const TreeNode tree = yaml::parse_yaml_tree(yaml, source_name);
  // A scenario given as a study said "name: unknown field; expected one of: format, ...": a key only
  // a scenario has, in a file without a format line, names the file for what it is.
  if (tree.is_map() && tree.find("format") == nullptr)
    for (const char* key : {"parallelism", "training", "outputs", "sweep", "variability", "simulation"})
      if (const TreeNode* k = tree.find(key))
        yaml::fail_at(k->where, key,
                      "a scenario's field, in a file without format: " + std::string(kStudyFormat),
                      "a study file (hybridsim run runs a scenario)");
  FieldReader r(study_schema(), nullptr, source_name);
  const TreeNode& root = r.document(tree);
  StudyConfig c;
  c.source = source_name;
  const TreeNode& format = *root.find("format");
  if (r.to_text(format, "format") != kStudyFormat)
    fail_at(format.where, "format", "got " + describe_node(format), r.expected("format"));
  c.title = r.text(&root, "title");
  c.gpus = ascending_ints(r, *root.find("gpus"), "gpus");
  c.mp = ascending_ints(r, *r.value(&root, "mp"), "mp");
  read_cluster(r, root, c.cluster);
  check_gpu_counts(*root.find("gpus"), c);
  check_fabric_used(r, root, c);
  read_communication(r, root, c);
  const StudyWorkload workload = read_workload(r, root, c);
  const TreeNode* s = r.section(&root, "sensitivity");
  const std::vector<std::string> variants =
      texts(r, *r.value(s, "sensitivity.variants"), "sensitivity.variants");
  c.ib_factors =
      read_ib_factors(r, r.to_list(*r.value(s, "sensitivity.ib_factors"), "sensitivity.ib_factors", 0), c);
  const TreeNode& nets = r.to_list(*root.find("networks"), "networks", 1);
  for (std::size_t i = 0; i < nets.items.size(); ++i) {
    c.networks.push_back(
        read_network(r, nets.items[i], item_path("networks", i), variants,
                     r.written(s, "sensitivity.variants"), base_dir, workload));
    for (std::size_t j = 0; j < i; ++j)
      if (c.networks[j].name == c.networks[i].name)
        fail_at(nets.items[i].where, item_path("networks", i), "\"" + c.networks[i].name + "\" appears twice",
                "each network once");
  }
  for (std::size_t i = 0; i < nets.items.size(); ++i)
    check_curve_at_grid(c, c.networks[i], nets.items[i], item_path("networks", i) + ".curve");
  c.output = r.text(&root, "output");
  c.threads = static_cast<int>(r.integer(&root, "threads"));
  return c;
}

workloads::MemoryCapacity memory_what_if(const std::string& text, const OptionSpelling& spelling) {
  const sim::Bytes bytes = option_value(
      spelling, "memory", text, [](const std::string& s) { return sim::parse_bytes(s); },
      [](sim::Bytes b) { return b.count() > 0; }, "more than 0 B");
  return workloads::MemoryCapacity{bytes, spelling.said("memory", text),
                                   workloads::MemoryCapacity::Origin::Option};
}

StudyConfig load_study_config(const std::filesystem::path& path) {
  return parse_study_config(yaml::read_input_file(path.string(), "study file"), path.string(),
                            path.parent_path());
}

}  // namespace hybridsim::analysis
