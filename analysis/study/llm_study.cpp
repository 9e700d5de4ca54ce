#include "analysis/study/llm_study.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <ostream>

#include "analysis/study/study_report.h"
#include "sim/error.h"

namespace hybridsim::analysis {
namespace {

// The DP-heavy family: pp 1, ZeRO-3, tp up to 8 (the table's own limit).
void restrict_to_dp_heavy(LlmPlanRequest& r) {
  for (PlanDimension& d : r.dimensions) {
    if (d.name == "zero") d.values = [](const LlmSpace&) { return std::vector<std::string>{"3"}; };
    if (d.name == "pp" || d.name == "schedule" || d.name == "virtual_stages") d.enabled = false;
  }
}

// The family's time to train under each critical batch (0 without a plan or published run).
std::vector<double> times_to_train(const LlmStudyConfig& c, const LlmPlanRequest& r,
                                   const std::optional<LlmPlanCandidate>& best) {
  std::vector<double> out;
  for (const double critical : c.critical_batch_tokens) {
    const double batch =
        best ? static_cast<double>(best->layout.global_batch * r.setting.model.sequence) : 0;
    out.push_back(best && r.training_tokens > 0
                      ? llm_tokens_to_train(r, critical, batch) / best->tokens_per_second
                      : 0.0);
  }
  return out;
}

std::optional<LlmPlanCandidate> best_of(const LlmPlanRequest& r, std::string& note, StepCache& cache) {
  try {
    LlmPlanResult p = plan_llm(r, &cache);
    return p.ranked.front();
  } catch (const InputError& e) {
    note = e.what();
    return std::nullopt;
  }
}

}  // namespace

LlmStudyResult run_llm_study(const LlmStudyConfig& c, const LlmStudyRunOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  LlmStudyResult result{.config = c};
  StepCache cache;
  for (const std::string& model : c.models)
    for (const std::string& cluster : c.clusters)
      for (const std::string& ib : c.ib_bandwidths)
        for (const int gpus : c.gpus) {
          // Ranked by tokens/s: at the model's fixed batch the critical batch moves both alike.
          LlmPlanOptions po{.model = model, .gpus = gpus, .cluster = cluster, .ib_bandwidth = ib};
          po.simulate = c.simulate;
          po.threads = o.threads.value_or(c.threads);
          po.max_events = o.max_events;
          LlmStudyCell cell{.model = model, .cluster = cluster, .ib = ib, .gpus = gpus};
          LlmPlanRequest three_d = make_llm_plan_request(po);
          LlmPlanRequest dp_heavy = three_d;
          restrict_to_dp_heavy(dp_heavy);
          cell.three_d = best_of(three_d, cell.three_d_note, cache);
          cell.dp_heavy = best_of(dp_heavy, cell.dp_heavy_note, cache);
          cell.three_d_ttt = times_to_train(c, three_d, cell.three_d);
          cell.dp_heavy_ttt = times_to_train(c, dp_heavy, cell.dp_heavy);
          if (o.progress)
            *o.progress << "llm study: " << model << " " << cluster << " " << ib << " " << gpus << " GPUs\n";
          result.cells.push_back(std::move(cell));
        }
  result.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

namespace {

// "1,234,567 (dp 64 tp 8 ...)", with " estimated" when the plan was not simulated.
std::string family(const std::optional<LlmPlanCandidate>& c, const std::string& note,
                   const std::vector<PlanDimension>& dims) {
  if (!c) return note.starts_with("--memory") ? "none fits" : "failed";
  return format_count(std::llround(c->tokens_per_second)) + (c->simulated() ? "" : " estimated") + " (" +
         layout_label(dims, c->layout) + ")";
}

// Per model, machine and bandwidth: the first GPU count where the best 3D plan is at least 5% faster
// than the best DP-heavy one (the cells come in that order, GPU counts innermost).
void print_stops_paying(const LlmStudyResult& r, std::ostream& out) {
  for (std::size_t i = 0; i < r.cells.size(); i += r.config.gpus.size()) {
    const LlmStudyCell& head = r.cells[i];
    std::string where = "not within the grid";
    bool compared = false;
    for (std::size_t j = i; j < i + r.config.gpus.size() && j < r.cells.size(); ++j) {
      const LlmStudyCell& c = r.cells[j];
      if (!c.dp_heavy || !c.three_d) continue;
      compared = true;
      if (c.three_d->tokens_per_second >= 1.05 * c.dp_heavy->tokens_per_second) {
        const bool both = c.three_d->simulated() && c.dp_heavy->simulated();
        where = "from " + std::to_string(c.gpus) + " GPUs" + (both ? "" : " (estimated, not simulated)");
        break;
      }
    }
    out << "DP-heavy stops paying, " << head.model << " on " << head.cluster << " at " << head.ib << ": "
        << (compared ? where : std::string("no GPU count with both families")) << "\n";
  }
}

// Per critical batch, the headline bandwidth's time to train of each family.
void print_times_to_train(const LlmStudyResult& r, std::ostream& out) {
  const auto& crit = r.config.critical_batch_tokens;
  if (crit.empty()) return;
  out << "\ntime to train (headline bandwidth; Kaplan et al.'s trade-off, critical batch in tokens):\n";
  for (const LlmStudyCell& c : r.cells) {
    if (c.ib != r.config.ib_bandwidths.front()) continue;
    out << "  " << c.model << " " << c.cluster << " " << c.gpus << " GPUs:";
    for (std::size_t i = 0; i < crit.size(); ++i) {
      auto when = [](double s) { return s > 0 ? format_duration(s) : std::string("-"); };
      out << (i ? ";" : "") << " B_crit " << format_count(std::llround(crit[i])) << ": DP-heavy "
          << when(c.dp_heavy_ttt[i]) << ", 3D " << when(c.three_d_ttt[i]);
    }
    out << "\n";
  }
}

}  // namespace

void print_llm_table(const LlmStudyResult& r, std::ostream& out) {
  const auto dims = llm_plan_dimensions();
  out << r.config.title << "\n"
      << "ranked by tokens/s, each model at its published global batch (a critical batch moves both "
         "families' time to train alike)\n"
      << "\"estimated\": not simulated (its step would simulate past the planner's events budget: it does "
         "not fold yet), the closed form's tokens/s\n\n";
  char line[640];
  std::snprintf(line, sizeof line, "%-11s %-9s %-11s %6s  %-46s %-46s %7s\n", "model", "machine", "IB/GPU",
                "GPUs", "DP-heavy tokens/s (layout)", "3D tokens/s (layout)", "3D/DP");
  out << line;
  for (const LlmStudyCell& c : r.cells) {
    const std::string ratio =
        c.dp_heavy && c.three_d
            ? format_fixed(c.three_d->tokens_per_second / c.dp_heavy->tokens_per_second, 2)
            : "-";
    std::snprintf(line, sizeof line, "%-11s %-9s %-11s %6d  %-46s %-46s %7s\n", c.model.c_str(),
                  c.cluster.c_str(), c.ib.c_str(), c.gpus, family(c.dp_heavy, c.dp_heavy_note, dims).c_str(),
                  family(c.three_d, c.three_d_note, dims).c_str(), ratio.c_str());
    out << line;
  }
  out << "\n";
  for (const LlmStudyCell& c : r.cells) {
    if (!c.dp_heavy_note.empty() && c.gpus == r.config.gpus.front() && c.ib == r.config.ib_bandwidths.front())
      out << "DP-heavy, " << c.model << " on " << c.cluster << ": " << c.dp_heavy_note << "\n";
    if (!c.three_d_note.empty() && c.ib == r.config.ib_bandwidths.front())
      out << "3D, " << c.model << " on " << c.gpus << " GPUs of " << c.cluster << ": " << c.three_d_note
          << "\n";
  }
  print_stops_paying(r, out);
  print_times_to_train(r, out);
}

void print_llm_study(const LlmStudyResult& r, std::ostream& out) {
  print_llm_table(r, out);
  std::size_t simulated = 0, estimated = 0;
  for (const LlmStudyCell& c : r.cells)
    for (const auto* f : {&c.dp_heavy, &c.three_d})
      if (*f) ++((*f)->simulated() ? simulated : estimated);
  out << "study: " << r.cells.size() << " cells, " << simulated << " best plans simulated, " << estimated
      << " estimated, in " << format_fixed(r.wall_seconds, 1) << " s\n";
}

}  // namespace hybridsim::analysis
