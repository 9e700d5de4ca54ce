// The scenario's field reader: the reader every YAML file type shares (sim/yaml/field_reader.h)
// over the scenario schema, recording where each value was written into the scenario's Provenance.
// Internal to scenarios/ (used by the scenario builder).
//   FieldReader r(provenance, "s.yaml");
//   const TreeNode* c = r.section(&root, "cluster");          // unknown keys → "did you mean"
//   int nodes = static_cast<int>(r.integer(c, "cluster.nodes"));   // absent → the default, 1
#pragma once
#include <string>

#include "scenarios/loader/scenario.h"
#include "scenarios/loader/schema.h"
#include "sim/yaml/field_reader.h"
#include "sim/yaml/tree.h"

namespace hybridsim::scenarios {

using yaml::describe_node;
using yaml::fail_at;
using yaml::TreeEntry;
using yaml::TreeNode;

class FieldReader : public yaml::FieldReader {
 public:
  FieldReader(Provenance& provenance, std::string source)
      : yaml::FieldReader(scenario_schema(), &provenance.where, std::move(source)) {}
};

}  // namespace hybridsim::scenarios
