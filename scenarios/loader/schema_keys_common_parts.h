// What the parts of the scenario table (schema_keys_*_parts.h) share: the choice lists some keys take
// from the registries, and the bounds several keys use. schema_table.cpp assembles the table from
// the parts. Internal to scenarios/loader.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "scenarios/loader/custom_codecs.h"
#include "scenarios/loader/schema.h"
#include "scenarios/loader/shared_keys.h"
#include "sim/budget.h"
#include "sim/collective.h"
#include "sim/error.h"
#include "topology/preset_registry.h"
#include "workloads/generators/gpu_choice.h"
#include "workloads/generators/profile_gen.h"
#include "workloads/generators/transformer_model.h"
#include "workloads/program/step_program.h"

namespace hybridsim::scenarios::schema_keys {

inline std::vector<std::string> preset_choices() {
  std::vector<std::string> out;
  for (const auto name : topology::preset_names()) out.emplace_back(name);
  return out;
}

inline std::vector<std::string> network_choices() {
  std::vector<std::string> out = workloads::builtin_profile_names();
  for (auto& name : workloads::transformer_model_names()) out.push_back(std::move(name));
  out.emplace_back("transformer");
  return out;
}

using K = FieldKind;
inline constexpr double kMaxCount = 1 << 20;
// A link's latency, at most 1 s: far beyond any real link, and far inside 64-bit picoseconds even
// summed over a step's hops.
inline constexpr double kMaxLinkLatencyPs = sim::limits::kLinkLatency.value;
// GPU speeds from a thousandth to a thousand times the profiled GPU's: kernel times stay inside
// 64-bit picoseconds.
inline constexpr double kMinSpeed = 1.0 / sim::limits::kSpeed.value;
inline constexpr double kMaxSpeed = sim::limits::kSpeed.value;

}  // namespace hybridsim::scenarios::schema_keys
