#include "analysis/validate/validate_cases.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>

#include "scenarios/loader/yaml_tree.h"
#include "sim/error.h"

namespace hybridsim::analysis {
namespace {

using scenarios::TreeNode;

[[noreturn]] void fail(const TreeNode& at, const std::string& field, const std::string& what) {
  throw InputError(at.where + ": " + field + ": " + what);
}

const TreeNode& need(const TreeNode& map, std::string_view key, const std::string& field) {
  const TreeNode* v = map.find(key);
  if (v == nullptr) fail(map, field, "missing key \"" + std::string(key) + "\"");
  return *v;
}

std::string text(const TreeNode& v, const std::string& field) {
  if (!v.is_scalar()) fail(v, field, "expected a text");
  return v.scalar;
}

double number(const TreeNode& v, const std::string& field, bool percent) {
  std::string s = text(v, field);
  const bool has_percent = !s.empty() && s.back() == '%';
  if (has_percent) s.pop_back();
  double x = 0;
  const auto [end, err] = std::from_chars(s.data(), s.data() + s.size(), x);
  if (err != std::errc() || end != s.data() + s.size() || !(x >= 0) || (has_percent && !percent))
    fail(v, field, "got \"" + v.scalar + "\"; expected " +
                       (percent ? "a percentage such as 5%" : "a number >= 0"));
  if (percent && !has_percent) fail(v, field, "got \"" + v.scalar + "\"; expected a percentage such as 5%");
  return percent ? x / 100 : x;
}

template <class E>
E choice(const TreeNode& v, const std::string& field, std::initializer_list<std::pair<const char*, E>> options) {
  const std::string s = text(v, field);
  std::string list;
  for (const auto& [name, value] : options) {
    if (s == name) return value;
    list += (list.empty() ? "" : ", ") + std::string(name);
  }
  fail(v, field, "unknown value \"" + s + "\"; expected one of: " + list);
}

void check_keys(const TreeNode& map, const std::string& field, std::initializer_list<const char*> keys) {
  if (!map.is_map()) fail(map, field, "expected a mapping");
  for (const auto& e : map.entries)
    if (std::none_of(keys.begin(), keys.end(), [&](const char* k) { return e.key == k; })) {
      std::string list;
      for (const char* k : keys) list += (list.empty() ? "" : ", ") + std::string(k);
      throw InputError(e.key_where + ": " + field + ": unknown key \"" + e.key + "\"; expected one of: " + list);
    }
}

CollectiveCase read_collective(const TreeNode& v, const std::string& field) {
  check_keys(v, field, {"topology", "nodes", "gpus", "op", "size", "algorithm", "protocol"});
  CollectiveCase c;
  if (const TreeNode* t = v.find("topology")) c.topology = text(*t, field + ".topology");
  if (const TreeNode* n = v.find("nodes")) {
    const double x = number(*n, field + ".nodes", false);
    if (x < 1 || x != static_cast<int>(x)) fail(*n, field + ".nodes", "expected a whole number >= 1");
    c.nodes = static_cast<int>(x);
  }
  if (const TreeNode* g = v.find("gpus")) c.gpus = text(*g, field + ".gpus");
  if (const TreeNode* o = v.find("op")) {
    try {
      c.op = sim::parse_collective_op(text(*o, field + ".op"));
    } catch (const InputError& e) {
      fail(*o, field + ".op", e.what());
    }
  }
  const TreeNode& size = need(v, "size", field);
  try {
    c.size = sim::parse_bytes(text(size, field + ".size"));
  } catch (const InputError& e) {
    fail(size, field + ".size", e.what());
  }
  if (const TreeNode* a = v.find("algorithm")) c.algorithm = text(*a, field + ".algorithm");
  if (const TreeNode* p = v.find("protocol")) c.protocol = text(*p, field + ".protocol");
  return c;
}

ValidateCase read_case(const TreeNode& v, const std::string& field, const std::filesystem::path& folder) {
  check_keys(v, field, {"name", "kind", "scenario", "set", "collective", "metric", "published", "unit",
                        "source", "tolerance"});
  ValidateCase c;
  c.where = v.where;
  c.name = text(need(v, "name", field), field + ".name");
  c.kind = choice<CaseKind>(need(v, "kind", field), field + ".kind",
                            {{"calibration", CaseKind::Calibration}, {"model", CaseKind::Model},
                             {"prediction", CaseKind::Prediction}});
  const TreeNode* scenario = v.find("scenario");
  const TreeNode* collective = v.find("collective");
  if ((scenario == nullptr) == (collective == nullptr))
    fail(v, field, "give exactly one of scenario or collective");
  if (scenario) c.scenario = folder / text(*scenario, field + ".scenario");
  if (const TreeNode* sets = v.find("set")) {
    if (!scenario) fail(*sets, field + ".set", "applies only to a scenario");
    if (!sets->is_sequence()) fail(*sets, field + ".set", "expected a list of \"path=value\" texts");
    for (const TreeNode& s : sets->items) c.sets.push_back(text(s, field + ".set[]"));
  }
  if (collective) c.collective = read_collective(*collective, field + ".collective");
  c.metric = choice<CaseMetric>(need(v, "metric", field), field + ".metric",
                                {{"step_time", CaseMetric::StepTime}, {"throughput", CaseMetric::Throughput},
                                 {"busbw", CaseMetric::BusBandwidth}, {"time", CaseMetric::Time}});
  const bool collective_metric = c.metric == CaseMetric::BusBandwidth || c.metric == CaseMetric::Time;
  if (collective_metric != (collective != nullptr))
    fail(need(v, "metric", field), field + ".metric",
         collective ? "a collective is measured by busbw or time" : "a scenario is measured by step_time or throughput");
  c.published = number(need(v, "published", field), field + ".published", false);
  if (!(c.published > 0)) fail(need(v, "published", field), field + ".published", "expected a number > 0");
  if (const TreeNode* u = v.find("unit")) c.unit = text(*u, field + ".unit");
  c.source = text(need(v, "source", field), field + ".source");
  c.tolerance = number(need(v, "tolerance", field), field + ".tolerance", true);
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
  }
  return "?";
}

std::vector<ValidateCase> load_validate_cases(const std::filesystem::path& directory) {
  if (!std::filesystem::is_directory(directory))
    throw InputError("validate: no folder " + directory.string() + " (give one with --cases)");
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(directory))
    if (e.is_regular_file() && e.path().extension() == ".yaml") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  std::vector<ValidateCase> cases;
  for (const auto& file : files) {
    std::ifstream in(file, std::ios::binary);
    std::ostringstream buffer;
    buffer << in.rdbuf();
    if (!in) throw InputError(file.string() + ": cannot read the file");
    const TreeNode root = scenarios::parse_yaml_tree(buffer.str(), file.string());
    check_keys(root, "(top level)", {"cases"});
    const TreeNode& list = need(root, "cases", "(top level)");
    if (!list.is_sequence()) fail(list, "cases", "expected a list of cases");
    for (std::size_t i = 0; i < list.items.size(); ++i)
      cases.push_back(read_case(list.items[i], "cases[" + std::to_string(i) + "]", file.parent_path()));
  }
  if (cases.empty()) throw InputError("validate: no cases in " + directory.string());
  return cases;
}

}  // namespace hybridsim::analysis
