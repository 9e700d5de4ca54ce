// The LLM study's report folder, written the way the hybrid-vs-DP study writes its own
// (write_report_folder): cells.csv and time_to_train.csv, the pictures of tokens/s per GPU and of
// the InfiniBand sensitivity, and README.md with the table. Every row says whether its plan was
// simulated or is the closed form's estimate.
#include <cmath>
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
  const std::vector<double> LlmStudyCell::*ttt;
};
constexpr Family kFamilies[] = {
    {"dp-heavy", &LlmStudyCell::dp_heavy, &LlmStudyCell::dp_heavy_note, &LlmStudyCell::dp_heavy_ttt},
    {"3d", &LlmStudyCell::three_d, &LlmStudyCell::three_d_note, &LlmStudyCell::three_d_ttt}};

const char* basis(const LlmPlanCandidate& c) { return c.simulated() ? "simulated" : "estimated"; }

std::string cells_csv(const LlmStudyResult& r) {
  std::ostringstream o;
  o << "model,cluster,ib,gpus,family,basis,dp,tp,pp,zero,micro_batch,recompute,schedule,virtual_stages,"
       "sequence_parallel,step_s,estimate_s,tokens_per_second,tokens_per_second_per_gpu,peak_memory_bytes,"
       "note\n";
  for (const LlmStudyCell& c : r.cells)
    for (const Family& f : kFamilies) {
      o << csv_field(c.model) << "," << c.cluster << "," << csv_field(c.ib) << "," << c.gpus << "," << f.name;
      const auto& p = c.*f.plan;
      if (!p) {
        o << ",none,,,,,,,,,,,,,,," << csv_field(c.*f.note) << "\n";
        continue;
      }
      const LlmLayout& l = p->layout;
      o << "," << basis(*p) << "," << l.dp << "," << l.tp << "," << l.pp << "," << l.zero << ","
        << l.micro_batch << "," << workloads::recompute_name(l.recompute) << ","
        << workloads::pipeline_schedule_name(l.schedule) << "," << l.virtual_stages << ","
        << (l.sequence_parallel ? "true" : "false") << ","
        << (p->simulated() ? num(p->step_seconds()) : std::string()) << "," << num(p->estimate.step()) << ","
        << num(p->tokens_per_second) << "," << num(p->tokens_per_second / c.gpus) << ","
        << p->memory.total().count() << "," << csv_field(p->estimated_only) << "\n";
    }
  return o.str();
}

std::string ttt_csv(const LlmStudyResult& r) {
  std::ostringstream o;
  o << "model,cluster,ib,gpus,family,basis,critical_batch_tokens,time_to_train_s\n";
  for (const LlmStudyCell& c : r.cells)
    for (const Family& f : kFamilies) {
      const auto& p = c.*f.plan;
      for (std::size_t i = 0; p && i < r.config.critical_batch_tokens.size(); ++i)
        o << csv_field(c.model) << "," << c.cluster << "," << csv_field(c.ib) << "," << c.gpus << ","
          << f.name << "," << basis(*p) << "," << num(r.config.critical_batch_tokens[i]) << ","
          << num((c.*f.ttt)[i]) << "\n";
    }
  return o.str();
}

// One panel per model and machine: `column(cell, family)` against GPUs, per `series`.
struct Panels {
  std::size_t count;
  std::string header;
};
Panels panels(const LlmStudyResult& r, const std::string& title) {
  const std::size_t n = r.config.models.size() * r.config.clusters.size();
  return {n, "set datafile missing '?'\nset grid\nset key top left\nset logscale x 2\nset multiplot layout " +
                 std::to_string(r.config.models.size()) + "," + std::to_string(r.config.clusters.size()) +
                 " title " + gnuplot_quote(title) + "\n"};
}

const LlmStudyCell* find(const LlmStudyResult& r, const std::string& model, const std::string& cluster,
                         const std::string& ib, int gpus) {
  for (const LlmStudyCell& c : r.cells)
    if (c.model == model && c.cluster == cluster && c.ib == ib && c.gpus == gpus) return &c;
  return nullptr;
}

// Tokens/s per GPU of both families at the headline bandwidth; hollow points: estimated.
PlotRequest tokens_plot(const LlmStudyResult& r, const std::filesystem::path& dir) {
  const Panels p = panels(r, "Tokens/s per GPU, best DP-heavy (ZeRO-3, pp 1) vs best 3D plan, at " +
                                 r.config.ib_bandwidths.front() + " per GPU (hollow: estimated)");
  std::ostringstream s;
  s << p.header << "set xlabel 'GPUs'\nset ylabel 'tokens/s per GPU'\n";
  std::size_t i = 0;
  for (const auto& model : r.config.models)
    for (const auto& cluster : r.config.clusters) {
      s << "$t" << i << " << EOD\n";
      for (const int g : r.config.gpus) {
        const LlmStudyCell* c = find(r, model, cluster, r.config.ib_bandwidths.front(), g);
        s << g;
        for (const Family& f : kFamilies) {
          const auto& plan = c ? c->*f.plan : std::optional<LlmPlanCandidate>{};
          s << " " << (plan ? num(plan->tokens_per_second / g) : "?") << " "
            << (plan ? (plan->simulated() ? 7 : 6) : 6);
        }
        s << "\n";
      }
      s << "EOD\nset title " << gnuplot_quote(model + " on " + cluster) << "\nplot $t" << i
        << " using 1:2:3 with linespoints pt variable lw 2 title 'DP-heavy', $t" << i
        << " using 1:4:5 with linespoints pt variable lw 2 title '3D'\n";
      ++i;
    }
  s << "unset multiplot\n";
  return {s.str(), dir / "tokens_per_gpu.png", 520 * static_cast<int>(r.config.clusters.size()),
          420 * static_cast<int>(r.config.models.size())};
}

// The best 3D plan over the best DP-heavy one, per InfiniBand bandwidth.
PlotRequest ib_plot(const LlmStudyResult& r, const std::filesystem::path& dir) {
  const Panels p = panels(r, "Best 3D over best DP-heavy tokens/s, per InfiniBand bandwidth per GPU");
  std::ostringstream s;
  s << p.header << "set xlabel 'GPUs'\nset ylabel '3D / DP-heavy'\n";
  std::size_t i = 0;
  for (const auto& model : r.config.models)
    for (const auto& cluster : r.config.clusters) {
      s << "$r" << i << " << EOD\n";
      for (const int g : r.config.gpus) {
        s << g;
        for (const auto& ib : r.config.ib_bandwidths) {
          const LlmStudyCell* c = find(r, model, cluster, ib, g);
          const bool both = c && c->dp_heavy && c->three_d;
          s << " " << (both ? num(c->three_d->tokens_per_second / c->dp_heavy->tokens_per_second) : "?");
        }
        s << "\n";
      }
      s << "EOD\nset title " << gnuplot_quote(model + " on " + cluster) << "\nplot ";
      for (std::size_t b = 0; b < r.config.ib_bandwidths.size(); ++b)
        s << (b ? ", " : "") << "$r" << i << " using 1:" << b + 2 << " with linespoints lw 2 title "
          << gnuplot_quote(r.config.ib_bandwidths[b]);
      s << ", 1 with lines dt 2 lc rgb 'gray' notitle\n";
      ++i;
    }
  s << "unset multiplot\n";
  return {s.str(), dir / "ib_sensitivity.png", 520 * static_cast<int>(r.config.clusters.size()),
          420 * static_cast<int>(r.config.models.size())};
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
