#include "workloads/placement.h"

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
  return p == Partitioner::Layers ? "layers" : "branches";
}

Partitioner parse_partitioner(std::string_view text) {
  if (text == "layers") return Partitioner::Layers;
  if (text == "branches") return Partitioner::Branches;
  throw InputError("unknown partitioner \"" + std::string(text) + "\": expected layers or branches");
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

MpPlacement partition_layers(const Profile& profile, int mp) {
  check_mp(profile, mp);
  // Layers in order of first appearance, with their compute.
  std::vector<std::string> layers;
  std::unordered_map<std::string, std::size_t> index;
  std::vector<std::int64_t> weight;
  std::vector<std::size_t> layer_of_op(profile.ops.size());
  for (std::size_t i = 0; i < profile.ops.size(); ++i) {
    const std::string& key = profile.ops[i].layer.empty() ? profile.ops[i].name : profile.ops[i].layer;
    auto [it, added] = index.emplace(key, layers.size());
    if (added) {
      layers.push_back(key);
      weight.push_back(0);
    }
    layer_of_op[i] = it->second;
    weight[it->second] += op_weight(profile.ops[i]);
  }
  const std::size_t n = layers.size();
  const auto parts = static_cast<std::size_t>(mp);
  // Linear partition: best[k][i] = smallest possible largest group when the first i layers form
  // k groups. Exact dynamic programme, O(mp · n²); ties keep earlier cuts.
  std::vector<std::int64_t> prefix(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + weight[i];
  const std::int64_t inf = std::numeric_limits<std::int64_t>::max();
  std::vector<std::vector<std::int64_t>> best(parts + 1, std::vector<std::int64_t>(n + 1, inf));
  std::vector<std::vector<std::size_t>> cut(parts + 1, std::vector<std::size_t>(n + 1, 0));
  best[0][0] = 0;
  for (std::size_t k = 1; k <= parts; ++k) {
    for (std::size_t i = 0; i <= n; ++i) {
      for (std::size_t j = 0; j <= i; ++j) {
        if (best[k - 1][j] == inf) continue;
        const std::int64_t v = std::max(best[k - 1][j], prefix[i] - prefix[j]);
        if (v < best[k][i]) {
          best[k][i] = v;
          cut[k][i] = j;
        }
      }
    }
  }
  std::vector<std::uint32_t> gpu_of_layer(n, 0);
  std::size_t end = n;
  for (std::size_t k = parts; k >= 1; --k) {
    const std::size_t begin = cut[k][end];
    for (std::size_t l = begin; l < end; ++l) gpu_of_layer[l] = static_cast<std::uint32_t>(k - 1);
    end = begin;
  }
  MpPlacement out{mp, std::vector<std::uint32_t>(profile.ops.size(), 0),
                  "layers partitioner: contiguous layers balanced by compute"};
  for (std::size_t i = 0; i < profile.ops.size(); ++i) out.gpu_of_op[i] = gpu_of_layer[layer_of_op[i]];
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
  return partitioner == Partitioner::Layers ? partition_layers(profile, mp)
                                            : partition_branches(profile, mp);
}

Partitioner default_partitioner(const Profile& profile) {
  return profile.meta.network == "inception-v3" ? Partitioner::Branches : Partitioner::Layers;
}

}  // namespace hybridsim::workloads
