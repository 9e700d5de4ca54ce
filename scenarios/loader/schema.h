// The scenario schema: every YAML key of a scenario file declared once — its path, type, unit,
// bounds, default and help — in one table (schema_table.cpp). Validation, defaults, `--set` path
// checks, "did you mean" suggestions and the field reference (scenarios/README.md, --help-schema)
// are all derived from it.
//   const FieldSpec* f = find_field("communication.message_size");   // default_text_of(*f) == "512 KiB"
//   std::cout << schema_reference_text();
#pragma once
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace hybridsim::scenarios {

enum class FieldKind : unsigned char {
  Section,        // a mapping of declared sub-fields
  NameOrSection,  // a name (letters, digits, '-', '_') or a mapping of declared sub-fields
  List,           // a sequence; its items are declared at "<path>[]"
  Text,           // any single value
  Path,           // a file path (relative paths: see the field's help)
  Integer,        // a whole number within [min, max]
  Number,         // a decimal number within [min, max] (or > min when min_exclusive)
  Boolean,        // true or false
  Choice,         // one of `choices` (or of `dynamic_choices()`)
  Size,           // sim::parse_bytes: "512 KiB", "25 MB"
  Rate,           // sim::parse_bandwidth: "25 GB/s", "100 Gb/s"
  Duration,       // sim::parse_time: "700 ns"
  Any,            // any YAML value; checked by the code that reads it (see help)
};

struct FieldSpec {
  std::string_view path;  // "cluster.links.nvlink.bandwidth"; list items: "outputs.formats[]"
  FieldKind kind = FieldKind::Text;
  bool required = false;
  // YAML text of the value used when the field is absent (read exactly as if written); empty: no
  // default (the field is optional and its absence means what `default_doc` or the help says).
  std::string_view default_text = {};
  // Instead of default_text: the default as a lower layer declares it (sim::CollectiveConfig's
  // message size, say), so that it is written down once.
  std::string (*default_fn)() = nullptr;
  std::string_view default_doc = {};  // shown instead of the default, e.g. "the preset's"
  // Keywords accepted instead of a value of `kind` ("auto", "off"), separated by '|'.
  std::string_view words = {};
  std::string_view choices = {};  // Choice: the valid values, separated by '|'
  std::vector<std::string> (*dynamic_choices)() = nullptr;  // Choice: from a lower layer instead
  double min = 0;                 // Integer, Number, Size (bytes), Rate (B/s), Duration (ps)
  double max = 0;                 // Integer, Number; 0: unbounded
  bool min_exclusive = false;     // Number, Rate, Size: value must be > min
  std::string_view type_doc = {}; // overrides the generated type description (Any, List)
  std::string_view help = {};
};

// The YAML text of a field's default (default_fn's, else default_text; empty: none).
std::string default_text_of(const FieldSpec& spec);

// Every declared field, parents before children, in documentation order.
std::span<const FieldSpec> scenario_schema();
// The declaration of a path; list indices are ignored ("placement[2].gpu" finds "placement[].gpu").
const FieldSpec* find_field(std::string_view path);
// The same, but a missing declaration is a bug (InternalError).
const FieldSpec& field(std::string_view path);
// The declared direct children of a section ("" for the top level), in declaration order.
std::vector<const FieldSpec*> children_of(std::string_view path);
// "parallelism.placement[3].gpu" → "parallelism.placement[].gpu"
std::string spec_path_of(std::string_view path);
// The last component of a path: "cluster.links.nvlink" → "nvlink".
std::string_view leaf_name(std::string_view path);
// The valid choices of a Choice field, and the keywords of a field, in order.
std::vector<std::string> choices_of(const FieldSpec& spec);
std::vector<std::string> words_of(const FieldSpec& spec);
// What a value must look like, for error messages: "a whole number from 1 to 4096",
// "auto or a size such as \"512 KiB\"".
std::string expected_text(const FieldSpec& spec);

// Levenshtein distance, and the closest candidate when it is close enough to be a likely typo
// (distance <= max(2, length / 3)); nullopt otherwise.
std::size_t edit_distance(std::string_view a, std::string_view b);
std::optional<std::string> closest_match(std::string_view text, std::span<const std::string> candidates);

// The field reference generated from the table: a Markdown table (the block between the markers in
// scenarios/README.md) and a plain-text version for terminals (`hybridsim run --help-schema`).
std::string schema_reference_markdown();
std::string schema_reference_text();

}  // namespace hybridsim::scenarios
