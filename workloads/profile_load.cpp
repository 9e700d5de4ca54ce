// The YAML reader of profiles: every error names file:line:col (1-based), the field and what was
// expected. Ops are read in two passes: names first (so an input naming a later op is reported as a
// forward reference or a cycle rather than as unknown), then everything else.
#include <yaml-cpp/yaml.h>

#include <charconv>
#include <fstream>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "sim/error.h"
#include "workloads/profile_io.h"

namespace hybridsim::workloads {

namespace {

class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  std::string where(const YAML::Mark& mark) const {
    if (mark.is_null()) return source_;
    return source_ + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
  }

  [[noreturn]] void fail(const YAML::Node& at, const std::string& context, const std::string& what) const {
    throw InputError(where(at.Mark()) + ": " + context + ": " + what);
  }

  void expect_map(const YAML::Node& node, const std::string& context) const {
    if (!node.IsMap()) fail(node, context, "expected a mapping of fields (key: value)");
  }

  // Rejects keys outside `allowed` and repeated keys, at the key's own location.
  void check_keys(const YAML::Node& map, const std::string& context,
                  std::initializer_list<std::string_view> allowed) const {
    std::set<std::string> seen;
    for (const auto& kv : map) {
      const std::string key = kv.first.Scalar();
      if (!seen.insert(key).second) fail(kv.first, context, "repeated key '" + key + "'");
      bool known = false;
      std::string list;
      for (auto a : allowed) {
        known = known || a == key;
        list += (list.empty() ? "" : ", ") + std::string(a);
      }
      if (!known) fail(kv.first, context, "unknown key '" + key + "' (expected one of: " + list + ")");
    }
  }

  YAML::Node required(const YAML::Node& map, const char* key, const std::string& context,
                      const std::string& expected) const {
    YAML::Node value = map[key];
    if (!value.IsDefined() || value.IsNull()) {
      fail(map, context, std::string("missing field '") + key + "' (" + expected + ")");
    }
    return value;
  }

  std::string scalar(const YAML::Node& node, const std::string& context, const char* key) const {
    if (!node.IsScalar()) fail(node, context, std::string("field '") + key + "': expected a single value");
    return node.Scalar();
  }

  std::string string_field(const YAML::Node& map, const char* key, const std::string& context) const {
    const std::string s = scalar(required(map, key, context, "a text"), context, key);
    if (s.empty()) fail(map[key], context, std::string("field '") + key + "' must not be empty");
    return s;
  }

  std::string optional_string(const YAML::Node& map, const char* key, const std::string& context) const {
    const YAML::Node value = map[key];
    if (!value.IsDefined() || value.IsNull()) return {};
    return scalar(value, context, key);
  }

  std::int64_t integer(const YAML::Node& node, const char* key, const std::string& context,
                       std::int64_t min, std::int64_t max = std::int64_t{1} << 40) const {
    const std::string text = scalar(node, context, key);
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size() || v < min || v > max) {
      fail(node, context, std::string("field '") + key + "': expected a whole number from " +
                              std::to_string(min) + " to " + std::to_string(max) + ", got \"" +
                              text + "\"");
    }
    return v;
  }

  std::int64_t int_field(const YAML::Node& map, const char* key, const std::string& context,
                         std::int64_t min) const {
    return integer(required(map, key, context, "a whole number"), key, context, min);
  }

  std::int64_t optional_int(const YAML::Node& map, const char* key, const std::string& context) const {
    const YAML::Node value = map[key];
    if (!value.IsDefined() || value.IsNull()) return 0;
    return integer(value, key, context, 0);
  }

  sim::Time time_field(const YAML::Node& map, const char* key, const std::string& context) const {
    const YAML::Node value = required(map, key, context, "a time such as \"12.5 us\"");
    try {
      return sim::parse_time(scalar(value, context, key));
    } catch (const InputError& e) {
      fail(value, context, std::string("field '") + key + "': " + e.what());
    }
  }

