// The named codecs of the name, cluster, workload and parallelism keys (custom_codecs.h): the
// checks that need more than one field (either/or fields, preset limits, placement GPUs within mp,
// mapping shape) and the polymorphic placement and mapping.
#include <algorithm>
#include <set>

#include "scenarios/loader/custom_codecs.h"
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

// One of two fields that exclude each other: `second` is read after `first` (the member `got_first`
// says whether it was given).
void check_either(const TreeNode* map, std::string_view section, std::string_view first, bool got_first,
                  std::string_view second, bool got_second, const std::string& second_expected) {
  const std::string s(section), a(first), b(second);
  if (got_first && got_second)
    fail_at(key_where(*map, b), s + "." + b, "given together with " + s + "." + a,
            "either " + a + " or " + b + ", not both");
  if (!got_first && !got_second)
    fail_at(map->where, s, "missing field '" + a + "' (or '" + b + "')",
            a + ": " + expected_text(field(s + "." + a)) + "; or " + b + ": " + second_expected);
}

}  // namespace

void read_name(FieldReader& r, const TreeNode* map, const FieldSpec& spec, Scenario& s) {
  const std::string stem = std::filesystem::path(s.source).stem().string();
  s.name = r.text_opt(map, spec.path).value_or(stem.empty() ? "scenario" : stem);
}

void read_topology_file(FieldReader& r, const TreeNode* map, const FieldSpec& spec, Scenario& s) {
  const auto topology = r.text_opt(map, spec.path);
  check_either(map, "cluster", "preset", !s.cluster.preset.empty(), "topology", topology.has_value(),
               "a topology file");
  s.cluster.topology = topology.value_or("");
}

void read_preset_links(FieldReader& r, const TreeNode* map, const FieldSpec& spec, Scenario& s) {
  if (!s.cluster.topology.empty()) return;  // check_cluster says why links are wrong here
  read_if_present(r, map, spec, s);
}

void read_if_present(FieldReader& r, const TreeNode* map, const FieldSpec& spec, Scenario& s) {
  if (const TreeNode* node = r.section(map, spec.path)) read_section(r, node, &spec, s);
}

void check_cluster(FieldReader&, const TreeNode* c, Scenario& s) {
  if (!s.cluster.topology.empty()) {
    for (const auto key :
         {"nodes", "gpus_per_node", "fabric", "oversubscription", "leaf_radix", "spines", "links"})
      if (const TreeNode* n = c->find(key); n != nullptr && !n->is_null())
        fail_at(key_where(*c, key), "cluster." + std::string(key), "cannot be combined with cluster.topology",
                "the topology file to describe the whole cluster (or a preset instead)");
    return;
  }
  if (const auto problem = topology::find_cluster_spec_problem(s.cluster))
    fail_at(problem_where(*c, problem->field), "cluster." + problem->field, problem->what, problem->expected);
}

void read_profile_file(FieldReader& r, const TreeNode* map, const FieldSpec& spec, Scenario& s) {
  const auto profile = r.text_opt(map, spec.path);
  check_either(map, "workload", "network", !s.workload.network.empty(), "profile", profile.has_value(),
               "a profile file");
  s.workload.profile = profile.value_or("");
}

void read_gpu_name(FieldReader& r, const TreeNode* map, const FieldSpec& spec, Scenario& s) {
  const std::string gpu = r.choice(map, spec.path);
  s.workload.gpu_choice.gpu = gpu == "auto" ? std::nullopt : std::optional<std::string>(gpu);
}

void GpuSpeedsCodec::read(FieldReader& r, const TreeNode* map, const FieldSpec& spec,
                          std::vector<GpuSpeedSetting>& out) {
  const std::string sp(spec.path);
  const TreeNode& speeds = r.to_list(*r.value(map, sp), sp, 0);
  out.clear();
  for (std::size_t i = 0; i < speeds.items.size(); ++i) {
    const TreeNode& item = speeds.items[i];
    const std::string ip = sp + "[" + std::to_string(i) + "]";
    r.check_section(item, ip);
    GpuSpeedSetting g{static_cast<int>(r.integer(&item, ip + ".gpu")), r.number(&item, ip + ".speed")};
    for (const GpuSpeedSetting& earlier : out)
      if (earlier.gpu == g.gpu)
        fail_at(item.find("gpu")->where, ip + ".gpu", "GPU " + std::to_string(g.gpu) + " is listed twice",
                "each GPU once");
    out.push_back(g);
  }
}

std::optional<TreeNode> GpuSpeedsCodec::write(const FieldSpec&, const std::vector<GpuSpeedSetting>& v) {
  std::vector<TreeNode> speeds;
  for (const auto& g : v)
    speeds.push_back(
        map_of({{"gpu", scalar(std::to_string(g.gpu))}, {"speed", scalar(number_text(g.speed))}}));
  return sequence(std::move(speeds));
}

