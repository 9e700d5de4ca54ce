// The canonical YAML of a scenario: every field in schema order with explicit units, so that
// parsing it again gives an equal Scenario (tests/unit/scenario_parse_test.cpp, "round trip").
#include <charconv>

#include "scenarios/loader/scenario_build.h"
#include "sim/error.h"
#include "sim/time_window.h"
#include "topology/gpu_list.h"

namespace hybridsim::scenarios {
namespace {

TreeNode scalar(std::string text) {
  TreeNode n;
  n.kind = TreeNode::Kind::Scalar;
  n.scalar = std::move(text);
  return n;
}

TreeNode sequence(std::vector<TreeNode> items) {
  TreeNode n;
  n.kind = TreeNode::Kind::Sequence;
  n.items = std::move(items);
  return n;
}

TreeNode map_of(std::vector<std::pair<std::string, TreeNode>> fields) {
  TreeNode n;
  n.kind = TreeNode::Kind::Map;
  for (auto& [k, v] : fields) n.entries.push_back({k, {}, std::move(v)});
  return n;
}

std::string number(double v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}


class Writer {
 public:
  void set(std::string_view path, TreeNode value) {
    field(path);  // every written key must be declared
    set_path(root_, path, value, {});
  }
  void text(std::string_view path, std::string v) { set(path, scalar(std::move(v))); }
  void integer(std::string_view path, std::int64_t v) { text(path, std::to_string(v)); }
  template <class T>
  void integer_or_auto(std::string_view path, const std::optional<T>& v) {
    text(path, v ? std::to_string(*v) : "auto");
  }
  TreeNode take() { return std::move(root_); }