  // An optional time that is not negative; zero when absent.
  sim::Time optional_time(const YAML::Node& map, const char* key, const std::string& context) const {
    const YAML::Node value = map[key];
    if (!value.IsDefined() || value.IsNull()) return sim::Time::zero();
    sim::Time t;
    try {
      t = sim::parse_time(scalar(value, context, key));
    } catch (const InputError& e) {
      fail(value, context, std::string("field '") + key + "': " + e.what());
    }
    if (t < sim::Time::zero()) fail(value, context, std::string("field '") + key + "' must not be negative");
    return t;
  }

  sim::Bytes bytes_value(const YAML::Node& value, const char* key, const std::string& context) const {
    try {
      return sim::parse_bytes(scalar(value, context, key));
    } catch (const InputError& e) {
      fail(value, context, std::string("field '") + key + "': " + e.what());
    }
  }

  sim::Bytes bytes_field(const YAML::Node& map, const char* key, const std::string& context) const {
    return bytes_value(required(map, key, context, "a size such as \"4 MiB\""), key, context);
  }

 private:
  std::string source_;
};

ProfileMetadata read_metadata(const Reader& r, const YAML::Node& node) {
  const std::string ctx = "metadata";
  r.expect_map(node, ctx);
  r.check_keys(node, ctx, {"network", "gpu", "precision", "batch_per_gpu", "sequence_length",
                           "target_length", "throughput_unit", "units_per_step", "source", "notes"});
  ProfileMetadata m;
  m.network = r.string_field(node, "network", ctx);
  m.gpu = r.string_field(node, "gpu", ctx);
  m.precision = r.string_field(node, "precision", ctx);
  m.batch_per_gpu = r.int_field(node, "batch_per_gpu", ctx, 1);
  m.sequence_length = r.optional_int(node, "sequence_length", ctx);
  m.target_length = r.optional_int(node, "target_length", ctx);
  m.throughput_unit = r.string_field(node, "throughput_unit", ctx);
  m.units_per_step = r.int_field(node, "units_per_step", ctx, 1);
  m.source = r.optional_string(node, "source", ctx);
  m.notes = r.optional_string(node, "notes", ctx);
  return m;
}

OptimizerCost read_optimizer(const Reader& r, const YAML::Node& node) {
  const std::string ctx = "optimizer";
  r.expect_map(node, ctx);
  r.check_keys(node, ctx, {"name", "time_per_gib", "idle_before"});
  return OptimizerCost{r.string_field(node, "name", ctx), r.time_field(node, "time_per_gib", ctx),
                       r.optional_time(node, "idle_before", ctx)};
}

std::vector<Kernel> read_kernels(const Reader& r, const YAML::Node& op, const char* key,
                                 const std::string& op_ctx) {
  const YAML::Node list = r.required(op, key, op_ctx, "a list of kernels, [] for none");
  if (!list.IsSequence()) {
    r.fail(list, op_ctx, std::string("field '") + key + "': expected a list of kernels");
  }
  std::vector<Kernel> kernels;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const YAML::Node k = list[i];
    const std::string ctx = op_ctx + " " + key + "[" + std::to_string(i) + "]";
    r.expect_map(k, ctx);
    r.check_keys(k, ctx, {"name", "duration", "idle_before", "bound"});
    Kernel kernel{r.string_field(k, "name", ctx), r.time_field(k, "duration", ctx),
                  r.optional_time(k, "idle_before", ctx)};
    if (const YAML::Node b = k["bound"]) {
      const std::string bound = r.scalar(b, ctx, "bound");
      if (bound != "compute" && bound != "memory")
        r.fail(b, ctx, "field 'bound': expected compute or memory, got \"" + bound + "\"");
      kernel.bound = bound == "memory" ? sim::KernelBound::Memory : sim::KernelBound::Compute;
    }
    kernels.push_back(std::move(kernel));
  }
  return kernels;
}

