// The fingerprint of a step's configuration: each field as "name=value;" in declaration order,
// numbers in their shortest exact form (doubles round-trip through std::to_chars).
#include "workloads/step/step_config.h"

#include <charconv>
#include <cstdint>
#include <type_traits>

namespace hybridsim::workloads {
namespace {

class Fields {
 public:
  template <class T>
  void add(std::string_view name, const T& value) {
    text_ += name;
    text_ += '=';
    put(value);
    text_ += ';';
  }
  template <class T>
  void add_list(std::string_view name, const T& values) {
    text_ += name;
    text_ += '=';
    for (const auto& v : values) {
      put(v);
      text_ += ',';
    }
    text_ += ';';
  }
  std::string take() { return std::move(text_); }

 private:
  template <class T>
  void put(const T& v) {
    if constexpr (std::is_enum_v<T>) {
      put(static_cast<std::int64_t>(v));
    } else if constexpr (std::is_same_v<T, bool>) {
      text_ += v ? '1' : '0';
    } else if constexpr (std::is_arithmetic_v<T>) {
      char buf[32];
      const auto r = std::to_chars(buf, buf + sizeof buf, v);
      text_.append(buf, r.ptr);
    } else if constexpr (std::is_same_v<T, sim::Bytes>) {
      put(v.count());
    } else if constexpr (std::is_same_v<T, sim::Bandwidth>) {
      put(v.bytes_per_second());
    } else if constexpr (std::is_same_v<T, sim::Time>) {
      put(v.ps());
    } else {
      static_assert(std::is_same_v<T, std::nullopt_t>, "a field type the fingerprint does not know");
    }
  }
  template <class T>
  void put(const std::optional<T>& v) {
    if (v) put(*v);
    else text_ += "auto";
  }

  std::string text_;
};

}  // namespace

std::string fingerprint(const StepConfig& c) {
  Fields f;
  f.add("placement.mp", c.placement.mp);
  f.add_list("placement.gpu_of_op", c.placement.gpu_of_op);
  f.add("mapping.dp", c.mapping.dp);
  f.add("mapping.mp", c.mapping.mp);
  for (const auto& worker : c.mapping.gpu_rank) f.add_list("mapping.worker", worker);
  f.add("step.bucket_size", c.step.bucket_size);
  f.add("step.recorded_buckets", c.step.recorded_buckets);
  f.add("step.mp_transfer_estimate", c.step.mp_transfer_estimate);
  f.add("step.compute_scale", c.step.compute_scale);
  f.add_list("step.gpu_compute_scale", c.step.gpu_compute_scale);
  f.add("step.gradient_copies", c.step.gradient_copies);
  f.add("step.copy_passes", c.step.copy_passes);
  f.add("step.accumulation", c.step.accumulation);
  f.add("step.exchange_every_micro_batch", c.step.exchange_every_micro_batch);
  f.add("comm.algorithm", c.comm.algorithm);
  f.add("comm.protocol", c.comm.protocol);
  f.add("comm.channels", c.comm.channels);
  f.add("comm.pcie_only", c.comm.pcie_only);
  f.add("collective.message_size", c.collective.message_size);
  f.add("collective.reduction_bandwidth", c.collective.reduction_bandwidth);
  const sim::ProtocolTiming& t = c.collective.timing;
  f.add("collective.timing.protocol", t.protocol);
  f.add_list("collective.timing.link_rate_scale", t.link_rate_scale);
  f.add("collective.timing.channel_cap", t.channel_cap);
  f.add("collective.timing.base_latency", t.base_latency);
  f.add_list("collective.timing.hop_latency", t.hop_latency);
  f.add("collective.fast_path", c.collective.fast_path);
  f.add("switching", c.switching);
  f.add("executor.contention", c.executor.contention);
  f.add("variability.steps", c.variability.steps);
  f.add("variability.seed", c.variability.seed);
  f.add("variability.kernel_jitter", c.variability.kernel_jitter);
  f.add("variability.lengths", c.variability.lengths);
  f.add("variability.batching", c.variability.batching);
  f.add("variability.length_buckets", c.variability.length_buckets);
  f.add("limits.max_events", c.limits.max_events);
  f.add("limits.max_memory", c.limits.max_memory);
  return f.take();
}

}  // namespace hybridsim::workloads