 private:
  TreeNode root_;
};

void write_cluster(Writer& w, const ClusterSettings& c) {
  const std::string memory = c.gpu_memory ? sim::format_bytes(*c.gpu_memory) : "auto";
  if (!c.topology.empty()) {
    w.text("cluster.topology", c.topology.string());
    w.text("cluster.gpu_memory", memory);
    return;
  }
  w.text("cluster.preset", c.preset);
  w.integer("cluster.nodes", c.nodes);
  w.integer_or_auto("cluster.gpus_per_node", c.gpus_per_node);
  w.text("cluster.fabric", std::string(topology::presets::fabric_name(c.fabric)));
  w.text("cluster.oversubscription", number(c.oversubscription));
  w.integer("cluster.leaf_radix", c.leaf_radix);
  w.integer_or_auto("cluster.spines", c.spines);
  w.text("cluster.gpu_memory", memory);
  for (int k = 0; k < sim::kLinkKindCount; ++k) {
    const auto kind = static_cast<sim::LinkKind>(k);
    const LinkOverride& o = c.links[kind];
    const std::string path = "cluster.links." + std::string(sim::link_kind_key(kind));
    if (o.bandwidth) w.text(path + ".bandwidth", sim::format_bandwidth(*o.bandwidth));
    if (o.latency) w.text(path + ".latency", sim::format_time(*o.latency));
  }
}

void write_parallelism(Writer& w, const ParallelismSettings& p) {
  w.integer("parallelism.dp", p.dp);
  w.integer("parallelism.mp", p.mp);
  switch (p.placement.kind) {
    case PlacementSettings::Kind::Auto: w.text("parallelism.placement", "auto"); break;
    case PlacementSettings::Kind::Layers: w.text("parallelism.placement", "layers"); break;
    case PlacementSettings::Kind::Stacks: w.text("parallelism.placement", "stacks"); break;
    case PlacementSettings::Kind::Branches: w.text("parallelism.placement", "branches"); break;
    case PlacementSettings::Kind::Rules: {
      std::vector<TreeNode> rules;
      for (const auto& r : p.placement.rules)
        rules.push_back(map_of({{"match", scalar(r.match)}, {"gpu", scalar(std::to_string(r.gpu))}}));
      w.set("parallelism.placement", sequence(std::move(rules)));
    }
  }
  if (!p.mapping) {
    w.text("parallelism.mapping", "auto");
    return;
  }
  std::vector<TreeNode> rows;
  for (const auto& row : *p.mapping) {
    std::vector<TreeNode> cells;
    for (const int g : row) cells.push_back(scalar(std::to_string(g)));
    rows.push_back(sequence(std::move(cells)));
  }
  w.set("parallelism.mapping", sequence(std::move(rows)));
}

void write_communication(Writer& w, const CommunicationSettings& c) {
  w.text("communication.algorithm", std::string(workloads::algorithm_name(c.algorithm)));
  w.text("communication.protocol", workloads::protocol_option_name(c.protocol));
  w.integer_or_auto("communication.channels", c.channels);
  w.text("communication.message_size", sim::format_bytes(c.message_size));
  w.text("communication.bucket_size", sim::format_bytes(c.bucket_size));
  w.text("communication.reduction_bandwidth", c.reduction_bandwidth.bytes_per_second() == 0
                                                  ? "off" : sim::format_bandwidth(c.reduction_bandwidth));
  w.text("communication.switching",
         c.switching == sim::Switching::StoreAndForward ? "store-and-forward" : "cut-through");
  w.text("communication.compute_contention", c.compute_contention ? "on" : "off");
  w.text("communication.gradient_copies", c.gradient_copies ? "on" : "off");
  w.text("communication.ddp", std::string(workloads::ddp_name(c.ddp)));
  w.text("communication.exchange", c.exchange_every_micro_batch ? "every-micro-batch" : "last-micro-batch");
  w.text("communication.pcie_only", c.pcie_only ? "true" : "false");
  if (c.fast_path != sim::FastPath::Auto)
    w.text("communication.fast_path", std::string(sim::fast_path_name(c.fast_path)));
}

void write_training(Writer& w, const TrainingSettings& t) {
  w.text("training.network", t.network.value_or("auto"));
  const EfficiencySettings& e = t.efficiency;
  if (e.kind == EfficiencySettings::Kind::Named) {
    w.text("training.efficiency", e.variant);
  } else if (e.kind == EfficiencySettings::Kind::Parametric) {
    w.text("training.efficiency.e_min", number(e.e_min));
    w.text("training.efficiency.b_noise", number(e.b_noise));
  } else {
    std::vector<TreeNode> points;
    for (const auto& [batch, epochs] : e.table)
      points.push_back(sequence({scalar(std::to_string(batch)), scalar(number(epochs))}));
    w.set("training.efficiency.table", sequence(std::move(points)));
  }
  if (e.kind != EfficiencySettings::Kind::Named) {
    if (e.min_batch) w.integer("training.efficiency.min_batch", *e.min_batch);
    if (e.max_batch) w.integer("training.efficiency.max_batch", *e.max_batch);
  }
  w.integer_or_auto("training.dataset_samples", t.dataset_samples);
  w.integer_or_auto("training.global_batch", t.global_batch);
}

void write_variability(Writer& w, const workloads::Variability& v) {
  w.integer("variability.steps", v.steps);
  w.integer("variability.seed", static_cast<std::int64_t>(v.seed));
  w.text("variability.kernel_jitter", number(v.kernel_jitter));
  w.text("variability.sequence_lengths", std::string(workloads::length_distribution_name(v.lengths)));
  w.text("variability.batching", std::string(workloads::batching_name(v.batching)));
  w.integer("variability.length_buckets", v.length_buckets);
}

// Written only when not the defaults, so that scenarios written before the caps read back alike.
void write_simulation(Writer& w, const sim::SimulationLimits& l) {
  const sim::SimulationLimits defaults;
  if (l.max_events != defaults.max_events)
    w.integer("simulation.max_events", static_cast<std::int64_t>(l.max_events));
  if (l.max_memory != defaults.max_memory)
    w.text("simulation.max_memory", sim::format_bytes(sim::Bytes::of(l.max_memory)));
}

void write_outputs(Writer& w, const OutputSettings& o) {
  w.text("outputs.directory", o.directory.string());
  std::vector<TreeNode> formats;
  for (const auto f : o.formats) formats.push_back(scalar(std::string(output_format_name(f))));
  w.set("outputs.formats", sequence(std::move(formats)));
  if (!o.trace) return;
  const TraceSettings& t = *o.trace;
  w.text("outputs.trace.file", t.file.string());
  w.text("outputs.trace.detail", std::string(trace_detail_name(t.detail)));
  w.text("outputs.trace.gpus", t.gpus ? topology::format_gpu_list(*t.gpus) : "all");
  w.text("outputs.trace.window", t.window ? sim::format_time_window(*t.window) : "all");
  w.text("outputs.trace.gzip", t.gzip ? "true" : "false");
}

void write_sweep(Writer& w, const SweepSettings& s) {
  if (s.parameters.empty()) return;
  w.text("sweep.mode", s.mode == SweepSettings::Mode::Zip ? "zip" : "product");
  std::vector<TreeNode> params;
  for (const auto& p : s.parameters) {
    std::vector<TreeNode> values;
    for (const auto& v : p.values) values.push_back(yaml::parse_yaml_tree_at(v, {}));
    params.push_back(map_of({{"path", scalar(p.path)}, {"values", sequence(std::move(values))}}));
  }
  w.set("sweep.parameters", sequence(std::move(params)));
}

}  // namespace

std::string scenario_to_yaml(const Scenario& s) {
  Writer w;
  w.text("name", s.name);
  if (!s.description.empty()) w.text("description", s.description);
  write_cluster(w, s.cluster);
  if (!s.workload.profile.empty()) w.text("workload.profile", s.workload.profile.string());
  else w.text("workload.network", s.workload.network);
  if (s.workload.gpu_choice.precision)
    w.text("workload.precision", std::string(workloads::precision_name(*s.workload.gpu_choice.precision)));
  if (s.workload.gpu_choice.gpu) w.text("workload.gpu", *s.workload.gpu_choice.gpu);
  w.integer_or_auto("workload.batch_per_worker", s.workload.batch_per_worker);
  w.text("workload.compute_speed", number(s.workload.compute_speed));
  std::vector<TreeNode> speeds;
  for (const auto& g : s.workload.gpu_speeds)
    speeds.push_back(map_of({{"gpu", scalar(std::to_string(g.gpu))}, {"speed", scalar(number(g.speed))}}));
  w.set("workload.gpu_speeds", sequence(std::move(speeds)));
  write_parallelism(w, s.parallelism);
  write_communication(w, s.communication);
  write_training(w, s.training);
  write_variability(w, s.variability);
  write_simulation(w, s.simulation);
  write_outputs(w, s.outputs);
  write_sweep(w, s.sweep);
  return yaml::tree_to_yaml(w.take(), false, 3) + "\n";
}

}  // namespace hybridsim::scenarios