void read_gradient(const Reader& r, const YAML::Node& node, const std::string& op_ctx, Op& op) {
  const std::string ctx = op_ctx + " gradient";
  r.expect_map(node, ctx);
  r.check_keys(node, ctx, {"bytes", "exchange", "sparse_bytes_per_worker", "buckets"});
  op.gradient_bytes = r.bytes_field(node, "bytes", ctx);
  if (op.gradient_bytes.count() <= 0) r.fail(node["bytes"], ctx, "field 'bytes' must be positive");
  const YAML::Node ex = r.required(node, "exchange", ctx, "dense-allreduce or sparse-allgather");
  const auto exchange = find_gradient_exchange(r.scalar(ex, ctx, "exchange"));
  if (!exchange || *exchange == GradientExchange::None) {
    r.fail(ex, ctx, "field 'exchange': expected dense-allreduce or sparse-allgather, got \"" +
                        ex.Scalar() + "\"");
  }
  op.exchange = *exchange;
  const YAML::Node sparse = node["sparse_bytes_per_worker"];
  if (op.exchange == GradientExchange::SparseAllGather) {
    op.sparse_bytes_per_worker = r.bytes_field(node, "sparse_bytes_per_worker", ctx);
    if (op.sparse_bytes_per_worker.count() <= 0) {
      r.fail(sparse, ctx, "field 'sparse_bytes_per_worker' must be positive");
    }
  } else if (sparse.IsDefined()) {
    r.fail(sparse, ctx, "field 'sparse_bytes_per_worker' belongs only to sparse-allgather");
  }
  const YAML::Node buckets = node["buckets"];
  if (!buckets.IsDefined() || buckets.IsNull()) return;
  if (op.exchange != GradientExchange::DenseAllReduce)
    r.fail(buckets, ctx, "field 'buckets' belongs only to dense-allreduce");
  if (!buckets.IsSequence() || buckets.size() == 0)
    r.fail(buckets, ctx, "field 'buckets': expected a non-empty list of sizes");
  sim::Bytes sum;
  for (const auto& b : buckets) {
    const sim::Bytes size = r.bytes_value(b, "buckets", ctx);
    if (size.count() <= 0) r.fail(b, ctx, "field 'buckets': every bucket must be positive");
    op.buckets.push_back(size);
    sum += size;
  }
  if (sum != op.gradient_bytes)
    r.fail(buckets, ctx, "field 'buckets': the buckets sum to " + std::to_string(sum.count()) +
                             " B, expected the gradient's " + std::to_string(op.gradient_bytes.count()) + " B");
}

