#include "analysis/run/run_outputs.h"

#include "analysis/output/atomic_file.h"
#include "analysis/output/csv.h"
#include "analysis/output/format_fixed.h"
#include "analysis/output/text_table.h"
#include "analysis/step/memory_report.h"
#include "analysis/step/step_report.h"
#include "scenarios/loader/override_origin.h"
#include "sim/text.h"

namespace hybridsim::analysis {

namespace {

// The scenario's name, followed by what the overrides changed in what it simulates: a 16,384-GPU
// run of cluster-hybrid-vs-dp.yaml with --set cluster.nodes=2048 printed "hybrid vs DP on 8 DGX-1
// nodes". Overrides of what is written (outputs.*) or how it is simulated (simulation.*) leave the
// name true; one of the name itself makes it the user's own.
std::string scenario_title(const scenarios::Scenario& scenario) {
  const std::string name = scenario.name.empty() ? scenario.source : scenario.name;
  std::string changed;
  for (const std::string& o : scenario.provenance.overrides) {
    const std::string path = scenarios::override_path(o);
    if (path == "name") return name;
    if (path.starts_with("outputs.") || path.starts_with("simulation.") || path == "outputs" ||
        path == "simulation" || path == "description")
      continue;
    std::string value = scenarios::override_value(o);
    if (value.size() > 40) value = std::string(sim::utf8_prefix(value, 40)) + "...";  // a long YAML value
    changed += (changed.empty() ? "" : ", ") + path + " set to " + value;
  }
  return changed.empty() ? name : name + " (" + changed + ")";
}

}  // namespace

RunSummary run_summary(const ScenarioRun& run, const scenarios::Scenario& scenario) {
  RunSummary s;
  std::vector<std::pair<std::string, std::string>> context = {{"scenario", scenario_title(scenario)}};
  // The GPU and precision when they are not the V100 FP32 every older scenario runs on, a profile
  // recorded on another GPU than the preset's, expert all-to-alls that ran another protocol than
  // communication.protocol fixed, and the tokens a capacity_factor below 1 drops.
  for (const auto& kv : run.context)
    if (kv.first == "GPU, precision" || kv.first == "GPU mismatch" || kv.first == "expert all-to-alls" ||
        kv.first == "token dropping")
      context.push_back(kv);
  s.table = step_summary_table(run.step, context);
  const auto metrics = run_metrics(run);
  for (const auto& [k, v] : metrics)
    s.table += pad_columns("  " + std::string(memory_table_key(k)), kSummaryKeyColumns) + v + "\n";
  s.settings = run.context;
  for (const auto& kv : metrics) s.settings.push_back(kv);
  std::vector<std::pair<std::string, std::string>> members = {
      {"memory", memory_json(run.memory, run.mapping, run.gpu_capacity, run.step.critical.gpu)}};
  if (run.model_tflops_per_gpu && run.mfu) {
    members.emplace_back("model_tflops_per_gpu", format_fixed(*run.model_tflops_per_gpu, 3));
    members.emplace_back("mfu", format_fixed(*run.mfu, 4));
  }
  if (const auto& slice = run.model_slice) {
    const std::optional<bool> fits = whole_model_fits(*slice, run.gpu_capacity);
    members.emplace_back("layers_simulated", std::to_string(slice->layers_simulated));
    members.emplace_back("layers", std::to_string(slice->layers));
    members.emplace_back("whole_model_peak_bytes", std::to_string(slice->whole_model.total().count()));
    members.emplace_back("whole_model_fits", !fits ? "null" : *fits ? "true" : "false");
  }
  s.json = step_summary_json(run.step, s.settings, members);
  // The CSV's rows of the same figures, under the JSON's names: it held the settings and the memory
  // lines only, no step time, rate or count (every shipped transformer scenario writes it).
  const StepFigures figures = step_summary_figures(run.step);
  for (const auto* group : {&figures.shape, &figures.times, &figures.counts})
    for (const StepFigure& f : *group)  // null (not a transformer's tp, ...) empty, as in results.csv
      s.settings.emplace_back(f.key, !f.text && f.value == "null" ? std::string() : f.value);
  for (std::size_t i = 1; i < members.size(); ++i) s.settings.push_back(members[i]);
  return s;
}

namespace {

std::filesystem::path output_file(const std::filesystem::path& dir, scenarios::OutputFormat f) {
  using scenarios::OutputFormat;
  return dir / (f == OutputFormat::Json  ? "summary.json"
                : f == OutputFormat::Csv ? "summary.csv"
                                         : "summary.txt");
}

}  // namespace

std::vector<std::filesystem::path> run_output_files(std::span<const scenarios::OutputFormat> formats,
                                                    const std::filesystem::path& dir,
                                                    const RunOutputOptions& options) {
  std::vector<std::filesystem::path> out;
  for (const scenarios::OutputFormat f : formats)
    if (f != scenarios::OutputFormat::Table || options.table) out.push_back(output_file(dir, f));
  return out;
}

bool write_run_outputs(const RunSummary& summary, std::span<const scenarios::OutputFormat> formats,
                       const std::filesystem::path& dir, const RunOutputOptions& options) {
  using scenarios::OutputFormat;
  bool wrote = false;
  for (const OutputFormat f : formats) {
    if (f == OutputFormat::Table && !options.table) continue;
    if (options.made) options.made->create(dir);
    else std::filesystem::create_directories(dir);
    AtomicFile file(output_file(dir, f));
    if (f == OutputFormat::Json) {
      file.write(summary.json);
    } else if (f == OutputFormat::Table) {
      file.write(summary.table);
    } else {
      std::string csv = "key,value\n";
      for (const auto& [k, v] : summary.settings) csv += csv_field(k) + "," + csv_field(v) + "\n";
      file.write(csv);
    }
    file.commit();
    if (options.made) options.made->written(file.target());
    wrote = true;
  }
  return wrote;
}

}  // namespace hybridsim::analysis
