// The reader of validation case files: the shared located YAML reader (sim/yaml/) with the
// schema table below, so a case file follows the rules of every other input (repeated keys,
// unknown fields with "did you mean", file:line:col on every error).
#include "analysis/validate/validate_cases.h"

#include <algorithm>

#include "analysis/collective/collective_sweep.h"
#include "scenarios/loader/override_origin.h"
#include "scenarios/loader/scenario.h"
#include "scenarios/loader/shared_keys.h"
#include "sim/error.h"
#include "sim/limits.h"
#include "sim/text.h"
#include "sim/yaml/field_reader.h"
#include "sim/yaml/input_file.h"
#include "sim/yaml/schema.h"
#include "sim/yaml/tree.h"
#include "topology/gpu_list.h"

namespace hybridsim::analysis {
namespace {

using yaml::fail_at;
using yaml::FieldReader;
using yaml::TreeNode;
using K = yaml::FieldKind;

constexpr yaml::FieldSpec kFields[] = {
    {.path = "cases",
     .kind = K::List,
     .required = true,
     .type_doc = "a list of cases",
     .help = "The reference cases of this file."},
    {.path = "cases[]", .kind = K::Section, .help = "One case: what to simulate and the figure to meet."},
    {.path = "cases[].name",
     .kind = K::Text,
     .required = true,
     .help = "What the case checks, for the table."},
    {.path = "cases[].kind",
     .kind = K::Choice,
     .required = true,
     .choices = "calibration|model|prediction",
     .help = "calibration: a one-GPU figure the profiles were fitted to; model: NCCL's own cost model; "
             "prediction: a measurement nothing was fitted to."},
    {.path = "cases[].scenario",
     .kind = K::Path,
     .help = "A scenario file, relative to the case file. Give either scenario or collective."},
    {.path = "cases[].set",
     .kind = K::List,
     .default_text = "[]",
     .type_doc = "a list of \"path=value\" texts",
     .help = "--set overrides of the scenario."},
    {.path = "cases[].set[]", .kind = K::Text, .help = "One override."},
    {.path = "cases[].collective",
     .kind = K::Section,
     .help = "One collective, as `hybridsim collective` runs it."},
    {.path = "cases[].collective.topology",
     .kind = K::Text,
     .default_text = "dgx1-v100",
     .help = "A preset (or a topology file)."},
    {.path = "cases[].collective.nodes",
     .kind = K::Integer,
     .default_text = "1",
     .min = 1,
     .max = static_cast<double>(sim::limits::kMachines.value),
     .help = "Machines."},
    {.path = "cases[].collective.gpus",
     .kind = K::Text,
     .default_doc = "all",
     .help = "GPU ranks and ranges, e.g. \"0,3\" or \"0-3\"."},
    {.path = "cases[].collective.op",
     .kind = K::Choice,
     .default_text = "allreduce",
     .choices = "allreduce|reducescatter|allgather|broadcast",
     .help = "The collective."},
    {.path = "cases[].collective.size",
     .kind = K::Size,
     .required = true,
     .min = 4,
     .help = "One rank's buffer, as nccl-tests counts it."},
    scenarios::shared_keys::at(scenarios::shared_keys::kAlgorithm, "cases[].collective.algorithm"),
    {.path = "cases[].collective.protocol",
     .kind = K::Choice,
     .default_text = "auto",
     .choices = "auto|ll|ll128|simple|ideal",
     .help = "As `collective --protocol`."},
    {.path = "cases[].metric",
     .kind = K::Choice,
     .required = true,
     .choices = "step_time|throughput|iteration_rate|busbw|time",
     .help = "step_time (ms), throughput (the profile's units per second: units / time) or "
             "iteration_rate (units per second as NVIDIA's GNMT meter reports them: the mean of "
             "per-iteration rates) of a scenario; busbw (GB/s) or time (us) of a collective."},
    {.path = "cases[].published",
     .kind = K::Number,
     .required = true,
     .min = 0,
     .min_exclusive = true,
     .help = "The published figure, in the metric's unit."},
    {.path = "cases[].unit",
     .kind = K::Text,
     .help = "The figure's unit, for the CSV; if written, the metric's: ms (step_time), the profile's "
             "units per second (throughput, iteration_rate: \"tokens/s\"), GB/s (busbw), us (time)."},
    {.path = "cases[].source", .kind = K::Text, .required = true, .help = "Where the figure comes from."},
    {.path = "cases[].tolerance",
     .kind = K::Text,
     .required = true,
     .type_doc = "a percentage such as 10%",
     .help = "The largest |simulated − published| / published the case accepts."},
};

constexpr yaml::Schema kSchema{"validation case", kFields};

double read_tolerance(const FieldReader& r, const TreeNode& node, const std::string& path) {
  std::string text = r.to_text(node, path);
  const bool percent = text.ends_with('%');
  if (percent) text.pop_back();
  const auto x = percent ? sim::parse_whole<int>(sim::trim(text)) : std::nullopt;
  if (!x || *x < 0 || *x > 1000)
    fail_at(node.where, path, "got \"" + node.scalar + "\"", "a percentage such as 10%");
  return *x / 100.0;
}

CollectiveCase read_collective(FieldReader& r, const TreeNode& v, const std::string& path) {
  CollectiveCase c;
  c.topology = r.text(&v, path + ".topology");
  c.nodes = static_cast<int>(r.integer(&v, path + ".nodes"));
  c.gpus = r.text_opt(&v, path + ".gpus").value_or("");
  c.op = sim::parse_collective_op(r.choice(&v, path + ".op"));
  c.size = r.size(&v, path + ".size");
  // The collective command's limits and rules (collective_sweep.h), so validate simulates nothing it
  // refuses: a size of 6 B and a list of one GPU (busbw 0, "ok" within 100%, exit 0) ran here.
  if (c.size > kMaxCollectiveBytes)
    fail_at(v.find("size")->where, path + ".size",
            "got " + sim::format_bytes(c.size) + " per rank, more than any GPU holds",
            "at most " + sim::format_bytes(kMaxCollectiveBytes));
  if (const std::string why = not_whole_floats(c.size); !why.empty())
    fail_at(v.find("size")->where, path + ".size", sim::format_bytes(c.size) + why, "");
  if (!c.gpus.empty()) {
    // A list that does not parse is refused as the case runs, naming the list (case_gpus).
    std::size_t listed = 2;
    try {
      listed = topology::parse_gpu_list(c.gpus).size();
    } catch (const InputError&) {
    }
    if (const std::string why = too_few_gpus(listed, true, {.gpus = path + ".gpus", .separator = ": "});
        !why.empty())
      fail_at(v.find("gpus")->where, path + ".gpus", "\"" + c.gpus + "\" is " + why, "");
  }
  c.algorithm = r.choice(&v, path + ".algorithm");
  c.protocol = r.choice(&v, path + ".protocol");
  c.path = path;
  if (const TreeNode* a = v.find("algorithm")) c.algorithm_where = a->where;
  if (const TreeNode* p = v.find("protocol")) c.protocol_where = p->where;
  return c;
}

ValidateCase read_case(FieldReader& r, const TreeNode& v, const std::string& path,
                       const std::filesystem::path& folder) {
  r.check_section(v, path);
  ValidateCase c;
  c.where = v.where;
  c.name = r.text(&v, path + ".name");
  const std::string kind = r.choice(&v, path + ".kind");
  c.kind = kind == "calibration" ? CaseKind::Calibration
           : kind == "model"     ? CaseKind::Model
                                 : CaseKind::Prediction;
  const auto scenario = r.text_opt(&v, path + ".scenario");
  const TreeNode* collective = r.section(&v, path + ".collective");
  if (scenario.has_value() == (collective != nullptr))
    fail_at(v.where, path,
            scenario ? "both scenario and collective given" : "neither scenario nor collective given",
            "exactly one of scenario or collective");
  if (scenario) c.scenario = folder / *scenario;
  const TreeNode& sets = r.to_list(*r.value(&v, path + ".set"), path + ".set", 0);
  if (!sets.items.empty() && !scenario)
    fail_at(sets.where, path + ".set", "given for a collective", "--set overrides only with a scenario");
  for (std::size_t i = 0; i < sets.items.size(); ++i) {
    const std::string item = path + ".set[" + std::to_string(i) + "]";
    c.sets.push_back(r.to_text(sets.items[i], item));
    // A field whose earlier value would not count (as --set on the command line, the same rule).
    for (std::size_t j = 0; j < i; ++j)
      if (const auto lost = scenarios::lost_override(c.sets[j], c.sets[i])) {
        const std::string first = "set[" + std::to_string(j) + "]";
        if (!lost->replaced)
          fail_at(sets.items[i].where, item, "sets " + lost->field + " again (first in " + first + ")",
                  "each field set once");
        fail_at(sets.items[i].where, item,
                "replaces the whole of " + scenarios::override_path(c.sets[i]) +
                    ", so " + lost->field + " in " + first + " would never count",
                lost->field + " inside this value, or set after it");
      }
  }
  if (collective) c.collective = read_collective(r, *collective, path + ".collective");
  const std::string metric = r.choice(&v, path + ".metric");
  c.metric = metric == "step_time" ? CaseMetric::StepTime
             : metric == "throughput" ? CaseMetric::Throughput
             : metric == "iteration_rate" ? CaseMetric::IterationRate
             : metric == "busbw" ? CaseMetric::BusBandwidth
                                 : CaseMetric::Time;
  const bool collective_metric = c.metric == CaseMetric::BusBandwidth || c.metric == CaseMetric::Time;
  if (collective_metric != (collective != nullptr))
    fail_at(v.find("metric")->where, path + ".metric", "got \"" + metric + "\"",
            collective ? "busbw or time for a collective"
                       : "step_time, throughput or iteration_rate for a scenario");
  c.published = r.number(&v, path + ".published");
  c.unit = r.text_opt(&v, path + ".unit").value_or("");
  if (const TreeNode* u = v.find("unit")) c.unit_where = u->where;
  c.unit_field = path + ".unit";
  // The published figure is compared in the metric's unit: "unit: s" on a step_time of 0.306
  // failed by +99,848%, and "unit: us" on a busbw passed, its CSV row saying us beside GB/s.
  const std::string_view fixed = c.metric == CaseMetric::StepTime       ? "ms"
                                 : c.metric == CaseMetric::BusBandwidth ? "GB/s"
                                 : c.metric == CaseMetric::Time         ? "us"
                                                                        : "";
  if (!c.unit.empty() && !fixed.empty() && c.unit != fixed && !(fixed == "us" && c.unit == "µs"))
    fail_at(c.unit_where, path + ".unit",
            "got \"" + c.unit + "\", but " + metric + " is compared in " + std::string(fixed) +
                " (published is read in it)",
            std::string(fixed) + (fixed == "us" ? " (or µs)" : "") + ", with published in " +
                std::string(fixed) + ", or the unit left out");
  if (!c.unit.empty() && fixed.empty() && !c.unit.ends_with("/s"))
    fail_at(c.unit_where, path + ".unit",
            "got \"" + c.unit + "\", but " + metric + " is a rate of the profile's units per second",
            "the profile's throughput unit per second, such as tokens/s or images/s, or the unit left out");
  c.source = r.text(&v, path + ".source");
  c.tolerance = read_tolerance(r, *v.find("tolerance"), path + ".tolerance");
  return c;
}

}  // namespace

std::string_view case_kind_name(CaseKind k) {
  switch (k) {
    case CaseKind::Calibration: return "calibration";
    case CaseKind::Model: return "model";
    case CaseKind::Prediction: return "prediction";
  }
  return "?";
}

std::string_view case_metric_name(CaseMetric m) {
  switch (m) {
    case CaseMetric::StepTime: return "step_time";
    case CaseMetric::Throughput: return "throughput";
    case CaseMetric::BusBandwidth: return "busbw";
    case CaseMetric::Time: return "time";
    case CaseMetric::IterationRate: return "iteration_rate";
  }
  return "?";
}

std::vector<ValidateCase> parse_validate_cases(std::string_view text, const std::string& source,
                                               const std::filesystem::path& folder) {
  const TreeNode root = yaml::parse_yaml_tree(text, source);
  FieldReader r(kSchema, nullptr, source);
  const TreeNode& doc = r.document(root);
  const TreeNode& list = r.to_list(r.required(doc, "cases"), "cases", 1);
  std::vector<ValidateCase> cases;
  for (std::size_t i = 0; i < list.items.size(); ++i)
    cases.push_back(read_case(r, list.items[i], "cases[" + std::to_string(i) + "]", folder));
  return cases;
}

std::vector<ValidateCase> load_validate_cases(const std::filesystem::path& directory) {
  // One case file runs alone ("--cases calibration.yaml" said "no folder calibration.yaml").
  std::vector<std::filesystem::path> files;
  if (std::filesystem::is_directory(directory)) {
    for (const auto& e : std::filesystem::directory_iterator(directory))
      if (e.is_regular_file() && e.path().extension() == ".yaml") files.push_back(e.path());
    std::sort(files.begin(), files.end());
  } else if (std::filesystem::exists(directory)) {
    files.push_back(directory);
  } else {
    throw InputError("--cases " + directory.string() +
                     ": no such folder or file; expected a folder of case files (such as scenarios/validate) "
                     "or one case file");
  }
  std::vector<ValidateCase> cases;
  for (const auto& file : files)
    for (auto& c : parse_validate_cases(yaml::read_input_file(file.string(), "validation case file"),
                                        file.string(), file.parent_path()))
      cases.push_back(std::move(c));
  if (cases.empty())
    throw InputError("--cases " + directory.string() +
                     ": no .yaml case files in the folder; expected a folder of " +
                     "case files (such as scenarios/validate) or one case file");
  // A case is known by its name in the table and the sources: two of one name could not be told apart.
  for (std::size_t i = 0; i < cases.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (cases[j].name == cases[i].name)
        throw InputError(cases[i].where + ": case \"" + cases[i].name + "\": named as the case at " +
                         cases[j].where + "; expected each case named once");
  return cases;
}

}  // namespace hybridsim::analysis
