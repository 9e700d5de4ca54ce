// The YAML reader of profiles: the located tree checked against profile_schema(). Ops are read in
// two passes: names first (so that an input naming a later op is reported as a forward reference or
// a cycle rather than as unknown), then everything else.
#include <map>
#include <optional>
#include <set>

#include "sim/error.h"
#include "sim/yaml/field_reader.h"
#include "sim/yaml/input_file.h"
#include "workloads/profile/profile_io.h"

namespace hybridsim::workloads {
namespace {

using yaml::fail_at;
using yaml::FieldReader;
using yaml::TreeNode;

std::string item_path(const std::string& list, std::size_t i) { return list + "[" + std::to_string(i) + "]"; }

ProfileMetadata read_metadata(FieldReader& r, const TreeNode& root) {
  const TreeNode* m = r.section(&root, "metadata");
  ProfileMetadata meta;
  meta.network = r.text(m, "metadata.network");
  meta.gpu = r.text(m, "metadata.gpu");
  meta.precision = r.choice(m, "metadata.precision");
  meta.batch_per_gpu = r.integer(m, "metadata.batch_per_gpu");
  meta.sequence_length = r.integer(m, "metadata.sequence_length");
  meta.target_length = r.integer(m, "metadata.target_length");
  meta.throughput_unit = r.text(m, "metadata.throughput_unit");
  meta.units_per_step = r.integer(m, "metadata.units_per_step");
  meta.measured_micro_batches = r.integer(m, "metadata.measured_micro_batches");
  // Free text, empty allowed.
  if (const TreeNode* s = r.written(m, "metadata.source")) meta.source = r.scalar(*s, "metadata.source");
  if (const TreeNode* n = r.written(m, "metadata.notes")) meta.notes = r.scalar(*n, "metadata.notes");
  return meta;
}

OptimizerCost read_optimizer(FieldReader& r, const TreeNode& root) {
  const TreeNode* o = r.section(&root, "optimizer");
  return OptimizerCost{r.text(o, "optimizer.name"), r.duration(o, "optimizer.time_per_gib"),
                       r.duration(o, "optimizer.idle_before")};
}

std::vector<Kernel> read_kernels(FieldReader& r, const TreeNode& op, const std::string& path) {
  const TreeNode& list = r.to_list(r.required(op, path), path, 0);
  std::vector<Kernel> kernels;
  kernels.reserve(list.items.size());
  for (std::size_t i = 0; i < list.items.size(); ++i) {
    const TreeNode& k = list.items[i];
    const std::string kp = item_path(path, i);
    r.check_section(k, kp);
    Kernel kernel{r.text(&k, kp + ".name"), r.duration(&k, kp + ".duration"),
                  r.duration(&k, kp + ".idle_before")};
    kernel.bound =
        r.choice(&k, kp + ".bound") == "memory" ? sim::KernelBound::Memory : sim::KernelBound::Compute;
    kernels.push_back(std::move(kernel));
  }
  return kernels;
}

void read_buckets(FieldReader& r, const TreeNode& buckets, const std::string& path, Op& op) {
  sim::Bytes sum;
  for (std::size_t i = 0; i < r.to_list(buckets, path, 1).items.size(); ++i) {
    const sim::Bytes size = r.to_size(buckets.items[i], item_path(path, i));
    op.buckets.push_back(size);
    sum += size;
  }
  if (sum != op.gradient_bytes)
    fail_at(buckets.where, path, "the buckets sum to " + std::to_string(sum.count()) + " B",
            "the gradient's " + std::to_string(op.gradient_bytes.count()) + " B");
}

void read_gradient(FieldReader& r, const TreeNode& g, const std::string& path, Op& op) {
  op.gradient_bytes = r.size(&g, path + ".bytes");
  op.exchange = *find_gradient_exchange(r.choice(&g, path + ".exchange"));
  const std::string sparse_path = path + ".sparse_bytes_per_worker";
  const TreeNode* sparse = r.written(&g, sparse_path);
  if (op.exchange == GradientExchange::SparseAllGather) {
    if (sparse == nullptr)
      fail_at(g.where, sparse_path, "missing required field (sparse-allgather needs it)",
              r.expected(sparse_path));
    op.sparse_bytes_per_worker = r.to_size(*sparse, sparse_path);
  } else if (sparse != nullptr) {
    fail_at(sparse->where, sparse_path, "belongs only to sparse-allgather",
            "exchange: sparse-allgather, or no "
            "sparse_bytes_per_worker");
  }
  if (const TreeNode* buckets = r.written(&g, path + ".buckets")) {
    if (op.exchange != GradientExchange::DenseAllReduce)
      fail_at(buckets->where, path + ".buckets", "belongs only to dense-allreduce",
              "exchange: dense-allreduce, "
              "or no buckets");
    read_buckets(r, *buckets, path + ".buckets", op);
  }
}

struct OpHeader {
  std::string name;
  const TreeNode* node;
  std::vector<std::string> inputs;
};

// True when op `from` depends (through inputs, by name) on op `target`.
bool reaches(const std::vector<OpHeader>& ops, const std::map<std::string, std::size_t>& index,
             std::size_t from, std::size_t target) {
  std::vector<std::size_t> stack{from};
  std::set<std::size_t> seen;
  while (!stack.empty()) {
    const std::size_t i = stack.back();
    stack.pop_back();
    if (i == target) return true;
    if (!seen.insert(i).second) continue;
    for (const auto& in : ops[i].inputs) {
      if (auto it = index.find(in); it != index.end()) stack.push_back(it->second);
    }
  }
  return false;
}

// Pass 1: every op's declared keys, name (unique) and input names.
std::vector<OpHeader> read_headers(FieldReader& r, const TreeNode& list,
                                   std::map<std::string, std::size_t>& index) {
  std::vector<OpHeader> headers;
  headers.reserve(list.items.size());
  for (std::size_t i = 0; i < list.items.size(); ++i) {
    const TreeNode& node = list.items[i];
    const std::string path = item_path("ops", i);
    r.check_section(node, path);
    OpHeader h{r.text(&node, path + ".name"), &node, {}};
    if (auto [it, fresh] = index.emplace(h.name, i); !fresh)
      fail_at(
          node.find("name")->where, path + ".name",
          "duplicate op name \"" + h.name + "\" (first defined at " + headers[it->second].node->where + ")",
          "a name no other op has");
    const std::string inputs = path + ".inputs";
    const TreeNode& in = r.to_list(*r.value(&node, inputs), inputs, 0);
    for (std::size_t k = 0; k < in.items.size(); ++k)
      h.inputs.push_back(r.to_text(in.items[k], item_path(inputs, k)));
    headers.push_back(std::move(h));
  }
  return headers;
}

// The indices of op i's inputs: earlier ops, each once.
std::vector<std::uint32_t> resolve_inputs(const std::vector<OpHeader>& headers,
                                          const std::map<std::string, std::size_t>& index, std::size_t i) {
  const std::string inputs = item_path("ops", i) + ".inputs";
  std::vector<std::uint32_t> out;
  std::set<std::size_t> used;
  for (std::size_t k = 0; k < headers[i].inputs.size(); ++k) {
    const std::string& in = headers[i].inputs[k];
    const std::string& at = headers[i].node->find("inputs")->items[k].where;
    const auto it = index.find(in);
    if (it == index.end()) {
      std::vector<std::string> earlier;
      for (std::size_t j = 0; j < i; ++j) earlier.push_back(headers[j].name);
      fail_at(at, item_path(inputs, k), "unknown input op \"" + in + "\"" + yaml::did_you_mean(in, earlier),
              "the name of an earlier op");
    }
    const std::size_t j = it->second;
    if (j == i) fail_at(at, item_path(inputs, k), "cycle: the op lists itself as an input");
    if (j > i) {
      if (reaches(headers, index, j, i))
        fail_at(at, item_path(inputs, k), "cycle: input \"" + in + "\" (at " + headers[j].node->where +
                ") depends on this op");
      fail_at(at, item_path(inputs, k), "forward reference: input \"" + in + "\" is defined later (at " +
              headers[j].node->where + "); list ops so that inputs come first");
    }
    if (!used.insert(j).second) fail_at(at, item_path(inputs, k), "input \"" + in + "\" is listed twice");
    out.push_back(static_cast<std::uint32_t>(j));
  }
  return out;
}

std::vector<Op> read_ops(FieldReader& r, const TreeNode& root) {
  const TreeNode& list = r.to_list(*root.find("ops"), "ops", 1);
  std::map<std::string, std::size_t> index;
  const std::vector<OpHeader> headers = read_headers(r, list, index);
  // Pass 2: everything else.
  std::vector<Op> ops;
  ops.reserve(headers.size());
  std::optional<std::size_t> with_buckets, without_buckets;  // dense ops with/without recorded ones
  for (std::size_t i = 0; i < headers.size(); ++i) {
    const TreeNode& node = *headers[i].node;
    const std::string path = item_path("ops", i);
    Op op;
    op.name = headers[i].name;
    op.layer = r.text_opt(&node, path + ".layer").value_or(op.name);
    if (const auto step = r.integer_opt(&node, path + ".step")) op.step = static_cast<int>(*step);
    op.activation_bytes = r.size(&node, path + ".activation");
    op.forward = read_kernels(r, node, path + ".forward");
    op.backward = read_kernels(r, node, path + ".backward");
    const TreeNode* gradient = r.section(&node, path + ".gradient");
    if (gradient != nullptr) read_gradient(r, *gradient, path + ".gradient", op);
    if (op.exchange == GradientExchange::DenseAllReduce) {
      auto& first = op.buckets.empty() ? without_buckets : with_buckets;
      if (!first) first = i;
      if (with_buckets && without_buckets) {
        const std::string other =
            op.buckets.empty() ? "this op has none, op \"" + headers[*with_buckets].name + "\" has them"
                               : "this op has them, op \"" + headers[*without_buckets].name + "\" has none";
        fail_at(gradient->where, path + ".gradient",
                "recorded 'buckets' must be given for every dense-allreduce gradient or for none; " + other);
      }
    }
    op.inputs = resolve_inputs(headers, index, i);
    ops.push_back(std::move(op));
  }
  return ops;
}

}  // namespace

Profile parse_profile(std::string_view yaml, const std::string& source_name) {
  const TreeNode tree = yaml::parse_yaml_tree(yaml, source_name);
  // A scenario given as a profile (plan --model, workload.profile) said "name: unknown field;
  // expected one of: format, metadata, optimizer, ops": named for what it is.
  if (tree.is_map() && tree.find("ops") == nullptr)
    if (const TreeNode* w = tree.find("workload"); w != nullptr && tree.find("format") == nullptr)
      fail_at(w->where, "workload",
              "a scenario's section, in a file without format: " + std::string(kProfileFormat),
              "a profile file (hybridsim import writes one; hybridsim run runs a scenario)");
  FieldReader r(profile_schema(), nullptr, source_name);
  const TreeNode& root = r.document(tree);
  const TreeNode& format = *root.find("format");
  if (r.to_text(format, "format") != kProfileFormat)
    fail_at(format.where, "format", "got " + yaml::describe_node(format), r.expected("format"));
  Profile p;
  p.meta = read_metadata(r, root);
  p.optimizer = read_optimizer(r, root);
  p.ops = read_ops(r, root);
  // A step of no time has no throughput: a run printed "step time 0 ps" and "0.0 samples/s" with
  // exit 0 (units / 0 s), and every speed-up over one GPU divided by it.
  if (p.step_time_1gpu() == sim::Time::zero())
    fail_at(root.find("ops")->where, "ops", std::string(kNoTimeStep), std::string(kNoTimeStepExpected));
  return p;
}

Profile load_profile(const std::string& path) {
  return parse_profile(yaml::read_input_file(path, "profile file"), path);
}

}  // namespace hybridsim::workloads
