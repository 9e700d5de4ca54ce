// The named codecs of the training, outputs and sweep keys (custom_codecs.h): the efficiency
// curve's three forms, output formats, the optional trace and sweep sections, and the checks of a
// sweep's parameters.
#include <algorithm>
#include <map>
#include <string_view>

#include "scenarios/loader/custom_codecs.h"
#include "scenarios/loader/efficiency_points.h"
#include "scenarios/loader/scenario_build.h"
#include "sim/error.h"
#include "sim/time_window.h"
#include "topology/gpu_list.h"

namespace hybridsim::scenarios {
namespace {

bool is_name(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

std::string stem_or(const std::string& source, std::string fallback) {
  const std::string stem = std::filesystem::path(source).stem().string();
  const bool ok = !stem.empty() && std::all_of(stem.begin(), stem.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.';
  });
  return ok ? stem : fallback;
}

// The parametric form {e_min, b_noise} or the measured {table}, never both.
void read_curve_form(FieldReader& r, const TreeNode& e, const std::string& path, EfficiencySettings& out) {
  const auto e_min = r.number_opt(&e, path + ".e_min");
  const auto b_noise = r.number_opt(&e, path + ".b_noise");
  if (const TreeNode* table = r.written(&e, path + ".table")) {
    for (const auto key : {"e_min", "b_noise"})
      if (const TreeNode* n = r.written(&e, path + "." + key))
        fail_at(n->where, path + "." + key, "cannot be combined with table",
                "either table or e_min and b_noise");
    out.kind = EfficiencySettings::Kind::Table;
    out.table = read_efficiency_points(r, *table, path + ".table");
    return;
  }
  for (const auto key : {"e_min", "b_noise"})
    if (r.written(&e, path + "." + key) == nullptr)
      fail_at(e.where, path + "." + key,
              "missing required field (the parametric form needs e_min and b_noise)",
              expected_text(field(path + "." + key)) + ", or give table instead");
  out.kind = EfficiencySettings::Kind::Parametric;
  out.e_min = *e_min;
  out.b_noise = *b_noise;
}

// One sweep parameter's path: settable, outside sweep, overlapping no earlier parameter's.
void check_sweep_path(const SweepSettings& sweep, const std::string& path, const std::string& where,
                      const std::string& ip) {
  if (const std::string problem = settable_path_problem(path); !problem.empty())
    fail_at(where, ip + ".path", problem, "a field path as for --set, e.g. cluster.nodes");
  if (path == "sweep" || path.starts_with("sweep."))
    fail_at(where, ip + ".path", "a sweep cannot vary its own settings", "a field outside sweep");
  // A sweep writes one results folder for all its points: a point's own name, directory or formats
  // are never used, and every point would be the same ("outputs" whole holds the last two).
  if (path == "name" || path == "outputs" || path == "outputs.directory" || path == "outputs.formats")
    fail_at(where, ip + ".path",
            "'" + path +
                "' is not used by a sweep's points (the sweep writes results.csv, summary.json "
                "and a plot for all of them, into --out or the scenario's outputs.directory; a "
                "point is named by its label)",
            "a field that changes the simulation, or outputs.trace.*");
  // The caps and the model's threads change no result, only whether it may run: every point the same.
  if (path == "simulation" || path.starts_with("simulation."))
    fail_at(where, ip + ".path",
            "'" + path +
                "' changes no point's result (caps on the work, and threads that give the same step "
                "whatever their number): every point would be the same; set it once for the sweep "
                "(--max-events, --max-sim-memory, --model-threads)",
            "a field that changes the simulation, or outputs.trace.*");
  for (std::size_t j = 0; j < sweep.parameters.size(); ++j) {
    const std::string& q = sweep.parameters[j].path;
    if (path == q || path.starts_with(q + ".") || q.starts_with(path + "."))
      fail_at(where, ip + ".path",
              "'" + path + "' overlaps sweep.parameters[" + std::to_string(j) + "].path '" + q + "'",
              "each field varied by one parameter only");
  }
}

}  // namespace

void EfficiencyCodec::read(FieldReader& r, const TreeNode* map, const FieldSpec& spec,
                           EfficiencySettings& out) {
  const std::string path(spec.path);
  const TreeNode& e = *r.value(map, path);
  if (e.is_scalar()) {
    if (!is_name(e.scalar)) fail_at(e.where, path, "got " + describe_node(e), expected_text(field(path)));
    out.kind = EfficiencySettings::Kind::Named;
    out.variant = e.scalar;
    return;
  }
  if (!e.is_map()) fail_at(e.where, path, "got " + describe_node(e), expected_text(field(path)));
  r.check_section(e, path);
  out.variant.clear();
  read_curve_form(r, e, path, out);
  out.min_batch = r.integer_opt(&e, path + ".min_batch");
  out.max_batch = r.integer_opt(&e, path + ".max_batch");
  if (out.min_batch && out.max_batch && *out.min_batch > *out.max_batch)
    fail_at(e.find("max_batch")->where, path + ".max_batch",
            "max_batch " + std::to_string(*out.max_batch) + " is below min_batch " +
                std::to_string(*out.min_batch),
            "max_batch >= min_batch");
  // A table's range defaults to its first and last batch: one bound written past the other default
  // would leave no supported batch at all.
  if (out.kind != EfficiencySettings::Kind::Table || (out.min_batch && out.max_batch)) return;
  const std::int64_t first = out.table.front().first, last = out.table.back().first;
  if (out.min_batch && *out.min_batch > last)
    fail_at(e.find("min_batch")->where, path + ".min_batch",
            "min_batch " + std::to_string(*out.min_batch) + " is above the table's last batch " +
                std::to_string(last) + " (max_batch's default)",
            "min_batch <= " + std::to_string(last) + ", or max_batch written too");
  if (out.max_batch && *out.max_batch < first)
    fail_at(e.find("max_batch")->where, path + ".max_batch",
            "max_batch " + std::to_string(*out.max_batch) + " is below the table's first batch " +
                std::to_string(first) + " (min_batch's default)",
            "max_batch >= " + std::to_string(first) + ", or min_batch written too");
}

std::optional<TreeNode> EfficiencyCodec::write(const FieldSpec&, const EfficiencySettings& e) {
  if (e.kind == EfficiencySettings::Kind::Named) return scalar(e.variant);
  std::vector<std::pair<std::string, TreeNode>> fields;
  if (e.kind == EfficiencySettings::Kind::Parametric) {
    fields.emplace_back("e_min", scalar(number_text(e.e_min)));
    fields.emplace_back("b_noise", scalar(number_text(e.b_noise)));
  } else {
    std::vector<TreeNode> points;
    for (const auto& [batch, epochs] : e.table)
      points.push_back(sequence({scalar(std::to_string(batch)), scalar(number_text(epochs))}));
    fields.emplace_back("table", sequence(std::move(points)));
  }
  if (e.min_batch) fields.emplace_back("min_batch", scalar(std::to_string(*e.min_batch)));
  if (e.max_batch) fields.emplace_back("max_batch", scalar(std::to_string(*e.max_batch)));
  return map_of(std::move(fields));
}

void read_output_directory(FieldReader& r, const TreeNode* map, const FieldSpec& spec, Scenario& s) {
  s.outputs.directory = r.text_opt(map, spec.path).value_or("out/" + stem_or(s.source, "scenario"));
}

void FormatsCodec::read(FieldReader& r, const TreeNode* map, const FieldSpec& spec,
                        std::vector<OutputFormat>& out) {
  const std::string fp(spec.path);
  const TreeNode& formats = r.to_list(*r.value(map, fp), fp, 1);
  out.clear();
  for (std::size_t i = 0; i < formats.items.size(); ++i) {
    const std::string ip = fp + "[" + std::to_string(i) + "]";
    const std::string name = r.to_choice(formats.items[i], ip);
    const OutputFormat f = name == "json"  ? OutputFormat::Json
                           : name == "csv" ? OutputFormat::Csv
                                           : OutputFormat::Table;
    if (std::find(out.begin(), out.end(), f) != out.end())
      fail_at(formats.items[i].where, ip, "format " + name + " is listed twice", "each format once");
    out.push_back(f);
  }
}

std::optional<TreeNode> FormatsCodec::write(const FieldSpec&, const std::vector<OutputFormat>& v) {
  std::vector<TreeNode> formats;
  for (const auto f : v) formats.push_back(scalar(std::string(output_format_name(f))));
  return sequence(std::move(formats));
}

void read_trace_section(FieldReader& r, const TreeNode* map, const FieldSpec& spec, Scenario& s) {
  const TreeNode* t = r.section(map, spec.path);
  if (t == nullptr) return;
  s.outputs.trace.emplace();
  read_section(r, t, &spec, s);
}

void GpuListCodec::read(FieldReader& r, const TreeNode* map, const FieldSpec& spec, TraceGpus& out) {
  if (const TreeNode* node = map == nullptr ? nullptr : map->find("gpus"))
    out.all = r.word(*node, spec.path) == "all";
  const auto gpus = r.text_opt(map, spec.path);
  if (!gpus) return;
  out.list = topology::try_parse_gpu_list(*gpus);
  if (out.list) return;
  const auto problem = topology::gpu_list_problem(*gpus);
  fail_at(map->find("gpus")->where, spec.path,
          "got \"" + *gpus + "\"" + (problem ? " (" + problem->why + ")" : ""),
          problem && !problem->expected.empty() ? problem->expected : expected_text(spec));
}

std::optional<TreeNode> GpuListCodec::write(const FieldSpec&, const TraceGpus& v) {
  if (v.all) return scalar("all");
  return scalar(v.list ? topology::format_gpu_list(*v.list) : "classes");
}

void ReductionBandwidthCodec::read(FieldReader& r, const TreeNode* map, const FieldSpec& spec,
                                   std::optional<sim::Bandwidth>& out) {
  const TreeNode* node = r.written(map, spec.path);  // left out: auto, the member's nullopt
  if (node == nullptr) return;
  const std::string word = r.word(*node, spec.path);
  if (word == "auto")
    out = std::nullopt;
  else if (word == "off")
    out = sim::Bandwidth();
  else
    out = r.rate(map, spec.path);
}

std::optional<TreeNode> ReductionBandwidthCodec::write(const FieldSpec&,
                                                       const std::optional<sim::Bandwidth>& v) {
  if (!v) return scalar("auto");
  return scalar(v->bytes_per_second() == 0 ? "off" : sim::format_bandwidth(*v));
}

void TraceStepCodec::read(FieldReader& r, const TreeNode* map, const FieldSpec& spec, int& out) {
  const TreeNode* node = r.written(map, spec.path);  // `trace_step:` with no value: left out, as any key
  if (node == nullptr) return;
  const std::string word = r.word(*node, spec.path);
  if (word == "slowest") out = kSlowestTraceStep;
  else if (word == "first") out = 1;
  else out = static_cast<int>(r.integer(map, spec.path));
}

std::optional<TreeNode> TraceStepCodec::write(const FieldSpec&, int v) {
  return scalar(v == kSlowestTraceStep ? "slowest" : v == 1 ? "first" : std::to_string(v));
}

void WindowCodec::read(FieldReader& r, const TreeNode* map, const FieldSpec& spec,
                       std::optional<sim::TimeWindow>& out) {
  const auto window = r.text_opt(map, spec.path);
  if (!window) return;
  out = sim::try_parse_time_window(*window);
  if (out) return;
  const std::string side = sim::time_window_problem(*window);
  fail_at(map->find("window")->where, spec.path,
          "got \"" + *window + "\"" + (side.empty() ? "" : " (" + side + ")"),
          expected_text(spec) + " with 0 <= START < END");
}

std::optional<TreeNode> WindowCodec::write(const FieldSpec&, const std::optional<sim::TimeWindow>& v) {
  return scalar(v ? sim::format_time_window(*v) : "all");
}

// A value listed twice would simulate the same point twice (product mode), and print two rows
// that differ in nothing but their index: refused at the repeat.
void refuse_repeated_value(const TreeNode& values, const std::vector<std::string>& texts,
                           const std::string& path) {
  std::map<std::string_view, std::size_t> first;
  for (std::size_t j = 0; j < texts.size(); ++j)
    if (const auto [at, added] = first.emplace(texts[j], j); !added)
      fail_at(values.items[j].where, path + "[" + std::to_string(j) + "]",
              "repeats " + path + "[" + std::to_string(at->second) + "] (" + texts[j] +
                  "): the sweep would simulate the same point twice",
              "each value once");
}

// Zip mode: point i is the i-th value of every parameter; two equal points are refused likewise.
void refuse_repeated_tuple(const TreeNode& params, const SweepSettings& sweep, const std::string& path) {
  const std::size_t n = sweep.parameters.empty() ? 0 : sweep.parameters[0].values.size();
  std::map<std::vector<std::string_view>, std::size_t> first;
  for (std::size_t j = 0; j < n; ++j) {
    std::vector<std::string_view> point;
    for (const SweepParameter& p : sweep.parameters) point.emplace_back(p.values[j]);
    if (const auto [at, added] = first.emplace(std::move(point), j); !added) {
      const std::string vp = path + "[0].values";
      fail_at(params.items[0].find("values")->items[j].where, vp + "[" + std::to_string(j) + "]",
              "zip point " + std::to_string(j) + " repeats point " + std::to_string(at->second) +
                  " in every parameter: the sweep would simulate the same point twice",
              "each point once");
    }
  }
}

void read_sweep_parameters(FieldReader& r, const TreeNode* map, const FieldSpec& spec, Scenario& s) {
  SweepSettings& out = s.sweep;
  const std::string pp(spec.path);
  const TreeNode& params = r.to_list(*r.written(map, pp), pp, 1);
  double points = 1;
  for (std::size_t i = 0; i < params.items.size(); ++i) {
    const TreeNode& item = params.items[i];
    const std::string ip = pp + "[" + std::to_string(i) + "]";
    r.check_section(item, ip);
    SweepParameter p;
    p.path = *r.text_opt(&item, ip + ".path");
    check_sweep_path(out, p.path, item.find("path")->where, ip);
    const std::string vp = ip + ".values";
    const TreeNode& values = r.to_list(*r.written(&item, vp), vp, 1);
    for (const auto& v : values.items) p.values.push_back(yaml::tree_to_yaml(v, true));
    if (out.mode == SweepSettings::Mode::Product) refuse_repeated_value(values, p.values, vp);
    if (out.mode == SweepSettings::Mode::Zip && !out.parameters.empty() &&
        p.values.size() != out.parameters[0].values.size())
      fail_at(values.where, vp,
              "zip mode needs equal lengths, but this parameter has " + std::to_string(p.values.size()) +
                  " values and sweep.parameters[0] has " + std::to_string(out.parameters[0].values.size()),
              "the same number of values for every parameter (or mode: product)");
    points *= static_cast<double>(p.values.size());
    if (out.mode == SweepSettings::Mode::Product && points > 1e6)
      fail_at(values.where, vp, "the product has more than 1,000,000 points", "a smaller sweep");
    out.parameters.push_back(std::move(p));
  }
  if (out.mode == SweepSettings::Mode::Zip) refuse_repeated_tuple(params, out, pp);
}

std::optional<TreeNode> write_sweep_parameters(const Scenario& s, const FieldSpec&) {
  if (s.sweep.parameters.empty()) return std::nullopt;
  std::vector<TreeNode> params;
  for (const auto& p : s.sweep.parameters) {
    std::vector<TreeNode> values;
    for (const auto& v : p.values) values.push_back(yaml::parse_yaml_tree_at(v, {}));
    params.push_back(map_of({{"path", scalar(p.path)}, {"values", sequence(std::move(values))}}));
  }
  return sequence(std::move(params));
}

}  // namespace hybridsim::scenarios
