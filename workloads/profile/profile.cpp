#include "workloads/profile/profile.h"

#include <set>

#include "sim/error.h"

namespace hybridsim::workloads {

namespace {

constexpr std::int64_t kGiB = std::int64_t{1} << 30;

sim::Time sum(const std::vector<Kernel>& kernels) {
  sim::Time total;
  for (const auto& k : kernels) total += k.duration;
  return total;
}

[[noreturn]] void invalid(const Profile& profile, const std::string& what) {
  throw InputError("profile \"" + profile.meta.network + "\": " + what);
}

}  // namespace

std::string_view gradient_exchange_name(GradientExchange exchange) {
  switch (exchange) {
    case GradientExchange::None: return "none";
    case GradientExchange::DenseAllReduce: return "dense-allreduce";
    case GradientExchange::SparseAllGather: return "sparse-allgather";
  }
  return "none";
}

std::optional<GradientExchange> find_gradient_exchange(std::string_view name) {
  for (auto e : {GradientExchange::None, GradientExchange::DenseAllReduce,
                 GradientExchange::SparseAllGather}) {
    if (gradient_exchange_name(e) == name) return e;
  }
  return std::nullopt;
}

sim::Time Op::forward_time() const { return sum(forward); }
sim::Time Op::backward_time() const { return sum(backward); }

sim::Bytes Op::update_bytes(std::int64_t workers) const {
  switch (exchange) {
    case GradientExchange::None: return sim::Bytes{};
    case GradientExchange::DenseAllReduce: return gradient_bytes;
    case GradientExchange::SparseAllGather: {
      const __int128 gathered = static_cast<__int128>(sparse_bytes_per_worker.count()) * workers;
      return gathered < gradient_bytes.count() ? sim::Bytes::of(static_cast<std::int64_t>(gathered))
                                               : gradient_bytes;
    }
  }
  return sim::Bytes{};
}

sim::Time OptimizerCost::update_time(sim::Bytes parameter_bytes) const {
  const __int128 ps = static_cast<__int128>(parameter_bytes.count()) * time_per_gib.ps();
  return sim::Time::ps(static_cast<std::int64_t>((ps + kGiB - 1) / kGiB));
}

std::optional<std::uint32_t> Profile::find_op(std::string_view name) const {
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].name == name) return static_cast<std::uint32_t>(i);
  }
  return std::nullopt;
}

std::uint32_t Profile::op_by_name(std::string_view name) const {
  if (auto i = find_op(name)) return *i;
  throw InputError("profile \"" + meta.network + "\" has no op named \"" + std::string(name) + "\"");
}

sim::Time Profile::forward_time() const {
  sim::Time total;
  for (const auto& op : ops) total += op.forward_time();
  return total;
}

sim::Time Profile::backward_time() const {
  sim::Time total;
  for (const auto& op : ops) total += op.backward_time();
  return total;
}

sim::Time Profile::optimizer_time(std::int64_t workers) const {
  sim::Time total;
  for (const auto& op : ops) {
    if (op.has_gradient()) total += optimizer.update_time(op.update_bytes(workers));
  }
  return total;
}

sim::Time Profile::step_time_1gpu() const {
  const sim::Time micro = forward_time() + backward_time() + idle_time() - optimizer.idle_before;
  return micro * meta.measured_micro_batches + optimizer_time(1) + optimizer.idle_before;
}

sim::Time Profile::idle_time() const {
  sim::Time total = optimizer.idle_before;
  for (const auto& op : ops) {
    for (const auto& k : op.forward) total += k.idle_before;
    for (const auto& k : op.backward) total += k.idle_before;
  }
  return total;
}

bool Profile::has_recorded_buckets() const {
  for (const auto& op : ops)
    if (!op.buckets.empty()) return true;
  return false;
}

double Profile::throughput_1gpu() const {
  const double seconds = step_time_1gpu().to_seconds();
  return seconds > 0 ? static_cast<double>(meta.units_per_step * meta.measured_micro_batches) / seconds : 0.0;
}

sim::Bytes Profile::parameter_bytes() const {
  sim::Bytes total;
  for (const auto& op : ops) total += op.gradient_bytes;
  return total;
}

void validate_profile(const Profile& profile) {
  if (profile.meta.batch_per_gpu <= 0) invalid(profile, "batch_per_gpu must be positive");
  if (profile.meta.units_per_step <= 0) invalid(profile, "units_per_step must be positive");
  if (profile.meta.measured_micro_batches <= 0) invalid(profile, "measured_micro_batches must be positive");
  if (profile.ops.empty()) invalid(profile, "has no ops");
  std::set<std::string_view> names;
  const bool recorded_buckets = profile.has_recorded_buckets();
  for (std::size_t i = 0; i < profile.ops.size(); ++i) {
    const Op& op = profile.ops[i];
    const std::string where = "op \"" + op.name + "\": ";
    if (op.name.empty()) invalid(profile, "op " + std::to_string(i) + " has an empty name");
    if (!names.insert(op.name).second) invalid(profile, where + "duplicate name");
    if (op.layer.empty()) invalid(profile, where + "empty layer");
    if (op.step && *op.step < 0) invalid(profile, where + "negative step");
    for (auto in : op.inputs) {
      if (in >= i) invalid(profile, where + "input " + std::to_string(in) + " is not an earlier op");
    }
    const bool sparse = op.exchange == GradientExchange::SparseAllGather;
    if (op.has_gradient() != (op.gradient_bytes.count() > 0)) {
      invalid(profile, where + "gradient bytes and exchange disagree (bytes without an exchange, or "
                               "an exchange without bytes)");
    }
    if (sparse != (op.sparse_bytes_per_worker.count() > 0)) {
      invalid(profile, where + "sparse_bytes_per_worker is required for, and only for, "
                               "sparse-allgather");
    }
    for (const auto* kernels : {&op.forward, &op.backward}) {
      for (const auto& k : *kernels) {
        if (k.name.empty()) invalid(profile, where + "a kernel has an empty name");
        if (k.duration < sim::Time::zero()) invalid(profile, where + "negative kernel duration");
        if (k.idle_before < sim::Time::zero()) invalid(profile, where + "negative idle_before");
      }
    }
    if (!op.buckets.empty()) {
      if (op.exchange != GradientExchange::DenseAllReduce)
        invalid(profile, where + "recorded buckets belong only to dense-allreduce gradients");
      sim::Bytes sum;
      for (const auto b : op.buckets) {
        if (b.count() <= 0) invalid(profile, where + "a recorded bucket is not positive");
        sum += b;
      }
      if (sum != op.gradient_bytes)
        invalid(profile, where + "recorded buckets sum to " + std::to_string(sum.count()) +
                             " B, not the gradient's " + std::to_string(op.gradient_bytes.count()) + " B");
    } else if (op.exchange == GradientExchange::DenseAllReduce && recorded_buckets) {
      invalid(profile, where + "no recorded buckets, while other dense gradients have them (all or none)");
    }
  }
  if (profile.optimizer.idle_before < sim::Time::zero()) invalid(profile, "optimizer: negative idle_before");
}

}  // namespace hybridsim::workloads
