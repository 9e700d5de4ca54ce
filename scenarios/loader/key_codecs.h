// The pieces of a scenario key's binding (key_binding.h): where its member is (an accessor), how
// its value is read and written (a codec, by the member's type and the key's kind), and when it is
// written back. The table (schema_table.cpp) puts them together with bind<Access, Codec, When>().
//   bind<Member<&Scenario::communication, &CommunicationSettings::message_size>>()
//     reads r.size(map, "communication.message_size") into the member, writes "512 KiB" back.
// Internal to scenarios/.
#pragma once
#include <charconv>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <type_traits>

#include "scenarios/loader/key_binding.h"
#include "sim/error.h"
#include "topology/cluster.h"
#include "workloads/gpu/cost_model.h"

namespace hybridsim::scenarios {

// ---- Accessors: the member a key is bound to, in a Scenario (const or not).

// A chain of data members: Member<&Scenario::cluster, &ClusterSettings::nodes> is s.cluster.nodes.
template <auto... Members>
struct Member {
  static auto& of(auto& s) { return (s .* ... .* Members); }
};
// One field of a link kind's override: s.cluster.links[Kind].*Field.
template <sim::LinkKind Kind, auto Field>
struct LinkMember {
  static auto& of(auto& s) { return s.cluster.links[Kind].*Field; }
};
// One field of the trace settings (present: the trace section's codec makes them).
template <auto Field>
struct TraceMember {
  static auto& of(auto& s) { return (*s.outputs.trace).*Field; }
};

// ---- When a key is written back (scenario_to_yaml).

inline bool always(const Scenario&) { return true; }
// The cluster keys a topology file leaves out (it describes the whole cluster).
inline bool preset_cluster(const Scenario& s) { return s.cluster.topology.empty(); }
inline bool has_trace(const Scenario& s) { return s.outputs.trace.has_value(); }
inline bool has_sweep(const Scenario& s) { return !s.sweep.parameters.empty(); }
// Only when not the default, so that scenarios written before the key read back alike.
template <class Access>
bool not_default(const Scenario& s) {
  const Scenario defaults;
  return !(Access::of(s) == Access::of(defaults));
}

// ---- YAML values written back.

inline TreeNode scalar(std::string text) {
  TreeNode n;
  n.kind = TreeNode::Kind::Scalar;
  n.scalar = std::move(text);
  return n;
}
inline TreeNode sequence(std::vector<TreeNode> items) {
  TreeNode n;
  n.kind = TreeNode::Kind::Sequence;
  n.items = std::move(items);
  return n;
}
inline TreeNode map_of(std::vector<std::pair<std::string, TreeNode>> fields) {
  TreeNode n;
  n.kind = TreeNode::Kind::Map;
  for (auto& [k, v] : fields) n.entries.push_back({k, {}, std::move(v)});
  return n;
}
// The shortest text that reads back as the same double.
inline std::string number_text(double v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

// ---- Names of the enums keys choose among: Names<E>::parse (the schema checked the choice) and
// Names<E>::name. An enum member without a specialization does not compile.

template <class E>
struct Names;
template <>
struct Names<workloads::AllReduceAlgorithm> {
  static auto parse(std::string_view t) { return workloads::parse_algorithm(t); }
  static std::string name(workloads::AllReduceAlgorithm a) {
    return std::string(workloads::algorithm_name(a));
  }
};
template <>  // "auto" is NCCL's choice per call
struct Names<std::optional<sim::Protocol>> {
  static auto parse(std::string_view t) { return workloads::parse_protocol_option(t); }
  static std::string name(std::optional<sim::Protocol> p) { return workloads::protocol_option_name(p); }
};
template <>
struct Names<sim::Switching> {
  static auto parse(std::string_view t) {
    return t == "store-and-forward" ? sim::Switching::StoreAndForward : sim::Switching::CutThrough;
  }
  static std::string name(sim::Switching s) {
    return s == sim::Switching::StoreAndForward ? "store-and-forward" : "cut-through";
  }
};
template <>
struct Names<sim::FastPath> {
  static auto parse(std::string_view t) { return sim::parse_fast_path(t); }
  static std::string name(sim::FastPath f) { return std::string(sim::fast_path_name(f)); }
};
template <>
struct Names<topology::presets::Fabric> {
  static auto parse(std::string_view t) { return topology::presets::parse_fabric(t); }
  static std::string name(topology::presets::Fabric f) {
    return std::string(topology::presets::fabric_name(f));
  }
};
template <>
struct Names<workloads::Precision> {
  static auto parse(std::string_view t) { return workloads::precision_by_name(t); }
  static std::string name(workloads::Precision p) { return std::string(workloads::precision_name(p)); }
};
template <>
struct Names<workloads::LengthDistribution> {
  static auto parse(std::string_view t) {
    return t == "wmt16-en-de" ? workloads::LengthDistribution::Wmt16EnDe
                              : workloads::LengthDistribution::Fixed;
  }
  static std::string name(workloads::LengthDistribution d) {
    return std::string(workloads::length_distribution_name(d));
  }
};
template <>
struct Names<workloads::Batching> {
  static auto parse(std::string_view t) {
    return t == "random" ? workloads::Batching::Random : workloads::Batching::Bucketed;
  }
  static std::string name(workloads::Batching b) { return std::string(workloads::batching_name(b)); }
};
template <>
struct Names<workloads::Ddp> {
  static auto parse(std::string_view t) { return workloads::ddp_by_name(t); }
  static std::string name(workloads::Ddp d) { return std::string(workloads::ddp_name(d)); }
};
template <>
struct Names<workloads::PipelineSchedule> {
  static auto parse(std::string_view t) { return workloads::pipeline_schedule_by_name(t); }
  static std::string name(workloads::PipelineSchedule s) {
    return std::string(workloads::pipeline_schedule_name(s));
  }
};
template <>
struct Names<TraceDetail> {
  static auto parse(std::string_view t) { return parse_trace_detail(t); }
  static std::string name(TraceDetail d) { return std::string(trace_detail_name(d)); }
};
template <>
struct Names<SweepSettings::Mode> {
  static auto parse(std::string_view t) {
    return t == "zip" ? SweepSettings::Mode::Zip : SweepSettings::Mode::Product;
  }
  static std::string name(SweepSettings::Mode m) { return m == SweepSettings::Mode::Zip ? "zip" : "product"; }
};

template <class T>
concept Named = requires(T v) { Names<T>::name(v); };
template <class T>
struct IsOptional : std::false_type {};
template <class T>
struct IsOptional<std::optional<T>> : std::true_type {};

// ---- The codec of plain values, by the member's type and the key's kind. A keyword (`words`:
// "auto", "off", "unlimited") reads as nullopt into an optional member and as zero into a
// number, a size or a rate; and is written back for them.
struct Value {
  template <class T>
  static void read(FieldReader& r, const TreeNode* map, const FieldSpec& spec, T& out) {
    const std::string_view p = spec.path;
    const bool has_word = !spec.words.empty();
    if constexpr (Named<T>) out = Names<T>::parse(r.choice(map, p));
    else if constexpr (IsOptional<T>::value) out = read_optional<typename T::value_type>(r, map, spec);
    else if constexpr (std::is_same_v<T, bool>)
      out =
          spec.kind == FieldKind::Boolean ? r.boolean(map, p) : r.choice(map, p) == choices_of(spec).front();
    else if constexpr (std::is_integral_v<T>)
      out = static_cast<T>(spec.kind == FieldKind::Size ? r.size_opt(map, p).value_or(sim::Bytes()).count()
                           : has_word                 ? r.integer_opt(map, p).value_or(0)
                                                      : r.integer(map, p));
    else if constexpr (std::is_same_v<T, double>) out = r.number(map, p);
    else if constexpr (std::is_same_v<T, sim::Bytes>)
      out = has_word ? r.size_opt(map, p).value_or(T()) : r.size(map, p);
    else if constexpr (std::is_same_v<T, sim::Bandwidth>)
      out = has_word ? r.rate_opt(map, p).value_or(T()) : r.rate(map, p);
    else out = T(read_optional<T>(r, map, spec).value_or(T()));  // text, path: "" when absent
  }

  template <class T>
  static std::optional<TreeNode> write(const FieldSpec& spec, const T& v) {
    if constexpr (Named<T>) {
      return scalar(Names<T>::name(v));
    } else if constexpr (IsOptional<T>::value) {
      if (v) return write(spec, *v);
      if (spec.words.empty()) return std::nullopt;
      return scalar(words_of(spec).front());
    } else if constexpr (std::is_same_v<T, bool>) {
      if (spec.kind == FieldKind::Boolean) return scalar(v ? "true" : "false");
      return scalar(choices_of(spec)[v ? 0 : 1]);
    } else if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, std::filesystem::path>) {
      if (v.empty()) return std::nullopt;
      return scalar(std::filesystem::path(v).string());
    } else {
      if (!spec.words.empty() && v == T()) return scalar(words_of(spec).front());
      return scalar(text_of(spec, v));
    }
  }

 private:
  template <class V>
  static std::optional<V> read_optional(FieldReader& r, const TreeNode* map, const FieldSpec& spec) {
    const std::string_view p = spec.path;
    if constexpr (Named<V>) {
      const auto name = r.choice_opt(map, p);
      return name ? std::optional<V>(Names<V>::parse(*name)) : std::nullopt;
    } else if constexpr (std::is_integral_v<V>) {
      const auto v = r.integer_opt(map, p);
      return v ? std::optional<V>(static_cast<V>(*v)) : std::nullopt;
    } else if constexpr (std::is_same_v<V, sim::Bytes>) {
      return r.size_opt(map, p);
    } else if constexpr (std::is_same_v<V, sim::Bandwidth>) {
      return r.rate_opt(map, p);
    } else if constexpr (std::is_same_v<V, sim::Time>) {
      return r.duration_opt(map, p);
    } else {
      static_assert(std::is_same_v<V, std::string> || std::is_same_v<V, std::filesystem::path>,
                    "a member type the Value codec does not know: give the key a named codec");
      const auto t = spec.kind == FieldKind::Choice ? r.choice_opt(map, p) : r.text_opt(map, p);
      return t ? std::optional<V>(V(*t)) : std::nullopt;
    }
  }

  template <class T>
  static std::string text_of(const FieldSpec& spec, const T& v) {
    if constexpr (std::is_integral_v<T>)
      return spec.kind == FieldKind::Size ? sim::format_bytes(sim::Bytes::of(static_cast<std::int64_t>(v)))
                                          : std::to_string(v);
    else if constexpr (std::is_same_v<T, double>) return number_text(v);
    else if constexpr (std::is_same_v<T, sim::Bytes>) return sim::format_bytes(v);
    else if constexpr (std::is_same_v<T, sim::Bandwidth>) return sim::format_bandwidth(v);
    else return sim::format_time(v);
  }
};

// ---- A key bound to its member: read and written through `Codec` at `Access::of(s)`, written
// back when `When(s)`.
template <class Access, class Codec = Value, bool (*When)(const Scenario&) = always>
constexpr Binding bind() {
  return {.read = [](FieldReader& r, const TreeNode* map, const FieldSpec& spec, Scenario& s) {
            Codec::read(r, map, spec, Access::of(s));
          },
          .write = [](const Scenario& s, const FieldSpec& spec) -> std::optional<TreeNode> {
            if (!When(s)) return std::nullopt;
            return Codec::write(spec, Access::of(s));
          }};
}
// Written back only when not the default (not_default).
template <class Access, class Codec = Value>
constexpr Binding bind_unless_default() {
  return bind<Access, Codec, not_default<Access>>();
}
// The same binding read by a named custom reader (cross-field checks, defaults that depend on
// the file name) and written back as bound.
constexpr Binding read_by(Binding b,
                          void (*read)(FieldReader&, const TreeNode*, const FieldSpec&, Scenario&)) {
  b.read = read;
  return b;
}

}  // namespace hybridsim::scenarios
