// The LLM study's report folder, written the way the hybrid-vs-DP study writes its own
// (write_report_folder): cells.csv and time_to_train.csv, the pictures of tokens/s per GPU and of
// the InfiniBand sensitivity, and README.md with the table. Every row says whether its plan was
// simulated or is the closed form's estimate.
#include <algorithm>
#include <cmath>
#include <functional>
#include <sstream>

#include "analysis/output/csv.h"
#include "analysis/study/llm_study.h"
#include "analysis/study/study_report.h"

namespace hybridsim::analysis {
namespace {

std::string num(double v) { return std::isfinite(v) ? format_fixed(v, 6) : std::string("?"); }

struct Family {
  const char* name;
  const std::optional<LlmPlanCandidate> LlmStudyCell::*plan;
  const std::string LlmStudyCell::*note;
  const std::optional<LlmPlanCandidate> LlmStudyCell::*faster_estimate;
  const std::vector<double> LlmStudyCell::*ttt;
  const std::vector<std::int64_t> LlmStudyCell::*ttt_batch;
  const std::vector<LlmPlanCandidate> LlmStudyCell::*options;
};
constexpr Family kFamilies[] = {
    {"dp-heavy", &LlmStudyCell::dp_heavy, &LlmStudyCell::dp_heavy_note,
     &LlmStudyCell::dp_heavy_faster_estimate, &LlmStudyCell::dp_heavy_ttt, &LlmStudyCell::dp_heavy_ttt_batch,
     &LlmStudyCell::dp_heavy_options},
    {"3d", &LlmStudyCell::three_d, &LlmStudyCell::three_d_note, &LlmStudyCell::three_d_faster_estimate,
     &LlmStudyCell::three_d_ttt, &LlmStudyCell::three_d_ttt_batch, &LlmStudyCell::three_d_options}};

const char* basis(const LlmPlanCandidate& c) { return c.simulated() ? "simulated" : "estimated"; }

// A row's note: why it is not simulated, or which layout of its family, not simulated, may beat it.
std::string note(const LlmPlanCandidate& p, const std::optional<LlmPlanCandidate>& faster) {
  if (!p.simulated() || !faster) return p.estimated_only;
  return "may be beaten by " + layout_label(llm_plan_dimensions(), faster->layout, LabelForm::Compact) +
         ", not simulated (" + faster->estimated_only +
         "): " + format_count(std::llround(faster->tokens_per_second)) + " tokens/s by its closed form";
}

std::string cells_csv(const LlmStudyResult& r) {
  std::ostringstream o;
  // global_batch: the sequences of the row's plan, the published batch or the one its family ran at
  // where it has no layout there (moe3d: each family at its fastest batch; the table's "B n"). ep: a
  // mixture's expert-parallel size (the table's "ep 8"), 1 for a dense model.
  o << "model,cluster,ib_port,ib_per_gpu,gpus,family,basis,global_batch,dp,tp,pp,ep,zero,micro_batch,"
       "recompute,schedule,virtual_stages,sequence_parallel,step_s,estimate_s,tokens_per_second,"
       "tokens_per_second_per_gpu,peak_memory_bytes,note\n";
  for (const LlmStudyCell& c : r.cells)
    for (const Family& f : kFamilies) {
      o << csv_field(c.model) << "," << c.cluster << "," << csv_field(c.ib) << "," << csv_field(c.ib_per_gpu)
        << "," << c.gpus << "," << f.name;
      const auto& p = c.*f.plan;
      if (!p) {
        o << ",none,,,,,,,,,,,,,,,,," << csv_field(c.*f.note) << "\n";
        continue;
      }
      const LlmLayout& l = p->layout;
      o << "," << basis(*p) << "," << l.global_batch << "," << l.dp << "," << l.tp << "," << l.pp << ","
        << l.ep << "," << l.zero << "," << l.micro_batch << "," << workloads::recompute_name(l.recompute)
        << "," << workloads::pipeline_schedule_name(l.schedule) << "," << l.virtual_stages << ","
        << (l.sequence_parallel ? "true" : "false") << ","
        << (p->simulated() ? num(p->step_seconds()) : std::string()) << "," << num(p->estimate.step()) << ","
        << num(p->tokens_per_second) << "," << num(p->tokens_per_second / c.gpus) << ","
        << p->memory.total().count() << "," << csv_field(note(*p, c.*f.faster_estimate)) << "\n";
    }
  return o.str();
}

// Per critical batch, each family's time to train at its fastest of the batches it was planned at:
// that plan's batch (sequences) and basis beside it.
std::string ttt_csv(const LlmStudyResult& r) {
  std::ostringstream o;
  o << "model,cluster,ib_port,ib_per_gpu,gpus,family,basis,global_batch,critical_batch_tokens,time_to_train_"
       "s\n";
  for (const LlmStudyCell& c : r.cells)
    for (const Family& f : kFamilies) {
      const auto& p = c.*f.plan;
      for (std::size_t i = 0; p && i < r.config.critical_batch_tokens.size(); ++i) {
        const std::int64_t batch = i < (c.*f.ttt_batch).size() ? (c.*f.ttt_batch)[i] : p->layout.global_batch;
        const auto& options = c.*f.options;
        const auto at = std::ranges::find_if(
            options, [&](const LlmPlanCandidate& q) { return q.layout.global_batch == batch; });
        o << csv_field(c.model) << "," << c.cluster << "," << csv_field(c.ib) << ","
          << csv_field(c.ib_per_gpu) << "," << c.gpus << "," << f.name << ","
          << basis(at == options.end() ? *p : *at) << "," << batch << ","
          << num(r.config.critical_batch_tokens[i]) << "," << num((c.*f.ttt)[i]) << "\n";
      }
    }
  return o.str();
}

const LlmStudyCell* find(const LlmStudyResult& r, const std::string& model, const std::string& cluster,
                         const std::string& ib, int gpus) {
  for (const LlmStudyCell& c : r.cells)
    if (c.model == model && c.cluster == cluster && c.ib == ib && c.gpus == gpus) return &c;
  return nullptr;
}

// What one picture of panels plots: per panel (model, machine) a data block of a row per GPU count,
// `row` writing the columns after the GPU count, and `plot` the panel's plot command given its
// block's name.
struct PanelPlot {
  std::string title, ylabel, file;
  std::function<void(std::ostream&, const std::string& model, const std::string& cluster, int gpus)> row;
  std::function<std::string(const std::string& block)> plot;
};

// One panel per model and machine, models in rows and machines in columns, GPUs on a log axis.
PlotRequest panels(const LlmStudyResult& r, const std::filesystem::path& dir, const PanelPlot& p) {
  std::ostringstream s;
  s << "set datafile missing '?'\nset grid\nset key top left\nset logscale x 2\nset multiplot layout "
    << r.config.models.size() << "," << r.config.clusters.size() << " title " << gnuplot_quote(p.title)
    << "\nset xlabel 'GPUs'\nset ylabel " << gnuplot_quote(p.ylabel) << "\n";
  std::size_t i = 0;
  for (const auto& model : r.config.models)
    for (const auto& cluster : r.config.clusters) {
      const std::string block = "$p" + std::to_string(i++);
      s << block << " << EOD\n";
      for (const int g : r.config.gpus) {
        s << g;
        p.row(s, model, cluster, g);
        s << "\n";
      }
      s << "EOD\nset title " << gnuplot_quote(model + " on " + cluster) << "\nplot " << p.plot(block) << "\n";
    }
  s << "unset multiplot\n";
  return {s.str(), dir / p.file, 520 * static_cast<int>(r.config.clusters.size()),
          420 * static_cast<int>(r.config.models.size())};
}

// Tokens/s per GPU of both families at the headline bandwidth; hollow points: estimated.
PlotRequest tokens_plot(const LlmStudyResult& r, const std::filesystem::path& dir) {
  const std::string& ib = r.config.ib_bandwidths.front();
  return panels(
      r, dir,
      {"Tokens/s per GPU, best DP-heavy (ZeRO-3, pp 1) vs best 3D plan, InfiniBand at " + ib +
           " a NIC port (hollow: estimated)",
       "tokens/s per GPU", "tokens_per_gpu.png",
       [&](std::ostream& s, const std::string& model, const std::string& cluster, int g) {
         const LlmStudyCell* c = find(r, model, cluster, ib, g);
         for (const Family& f : kFamilies) {
           const auto& plan = c ? c->*f.plan : std::optional<LlmPlanCandidate>{};
           s << " " << (plan ? num(plan->tokens_per_second / g) : "?") << " "
             << (plan ? (plan->simulated() ? 7 : 6) : 6);
         }
       },
       [](const std::string& b) {
         return b + " using 1:2:3 with linespoints pt variable lw 2 title 'DP-heavy', " + b +
                " using 1:4:5 with linespoints pt variable lw 2 title '3D'";
       }});
}

// The best 3D plan over the best DP-heavy one (the table's 3D/DP), per InfiniBand bandwidth.
PlotRequest ib_plot(const LlmStudyResult& r, const std::filesystem::path& dir) {
  return panels(r, dir,
                {"Best 3D over best DP-heavy (the table's 3D/DP), per InfiniBand rate a NIC port",
                 "3D / DP-heavy", "ib_sensitivity.png",
                 [&](std::ostream& s, const std::string& model, const std::string& cluster, int g) {
                   for (const auto& ib : r.config.ib_bandwidths) {
                     const LlmStudyCell* c = find(r, model, cluster, ib, g);
                     const double advantage = c ? llm_three_d_advantage(r, *c) : 0;
                     s << " " << (advantage > 0 ? num(advantage) : "?");
                   }
                 },
                 [&](const std::string& b) {
                   std::string plot;
                   for (std::size_t i = 0; i < r.config.ib_bandwidths.size(); ++i)
                     plot += (i ? ", " : "") + b + " using 1:" + std::to_string(i + 2) +
                             " with linespoints lw 2 title " +
                             gnuplot_quote(r.config.ib_bandwidths[i] + " a port");
                   return plot + ", 1 with lines dt 2 lc rgb 'gray' notitle";
                 }});
}

std::string markdown(const LlmStudyResult& r, const std::vector<std::string>& drawn,
                     const std::vector<std::string>& problems) {
  std::ostringstream table;
  print_llm_table(r, table);
  std::ostringstream o;
  o << "# " << r.config.title << "\n\nFrom `hybridsim study " << r.config.source << "`.\n\n```\n"
    << table.str() << "```\n\n";
  for (const auto& png : drawn) o << "![" << png << "](" << png << ")\n\n";
  for (const auto& why : problems) o << "No picture: " << why << "\n\n";
  o << "Files: cells.csv (both families of every cell; `basis` says simulated or estimated), "
       "time_to_train.csv (per critical batch).\n";
  return o.str();
}

}  // namespace

StudyReportFiles write_llm_study_report(const LlmStudyResult& r, const std::filesystem::path& dir,
                                        const StudyReportOptions& options) {
  const ReportFolder parts{
      {{"cells.csv", cells_csv(r)}, {"time_to_train.csv", ttt_csv(r)}},
      {tokens_plot(r, dir), ib_plot(r, dir)},
      [&](const std::vector<std::string>& drawn, const std::vector<std::string>& problems) {
        return markdown(r, drawn, problems);
      }};
  return write_report_folder(dir, parts, options);
}

}  // namespace hybridsim::analysis
