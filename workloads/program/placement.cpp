#include "workloads/program/placement.h"

#include <fnmatch.h>

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <string>
#include <unordered_map>

#include "sim/error.h"

namespace hybridsim::workloads {

namespace {

void check_mp(const Profile& profile, int mp) {
  if (mp < 1)
    throw InputError("model parallelism mp must be at least 1 (got " + std::to_string(mp) + ")");
  if (profile.ops.empty()) throw InputError("profile " + profile.meta.network + " has no ops");
}

std::int64_t op_weight(const Op& op) { return (op.forward_time() + op.backward_time()).ps(); }

// The GPU that already holds most of an op's input bytes (ties: lowest index); GPU 0 without inputs.
std::uint32_t gpu_with_most_inputs(const Profile& profile, const std::vector<std::uint32_t>& gpu_of,
                                   const Op& op, int mp) {
  std::vector<std::int64_t> bytes(static_cast<std::size_t>(mp), 0);
  for (const std::uint32_t in : op.inputs)
    bytes[gpu_of[in]] += profile.ops[in].activation_bytes.count() + 1;
  return static_cast<std::uint32_t>(std::max_element(bytes.begin(), bytes.end()) - bytes.begin());
}

}  // namespace

std::vector<sim::Time> MpPlacement::compute_per_gpu(const Profile& profile) const {
  std::vector<sim::Time> out(static_cast<std::size_t>(mp));
  for (std::size_t i = 0; i < profile.ops.size(); ++i)
    out[gpu_of_op[i]] += profile.ops[i].forward_time() + profile.ops[i].backward_time();
  return out;
}

namespace {
std::vector<bool> gpus_used(const MpPlacement& p) {
  std::vector<bool> used(static_cast<std::size_t>(p.mp), false);
  for (const auto g : p.gpu_of_op)
    if (g < used.size()) used[g] = true;
  return used;
}
}  // namespace

int MpPlacement::gpus_with_ops() const {
  const auto used = gpus_used(*this);
  return static_cast<int>(std::count(used.begin(), used.end(), true));
}

int MpPlacement::first_idle_gpu() const {
  const auto used = gpus_used(*this);
  return static_cast<int>(std::find(used.begin(), used.end(), false) - used.begin());
}

std::string MpPlacement::idle_gpus_text() const {
  return "gives only " + std::to_string(gpus_with_ops()) + " of its " + std::to_string(mp) +
         " GPUs ops (GPU " + std::to_string(first_idle_gpu()) + " would stay idle)";
}

sim::Bytes MpPlacement::cut_bytes(const Profile& profile) const {
  sim::Bytes total;
  for (std::size_t v = 0; v < profile.ops.size(); ++v) {
    for (const std::uint32_t u : profile.ops[v].inputs) {
      if (gpu_of_op[u] == gpu_of_op[v]) continue;
      // Count a producer once per consuming GPU: look for an earlier consumer on the same GPU.
      bool seen = false;
      for (std::size_t w = 0; w < v && !seen; ++w)
        if (gpu_of_op[w] == gpu_of_op[v])
          seen = std::find(profile.ops[w].inputs.begin(), profile.ops[w].inputs.end(), u) !=
                 profile.ops[w].inputs.end();
      if (!seen) total += profile.ops[u].activation_bytes;
    }
  }
  return total;
}

std::string_view partitioner_name(Partitioner p) {
  switch (p) {
    case Partitioner::Layers: return "layers";
    case Partitioner::Stacks: return "stacks";
    case Partitioner::Branches: return "branches";
  }
  return "?";
}

Partitioner parse_partitioner(std::string_view text) {
  if (text == "layers") return Partitioner::Layers;
  if (text == "stacks") return Partitioner::Stacks;
  if (text == "branches") return Partitioner::Branches;
  throw InputError("unknown partitioner \"" + std::string(text) +
                   "\": expected layers, stacks or branches");
}

bool glob_match(std::string_view pattern, std::string_view text) {
  return fnmatch(std::string(pattern).c_str(), std::string(text).c_str(), 0) == 0;
}

MpPlacement place_all_on_first(const Profile& profile, int mp) {
  check_mp(profile, mp);
  return MpPlacement{mp, std::vector<std::uint32_t>(profile.ops.size(), 0), "all ops on GPU 0"};
}

MpPlacement place_by_rules(const Profile& profile, int mp, std::span<const PlacementRule> rules) {
  check_mp(profile, mp);
  const std::uint32_t unset = std::numeric_limits<std::uint32_t>::max();
  MpPlacement out{mp, std::vector<std::uint32_t>(profile.ops.size(), unset), "explicit rules"};
  std::vector<bool> used(rules.size(), false);
  for (const PlacementRule& rule : rules)
    if (rule.gpu < 0 || rule.gpu >= mp)
      throw InputError(rule.where + "placement rule \"" + rule.pattern + "\" names GPU " +
                       std::to_string(rule.gpu) + ", but each worker has GPUs 0.." +
                       std::to_string(mp - 1));
  for (std::size_t i = 0; i < profile.ops.size(); ++i) {
    const Op& op = profile.ops[i];
    for (std::size_t r = 0; r < rules.size(); ++r) {
      if (glob_match(rules[r].pattern, op.name) || glob_match(rules[r].pattern, op.layer)) {
        out.gpu_of_op[i] = static_cast<std::uint32_t>(rules[r].gpu);
        used[r] = true;
        break;
      }
    }
    if (out.gpu_of_op[i] == unset)
      throw InputError("op \"" + op.name + "\" (layer \"" + op.layer +
                       "\") matches no placement rule; add a catch-all rule such as \"*\": 0");
  }
  for (std::size_t r = 0; r < rules.size(); ++r) {
    if (used[r]) continue;
    bool matches_any = false;
    for (const Op& op : profile.ops)
      matches_any = matches_any || glob_match(rules[r].pattern, op.name) ||
                    glob_match(rules[r].pattern, op.layer);
    throw InputError(rules[r].where + "placement pattern \"" + rules[r].pattern + "\" " +
                     (matches_any ? "is shadowed by earlier rules and places no op"
                                  : "matches no op of " + profile.meta.network));
  }
  return out;
}

namespace {

// Layers in order of first appearance, with their compute, and each op's layer.
struct LayerTable {
  std::vector<std::string> names;
  std::vector<std::int64_t> weight;
  std::vector<std::size_t> layer_of_op;
};

LayerTable layer_table(const Profile& profile) {
  LayerTable t;
  std::unordered_map<std::string, std::size_t> index;
  t.layer_of_op.resize(profile.ops.size());
  for (std::size_t i = 0; i < profile.ops.size(); ++i) {
    const std::string& key = profile.ops[i].layer.empty() ? profile.ops[i].name : profile.ops[i].layer;
    auto [it, added] = index.emplace(key, t.names.size());
    if (added) {
      t.names.push_back(key);
      t.weight.push_back(0);
    }
    t.layer_of_op[i] = it->second;
    t.weight[it->second] += op_weight(profile.ops[i]);
  }
  return t;
}

// Cuts `weight` into `parts` contiguous groups minimizing the largest group's sum (an exact dynamic
// programme, O(parts · n²); ties keep earlier cuts). Returns each element's group.
std::vector<std::uint32_t> linear_partition(const std::vector<std::int64_t>& weight, std::size_t parts) {
  const std::size_t n = weight.size();
  std::vector<std::int64_t> prefix(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + weight[i];
  const std::int64_t inf = std::numeric_limits<std::int64_t>::max();
  std::vector<std::vector<std::int64_t>> best(parts + 1, std::vector<std::int64_t>(n + 1, inf));
  std::vector<std::vector<std::size_t>> cut(parts + 1, std::vector<std::size_t>(n + 1, 0));
  best[0][0] = 0;
  for (std::size_t k = 1; k <= parts; ++k)
    for (std::size_t i = 0; i <= n; ++i)
      for (std::size_t j = 0; j <= i; ++j) {
        if (best[k - 1][j] == inf) continue;
        const std::int64_t v = std::max(best[k - 1][j], prefix[i] - prefix[j]);
        if (v < best[k][i]) {
          best[k][i] = v;
          cut[k][i] = j;
        }
      }
  std::vector<std::uint32_t> group(n, 0);
  std::size_t end = n;
  for (std::size_t k = parts; k >= 1; --k) {
    const std::size_t begin = cut[k][end];
    for (std::size_t l = begin; l < end; ++l) group[l] = static_cast<std::uint32_t>(k - 1);
    end = begin;
  }
  return group;
}

}  // namespace

MpPlacement partition_layers(const Profile& profile, int mp) {
  check_mp(profile, mp);
  const LayerTable t = layer_table(profile);
  const auto gpu_of_layer = linear_partition(t.weight, static_cast<std::size_t>(mp));
  MpPlacement out{mp, std::vector<std::uint32_t>(profile.ops.size(), 0),
                  "layers partitioner: contiguous layers balanced by compute"};
  for (std::size_t i = 0; i < profile.ops.size(); ++i) out.gpu_of_op[i] = gpu_of_layer[t.layer_of_op[i]];
  return out;
}

MpPlacement partition_stacks(const Profile& profile, int mp) {
  check_mp(profile, mp);
  const LayerTable t = layer_table(profile);
  const std::size_t n_layers = t.names.size();
  // A stack is the layers sharing the name part before the first '.' ("enc" of "enc.L2").
  std::vector<std::string> stack_of_layer(n_layers);
  std::map<std::string, std::vector<std::size_t>> stacks;
  std::vector<std::string> stack_order;
  for (std::size_t l = 0; l < n_layers; ++l) {
    const std::string& name = t.names[l];
    stack_of_layer[l] = name.substr(0, name.find('.'));
    auto [it, added] = stacks.try_emplace(stack_of_layer[l]);
    if (added) stack_order.push_back(stack_of_layer[l]);
    it->second.push_back(l);
  }
  const std::uint32_t unset = std::numeric_limits<std::uint32_t>::max();
  std::vector<std::uint32_t> gpu_of_layer(n_layers, unset);
  for (const std::string& key : stack_order) {
    const auto& layers = stacks[key];
    if (layers.size() < 2) continue;
    std::vector<std::int64_t> w;
    for (const std::size_t l : layers) w.push_back(t.weight[l]);
    const auto group = linear_partition(w, std::min(layers.size(), static_cast<std::size_t>(mp)));
    for (std::size_t i = 0; i < layers.size(); ++i) gpu_of_layer[layers[i]] = group[i];
  }
  MpPlacement out{mp, std::vector<std::uint32_t>(profile.ops.size(), 0),
                  "stacks partitioner: each stack of layers (enc.*, dec.*) split by depth over the GPUs"};
  // Layers outside a stack (embeddings, attention, classifiers) go, as a whole, to the GPU that
  // holds most of their input bytes, decided in order of first appearance; inputs from layers not
  // yet decided do not count. A layer without placed inputs goes to GPU 0.
  for (std::size_t l = 0; l < n_layers; ++l) {
    if (gpu_of_layer[l] != unset) continue;
    std::vector<std::int64_t> bytes(static_cast<std::size_t>(mp), 0);
    for (std::size_t i = 0; i < profile.ops.size(); ++i) {
      if (t.layer_of_op[i] != l) continue;
      for (const std::uint32_t in : profile.ops[i].inputs) {
        const std::uint32_t g = gpu_of_layer[t.layer_of_op[in]];
        if (t.layer_of_op[in] != l && g != unset) bytes[g] += profile.ops[in].activation_bytes.count() + 1;
      }
    }
    gpu_of_layer[l] =
        static_cast<std::uint32_t>(std::max_element(bytes.begin(), bytes.end()) - bytes.begin());
  }
  for (std::size_t i = 0; i < profile.ops.size(); ++i) out.gpu_of_op[i] = gpu_of_layer[t.layer_of_op[i]];
  return out;
}

MpPlacement partition_branches(const Profile& profile, int mp) {
  check_mp(profile, mp);
  const std::size_t n = profile.ops.size();
  MpPlacement out{mp, std::vector<std::uint32_t>(n, 0),
                  "branches partitioner: parallel branches of each block spread over GPUs"};
  // Group ops by layer, keeping order.
  std::map<std::string, std::vector<std::uint32_t>> by_layer;
  std::vector<std::string> layer_order;
  for (std::uint32_t i = 0; i < n; ++i) {
    auto [it, added] = by_layer.try_emplace(profile.ops[i].layer);
    if (added) layer_order.push_back(profile.ops[i].layer);
    it->second.push_back(i);
  }
  std::vector<bool> placed(n, false);
  for (const std::string& layer : layer_order) {
    const auto& members = by_layer[layer];
    // Union-find over the layer's ops that are neither joins (≥ 2 in-layer inputs) nor forks,
    // linked by edges inside the layer: each component is a branch.
    std::unordered_map<std::uint32_t, std::uint32_t> parent;
    auto find = [&](std::uint32_t x) {
      while (parent[x] != x) x = parent[x] = parent[parent[x]];
      return x;
    };
    auto in_layer = [&](std::uint32_t op) { return profile.ops[op].layer == layer; };
    auto is_join = [&](std::uint32_t op) {
      int inside = 0;
      for (const std::uint32_t in : profile.ops[op].inputs) inside += in_layer(in) ? 1 : 0;
      return inside >= 2;
    };
    // Forks feed ≥ 2 ops of the layer; like joins they stay out of the branches.
    std::unordered_map<std::uint32_t, int> inside_consumers;
    for (const std::uint32_t op : members)
      for (const std::uint32_t in : profile.ops[op].inputs)
        if (in_layer(in)) ++inside_consumers[in];
    for (const std::uint32_t op : members)
      if (!is_join(op) && inside_consumers[op] < 2) parent[op] = op;
    for (const std::uint32_t op : members) {
      if (!parent.count(op)) continue;
      for (const std::uint32_t in : profile.ops[op].inputs)
        if (in_layer(in) && parent.count(in)) parent[find(op)] = find(in);
    }
    std::map<std::uint32_t, std::vector<std::uint32_t>> components;  // root → ops (ordered by root)
    for (const std::uint32_t op : members)
      if (parent.count(op)) components[find(op)].push_back(op);
    if (components.size() >= 2) {
      // Longest processing time first onto the least-loaded GPU of this block.
      std::vector<std::pair<std::int64_t, std::uint32_t>> sized;
      for (const auto& [root, ops] : components) {
        std::int64_t w = 0;
        for (const std::uint32_t op : ops) w += op_weight(profile.ops[op]);
        sized.emplace_back(w, root);
      }
      std::stable_sort(sized.begin(), sized.end(),
                       [](const auto& a, const auto& b) { return a.first > b.first; });
      std::vector<std::int64_t> load(static_cast<std::size_t>(mp), 0);
      for (const auto& [w, root] : sized) {
        const auto g = static_cast<std::uint32_t>(std::min_element(load.begin(), load.end()) - load.begin());
        load[g] += w;
        for (const std::uint32_t op : components[root]) {
          out.gpu_of_op[op] = g;
          placed[op] = true;
        }
      }
    }
    // Everything else (joins, single chains) in order, next to most of its inputs.
    for (const std::uint32_t op : members) {
      if (placed[op]) continue;
      out.gpu_of_op[op] = gpu_with_most_inputs(profile, out.gpu_of_op, profile.ops[op], mp);
      placed[op] = true;
    }
  }
  return out;
}

MpPlacement partition(const Profile& profile, int mp, Partitioner partitioner) {
  switch (partitioner) {
    case Partitioner::Layers: return partition_layers(profile, mp);
    case Partitioner::Stacks: return partition_stacks(profile, mp);
    case Partitioner::Branches: return partition_branches(profile, mp);
  }
  return partition_layers(profile, mp);
}

Partitioner default_partitioner(const Profile& profile) {
  if (profile.meta.network == "inception-v3") return Partitioner::Branches;
  if (profile.meta.network == "gnmt") return Partitioner::Stacks;
  return Partitioner::Layers;
}

}  // namespace hybridsim::workloads