void read_placement(FieldReader& r, const TreeNode* map, const FieldSpec& spec, Scenario& s) {
  PlacementSettings& out = s.parallelism.placement;
  const int mp = s.parallelism.mp;
  const std::string placement_path(spec.path);
  const TreeNode& placement = *r.value(map, placement_path);
  const std::string word = r.word(placement, placement_path);
  if (word == "auto") out.kind = PlacementSettings::Kind::Auto;
  else if (word == "layers") out.kind = PlacementSettings::Kind::Layers;
  else if (word == "stacks") out.kind = PlacementSettings::Kind::Stacks;
  else if (word == "branches") out.kind = PlacementSettings::Kind::Branches;
  else if (!placement.is_sequence()) fail_not_word(placement, placement_path);
  else {
    out.kind = PlacementSettings::Kind::Rules;
    r.to_list(placement, placement_path, 1);
    for (std::size_t i = 0; i < placement.items.size(); ++i) {
      const TreeNode& item = placement.items[i];
      const std::string ip = placement_path + "[" + std::to_string(i) + "]";
      r.check_section(item, ip);
      PlacementRuleSetting rule;
      rule.match = *r.text_opt(&item, ip + ".match");
      rule.gpu = static_cast<int>(r.integer(&item, ip + ".gpu"));
      if (rule.gpu >= mp)
        fail_at(item.find("gpu")->where, ip + ".gpu",
                "GPU " + std::to_string(rule.gpu) + " is outside a worker's GPUs 0.." +
                    std::to_string(mp - 1) + " (parallelism.mp = " + std::to_string(mp) + ")",
                "a worker-local GPU from 0 to mp - 1");
      out.rules.push_back(std::move(rule));
    }
  }
}

std::optional<TreeNode> write_placement(const Scenario& s, const FieldSpec&) {
  const PlacementSettings& p = s.parallelism.placement;
  switch (p.kind) {
    case PlacementSettings::Kind::Auto: return scalar("auto");
    case PlacementSettings::Kind::Layers: return scalar("layers");
    case PlacementSettings::Kind::Stacks: return scalar("stacks");
    case PlacementSettings::Kind::Branches: return scalar("branches");
    case PlacementSettings::Kind::Rules: break;
  }
  std::vector<TreeNode> rules;
  for (const auto& r : p.rules)
    rules.push_back(map_of({{"match", scalar(r.match)}, {"gpu", scalar(std::to_string(r.gpu))}}));
  return sequence(std::move(rules));
}

void read_mapping(FieldReader& r, const TreeNode* map, const FieldSpec& spec, Scenario& s) {
  // A row is one replica's GPUs: a 2017 network's mp model-parallel ranks, or a transformer's TP
  // group (TP rank r at column r; its mp is 1). tp is read here, before its own codec, since a row's
  // length depends on it: with tp > 1 every mapping was refused, by two rules that disagreed.
  const int dp = s.parallelism.dp, mp = s.parallelism.mp;
  const auto tp = static_cast<int>(r.integer(map, "parallelism.tp"));
  const std::string mapping_path(spec.path);
  const TreeNode& mapping = *r.value(map, mapping_path);
  if (r.word(mapping, mapping_path) == "auto") return;
  if (!mapping.is_sequence()) fail_not_word(mapping, mapping_path);
  r.to_list(mapping, mapping_path, 1);
  if (static_cast<int>(mapping.items.size()) != dp)
    fail_at(mapping.where, mapping_path,
            "lists " + std::to_string(mapping.items.size()) +
                " workers, but parallelism.dp = " + std::to_string(dp),
            tp > 1 ? "dp lists of tp GPU ranks" : "dp lists of mp GPU ranks");
  std::vector<std::vector<int>> rows;
  std::set<std::int64_t> seen;
  for (std::size_t w = 0; w < mapping.items.size(); ++w) {
    const std::string rp = mapping_path + "[" + std::to_string(w) + "]";
    const TreeNode& row = r.to_list(mapping.items[w], rp, 1);
    if (tp > 1 && static_cast<int>(row.items.size()) != mp * tp)
      fail_at(
          row.where, rp,
          "lists " + std::to_string(row.items.size()) + " GPUs, but parallelism.tp = " + std::to_string(tp),
          "tp GPU ranks per replica (its TP group, TP rank r in column r)");
    if (static_cast<int>(row.items.size()) != mp * tp)
      fail_at(
          row.where, rp,
          "lists " + std::to_string(row.items.size()) + " GPUs, but parallelism.mp = " + std::to_string(mp),
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
  s.parallelism.mapping = std::move(rows);
}

std::optional<TreeNode> write_mapping(const Scenario& s, const FieldSpec&) {
  if (!s.parallelism.mapping) return scalar("auto");
  std::vector<TreeNode> rows;
  for (const auto& row : *s.parallelism.mapping) {
    std::vector<TreeNode> cells;
    for (const int g : row) cells.push_back(scalar(std::to_string(g)));
    rows.push_back(sequence(std::move(cells)));
  }
  return sequence(std::move(rows));
}

}  // namespace hybridsim::scenarios
