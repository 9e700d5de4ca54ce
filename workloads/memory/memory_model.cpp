#include "workloads/memory/memory_model.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <limits>
#include <utility>

#include "sim/error.h"
#include "topology/preset_registry.h"

namespace hybridsim::workloads {
namespace {

constexpr std::int64_t kFp32 = 4;  // bytes of an FP32 value: master weights and optimizer state

std::size_t index(MemoryPart p) { return static_cast<std::size_t>(p); }

// Lower case without '-', '_' and spaces: "SGD-Momentum" → "sgdmomentum".
std::string normalized(std::string_view name) {
  std::string out;
  for (const char c : name)
    if (c != '-' && c != '_' && c != ' ')
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// A buffer alive from one point of a rank's compute stream to another, both included.
struct Interval {
  MemoryPart part;
  std::int64_t bytes;
  std::size_t first;
  std::size_t last;
};

// The positions of one rank's points: forward order, then backward order, then the optimizer.
struct Positions {
  std::vector<std::size_t> forward;   // [op] → point, for the rank's ops
  std::vector<std::size_t> backward;  // [op] → point
  std::size_t optimizer = 0;
};

Positions positions(const Profile& profile, const OpOrder& order, int k) {
  Positions p;
  constexpr std::size_t none = std::numeric_limits<std::size_t>::max();
  p.forward.assign(profile.ops.size(), none);
  p.backward.assign(profile.ops.size(), none);
  const auto& fwd = order.forward[static_cast<std::size_t>(k)];
  const auto& bwd = order.backward[static_cast<std::size_t>(k)];
  for (std::size_t i = 0; i < fwd.size(); ++i) p.forward[fwd[i]] = i;
  for (std::size_t i = 0; i < bwd.size(); ++i) p.backward[bwd[i]] = fwd.size() + i;
  p.optimizer = fwd.size() + bwd.size();
  return p;
}

// What rank k holds for the whole step (the parts that do not vary with the program point).
MemoryBreakdown persistent_parts(const Profile& profile, const MpPlacement& placement, int k,
                                 const ParameterRule& rule, const MemoryOptions& o) {
  MemoryBreakdown b;
  std::int64_t weights = 0, dense = 0, parameters = 0;
  bool exchanges = false;
  for (std::size_t v = 0; v < profile.ops.size(); ++v) {
    const Op& op = profile.ops[v];
    if (static_cast<int>(placement.gpu_of_op[v]) != k || !op.has_gradient()) continue;
    exchanges = true;
    weights += op.gradient_bytes.count();
    parameters += op.gradient_bytes.count() / rule.bytes_per_parameter;
    if (op.exchange == GradientExchange::DenseAllReduce) dense += op.gradient_bytes.count();
  }
  b[MemoryPart::Weights] = sim::Bytes::of(weights);
  b[MemoryPart::Gradients] = sim::Bytes::of(dense);
  b[MemoryPart::OptimizerState] = sim::Bytes::of(parameters * rule.optimizer_states * rule.state_bytes);
  if (rule.mixed_precision) b[MemoryPart::MasterWeights] = sim::Bytes::of(parameters * rule.state_bytes);
  if (o.dp > 1 && o.gradient_copies) b[MemoryPart::GradientBuckets] = sim::Bytes::of(dense);
  const bool ring =
      static_cast<std::size_t>(k) < o.ring_by_rank.size() && o.ring_by_rank[static_cast<std::size_t>(k)] != 0;
  if (o.dp > 1 && exchanges)
    b[MemoryPart::CommBuffers] =
        sim::Bytes::of(static_cast<std::int64_t>(o.nccl_channels) *
                       (ring ? 1 : o.nccl_connections_per_channel) * kNcclConnectionBuffers.count());
  b[MemoryPart::Framework] = o.framework;
  return b;
}

// The buffers of rank k that live between two points (rules in workloads/README.md):
// - an op's output y_u on its own GPU: from u's forward until u's backward ends (a backward reads
//   its op's inputs and its own output, and u's backward runs after those of its consumers);
// - a copy of y_u received on another GPU: from the first consumer's forward there until the last
//   consumer's backward there;
// - the activation gradient dL/dy_u: from the first backward that produces it (a consumer's; the
//   op's own for an op without consumers on this GPU) until u's backward, which consumes it; on a
//   consumer's GPU the partial gradient lives from the first to the last consumer's backward there,
//   and is then sent back;
// - a sparse gradient's rows (and, with dp > 1, every worker's gathered rows and their flat copies):
//   from its op's backward, when the gather is launched, until the optimizer has used them.
std::vector<Interval> transient_buffers(const Profile& profile, const MpPlacement& placement,
                                        const std::vector<std::vector<std::uint32_t>>& consumers,
                                        const Positions& at, int k, const MemoryOptions& o) {
  std::vector<Interval> out;
  const auto on_k = [&](std::size_t v) { return static_cast<int>(placement.gpu_of_op[v]) == k; };
  for (std::size_t u = 0; u < profile.ops.size(); ++u) {
    const Op& op = profile.ops[u];
    const std::int64_t y = op.activation_bytes.count();
    std::size_t first_fwd = std::numeric_limits<std::size_t>::max(), first_bwd = first_fwd, last_bwd = 0;
    bool local_consumer = false;
    for (const std::uint32_t c : consumers[u]) {
      if (!on_k(c)) continue;
      local_consumer = true;
      first_fwd = std::min(first_fwd, at.forward[c]);
      first_bwd = std::min(first_bwd, at.backward[c]);
      last_bwd = std::max(last_bwd, at.backward[c]);
    }
    if (on_k(u)) {
      if (y > 0) {
        out.push_back({MemoryPart::Activations, y, at.forward[u], at.backward[u]});
        out.push_back({MemoryPart::Activations, y, std::min(first_bwd, at.backward[u]), at.backward[u]});
      }
      if (op.exchange == GradientExchange::SparseAllGather) {
        const std::int64_t rows = op.sparse_bytes_per_worker.count();
        out.push_back({MemoryPart::Gradients, rows, at.backward[u], at.optimizer});
        if (o.dp > 1) {
          out.push_back({MemoryPart::SparseGathered, rows * o.dp, at.backward[u], at.optimizer});
          if (o.gradient_copies) {
            out.push_back({MemoryPart::GradientBuckets, rows, at.backward[u], at.optimizer});
            out.push_back({MemoryPart::GradientBuckets, rows * o.dp, at.optimizer, at.optimizer});
          }
        }
      }
    } else if (local_consumer && y > 0) {
      out.push_back({MemoryPart::Activations, y, first_fwd, last_bwd});  // the received copy
      out.push_back({MemoryPart::Activations, y, first_bwd, last_bwd});  // its partial gradient
    }
  }
  return out;
}

RankMemory rank_memory(const Profile& profile, const MpPlacement& placement, const OpOrder& order,
                       const std::vector<std::vector<std::uint32_t>>& consumers, int k,
                       const ParameterRule& rule, const MemoryOptions& o) {
  RankMemory r;
  r.mp_rank = k;
  const MemoryBreakdown base = persistent_parts(profile, placement, k, rule, o);
  const Positions at = positions(profile, order, k);
  const std::size_t points = at.optimizer + 1;
  // Per part, the change of live bytes at each point (+ at the first, − after the last).
  std::vector<std::array<std::int64_t, kMemoryPartCount>> delta(points + 1);
  for (const Interval& i : transient_buffers(profile, placement, consumers, at, k, o)) {
    delta[i.first][index(i.part)] += i.bytes;
    delta[i.last + 1][index(i.part)] -= i.bytes;
  }
  const auto& fwd = order.forward[static_cast<std::size_t>(k)];
  const auto& bwd = order.backward[static_cast<std::size_t>(k)];
  std::array<std::int64_t, kMemoryPartCount> live{};
  std::int64_t best = -1;
  r.timeline.reserve(points);
  for (std::size_t p = 0; p < points; ++p) {
    std::int64_t total = base.total().count();
    for (std::size_t part = 0; part < kMemoryPartCount; ++part) {
      live[part] += delta[p][part];
      total += live[part];
    }
    MemoryPoint point;
    if (p < fwd.size()) point = {MemoryPhase::Forward, fwd[p], {}};
    else if (p < at.optimizer) point = {MemoryPhase::Backward, bwd[p - fwd.size()], {}};
    else point = {MemoryPhase::Optimizer, 0, {}};
    point.live = sim::Bytes::of(total);
    r.timeline.push_back(point);
    if (total > best) {
      best = total;
      r.peak_point = p;
      r.peak = base;
      for (std::size_t part = 0; part < kMemoryPartCount; ++part)
        r.peak.bytes[part] += sim::Bytes::of(live[part]);
    }
  }
  r.after_step = base.total();
  return r;
}

}  // namespace

std::string_view memory_part_name(MemoryPart part) {
  switch (part) {
    case MemoryPart::Weights: return "weights";
    case MemoryPart::Gradients: return "gradients";
    case MemoryPart::OptimizerState: return "optimizer";
    case MemoryPart::MasterWeights: return "master weights";
    case MemoryPart::Activations: return "activations";
    case MemoryPart::SparseGathered: return "sparse gathers";
    case MemoryPart::GradientBuckets: return "gradient buckets";
    case MemoryPart::CommBuffers: return "NCCL buffers";
    case MemoryPart::Framework: return "framework";
  }
  return "?";
}

std::string_view memory_part_key(MemoryPart part) {
  switch (part) {
    case MemoryPart::Weights: return "weights";
    case MemoryPart::Gradients: return "gradients";
    case MemoryPart::OptimizerState: return "optimizer";
    case MemoryPart::MasterWeights: return "master_weights";
    case MemoryPart::Activations: return "activations";
    case MemoryPart::SparseGathered: return "sparse_gathers";
    case MemoryPart::GradientBuckets: return "gradient_buckets";
    case MemoryPart::CommBuffers: return "nccl_buffers";
    case MemoryPart::Framework: return "framework";
  }
  return "?";
}

sim::Bytes MemoryBreakdown::total() const {
  sim::Bytes t;
  for (const sim::Bytes b : bytes) t += b;
  return t;
}

ParameterRule parameter_rule(const Profile& profile) {
  ParameterRule r;
  const std::string precision = normalized(profile.meta.precision);
  // fp16 and bf16 profiles train as AMP does: 16-bit weights and gradients over FP32 master weights and
  // FP32 optimizer state (the convention workload.precision documents, scenarios/README.md; 2 + 2 + 12
  // bytes a parameter under Adam, ../shared/reference/transformers.md after ZeRO, Rajbhandari et al.).
  // fp8 trains as they do: FP8 is the GEMMs' input format only. Transformer Engine keeps the
  // parameters in their higher-precision dtype (BF16 weights and gradients here) and casts them to
  // FP8 for each GEMM, the optimizer updating FP32 master weights with FP32 state ("Using FP8 with
  // Transformer Engine", docs.nvidia.com/deeplearning/transformer-engine/user-guide/examples/
  // fp8_primer.html; Micikevicius et al., "FP8 Formats for Deep Learning", arXiv 2209.05433), the
  // 2 + 2 + 12 bytes of transformer_memory's fp8 (value_bytes 2). The transient FP8 copies are not
  // counted, as a transformer's are not.
  r.mixed_precision = precision == "amp" || precision == "mixed" || precision == "fp16" ||
                      precision == "bf16" || precision == "fp8";
  // fp64 keeps everything in FP64: PyTorch's optimizers allocate their state like the parameter
  // (torch.zeros_like), so each optimizer value is 8 bytes too, and there is no master copy.
  const bool fp64 = precision == "fp64";
  r.bytes_per_parameter = r.mixed_precision ? 2 : fp64 ? 8 : 4;
  r.state_bytes = fp64 ? 8 : static_cast<int>(kFp32);
  const std::string name = normalized(profile.optimizer.name);
  if (name == "adam" || name == "adamw" || name == "lamb")
    r.optimizer_states = 2;
  else if (name == "sgdmomentum" || name == "sgd" || name == "momentum" || name == "nesterov" ||
           name == "lars" || name == "adagrad" || name == "rmsprop")
    r.optimizer_states = 1;
  else
    r.optimizer_known = false;
  return r;
}

MemoryOptions memory_options(const StepConfig& config, const topology::Topology& topology) {
  MemoryOptions o;
  o.dp = config.mapping.dp;
  o.gradient_copies = config.step.gradient_copies;
  o.nccl_channels = config.comm.channels.value_or(kAssumedNcclChannels);
  switch (config.comm.algorithm) {
    case AllReduceAlgorithm::Ring: o.nccl_connections_per_channel = 1; break;
    case AllReduceAlgorithm::Tree: o.nccl_connections_per_channel = 3; break;
    case AllReduceAlgorithm::Hierarchical: o.nccl_connections_per_channel = 2; break;
    case AllReduceAlgorithm::Auto: o.nccl_connections_per_channel = 4; break;
  }
  if (config.comm.algorithm == AllReduceAlgorithm::Hierarchical && config.mapping.dp > 1)
    for (int k = 0; k < config.mapping.mp; ++k)
      o.ring_by_rank.push_back(hierarchical_unfit(topology, config.mapping.dp_group(k)).empty() ? 0 : 1);
  return o;
}

std::vector<MemoryBreakdown> StepMemory::peaks() const {
  std::vector<MemoryBreakdown> out;
  out.reserve(ranks.size());
  for (const RankMemory& r : ranks) out.push_back(r.peak);
  return out;
}

int largest_rank(const std::vector<MemoryBreakdown>& peaks) {
  int best = 0;
  for (std::size_t k = 1; k < peaks.size(); ++k)
    if (peaks[k].total() > peaks[static_cast<std::size_t>(best)].total()) best = static_cast<int>(k);
  return best;
}

sim::Bytes largest_peak(const std::vector<MemoryBreakdown>& peaks) {
  return peaks.empty() ? sim::Bytes() : peaks[static_cast<std::size_t>(largest_rank(peaks))].total();
}

bool fits_in(const std::vector<MemoryBreakdown>& peaks, sim::Bytes capacity) {
  return std::all_of(peaks.begin(), peaks.end(),
                     [&](const MemoryBreakdown& b) { return b.total() <= capacity; });
}

std::optional<MemoryCapacity> gpu_capacity(std::string_view gpu, std::string_view where) {
  const Gpu* spec = find_gpu(gpu);
  if (spec == nullptr || spec->memory_gib <= 0) return std::nullopt;
  return MemoryCapacity{spec->memory(),
                        std::string(gpu) + (where.empty() ? "" : " of " + std::string(where))};
}

std::optional<MemoryCapacity> preset_gpu_capacity(std::string_view preset) {
  const topology::PresetInfo* info = topology::find_preset(preset);
  if (info == nullptr) return std::nullopt;
  return gpu_capacity(info->gpu, info->name);
}

std::optional<MemoryCapacity> workload_gpu_capacity(std::string_view preset, std::string_view named_gpu) {
  const topology::PresetInfo* info = preset.empty() ? nullptr : topology::find_preset(preset);
  if (!named_gpu.empty() && (info == nullptr || find_gpu(info->gpu) != find_gpu(named_gpu)))
    if (auto named = gpu_capacity(named_gpu, "workload.gpu")) return named;
  if (info != nullptr) return preset_gpu_capacity(preset);
  return std::nullopt;
}

StepMemory model_step_memory(const Profile& profile, const MpPlacement& placement, const OpOrder& order,
                             const MemoryOptions& options) {
  if (placement.gpu_of_op.size() != profile.ops.size() ||
      static_cast<int>(order.forward.size()) != placement.mp ||
      static_cast<int>(order.backward.size()) != placement.mp)
    throw InternalError("model_step_memory: the placement or op order is not for this profile");
  StepMemory m;
  m.rule = parameter_rule(profile);
  m.options = options;
  std::vector<std::vector<std::uint32_t>> consumers(profile.ops.size());
  for (std::uint32_t v = 0; v < profile.ops.size(); ++v)
    for (const std::uint32_t u : profile.ops[v].inputs) consumers[u].push_back(v);
  for (int k = 0; k < placement.mp; ++k)
    m.ranks.push_back(rank_memory(profile, placement, order, consumers, k, m.rule, options));
  return m;
}

StepMemory model_step_memory(const Profile& profile, const StepConfig& config,
                             const topology::Topology& topology) {
  return model_step_memory(profile, config.placement,
                           order_ops(profile, config.placement, config.step.mp_transfer_estimate),
                           memory_options(config, topology));
}

std::string format_gib(sim::Bytes b) {
  constexpr std::int64_t kGib = std::int64_t{1} << 30;
  if (b.count() > 0 && b.count() % kGib == 0) return std::to_string(b.count() / kGib) + " GiB";  // "16 GiB"
  const double gib = static_cast<double>(b.count()) / static_cast<double>(kGib);
  // Under 0.005 GiB two decimals say "0.00 GiB" (a capacity of 1 KiB read "4.96 GiB of 0.00 GiB"), and
  // exact bytes ("1234567 B") are not read at a glance: MiB or KiB by the rule GiB are written in,
  // whole where exact, else two decimals (one from 10, none from 100): "1 KiB", "1.18 MiB".
  if (b.count() > 0 && gib < 0.005) {
    constexpr std::pair<const char*, std::int64_t> kUnits[] = {{"MiB", std::int64_t{1} << 20},
                                                               {"KiB", std::int64_t{1} << 10}};
    for (const auto& [unit, size] : kUnits) {
      if (b.count() < size) continue;
      if (b.count() % size == 0) return std::to_string(b.count() / size) + " " + unit;
      const double value = static_cast<double>(b.count()) / static_cast<double>(size);
      char buf[48];
      std::snprintf(buf, sizeof buf,
                    value >= 99.95   ? "%.0f %s"
                    : value >= 9.995 ? "%.1f %s"
                                     : "%.2f %s",
                    value, unit);
      return buf;
    }
    return std::to_string(b.count()) + " B";
  }
  char buf[48];
  std::snprintf(buf, sizeof buf, gib >= 9.995 ? "%.1f GiB" : "%.2f GiB", gib);
  return buf;
}

std::string describe_parts(const MemoryBreakdown& b) {
  std::string out;
  for (std::size_t p = 0; p < kMemoryPartCount; ++p) {
    if (b.bytes[p].count() == 0) continue;
    // Always with decimals ("framework 1.00"), unlike format_gib's whole "16 GiB".
    const double value = static_cast<double>(b.bytes[p].count()) / static_cast<double>(std::int64_t{1} << 30);
    char buf[48];
    std::snprintf(buf, sizeof buf, value >= 9.995 ? "%.1f" : "%.2f", value);
    std::string gib = buf;
    if (gib == "0.00") gib = "<0.01";
    out += (out.empty() ? "" : ", ") + std::string(memory_part_name(static_cast<MemoryPart>(p))) + " " + gib;
  }
  return out;
}

}  // namespace hybridsim::workloads
