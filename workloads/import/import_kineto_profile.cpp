// The last steps of a Kineto import: where the gradient sizes come from, and the Profile assembled
// from the reference iteration with the averaged durations, the buckets and the optimizer.
#include <filesystem>

#include "sim/error.h"
#include "sim/text.h"
#include "workloads/import/import_kineto_parts.h"
#include "workloads/profile/profile_io.h"

namespace hybridsim::workloads::kineto_detail {

namespace {

constexpr std::int64_t kGiB = std::int64_t{1} << 30;

// The optimizer rate (ps per GiB) nearest the measured one whose replay (Profile::optimizer_time:
// one update per op with a gradient, each rounded up to a ps) takes exactly `measured`, where one
// does. The floor of measured × GiB / parameter bytes replayed up to 1 ps per op over ("an
// optimizer of 44.345001 us" for a measured 44.345 us, and the one-GPU step with it). The replay
// only grows with the rate, so: the floor where it is exact; below a floor that replays over, the
// largest rate that does not; above one that replays under (over a GiB of parameters), floor + 1,
// whose replay's unrounded sum alone is past `measured`. The floor where none is exact.
std::int64_t exact_rate(Profile& p, sim::Time measured, std::int64_t floor_rate) {
  const auto replay = [&](std::int64_t rate) {
    p.optimizer.time_per_gib = sim::Time::ps(rate);
    return p.optimizer_time(1);
  };
  const sim::Time at_floor = replay(floor_rate);
  if (at_floor == measured) return floor_rate;
  std::int64_t candidate = floor_rate;
  if (at_floor < measured) {
    if (floor_rate < INT64_MAX) candidate = floor_rate + 1;
  } else {
    std::int64_t low = 0, high = floor_rate;  // replay(low) <= measured < replay(high)
    if (replay(low) > measured) return floor_rate;
    while (high - low > 1) {
      const std::int64_t mid = low + (high - low) / 2;
      (replay(mid) <= measured ? low : high) = mid;
    }
    candidate = low;
  }
  return replay(candidate) == measured ? candidate : floor_rate;
}

}  // namespace

std::string network_name(const std::string& path) {
  std::string stem = std::filesystem::path(path).filename().string();
  for (const char* ext : {".gz", ".json", ".trace"}) {
    if (stem.ends_with(ext)) stem.resize(stem.size() - std::string_view(ext).size());
  }
  return stem.empty() ? "imported" : stem;
}

std::string precision_of(const std::string& dtype) {
  const auto bytes = kineto_dtype_bytes(dtype);
  if (sim::lowercase(dtype).find("bfloat16") != std::string::npos) return "bf16";
  if (bytes == 4) return "fp32";
  if (bytes == 2) return "fp16";
  if (bytes == 8) return "fp64";
  return "unknown";
}

GradientSource choose_gradient_source(const IterationDraft& ref,
                                      const std::vector<const IterationDraft*>& used) {
  return choose_gradient_source(ref, sum_drafts(used).nccl_differing);
}

GradientSource choose_gradient_source(const IterationDraft& ref, std::int64_t sizes_differing) {
  GradientSource g;
  for (const auto& op : ref.ops) {
    g.nccl |= op.nccl_bytes.count() > 0;
    g.accumulate |= op.accumulate_bytes.count() > 0;
    g.accumulate_bytes += op.accumulate_bytes;
  }
  g.name = g.nccl ? "nccl all-reduce" : g.accumulate ? "AccumulateGrad shapes" : "none";
  // One line per differing iteration, as the report has always listed them.
  for (std::int64_t i = 0; i < sizes_differing; ++i)
    g.notes.push_back("all-reduce sizes differ between iterations: " + ref.stats.name + "'s are used");
  return g;
}

ProfileMetadata profile_metadata(const ProfileInputs& in) {
  const KinetoImportOptions& o = in.options;
  const KinetoImportReport& r = in.report;
  ProfileMetadata m;
  m.network = o.network.empty() ? network_name(r.source) : o.network;
  m.gpu = r.gpu;
  m.precision = precision_of(in.ref.dtype);
  m.batch_per_gpu = o.batch;
  m.throughput_unit = o.throughput_unit;
  m.units_per_step = o.units_per_step > 0 ? o.units_per_step : o.batch;
  std::string where = "device " + std::to_string(r.device);
  if (r.rank)
    where += ", rank " + std::to_string(*r.rank) + " of " + std::to_string(r.world_size.value_or(0));
  m.source = "Kineto trace " + std::filesystem::path(r.source).filename().string() + ": " + r.average.name +
             ", " + where;
  m.notes = std::string("imported by hybridsim import kineto; durations are each GPU activity's share "
                        "of the device's busy time (overlap between streams clipped); CPU launch gaps ") +
            (o.keep_gaps ? "kept as idle time before the following activity (idle_before)" : "dropped") +
            "; gradients from " + r.gradient_source + "; activation sizes are not in traces (0)";
  return m;
}

std::vector<Kernel> averaged_kernels(const std::vector<const IterationDraft*>& used, std::size_t op,
                                     std::vector<DraftKernel> DraftOp::*list) {
  return averaged_kernels(sum_drafts(used), *used.back(), op, list);
}

std::vector<Kernel> averaged_kernels(const DraftSums& used, const IterationDraft& ref, std::size_t op,
                                     std::vector<DraftKernel> DraftOp::*list) {
  const std::vector<DraftKernel>& names = ref.ops[op].*list;
  const auto& sums = list == &DraftOp::forward ? used.ops[op].forward : used.ops[op].backward;
  std::vector<Kernel> out;
  for (std::size_t k = 0; k < names.size(); ++k)
    out.push_back({names[k].name, mean_time(sums[k].first, used.n), mean_time(sums[k].second, used.n)});
  return out;
}

void set_optimizer(Profile& p, const ProfileInputs& in, std::vector<std::string>& notes) {
  const sim::Time optimizer = mean_time(in.used.optimizer, in.used.n);
  const sim::Time optimizer_idle = mean_time(in.used.optimizer_idle, in.used.n);
  p.optimizer.name = in.ref.optimizer_name.empty() ? "measured" : in.ref.optimizer_name;
  // Spread over the parameter bytes (ceil per op: the rate whose replay is the measured time).
  const sim::Bytes parameters = p.parameter_bytes();
  if (parameters.count() > 0) {
    const Wide per_gib = static_cast<Wide>(optimizer.ps()) * kGiB / parameters.count();
    if (per_gib > INT64_MAX)
      throw InputError(
          in.report.source + ": " + in.report.average.name + ": the optimizer's " +
          sim::format_time(optimizer) + " over " + sim::human_bytes(parameters) +
          " of parameters is more than 2^63 ps per GiB; expected an optimizer time a profile can "
          "hold per GiB of parameters (is the gradients' size right?)");
    p.optimizer.time_per_gib =
        sim::Time::ps(exact_rate(p, optimizer, static_cast<std::int64_t>(per_gib)));
    p.optimizer.idle_before = optimizer_idle;
  } else if (optimizer > sim::Time::zero() || optimizer_idle > sim::Time::zero()) {
    p.ops.front().backward.push_back({"optimizer", optimizer, optimizer_idle});
    notes.push_back("no gradient sizes recorded (no NCCL all-reduce, no AccumulateGrad shapes): the "
                    "optimizer's " + sim::format_time(optimizer) + " are kept as a backward kernel of " +
                    p.ops.front().name + ", whose backward runs last");
  }
}

Profile assemble_profile(const ProfileInputs& in, std::vector<std::string>& notes) {
  Profile p;
  p.meta = profile_metadata(in);
  const GradientSource& g = in.gradients;
  for (std::size_t i = 0; i < in.ref.ops.size(); ++i) {
    const DraftOp& d = in.ref.ops[i];
    Op op;
    op.name = d.name;
    op.layer = d.name;
    op.inputs = d.inputs;
    op.forward = averaged_kernels(in.used, in.ref, i, &DraftOp::forward);
    op.backward = averaged_kernels(in.used, in.ref, i, &DraftOp::backward);
    op.gradient_bytes = g.nccl ? d.nccl_bytes : g.accumulate ? d.accumulate_bytes : sim::Bytes{};
    if (op.gradient_bytes.count() > 0) op.exchange = GradientExchange::DenseAllReduce;
    p.ops.push_back(std::move(op));
  }
  // The recorded all-reduces as the ops' buckets (each op's nccl_bytes is the sum of its own), so
  // that replay issues exactly them unless a bucket size is chosen (StepOptions::recorded_buckets).
  if (g.nccl)
    for (const auto& b : in.ref.buckets) p.ops[b.op].buckets.push_back(b.bytes);
  set_optimizer(p, in, notes);
  validate_profile(p);
  if (p.step_time_1gpu() == sim::Time::zero())
    throw InputError(in.report.source + ": " + in.report.average.name + ": " + std::string(kNoTimeStep) +
                     "; expected a trace whose GPU kernels take time (were their durations recorded?)");
  return p;
}

}  // namespace hybridsim::workloads::kineto_detail
