// The one declaration of every scenario key (those studies and validation cases share too come from
// shared_keys.h, declared there once), each bound to the member of Scenario that holds it
// (key_binding.h): reading, writing back and describing are loops over this table. Order matters: it
// is the order of the field reference, of "expected one of" lists, of reading (a key's checks may use
// the keys before it) and of scenario_to_yaml's output. Parents come before their children.
// The table is assembled here from its parts, in this order (schema_keys_*_parts.h, one or a few sections
// each: files of their own only to keep each a readable size).
#include <array>
#include <cstddef>
#include <functional>
#include <string>

#include "scenarios/loader/schema_keys_cluster_parts.h"
#include "scenarios/loader/schema_keys_communication_parts.h"
#include "scenarios/loader/schema_keys_parallelism_parts.h"
#include "scenarios/loader/schema_keys_run_parts.h"
#include "scenarios/loader/schema_keys_workload_parts.h"
#include "sim/error.h"

namespace hybridsim::scenarios {
namespace {

// The parts one after the other, as one array (constexpr, so that the schema below is one too).
template <std::size_t... N>
constexpr auto joined(const ScenarioKey (&... parts)[N]) {
  std::array<ScenarioKey, (N + ...)> out{};
  std::size_t i = 0;
  const auto append = [&](const auto& part) {
    for (const ScenarioKey& k : part) out[i++] = k;
  };
  (append(parts), ...);
  return out;
}

constexpr auto kKeys = joined(schema_keys::kCluster, schema_keys::kWorkload, schema_keys::kParallelism,
                              schema_keys::kCommunication, schema_keys::kRun);

// The declarations alone, for the mechanics every file type shares (sim/yaml/schema.h).
constexpr auto kSpecs = [] {
  std::array<FieldSpec, std::size(kKeys)> specs{};
  for (std::size_t i = 0; i < specs.size(); ++i) specs[i] = kKeys[i].spec;
  return specs;
}();

constexpr yaml::Schema kScenarioSchema{"scenario", kSpecs};

}  // namespace

const yaml::Schema& scenario_schema() { return kScenarioSchema; }

std::span<const ScenarioKey> scenario_keys() { return kKeys; }

std::size_t key_index(const FieldSpec& spec) {
  const FieldSpec* first = kSpecs.data();
  const std::less<const FieldSpec*> before;  // a total order, also for a FieldSpec of another table
  if (before(&spec, first) || !before(&spec, first + kSpecs.size()))
    throw InternalError("key_index: " + std::string(spec.path) + " is not a field of the scenario table");
  return static_cast<std::size_t>(&spec - first);
}

}  // namespace hybridsim::scenarios
