// Reading the communication, training, outputs and sweep sections of a scenario tree, and the
// top-level build that calls every section reader in order.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>

#include "scenarios/loader/efficiency_points.h"
#include "scenarios/loader/scenario_build.h"
#include "sim/error.h"
#include "sim/text.h"
#include "sim/time_window.h"
#include "topology/gpu_list.h"

namespace hybridsim::scenarios {
namespace {

bool is_name(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

std::string stem_or(const std::string& source, std::string fallback) {
  const std::string stem = std::filesystem::path(source).stem().string();
  const bool ok = !stem.empty() && std::all_of(stem.begin(), stem.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.';
  });
  return ok ? stem : fallback;
}

void read_efficiency(FieldReader& r, const TreeNode* training, EfficiencySettings& out) {
  const std::string path = "training.efficiency";
  const TreeNode& e = *r.value(training, path);
  if (e.is_scalar()) {
    if (!is_name(e.scalar)) fail_at(e.where, path, "got " + describe_node(e), expected_text(field(path)));
    out.kind = EfficiencySettings::Kind::Named;
    out.variant = e.scalar;
    return;
  }
  if (!e.is_map()) fail_at(e.where, path, "got " + describe_node(e), expected_text(field(path)));
  r.check_section(e, path);
  out.variant.clear();
  const auto e_min = r.number_opt(&e, path + ".e_min");
  const auto b_noise = r.number_opt(&e, path + ".b_noise");
  if (const TreeNode* table = r.written(&e, path + ".table")) {
    for (const auto key : {"e_min", "b_noise"})
      if (const TreeNode* n = r.written(&e, path + "." + key))
        fail_at(n->where, path + "." + key, "cannot be combined with table",
                "either table or e_min and b_noise");
    out.kind = EfficiencySettings::Kind::Table;
    out.table = read_efficiency_points(r, *table, path + ".table");
  } else {
    for (const auto key : {"e_min", "b_noise"})
      if (r.written(&e, path + "." + key) == nullptr)
        fail_at(e.where, path + "." + key,
                "missing required field (the parametric form needs e_min and b_noise)",
                expected_text(field(path + "." + key)) + ", or give table instead");
    out.kind = EfficiencySettings::Kind::Parametric;
    out.e_min = *e_min;
    out.b_noise = *b_noise;
  }
  out.min_batch = r.integer_opt(&e, path + ".min_batch");
  out.max_batch = r.integer_opt(&e, path + ".max_batch");
  if (out.min_batch && out.max_batch && *out.min_batch > *out.max_batch)
    fail_at(e.find("max_batch")->where, path + ".max_batch",
            "max_batch " + std::to_string(*out.max_batch) + " is below min_batch " +
                std::to_string(*out.min_batch),
            "max_batch >= min_batch");
}

void read_trace(FieldReader& r, const TreeNode* outputs, OutputSettings& out) {
  const TreeNode* t = r.section(outputs, "outputs.trace");
  if (t == nullptr) return;
  TraceSettings trace;
  trace.file = *r.text_opt(t, "outputs.trace.file");
  const std::string detail = r.choice(t, "outputs.trace.detail");
  trace.detail = parse_trace_detail(detail);  // the schema checked the choice
  if (const auto gpus = r.text_opt(t, "outputs.trace.gpus")) {
    trace.gpus = topology::try_parse_gpu_list(*gpus);
    if (!trace.gpus)
      fail_at(t->find("gpus")->where, "outputs.trace.gpus", "got \"" + *gpus + "\"",
              expected_text(field("outputs.trace.gpus")));
  }
  if (const auto window = r.text_opt(t, "outputs.trace.window")) {
    trace.window = sim::try_parse_time_window(*window);
    if (!trace.window)
      fail_at(t->find("window")->where, "outputs.trace.window", "got \"" + *window + "\"",
              expected_text(field("outputs.trace.window")) + " with 0 <= START < END");
  }
  trace.gzip = r.boolean(t, "outputs.trace.gzip");
  out.trace = std::move(trace);
}

}  // namespace

void read_communication(FieldReader& r, const TreeNode& root, CommunicationSettings& out) {
  const TreeNode* c = r.section(&root, "communication");
  out.algorithm = workloads::parse_algorithm(r.choice(c, "communication.algorithm"));
  out.protocol = workloads::parse_protocol_option(r.choice(c, "communication.protocol"));
  if (const auto ch = r.integer_opt(c, "communication.channels")) out.channels = static_cast<int>(*ch);
  out.message_size = r.size(c, "communication.message_size");
  out.bucket_size = r.size(c, "communication.bucket_size");
  out.reduction_bandwidth = r.rate_opt(c, "communication.reduction_bandwidth").value_or(sim::Bandwidth());
  out.switching = r.choice(c, "communication.switching") == "store-and-forward"
                      ? sim::Switching::StoreAndForward
                      : sim::Switching::CutThrough;
  out.compute_contention = r.choice(c, "communication.compute_contention") == "on";
  out.gradient_copies = r.choice(c, "communication.gradient_copies") == "on";
  out.ddp = workloads::ddp_by_name(r.choice(c, "communication.ddp"));
  out.exchange_every_micro_batch = r.choice(c, "communication.exchange") == "every-micro-batch";
  out.pcie_only = r.boolean(c, "communication.pcie_only");
  out.fast_path = sim::parse_fast_path(r.choice(c, "communication.fast_path"));
}

void read_training(FieldReader& r, const TreeNode& root, TrainingSettings& out) {
  const TreeNode* t = r.section(&root, "training");
  out.network = r.text_opt(t, "training.network");
  read_efficiency(r, t, out.efficiency);
  out.dataset_samples = r.integer_opt(t, "training.dataset_samples");
  out.global_batch = r.integer_opt(t, "training.global_batch");
}

void read_variability(FieldReader& r, const TreeNode& root, workloads::Variability& out) {
  const TreeNode* v = r.section(&root, "variability");
  out.steps = static_cast<int>(r.integer(v, "variability.steps"));
  out.seed = static_cast<std::uint64_t>(r.integer(v, "variability.seed"));
  out.kernel_jitter = r.number(v, "variability.kernel_jitter");
  out.lengths = r.choice(v, "variability.sequence_lengths") == "wmt16-en-de"
                    ? workloads::LengthDistribution::Wmt16EnDe
                    : workloads::LengthDistribution::Fixed;
  out.batching = r.choice(v, "variability.batching") == "random" ? workloads::Batching::Random
                                                                 : workloads::Batching::Bucketed;
  out.length_buckets = static_cast<int>(r.integer(v, "variability.length_buckets"));
}

void read_simulation(FieldReader& r, const TreeNode& root, sim::SimulationLimits& out) {
  const TreeNode* s = r.section(&root, "simulation");
  out.max_events =
      static_cast<std::uint64_t>(r.integer_opt(s, "simulation.max_events").value_or(0));  // unlimited: 0
  out.max_memory = r.size_opt(s, "simulation.max_memory").value_or(sim::Bytes()).count();
}

void read_outputs(FieldReader& r, const TreeNode& root, const std::string& source, OutputSettings& out) {
  const TreeNode* o = r.section(&root, "outputs");
  out.directory = r.text_opt(o, "outputs.directory").value_or("out/" + stem_or(source, "scenario"));
  const std::string fp = "outputs.formats";
  const TreeNode& formats = r.to_list(*r.value(o, fp), fp, 1);
  out.formats.clear();
  for (std::size_t i = 0; i < formats.items.size(); ++i) {
    const std::string ip = fp + "[" + std::to_string(i) + "]";
    const std::string name = r.to_choice(formats.items[i], ip);
    const OutputFormat f = name == "json"  ? OutputFormat::Json
                           : name == "csv" ? OutputFormat::Csv
                                           : OutputFormat::Table;
    if (std::find(out.formats.begin(), out.formats.end(), f) != out.formats.end())
      fail_at(formats.items[i].where, ip, "format " + name + " is listed twice", "each format once");
    out.formats.push_back(f);
  }
  read_trace(r, o, out);
}

void read_sweep(FieldReader& r, const TreeNode& root, SweepSettings& out) {
  const TreeNode* s = r.section(&root, "sweep");
  if (s == nullptr) return;
  out.mode = r.choice(s, "sweep.mode") == "zip" ? SweepSettings::Mode::Zip : SweepSettings::Mode::Product;
  const TreeNode& params = r.to_list(*r.written(s, "sweep.parameters"), "sweep.parameters", 1);
  double points = 1;
  for (std::size_t i = 0; i < params.items.size(); ++i) {
    const TreeNode& item = params.items[i];
    const std::string ip = "sweep.parameters[" + std::to_string(i) + "]";
    r.check_section(item, ip);
    SweepParameter p;
    p.path = *r.text_opt(&item, ip + ".path");
    const std::string& path_where = item.find("path")->where;
    if (const std::string problem = settable_path_problem(p.path); !problem.empty())
      fail_at(path_where, ip + ".path", problem, "a field path as for --set, e.g. cluster.nodes");
    if (p.path == "sweep" || p.path.starts_with("sweep."))
      fail_at(path_where, ip + ".path", "a sweep cannot vary its own settings", "a field outside sweep");
    for (std::size_t j = 0; j < out.parameters.size(); ++j) {
      const std::string& q = out.parameters[j].path;
      if (p.path == q || p.path.starts_with(q + ".") || q.starts_with(p.path + "."))
        fail_at(path_where, ip + ".path",
                "'" + p.path + "' overlaps sweep.parameters[" + std::to_string(j) + "].path '" + q + "'",
                "each field varied by one parameter only");
    }
    const std::string vp = ip + ".values";
    const TreeNode& values = r.to_list(*r.written(&item, vp), vp, 1);
    for (const auto& v : values.items) p.values.push_back(yaml::tree_to_yaml(v, true));
    if (out.mode == SweepSettings::Mode::Zip && !out.parameters.empty() &&
        p.values.size() != out.parameters[0].values.size())
      fail_at(values.where, vp,
              "zip mode needs equal lengths, but this parameter has " + std::to_string(p.values.size()) +
                  " values and sweep.parameters[0] has " + std::to_string(out.parameters[0].values.size()),
              "the same number of values for every parameter (or mode: product)");
    points *= static_cast<double>(p.values.size());
    if (out.mode == SweepSettings::Mode::Product && points > 1e6)
      fail_at(values.where, vp, "the product has more than 1,000,000 points", "a smaller sweep");
    out.parameters.push_back(std::move(p));
  }
}

Scenario build_scenario(const TreeNode& root_in, const std::string& source,
                        const std::filesystem::path& base_dir) {
  Scenario s;
  s.source = source;
  s.base_dir = base_dir;
  FieldReader r(s.provenance, source);
  const TreeNode* root = &r.document(root_in);
  const std::string stem = std::filesystem::path(source).stem().string();
  s.name = r.text_opt(root, "name").value_or(stem.empty() ? "scenario" : stem);
  s.description = r.text_opt(root, "description").value_or("");
  read_cluster(r, *root, s.cluster);
  read_workload(r, *root, s.workload);
  read_parallelism(r, *root, s.parallelism);
  read_communication(r, *root, s.communication);
  read_training(r, *root, s.training);
  read_variability(r, *root, s.variability);
  read_simulation(r, *root, s.simulation);
  read_outputs(r, *root, source, s.outputs);
  read_sweep(r, *root, s.sweep);
  return s;
}

}  // namespace hybridsim::scenarios
