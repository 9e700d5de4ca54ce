// The scenario schema: every YAML key of a scenario file declared once — its path, type, unit,
// bounds, default and help — in one table (schema_table.cpp), read with the mechanics every YAML
// file type shares (sim/yaml/schema.h), and bound there to the member of Scenario that holds it
// (key_binding.h). Validation, defaults, reading, writing back, `--set` path checks, "did you
// mean" suggestions and the field reference (scenarios/README.md, --help-schema) are all derived
// from it. The functions below are the scenario's shorthands for the table's lookups.
//   const FieldSpec* f = find_field("communication.message_size");   // default_text_of(*f) == "512 KiB"
//   std::cout << schema_reference_text();
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "sim/yaml/schema.h"

namespace hybridsim::scenarios {

using yaml::choices_of;
using yaml::closest_match;
using yaml::default_text_of;
using yaml::FieldKind;
using yaml::FieldSpec;
using yaml::words_of;

// Every declared field, parents before children, in documentation order.
const yaml::Schema& scenario_schema();

// The declaration of a path; list indices are ignored ("placement[2].gpu" finds "placement[].gpu").
inline const FieldSpec* find_field(std::string_view path) { return scenario_schema().find(path); }
// The same, but a missing declaration is a bug (InternalError).
inline const FieldSpec& field(std::string_view path) { return scenario_schema().field(path); }
// What a value must look like, for error messages: "a whole number from 1 to 4096".
inline std::string expected_text(const FieldSpec& spec) { return scenario_schema().expected_text(spec); }

// The field reference generated from the table: a Markdown table (the block between the markers in
// scenarios/README.md) and a plain-text version for terminals (`hybridsim run --help-schema`).
inline std::string schema_reference_markdown() { return scenario_schema().reference_markdown(); }
inline std::string schema_reference_text() { return scenario_schema().reference_text(); }

}  // namespace hybridsim::scenarios
