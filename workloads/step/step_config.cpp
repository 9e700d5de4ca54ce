// The fields of a step's configuration, enumerated once (step_fields) and used by both the
// fingerprint and equality: each field as "name=value;" in declaration order, numbers in their
// shortest exact form (doubles round-trip through std::to_chars), lists as "a,b,c,".
#include "workloads/step/step_config.h"

#include <array>
#include <charconv>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <vector>

namespace hybridsim::workloads {
namespace {

template <class T>
struct Named {
  std::string_view name;
  const T& value;
};
template <class T>
Named(std::string_view, const T&) -> Named<T>;

// Each part's members through a structured binding that names every one of them: a member added
// to a part stops this file from compiling until it is named here, either as a model input (in the
// returned tuple, so fingerprinted and compared) or as left out (with why). Never list a member
// by hand anywhere else.
auto fields_of(const MpPlacement& p) {
  const auto& [mp, gpu_of_op, description] = p;  // description: how it was made, for reports
  return std::tuple{Named{"placement.mp", mp}, Named{"placement.gpu_of_op", gpu_of_op}};
}
auto fields_of(const WorkerMapping& m) {
  const auto& [dp, mp, gpu_rank, description] = m;  // description: for reports
  return std::tuple{Named{"mapping.dp", dp}, Named{"mapping.mp", mp}, Named{"mapping.worker", gpu_rank}};
}
auto fields_of(const StepOptions& s) {
  const auto& [bucket_size, recorded_buckets, mp_transfer_estimate, compute_scale, gpu_compute_scale,
               gradient_copies, copy_passes, accumulation, exchange_every_micro_batch, tp, tp_syncs,
               tp_gradients, zero, ep, pipeline] = s;
  // tp_syncs and tp_gradients: made by the transformer generator together with the profile, from the
  // same model, tp, sequence parallelism and recomputation that make the profile's kernels (its
  // fingerprint); so is ep (its all-to-alls and expert ops come with the kernels of ep's local experts).
  return std::tuple{Named{"step.bucket_size", bucket_size}, Named{"step.recorded_buckets", recorded_buckets},
                    Named{"step.mp_transfer_estimate", mp_transfer_estimate},
                    Named{"step.compute_scale", compute_scale},
                    Named{"step.gpu_compute_scale", gpu_compute_scale},
                    Named{"step.gradient_copies", gradient_copies}, Named{"step.copy_passes", copy_passes},
                    Named{"step.accumulation", accumulation},
                    Named{"step.exchange_every_micro_batch", exchange_every_micro_batch},
                    Named{"step.tp", tp}, Named{"step.zero", zero}, Named{"step.pipeline.pp", pipeline.pp},
                    Named{"step.pipeline.schedule", pipeline.schedule},
                    Named{"step.pipeline.virtual_stages", pipeline.virtual_stages},
                    Named{"step.pipeline.chunk_layers", pipeline.chunk_layers}};
}
auto fields_of(const CommOptions& c) {
  const auto& [algorithm, protocol, channels, pcie_only] = c;
  return std::tuple{Named{"comm.algorithm", algorithm}, Named{"comm.protocol", protocol},
                    Named{"comm.channels", channels}, Named{"comm.pcie_only", pcie_only}};
}
auto fields_of(const sim::CollectiveConfig& c) {
  // observer, budget and model_progress watch the simulation (a trace, the caps' accounting, the
  // progress lines): they change no result. uniform_trees is set per tree of a folded step as it is
  // built (analysis/step/attempt_collectives.cpp), never in a step's config.
  const auto& [message_size, reduction_bandwidth, timing, observer, fast_path, budget, uniform_trees,
               model_progress] = c;
  const auto& [protocol, link_rate_scale, channel_cap, base_latency, hop_latency] = timing;
  return std::tuple{Named{"collective.message_size", message_size},
                    Named{"collective.reduction_bandwidth", reduction_bandwidth},
                    Named{"collective.timing.protocol", protocol},
                    Named{"collective.timing.link_rate_scale", link_rate_scale},
                    Named{"collective.timing.channel_cap", channel_cap},
                    Named{"collective.timing.base_latency", base_latency},
                    Named{"collective.timing.hop_latency", hop_latency},
                    Named{"collective.fast_path", fast_path}};
}
auto fields_of(const sim::StreamExecutorOptions& e) {
  const auto& [contention] = e;
  return std::tuple{Named{"executor.contention", contention}};
}
auto fields_of(const Variability& v) {
  const auto& [steps, seed, kernel_jitter, lengths, batching, length_buckets] = v;
  return std::tuple{Named{"variability.steps", steps}, Named{"variability.seed", seed},
                    Named{"variability.kernel_jitter", kernel_jitter}, Named{"variability.lengths", lengths},
                    Named{"variability.batching", batching},
                    Named{"variability.length_buckets", length_buckets}};
}
auto fields_of(const sim::SimulationLimits& l) {
  // model_threads says how the models run, on which threads: it changes no result.
  const auto& [max_events, max_memory, model_threads] = l;
  return std::tuple{Named{"limits.max_events", max_events}, Named{"limits.max_memory", max_memory}};
}

// Every model input of a StepConfig, in declaration order.
auto step_fields(const StepConfig& c) {
  const auto& [placement, mapping, step, comm, collective, switching, executor, variability, limits] = c;
  return std::tuple_cat(fields_of(placement), fields_of(mapping), fields_of(step), fields_of(comm),
                        fields_of(collective), std::tuple{Named{"switching", switching}},
                        fields_of(executor), fields_of(variability), fields_of(limits));
}

template <class T>
struct IsList : std::false_type {};
template <class T>
struct IsList<std::vector<T>> : std::true_type {};
template <class T, std::size_t N>
struct IsList<std::array<T, N>> : std::true_type {};
template <class T>
struct IsTable : std::false_type {};  // a list of lists
template <class T>
struct IsTable<std::vector<std::vector<T>>> : std::true_type {};

class FingerprintText {
 public:
  template <class T>
  void add(std::string_view name, const T& value) {
    if constexpr (IsTable<T>::value) {
      for (const auto& row : value) add(name, row);  // a table: one entry per row
      return;
    } else {
      text_ += name;
      text_ += '=';
      if constexpr (IsList<T>::value) {
        for (const auto& v : value) {
          put(v);
          text_ += ',';
        }
      } else {
        put(value);
      }
      text_ += ';';
    }
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
  FingerprintText f;
  std::apply([&f](const auto&... field) { (f.add(field.name, field.value), ...); }, step_fields(c));
  return f.take();
}

bool operator==(const StepConfig& a, const StepConfig& b) {
  return std::apply(
      [&b](const auto&... x) {
        return std::apply([&x...](const auto&... y) { return ((x.value == y.value) && ...); },
                          step_fields(b));
      },
      step_fields(a));
}

}  // namespace hybridsim::workloads
