// Declared keys of a YAML file type: every key declared once — its path, kind, unit, bounds,
// default and help — in one table per file type (a Schema over a span of FieldSpec). Validation,
// defaults, "did you mean" suggestions, the texts of "expected ..." and the field reference in the
// file type's README are all derived from it. The tables: scenarios/loader/schema_table.cpp,
// topology/yaml_schema.cpp, workloads/profile/profile_schema.cpp, analysis/study/study_schema.cpp.
//   constexpr FieldSpec kFields[] = {{.path = "nodes", .kind = FieldKind::Integer, .default_text = "1",
//                                     .min = 1, .max = 4096, .help = "Machines."}};
//   constexpr Schema kSchema{"example", kFields};
//   kSchema.expected_text(kSchema.field("nodes")) == "a whole number from 1 to 4096"
#pragma once
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace hybridsim::yaml {

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

// A required list's declaration (its items are declared beside it, "path[]").
constexpr FieldSpec required_list(std::string_view path, std::string_view type_doc, std::string_view help) {
  return {.path = path, .kind = FieldKind::List, .required = true, .type_doc = type_doc, .help = help};
}

// The YAML text of a field's default (default_fn's, else default_text; empty: none).
std::string default_text_of(const FieldSpec& spec);

// One file type's table: its fields, parents before children, in documentation order (the order
// of the reference and of "expected one of" lists). `name` ("scenario", "topology") appears in
// messages about undeclared paths, which are bugs.
class Schema {
 public:
  constexpr Schema(std::string_view name, std::span<const FieldSpec> fields) : name_(name), fields_(fields) {}

  std::string_view name() const { return name_; }
  std::span<const FieldSpec> fields() const { return fields_; }
  auto begin() const { return fields_.begin(); }
  auto end() const { return fields_.end(); }

  // The declaration of a path; list indices are ignored ("placement[2].gpu" finds "placement[].gpu").
  const FieldSpec* find(std::string_view path) const;
  // The same, but a missing declaration is a bug (InternalError).
  const FieldSpec& field(std::string_view path) const;
  // The declared direct children of a section ("" for the top level), in declaration order.
  std::vector<const FieldSpec*> children_of(std::string_view path) const;
  // What a value must look like, for error messages: "a whole number from 1 to 4096",
  // "auto or a size such as \"512 KiB\"", "a mapping with fields a, b".
  std::string expected_text(const FieldSpec& spec) const;
  // "a mapping with fields ..." for a section path ("" for the top level).
  std::string expected_section_text(std::string_view path) const;

  // The field reference: a Markdown table (the block between the markers in the file type's
  // README) and a plain-text version for terminals.
  std::string reference_markdown() const;
  std::string reference_text() const;

 private:
  std::string value_text(const FieldSpec& spec) const;

  std::string_view name_;
  std::span<const FieldSpec> fields_;
};

// "parallelism.placement[3].gpu" → "parallelism.placement[].gpu"
std::string spec_path_of(std::string_view path);
// The last component of a path: "cluster.links.nvlink" → "nvlink".
std::string_view leaf_name(std::string_view path);
// The valid choices of a Choice field, and the keywords of a field, in order.
std::vector<std::string> choices_of(const FieldSpec& spec);
std::vector<std::string> words_of(const FieldSpec& spec);

// Levenshtein distance, and the closest candidate when it is close enough to be a likely typo
// (distance <= max(2, length / 3)); nullopt otherwise.
std::size_t edit_distance(std::string_view a, std::string_view b);
std::optional<std::string> closest_match(std::string_view text, std::span<const std::string> candidates);
// The likeliest meant of dotted `candidates` for an unknown dotted `path`: a spelling one edit away,
// else the field of the same name in another section ("simulation.seed" → "variability.seed"), else a
// close spelling (never the path's own parent: "simulation" for "simulation.seed" says nothing), else
// one in the same section whose name starts with the path's ("workload.batch" →
// "workload.batch_per_worker"); nullopt when none is.
std::optional<std::string> closest_path(std::string_view path, std::span<const std::string> candidates);
// " (did you mean 'x'?)" for the closest candidate, or "".
std::string did_you_mean(std::string_view text, std::span<const std::string> candidates);

}  // namespace hybridsim::yaml
