#include "workloads/profile_gen.h"

#include <algorithm>

#include "sim/error.h"
#include "workloads/profile_gen_detail.h"

namespace hybridsim::workloads {

namespace {

constexpr __int128 kNsPerSecond = 1'000'000'000;

// ceil(work × 10^9 / rate) nanoseconds, not below the floor.
sim::Time priced(std::int64_t work, std::int64_t rate, sim::Time floor) {
  if (work < 0 || rate <= 0) throw InternalError("cost model: negative work or non-positive rate");
  const __int128 ns = (static_cast<__int128>(work) * kNsPerSecond + rate - 1) / rate;
  return max(sim::Time::ns(static_cast<std::int64_t>(ns)), floor);
}

struct Builtin {
  const char* name;
  const char* file;
};
constexpr Builtin kBuiltins[] = {{"inception-v3", "inception_v3.yaml"},
                                 {"gnmt", "gnmt.yaml"},
                                 {"biglstm", "biglstm.yaml"}};

const Builtin& builtin_by_name(std::string_view name) {
  for (const auto& b : kBuiltins) {
    if (name == b.name) return b;
  }
  std::string list;
  for (const auto& b : kBuiltins) list += (list.empty() ? "" : ", ") + std::string(b.name);
  throw InputError("unknown built-in profile \"" + std::string(name) + "\" (expected one of: " + list + ")");
}

}  // namespace

Kernel GpuCostModel::conv(std::string name, std::int64_t flop) const {
  return Kernel{std::move(name), priced(flop, conv_flop_per_second, launch_floor)};
}

Kernel GpuCostModel::gemm(std::string name, std::int64_t flop) const {
  return Kernel{std::move(name), priced(flop, gemm_flop_per_second, launch_floor)};
}

Kernel GpuCostModel::memory(std::string name, std::int64_t bytes) const {
  return Kernel{std::move(name), priced(bytes, memory_bandwidth.bytes_per_second(), launch_floor), {},
                sim::KernelBound::Memory};
}

sim::Time GpuCostModel::optimizer_time_per_gib(std::int64_t passes) const {
  return priced(passes << 30, memory_bandwidth.bytes_per_second(), sim::Time::zero());
}

GpuCostModel v100_fp32() {
  GpuCostModel m;
  m.gpu = "V100-SXM2-16GB";
  m.conv_flop_per_second = 12'300'000'000'000;
  m.gemm_flop_per_second = 9'460'000'000'000;
  m.memory_bandwidth = sim::Bandwidth::gb_per_second(600);
  m.launch_floor = sim::Time::us(5);
  return m;
}

std::string canonical_network_name(std::string_view name) {
  std::string s(name);
  std::replace(s.begin(), s.end(), '_', '-');
  return s;
}

std::vector<std::string> builtin_profile_names() {
  std::vector<std::string> names;
  for (const auto& b : kBuiltins) names.emplace_back(b.name);
  return names;
}

std::string builtin_profile_path(std::string_view name) {
  return std::string("workloads/profiles/v100/") + builtin_by_name(name).file;
}

Profile generate_builtin_profile(std::string_view name) {
  const std::string_view canonical = builtin_by_name(name).name;
  if (canonical == "inception-v3") return generate_inception_v3(InceptionConfig{}, v100_fp32());
  if (canonical == "gnmt") return generate_gnmt(GnmtConfig{}, v100_fp32());
  return generate_biglstm(BigLstmConfig{}, v100_fp32());
}

Profile builtin_profile(std::string_view name) { return generate_builtin_profile(name); }

namespace detail {

Op make_op(std::string name, std::string layer, std::vector<std::uint32_t> inputs,
           std::int64_t activation_bytes, std::optional<int> step) {
  Op op;
  op.name = std::move(name);
  op.layer = std::move(layer);
  op.step = step;
  op.inputs = std::move(inputs);
  op.activation_bytes = sim::Bytes::of(activation_bytes);
  return op;
}

void set_dense_gradient(Op& op, std::int64_t parameters) {
  op.gradient_bytes = sim::Bytes::of(parameters * kFp32Bytes);
  op.exchange = GradientExchange::DenseAllReduce;
}

void set_sparse_gradient(Op& op, std::int64_t parameters, std::int64_t rows, std::int64_t row_bytes) {
  op.gradient_bytes = sim::Bytes::of(parameters * kFp32Bytes);
  op.exchange = GradientExchange::SparseAllGather;
  op.sparse_bytes_per_worker = sim::Bytes::of(rows * (row_bytes + kIndexBytes));
}

std::uint32_t add_op(Profile& profile, Op op) {
  for (auto in : op.inputs) {
    if (in >= profile.ops.size()) throw InternalError("generator: op " + op.name + " uses a later op");
  }
  profile.ops.push_back(std::move(op));
  return static_cast<std::uint32_t>(profile.ops.size() - 1);
}

}  // namespace detail

}  // namespace hybridsim::workloads