struct OpHeader {
  std::string name;
  YAML::Node node;
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

std::vector<Op> read_ops(const Reader& r, const YAML::Node& list) {
  if (!list.IsSequence() || list.size() == 0) r.fail(list, "ops", "expected a non-empty list of ops");
  // Pass 1: names, input names, duplicates.
  std::vector<OpHeader> headers;
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const YAML::Node node = list[i];
    const std::string ctx = "ops[" + std::to_string(i) + "]";
    r.expect_map(node, ctx);
    OpHeader h{r.string_field(node, "name", ctx), node, {}};
    if (auto [it, fresh] = index.emplace(h.name, i); !fresh) {
      r.fail(node["name"], ctx, "duplicate op name \"" + h.name + "\" (first defined at " +
                                    r.where(headers[it->second].node.Mark()) + ")");
    }
    if (const YAML::Node inputs = node["inputs"]; inputs.IsDefined() && !inputs.IsNull()) {
      const std::string op_ctx = "op \"" + h.name + "\"";
      if (!inputs.IsSequence()) r.fail(inputs, op_ctx, "field 'inputs': expected a list of op names");
      for (const auto& in : inputs) h.inputs.push_back(r.scalar(in, op_ctx, "inputs"));
    }
    headers.push_back(std::move(h));
  }
  // Pass 2: everything else.
  std::vector<Op> ops;
  std::optional<std::size_t> with_buckets, without_buckets;  // dense ops with/without recorded ones
  for (std::size_t i = 0; i < headers.size(); ++i) {
    const YAML::Node& node = headers[i].node;
    const std::string ctx = "op \"" + headers[i].name + "\"";
    r.check_keys(node, ctx, {"name", "layer", "step", "inputs", "activation", "forward", "backward",
                             "gradient"});
    Op op;
    op.name = headers[i].name;
    op.layer = node["layer"].IsDefined() ? r.string_field(node, "layer", ctx) : op.name;
    if (node["step"].IsDefined()) {
      op.step = static_cast<int>(r.integer(node["step"], "step", ctx, 0, 1'000'000'000));
    }
    if (node["activation"].IsDefined()) {
      op.activation_bytes = r.bytes_value(node["activation"], "activation", ctx);
    }
    op.forward = read_kernels(r, node, "forward", ctx);
    op.backward = read_kernels(r, node, "backward", ctx);
    if (node["gradient"].IsDefined()) read_gradient(r, node["gradient"], ctx, op);
    if (op.exchange == GradientExchange::DenseAllReduce) {
      auto& first = op.buckets.empty() ? without_buckets : with_buckets;
      if (!first) first = i;
      if (with_buckets && without_buckets) {
        const std::string other = op.buckets.empty()
                                      ? "this op has none, op \"" + headers[*with_buckets].name + "\" has them"
                                      : "this op has them, op \"" + headers[*without_buckets].name + "\" has none";
        r.fail(node["gradient"], ctx,
               "recorded 'buckets' must be given for every dense-allreduce gradient or for none; " + other);
      }
    }
    std::set<std::size_t> used;
    for (std::size_t k = 0; k < headers[i].inputs.size(); ++k) {
      const std::string& in = headers[i].inputs[k];
      const YAML::Node at = node["inputs"][k];
      const auto it = index.find(in);
      if (it == index.end()) r.fail(at, ctx, "unknown input op \"" + in + "\"");
      const std::size_t j = it->second;
      if (j == i) r.fail(at, ctx, "cycle: the op lists itself as an input");
      if (j > i) {
        if (reaches(headers, index, j, i)) {
          r.fail(at, ctx, "cycle: input \"" + in + "\" (at " + r.where(headers[j].node.Mark()) +
                              ") depends on this op");
        }
        r.fail(at, ctx, "forward reference: input \"" + in + "\" is defined later (at " +
                            r.where(headers[j].node.Mark()) + "); list ops so that inputs come first");
      }
      if (!used.insert(j).second) r.fail(at, ctx, "input \"" + in + "\" is listed twice");
      op.inputs.push_back(static_cast<std::uint32_t>(j));
    }
    ops.push_back(std::move(op));
  }
  return ops;
}

}  // namespace

Profile parse_profile(std::string_view yaml, const std::string& source_name) {
  const Reader r(source_name);
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    throw InputError(r.where(e.mark) + ": invalid YAML: " + e.msg);
  }
  if (!root.IsDefined() || root.IsNull()) throw InputError(source_name + ": empty profile");
  const std::string ctx = "profile";
  r.expect_map(root, ctx);
  r.check_keys(root, ctx, {"format", "metadata", "optimizer", "ops"});
  const YAML::Node format = r.required(root, "format", ctx, std::string(kProfileFormat));
  if (r.scalar(format, ctx, "format") != kProfileFormat) {
    r.fail(format, ctx, "unsupported format \"" + format.Scalar() + "\" (this version reads " +
                            std::string(kProfileFormat) + ")");
  }
  Profile p;
  try {
    p.meta = read_metadata(r, r.required(root, "metadata", ctx, "a mapping"));
    p.optimizer = read_optimizer(r, r.required(root, "optimizer", ctx, "a mapping"));
    p.ops = read_ops(r, r.required(root, "ops", ctx, "a list of ops"));
  } catch (const YAML::Exception& e) {
    throw InputError(r.where(e.mark) + ": " + e.msg);
  }
  return p;
}

Profile load_profile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError("cannot open profile file \"" + path + "\"");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InputError("cannot read profile file \"" + path + "\"");
  return parse_profile(text.str(), path);
}

}  // namespace hybridsim::workloads
