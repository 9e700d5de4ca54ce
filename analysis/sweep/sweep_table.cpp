#include "analysis/sweep/sweep_table.h"

#include <algorithm>
#include <exception>
#include <optional>

#include "analysis/output/atomic_file.h"
#include "analysis/output/csv.h"
#include "analysis/output/format_fixed.h"
#include "analysis/output/json_text.h"
#include "analysis/step/worker_shape.h"
#include "sim/error.h"
#include "sim/link.h"
#include "workloads/program/step_program.h"

namespace hybridsim::analysis {
namespace {

// mp is the GPUs of one data-parallel worker (a 2017 network's model-parallel ranks; a transformer's
// tp × pp), so dp × mp = gpus for both; tp, pp, ep and zero are a transformer's (empty for a 2017
// network, which has none of them).
constexpr const char* kMetricColumns =
    "gpus,dp,mp,tp,pp,ep,zero,global_batch,step_time_ms,samples_per_second,units_per_second,unit,compute_ms,"
    "exposed_comm_ms,idle_ms,exposed_comm_share,epochs,time_to_train_hours,extrapolated";

// gpus, dp, mp (GPUs per DP worker), tp, pp, ep, zero (empty for a 2017 network).
std::string size_fields(const WorkerShape& w) {
  std::string s = std::to_string(w.gpus) + "," + std::to_string(w.dp) + "," +
                  std::to_string(w.gpus_per_worker) + ",";
  if (const auto& t = w.transformer)
    s += std::to_string(t->tp) + "," + std::to_string(t->pp) + "," + std::to_string(t->ep) + "," +
         std::to_string(t->zero);
  else s += ",,,";
  return s;
}

// A layer-slice's whole model (scenarios/loader/model_slice.h), by run's own figures and under
// its summary.json's names: the slice's layers, the model's, one GPU's peak at every layer and
// whether that fits the capacity (empty where the capacity is unknown). All four empty for a run of
// every layer and for a 2017 network: their fits_memory is already the model's.
std::string whole_model_fields(const std::optional<scenarios::ModelSlice>& slice,
                               const std::optional<workloads::MemoryCapacity>& capacity) {
  if (!slice) return ",,,";
  const std::optional<bool> fits = whole_model_fits(*slice, capacity);
  return std::to_string(slice->layers_simulated) + "," + std::to_string(slice->layers) + "," +
         std::to_string(slice->whole_model.total().count()) + "," + (!fits ? "" : *fits ? "yes" : "no");
}

// Whether a row's field at `col` says "no" (a column past the row's end: it does not).
bool says_no(const std::vector<std::string>& f, std::ptrdiff_t col) {
  return static_cast<std::size_t>(col) < f.size() && f[static_cast<std::size_t>(col)] == "no";
}

// Each point not simulated, with the run's refusal: that it is in no fastest line is no verdict on
// its speed. One the loader refused (refused_sweep_row), or that failed once run (failed_sweep_row), has
// no memory figure: it says which, then why.
void append_not_simulated(std::string& out, const std::vector<std::pair<std::string, std::string>>& points) {
  if (points.empty()) return;
  out += ",\n  \"not_simulated\": [";
  for (std::size_t i = 0; i < points.size(); ++i) {
    out += i ? ",\n    {\"label\": " : "\n    {\"label\": ";
    append_json_string(out, points[i].first);
    const std::string& why = points[i].second;
    const bool refused = why.starts_with(kRefusedPrefix), failed = why.starts_with(kFailedPrefix);
    out += refused  ? ", \"refused\": true, \"why\": "
           : failed ? ", \"failed_once_run\": true, \"why\": "
                    : ", \"fits_memory\": false, \"why\": ";
    append_json_string(out, refused  ? why.substr(kRefusedPrefix.size())
                            : failed ? why.substr(kFailedPrefix.size())
                                     : why);
    out += "}";
  }
  out += "]";
}

}  // namespace

std::string sweep_header(const std::vector<std::string>& paths) {
  std::string h = "index,label";
  for (const auto& p : paths) h += "," + csv_field(p);
  h += ",";
  h += kMetricColumns;
  // Bytes carried (payload × links crossed) by every link kind, named by its scenario key.
  for (int k = 0; k < sim::kLinkKindCount; ++k)
    h += "," + std::string(sim::link_kind_key(static_cast<sim::LinkKind>(k))) + "_bytes";
  // Steps simulated (variability.steps) and their 95th-percentile step time; the largest GPU's
  // peak memory, the capacity it is checked against (empty: unknown) and whether every GPU fits;
  // for a layer-slice, its whole model's (whole_model_fields): fits_memory is the slice's.
  // Last, why the point was not simulated (empty: it was): a transformer its GPUs cannot hold.
  return h + ",steps,p95_step_time_ms,peak_memory_bytes,memory_capacity_bytes,fits_memory," +
         kWholeModelColumns + ",not_simulated";
}

std::string sweep_row(const scenarios::SweepPoint& point, const ScenarioRun& run) {
  const StepResult& r = run.step;
  std::string s = std::to_string(point.index) + "," + csv_field(point.label);
  for (const auto& [path, value] : point.assignments) s += "," + csv_field(value);
  const double step = r.step_time.to_ms();
  s += "," + size_fields(worker_shape(r)) + "," +
       std::to_string(r.global_batch) + "," + format_fixed(step, 6) + "," +
       format_fixed(r.samples_per_second, 3) + "," + format_fixed(r.units_per_second, 3) + "," +
       csv_field(r.unit) + "," + format_fixed(r.mean.compute.to_ms(), 6) + "," +
       format_fixed(r.mean.exposed_communication.to_ms(), 6) + "," + format_fixed(r.mean.idle.to_ms(), 6) +
       "," + format_fixed(step > 0 ? r.mean.exposed_communication.to_ms() / step : 0, 6) + ",";
  if (run.time_to_train) {
    // As run's line (format_fixed_nonzero): an e_min of 1e-300 wrote 0.0000 epochs in 0.000000 h.
    s += format_fixed_nonzero(run.time_to_train->epochs, 4) + "," +
         format_fixed_nonzero(run.time_to_train->seconds / 3600.0, 6) + "," +
         (run.time_to_train->extrapolated ? "yes" : "no");
  } else {
    s += ",,";
  }
  for (const sim::Bytes b : r.bytes_by_link_kind) s += "," + std::to_string(b.count());
  s += "," + std::to_string(r.spread.steps) + "," + format_fixed(r.spread.p95.to_ms(), 6);
  const std::vector<workloads::MemoryBreakdown> peaks = run.memory.peaks();
  s += "," + std::to_string(workloads::largest_peak(peaks).count());
  s += "," + (run.gpu_capacity ? std::to_string(run.gpu_capacity->bytes.count()) : std::string());
  s += std::string(",") + (!run.gpu_capacity ? "" : fits_in_memory(run) ? "yes" : "no");
  s += "," + whole_model_fields(run.model_slice, run.gpu_capacity);
  return s + ",";
}

std::string unfit_sweep_row(const scenarios::SweepPoint& point, const scenarios::ResolvedScenario& resolved) {
  if (resolved.does_not_fit.empty() || !resolved.transformer || !resolved.gpu_capacity)
    throw InternalError("unfit_sweep_row: the point fits (or is no transformer with a known capacity)");
  const workloads::WorkerMapping& m = resolved.mapping;
  const int tp = std::max(resolved.step.tp, 1);
  std::string s = std::to_string(point.index) + "," + csv_field(point.label);
  for (const auto& [path, value] : point.assignments) s += "," + csv_field(value);
  // As the step would count them (analysis/step): the mapping's workers are dp × tp, each of mp
  // (a pipeline's pp) GPUs; a replica's tp GPUs process the same samples.
  s += "," +
       size_fields(worker_shape(m.dp * m.mp, m.dp / tp, m.mp, tp, true, m.mp, resolved.step.ep.ep,
                                resolved.step.zero)) +
       "," + std::to_string(workloads::step_global_batch(resolved.profile, m, resolved.step));
  // step_time_ms to extrapolated, the bytes of each link kind, steps and p95: not simulated.
  s += std::string(11, ',') + std::string(sim::kLinkKindCount + 2, ',');
  s += "," + std::to_string(workloads::largest_peak(resolved.transformer->memory.peaks()).count()) + "," +
       std::to_string(resolved.gpu_capacity->bytes.count()) + ",no," +
       whole_model_fields(resolved.transformer->slice, resolved.gpu_capacity) + "," +
       csv_field(resolved.does_not_fit);
  return s;
}

namespace {

// A row of the point's swept values, every figure empty, and not_simulated `prefix` and why.
std::string row_without_figures(const scenarios::SweepPoint& point, const std::string& head,
                                std::string_view prefix, const std::string& why) {
  std::string s = std::to_string(point.index) + "," + csv_field(point.label);
  for (const auto& [path, value] : point.assignments) s += "," + csv_field(value);
  const std::size_t columns = csv_split(head).size(), written = 2 + point.assignments.size();
  if (columns < written + 1)
    throw InternalError("a sweep row without figures: the header has no figure columns");
  s += std::string(columns - written - 1, ',');
  // One line: a row is a line of results.csv and points.partial.csv, read back by --resume.
  std::string line = std::string(prefix) + why;
  for (std::size_t at = line.find('\n'); at != std::string::npos; at = line.find('\n', at))
    line.replace(at, 1, "; ");
  return s + "," + csv_field(line);
}

bool why_starts_with(const std::string& row, std::string_view prefix) {
  const auto fields = csv_split(row);
  return !fields.empty() && fields.back().starts_with(prefix);
}

}  // namespace

std::string refused_sweep_row(const scenarios::SweepPoint& point, const std::string& head,
                              const std::string& why) {
  return row_without_figures(point, head, kRefusedPrefix, why);
}

bool is_refused_row(const std::string& row) { return why_starts_with(row, kRefusedPrefix); }

std::string failed_sweep_row(const scenarios::SweepPoint& point, const std::string& head,
                             const std::string& why) {
  return row_without_figures(point, head, kFailedPrefix, why);
}

bool is_failed_row(const std::string& row) { return why_starts_with(row, kFailedPrefix); }

std::string sweep_summary_json(const std::string& scenario, const SweepIdentity& identity,
                               const std::string& head, const SweepRows& rows) {
  const auto columns = csv_split(head);
  const auto step_col = std::find(columns.begin(), columns.end(), "step_time_ms") - columns.begin();
  std::string out = "{\n  \"scenario\": ";
  append_json_string(out, scenario);
  out += ",\n  \"points\": " + std::to_string(rows.size()) + ",\n  \"sweep_points\": " +
         std::to_string(identity.sweep_points) + ",\n  \"shard\": ";
  append_json_string(out, identity.shard);
  out += ",\n  \"fingerprint\": ";
  append_json_string(out, identity.fingerprint);
  out += ",\n  \"columns\": [";
  for (std::size_t i = 0; i < columns.size(); ++i) {
    out += i ? ", " : "";
    append_json_string(out, columns[i]);
  }
  out += "]";
  // The fastest point, and where it does not fit in the GPUs' memory (results.csv's fits_memory
  // "no"; a layer-slice's whole_model_fits "no", its fits_memory being the slice's), it says so, with
  // the fastest that fits beside it: the summary named a point that could not run as the fastest.
  const auto fits_col = std::find(columns.begin(), columns.end(), "fits_memory") - columns.begin();
  const auto whole_col = std::find(columns.begin(), columns.end(), "whole_model_fits") - columns.begin();
  const auto why_col = static_cast<std::size_t>(
      std::find(columns.begin(), columns.end(), "not_simulated") - columns.begin());
  struct Fastest {
    double ms = -1;
    std::string label;
  };
  Fastest any, fitting;
  bool any_fits = true, any_whole_fits = true;
  std::vector<std::pair<std::string, std::string>> not_simulated;  // label, why
  for (const auto& [index, line] : rows) {
    const auto f = csv_split(line);
    if (why_col < f.size() && !f[why_col].empty()) not_simulated.emplace_back(f[1], f[why_col]);
    // A point not simulated has no step time: it is no candidate for fastest (nor fastest that fits).
    if (static_cast<std::size_t>(step_col) >= f.size() || f[static_cast<std::size_t>(step_col)].empty())
      continue;
    const double v = std::stod(f[static_cast<std::size_t>(step_col)]);
    const bool slice_fits = !says_no(f, fits_col), whole_fits = !says_no(f, whole_col);
    if (any.ms < 0 || v < any.ms) {
      any = {v, f[1]};
      any_fits = slice_fits;
      any_whole_fits = whole_fits;
    }
    if (slice_fits && whole_fits && (fitting.ms < 0 || v < fitting.ms)) fitting = {v, f[1]};
  }
  const auto list_not_simulated = [&] { append_not_simulated(out, not_simulated); };
  if (any.ms < 0) {  // no simulated rows: no fastest point
    list_not_simulated();
    return out + "\n}\n";
  }
  const auto member = [&](const char* key, const Fastest& p, const char* note) {
    out += ",\n  \"" + std::string(key) + "\": {\"label\": ";
    append_json_string(out, p.label);
    out += ", \"step_time_ms\": " + format_fixed(p.ms, 6) + note + "}";
  };
  const std::string note = std::string(any_fits ? "" : ", \"fits_memory\": false") +
                           (any_whole_fits ? "" : ", \"whole_model_fits\": false");
  member("fastest_step", any, note.c_str());
  const bool fastest_fits = any_fits && any_whole_fits;
  if (!fastest_fits && fitting.ms >= 0) member("fastest_step_that_fits", fitting, "");
  // No point fits: said as null, where leaving the key out read as "the fastest is the one to run".
  if (!fastest_fits && fitting.ms < 0) out += ",\n  \"fastest_step_that_fits\": null";
  list_not_simulated();
  return out + "\n}\n";
}

std::optional<std::string> whole_model_note(const std::string& head, const SweepRows& rows) {
  const auto columns = csv_split(head);
  const auto col = [&](std::string_view name) {
    return static_cast<std::size_t>(std::find(columns.begin(), columns.end(), name) - columns.begin());
  };
  const std::size_t simulated = col("layers_simulated"), layers = col("layers"),
                    fits = col("whole_model_fits");
  std::map<std::string, std::string> slices;  // "4 of 32" → its points, "0, 1, 2"
  std::string fit, unfit;
  const auto add = [](std::string& list, std::size_t index) {
    list += (list.empty() ? "" : ", ") + std::to_string(index);
  };
  for (const auto& [index, line] : rows) {
    const auto f = csv_split(line);
    if (fits >= f.size() || simulated >= f.size() || layers >= f.size() || f[simulated].empty()) continue;
    add(slices[f[simulated] + " of " + f[layers]], index);
    if (f[fits] == "yes") add(fit, index);
    if (f[fits] == "no") add(unfit, index);
  }
  if (slices.empty()) return std::nullopt;
  std::string note = "layer slices:";
  for (const auto& [which, points] : slices)
    note += " points " + points + " simulate " + which + " layers;";
  note += " their step figures and fits_memory are the slice's, whole_model_peak_bytes and "
          "whole_model_fits the whole model's";
  if (!fit.empty()) note += "; the whole model fits at points " + fit;
  if (!unfit.empty()) note += "; the whole model does not fit at points " + unfit;
  return note;
}

std::string write_sweep_results(const std::filesystem::path& dir, const std::string& scenario,
                                const SweepIdentity& identity, const std::string& head,
                                const SweepRows& rows) {
  std::string csv = head + "\n";
  for (const auto& [index, line] : rows) csv += line + "\n";
  AtomicFile results(dir / "results.csv");
  results.write(csv);
  results.commit();
  AtomicFile summary(dir / "summary.json");
  summary.write(sweep_summary_json(scenario, identity, head, rows));
  summary.commit();
  return csv;
}

}  // namespace hybridsim::analysis
