// Reading the cluster, workload and parallelism sections of a scenario tree, with the checks that
// need more than one field (either/or fields, preset limits, placement GPUs within mp, mapping shape).
#include <algorithm>
#include <set>

#include "scenarios/loader/scenario_build.h"
#include "sim/error.h"
#include "topology/preset_registry.h"

namespace hybridsim::scenarios {
namespace {

const std::string& key_where(const TreeNode& map, std::string_view key) {
  for (const auto& e : map.entries)
    if (e.key == key) return e.key_where;
  return map.where;
}

// A scalar that is not one of the field's keywords, for fields that also take lists.
[[noreturn]] void fail_not_word(const TreeNode& node, std::string_view path) {
  const FieldSpec& spec = field(path);
  std::string what = "got " + describe_node(node);
  if (node.is_scalar()) {
    const auto words = words_of(spec);
    if (const auto guess = closest_match(node.scalar, words)) what += " (did you mean '" + *guess + "'?)";
  }
  fail_at(node.where, path, what, expected_text(spec));
}

// The overrides of the kinds the schema declares (cluster.links.<key>); whether the preset has
// that kind is checked with the other preset limits in read_cluster.
void read_links(FieldReader& r, const TreeNode* cluster, ClusterSettings& out) {
  const TreeNode* links = r.section(cluster, "cluster.links");
  if (links == nullptr) return;
  for (int k = 0; k < sim::kLinkKindCount; ++k) {
    const auto kind = static_cast<sim::LinkKind>(k);
    const std::string path = "cluster.links." + std::string(sim::link_kind_key(kind));
    if (find_field(path) == nullptr) continue;  // not a kind users override (ethernet)
    const TreeNode* node = r.section(links, path);
    if (node == nullptr) continue;
    out.links[kind].bandwidth = r.rate_opt(node, path + ".bandwidth");
    out.links[kind].latency = r.duration_opt(node, path + ".latency");
  }
}

// Where the field a preset check names was written: cluster.<field> ("nodes", "links.nvswitch");
// for a link kind, its key under cluster.links.
const std::string& problem_where(const TreeNode& cluster, const std::string& field) {
  if (field.starts_with("links.")) {
    const TreeNode* links = cluster.find("links");
    return key_where(*links, field.substr(6));
  }
  if (const TreeNode* n = cluster.find(field); n != nullptr && field != "links") return n->where;
  return cluster.where;
}

}  // namespace

void read_cluster(FieldReader& r, const TreeNode& root, ClusterSettings& out) {
  const TreeNode* c = r.section(&root, "cluster");
  const auto preset = r.choice_opt(c, "cluster.preset");
  const auto topology = r.text_opt(c, "cluster.topology");
  if (preset && topology)
    fail_at(key_where(*c, "topology"), "cluster.topology", "given together with cluster.preset",
            "either preset or topology, not both");
  if (!preset && !topology)
    fail_at(c->where, "cluster", "missing field 'preset' (or 'topology')",
            "preset: " + expected_text(field("cluster.preset")) + "; or topology: a topology file");
  out.preset = preset.value_or("");
  out.topology = topology.value_or("");
  out.nodes = static_cast<int>(r.integer(c, "cluster.nodes"));
  if (const auto g = r.integer_opt(c, "cluster.gpus_per_node")) out.gpus_per_node = static_cast<int>(*g);
  out.fabric = topology::presets::parse_fabric(r.choice(c, "cluster.fabric"));
  out.oversubscription = r.number(c, "cluster.oversubscription");
  out.leaf_radix = static_cast<int>(r.integer(c, "cluster.leaf_radix"));
  if (const auto s = r.integer_opt(c, "cluster.spines")) out.spines = static_cast<int>(*s);
  out.gpu_memory = r.size_opt(c, "cluster.gpu_memory");

  if (topology) {
    for (const auto key :
         {"nodes", "gpus_per_node", "fabric", "oversubscription", "leaf_radix", "spines", "links"})
      if (const TreeNode* n = c->find(key); n != nullptr && !n->is_null())
        fail_at(key_where(*c, key), "cluster." + std::string(key), "cannot be combined with cluster.topology",
                "the topology file to describe the whole cluster (or a preset instead)");
    return;
  }
  read_links(r, c, out);
  if (const auto problem = topology::find_cluster_spec_problem(out))
    fail_at(problem_where(*c, problem->field), "cluster." + problem->field, problem->what, problem->expected);
}

void read_workload(FieldReader& r, const TreeNode& root, WorkloadSettings& out) {
  const TreeNode* w = r.section(&root, "workload");
  const auto network = r.choice_opt(w, "workload.network");
  const auto profile = r.text_opt(w, "workload.profile");
  if (network && profile)
    fail_at(key_where(*w, "profile"), "workload.profile", "given together with workload.network",
            "either network or profile, not both");
  if (!network && !profile)
    fail_at(w->where, "workload", "missing field 'network' (or 'profile')",
            "network: " + expected_text(field("workload.network")) + "; or profile: a profile file");
  out.network = network.value_or("");
  out.profile = profile.value_or("");
  if (const auto precision = r.choice_opt(w, "workload.precision"))
    out.gpu_choice.precision = workloads::precision_by_name(*precision);
  else
    out.gpu_choice.precision.reset();
  const std::string gpu = r.choice(w, "workload.gpu");
  out.gpu_choice.gpu = gpu == "auto" ? std::nullopt : std::optional<std::string>(gpu);
  out.batch_per_worker = r.integer_opt(w, "workload.batch_per_worker");
  out.compute_speed = r.number(w, "workload.compute_speed");
  const std::string sp = "workload.gpu_speeds";
  const TreeNode& speeds = r.to_list(*r.value(w, sp), sp, 0);
  out.gpu_speeds.clear();
  for (std::size_t i = 0; i < speeds.items.size(); ++i) {
    const TreeNode& item = speeds.items[i];
    const std::string ip = sp + "[" + std::to_string(i) + "]";
    r.check_section(item, ip);
    GpuSpeedSetting g{static_cast<int>(r.integer(&item, ip + ".gpu")), r.number(&item, ip + ".speed")};
    for (const GpuSpeedSetting& earlier : out.gpu_speeds)
      if (earlier.gpu == g.gpu)
        fail_at(item.find("gpu")->where, ip + ".gpu", "GPU " + std::to_string(g.gpu) + " is listed twice",
                "each GPU once");
    out.gpu_speeds.push_back(g);
  }
}

void read_parallelism(FieldReader& r, const TreeNode& root, ParallelismSettings& out) {
  const TreeNode* p = r.section(&root, "parallelism");
  out.dp = static_cast<int>(r.integer(p, "parallelism.dp"));
  out.mp = static_cast<int>(r.integer(p, "parallelism.mp"));

  const std::string placement_path = "parallelism.placement";
  const TreeNode& placement = *r.value(p, placement_path);
  const std::string word = r.word(placement, placement_path);
  if (word == "auto") out.placement.kind = PlacementSettings::Kind::Auto;
  else if (word == "layers") out.placement.kind = PlacementSettings::Kind::Layers;
  else if (word == "stacks") out.placement.kind = PlacementSettings::Kind::Stacks;
  else if (word == "branches") out.placement.kind = PlacementSettings::Kind::Branches;
  else if (!placement.is_sequence()) fail_not_word(placement, placement_path);
  else {
    out.placement.kind = PlacementSettings::Kind::Rules;
    r.to_list(placement, placement_path, 1);
    for (std::size_t i = 0; i < placement.items.size(); ++i) {
      const TreeNode& item = placement.items[i];
      const std::string ip = placement_path + "[" + std::to_string(i) + "]";
      r.check_section(item, ip);
      PlacementRuleSetting rule;
      rule.match = *r.text_opt(&item, ip + ".match");
      rule.gpu = static_cast<int>(r.integer(&item, ip + ".gpu"));
      if (rule.gpu >= out.mp)
        fail_at(item.find("gpu")->where, ip + ".gpu",
                "GPU " + std::to_string(rule.gpu) + " is outside a worker's GPUs 0.." +
                    std::to_string(out.mp - 1) + " (parallelism.mp = " + std::to_string(out.mp) + ")",
                "a worker-local GPU from 0 to mp - 1");
      out.placement.rules.push_back(std::move(rule));
    }
  }

  const std::string mapping_path = "parallelism.mapping";
  const TreeNode& mapping = *r.value(p, mapping_path);
  if (r.word(mapping, mapping_path) == "auto") return;
  if (!mapping.is_sequence()) fail_not_word(mapping, mapping_path);
  r.to_list(mapping, mapping_path, 1);
  if (static_cast<int>(mapping.items.size()) != out.dp)
    fail_at(mapping.where, mapping_path,
            "lists " + std::to_string(mapping.items.size()) +
                " workers, but parallelism.dp = " + std::to_string(out.dp),
            "dp lists of mp GPU ranks");
  std::vector<std::vector<int>> rows;
  std::set<std::int64_t> seen;
  for (std::size_t w = 0; w < mapping.items.size(); ++w) {
    const std::string rp = mapping_path + "[" + std::to_string(w) + "]";
    const TreeNode& row = r.to_list(mapping.items[w], rp, 1);
    if (static_cast<int>(row.items.size()) != out.mp)
      fail_at(row.where, rp,
              "lists " + std::to_string(row.items.size()) +
                  " GPUs, but parallelism.mp = " + std::to_string(out.mp),
              "mp GPU ranks per worker");
    std::vector<int> ranks;
    for (std::size_t k = 0; k < row.items.size(); ++k) {
      const std::string cp = rp + "[" + std::to_string(k) + "]";
      const std::int64_t g = r.to_integer(row.items[k], cp);
      r.note(cp, row.items[k]);  // so that a GPU outside the cluster is reported here (resolve)
      if (!seen.insert(g).second)
        fail_at(row.items[k].where, cp, "GPU " + std::to_string(g) + " is used twice", "distinct GPU ranks");
      ranks.push_back(static_cast<int>(g));
    }
    rows.push_back(std::move(ranks));
  }
  out.mapping = std::move(rows);
}

}  // namespace hybridsim::scenarios
