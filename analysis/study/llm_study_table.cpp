// The LLM study's printed table and what follows it (where 3D stops paying, the estimates it took,
// times to train), to a stream; its files are llm_study_report.cpp's.
#include <algorithm>
#include <cmath>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "analysis/study/llm_study.h"
#include "analysis/study/study_report.h"

namespace hybridsim::analysis {

namespace {

// The planner's compact label ("dp 16 tp 4 pp 2 interleaved v4 sp mb 2 full Z3"), with "B 2048" when
// the plan took another batch than the model's published one.
std::string short_label(const LlmStudyCell& cell, const LlmLayout& l) {
  std::string s = layout_label(llm_plan_dimensions(), l, LabelForm::Compact);
  if (l.global_batch != cell.published_batch) s += " B " + std::to_string(l.global_batch);
  return s;
}

// `text` padded with spaces to `width` on the left (`right`) or the right; as it is when longer.
std::string padded(const std::string& text, int width, bool right = false) {
  const std::string fill(static_cast<std::size_t>(std::max(0, width - static_cast<int>(text.size()))), ' ');
  return right ? fill + text : text + fill;
}

// A family's layout column: its plan's label, or why there is none.
std::string layout_text(const LlmStudyCell& cell, const std::optional<LlmPlanCandidate>& c,
                        const std::optional<LlmPlanRefusal>& refusal) {
  if (c) return short_label(cell, c->layout);
  return refusal == LlmPlanRefusal::NothingFits ? "none fits"
         : refusal == LlmPlanRefusal::NoLayout  ? "no layout"
                                                : "failed";
}

// The family's three columns: tokens/s, sim or est, the layout (or why there is none).
std::string family(const LlmStudyCell& cell, const std::optional<LlmPlanCandidate>& c,
                   const std::optional<LlmPlanRefusal>& refusal, int layout_width) {
  const std::string rate = c ? format_count(std::llround(c->tokens_per_second)) : "-";
  const std::string basis = !c ? "-" : c->simulated() ? "sim" : "est";
  return padded(rate, 11, true) + " " + padded(basis, 4) + " " +
         padded(layout_text(cell, c, refusal), layout_width);
}

// Each text column as wide as its widest entry, at least as its header's width: a model, a machine
// (pcie-server, a topology file's path) or a layout longer than its column pushed every column
// after it right of its header.
struct ColumnWidths {
  int model = 10, machine = 9, ib = 9, ib_per_gpu = 9, dp_heavy = 28, three_d = 50;
};
ColumnWidths column_widths(const LlmStudyResult& r) {
  ColumnWidths w;
  const auto widen = [](int& width, const std::string& text) {
    width = std::max(width, static_cast<int>(text.size()));
  };
  for (const LlmStudyCell& c : r.cells) {
    widen(w.model, c.model);
    widen(w.machine, c.cluster);
    widen(w.ib, c.ib);
    widen(w.ib_per_gpu, c.ib_per_gpu);
    widen(w.dp_heavy, layout_text(c, c.dp_heavy, c.dp_heavy_refusal));
    widen(w.three_d, layout_text(c, c.three_d, c.three_d_refusal));
  }
  return w;
}

// "64, 4096 and 16384" (GPU counts as the table prints them).
std::string count_list(const std::vector<int>& gpus) {
  std::string s;
  for (std::size_t i = 0; i < gpus.size(); ++i)
    s += (i == 0 ? "" : i + 1 == gpus.size() ? " and " : ", ") + std::to_string(gpus[i]);
  return s;
}

// "50 GB/s a NIC port (48 GB/s a GPU)": the study file's rate and what it carries for a GPU.
std::string ib_words(const LlmStudyCell& c) { return c.ib + " a NIC port (" + c.ib_per_gpu + " a GPU)"; }

// Per model, machine and bandwidth: where the best 3D plan trains at least 5% faster than the best
// DP-heavy one (the cells come in that order, GPU counts innermost). "From N GPUs" only when it
// holds at every compared count from N on; counts below N where it holds too are named, and where
// it does not hold at the largest count the verdict lists the counts instead, so that it never
// says more than the rows above it show.
void print_stops_paying(const LlmStudyResult& r, std::ostream& out) {
  for (std::size_t i = 0; i < r.cells.size(); i += r.config.gpus.size()) {
    const LlmStudyCell& head = r.cells[i];
    std::vector<int> compared, paying, open;
    bool all_simulated = true;
    for (std::size_t j = i; j < i + r.config.gpus.size() && j < r.cells.size(); ++j) {
      const LlmStudyCell& c = r.cells[j];
      if (!c.dp_heavy || !c.three_d) continue;
      compared.push_back(c.gpus);
      if (c.dp_heavy_faster_estimate || c.three_d_faster_estimate) open.push_back(c.gpus);
      if (llm_three_d_advantage(r, c) < 1.05) continue;
      paying.push_back(c.gpus);
      all_simulated = all_simulated && c.three_d->simulated() && c.dp_heavy->simulated();
    }
    std::size_t from = compared.size();  // the first of the compared counts' paying tail
    while (from > 0 && std::find(paying.begin(), paying.end(), compared[from - 1]) != paying.end()) --from;
    std::string where;
    if (compared.empty()) {
      where = "no GPU count with both families";
    } else if (paying.empty()) {
      where = "not within the grid";
    } else if (from < compared.size()) {
      const std::vector<int> before(paying.begin(), std::find(paying.begin(), paying.end(), compared[from]));
      where = "from " + std::to_string(compared[from]) + " GPUs" +
              (before.empty() ? "" : ", and at " + count_list(before) + " GPUs");
    } else {
      where = "at " + count_list(paying) + " GPUs, not at " + std::to_string(compared.back());
    }
    if (!paying.empty() && !all_simulated) where += " (estimated, not simulated)";
    if (!open.empty())
      where += " (at " + count_list(open) +
               " GPUs a layout not simulated may beat a family's simulated best: see its line above)";
    out << "DP-heavy stops paying, " << head.model << " on " << head.cluster << " at " << ib_words(head)
        << ": " << where << "\n";
  }
}

// Two port rates of the grid that give a machine's GPUs the same share (each NIC held to its PCIe
// link: DGX H100's Gen5 links carry 48 GB/s, so 400 and 800 Gb/s ports both give 48 GB/s a GPU): their
// rows repeat but where the fabric's leaf-spine links (which grow with the port rate) decide, which a
// reader of a bandwidth sweep would otherwise take for a fault (llmstudy's leftover: ci-llm's rows at
// 800 Gb/s repeated its 400's without a word).
void print_same_share(const LlmStudyResult& r, std::ostream& out) {
  for (const std::string& cluster : r.config.clusters) {
    std::vector<std::pair<std::string, std::string>> shares;  // (port, per GPU), in the file's order
    for (const std::string& ib : r.config.ib_bandwidths)
      for (const LlmStudyCell& c : r.cells)
        if (c.cluster == cluster && c.ib == ib) {
          shares.emplace_back(ib, c.ib_per_gpu);
          break;
        }
    for (std::size_t i = 0; i < shares.size(); ++i) {
      std::vector<std::string> same;
      for (std::size_t j = 0; j < shares.size(); ++j)
        if (shares[j].second == shares[i].second) same.push_back(shares[j].first);
      if (same.size() < 2 || same.front() != shares[i].first) continue;  // each group once, by its first
      std::string ports = same.front();
      for (std::size_t k = 1; k < same.size(); ++k)
        ports += (k + 1 == same.size() ? " and " : ", ") + same[k];
      out << "IB on " << cluster << ": " << ports << " a NIC port " << (same.size() == 2 ? "both" : "all")
          << " carry " << shares[i].second
          << " a GPU (each NIC held to the lesser of its port and its PCIe link), so their rows differ "
             "only where the leaf-spine links, which grow with the port rate, decide\n";
    }
  }
}

// Each simulated best that a layout of its family, estimated and not simulated, may beat by the
// closed form (hunt6: a study's verdict rested on a second-best row without a word).
void print_faster_estimates(const LlmStudyResult& r, std::ostream& out) {
  for (const LlmStudyCell& c : r.cells)
    for (const auto& [family, plan, faster] :
         {std::tuple{"DP-heavy", &c.dp_heavy, &c.dp_heavy_faster_estimate},
          std::tuple{"3D", &c.three_d, &c.three_d_faster_estimate}}) {
      if (!*plan || !*faster) continue;
      out << family << ", " << c.model << " on " << c.gpus << " GPUs of " << c.cluster << " at "
          << ib_words(c) << ": " << short_label(c, (*faster)->layout) << ", not simulated ("
          << (*faster)->estimated_only << "), may be faster than the simulated row: "
          << format_count(std::llround((*faster)->tokens_per_second))
          << " tokens/s by its closed form against " << format_count(std::llround((*plan)->tokens_per_second))
          << "\n";
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
      // The pair in one unit (hunt42 saw "2.4 d" beside "44.0 h").
      const double dp_heavy = c.dp_heavy_ttt[i], three_d = c.three_d_ttt[i];
      const auto [dp_text, three_d_text] = format_durations_alike(dp_heavy, three_d);
      // " (B 4096)" where the family trains there at another batch than the published one.
      const auto at = [&](const std::vector<std::int64_t>& batch) {
        return i < batch.size() && batch[i] != 0 && batch[i] != c.published_batch
                   ? " (B " + std::to_string(batch[i]) + ")"
                   : std::string();
      };
      out << (i ? ";" : "") << " B_crit " << format_count(std::llround(crit[i])) << ": DP-heavy "
          << (dp_heavy > 0 ? dp_text + at(c.dp_heavy_ttt_batch) : "-") << ", 3D "
          << (three_d > 0 ? three_d_text + at(c.three_d_ttt_batch) : "-");
    }
    out << "\n";
  }
}

// A family's plans at the batches it was planned at (LlmStudyCell::dp_heavy_options; its headline alone
// where the cell lists none).
std::vector<LlmPlanCandidate> options_of(const std::vector<LlmPlanCandidate>& options,
                                         const std::optional<LlmPlanCandidate>& headline) {
  if (!options.empty() || !headline) return options;
  return {*headline};
}

// A family's time to train at x = 1 / B_crit, in units of E_min, at its fastest plan there: a plan of
// b tokens a batch at r tokens/s takes E_min (1 + b x) / r (Kaplan et al.; E_min, set by the published
// run, is the families' alike), a line in x; the family's time is their lower envelope.
double envelope_at(const std::vector<LlmPlanCandidate>& plans, double sequence, double x) {
  double best = INFINITY;
  for (const LlmPlanCandidate& p : plans)
    best =
        std::min(best, (1 + static_cast<double>(p.layout.global_batch) * sequence * x) / p.tokens_per_second);
  return best;
}

// Stretches of B_crit from the smallest up: who trains faster there (+1 3D, -1 DP-heavy, 0 alike), each
// family at its fastest plan, and the critical batch in tokens where the stretch ends (infinity: the
// last). Between two consecutive crossings of any two plans' lines both envelopes are straight, so the
// sign of their difference in its middle holds for the whole stretch.
std::vector<std::pair<int, double>> break_even_stretches(const std::vector<LlmPlanCandidate>& dp,
                                                         const std::vector<LlmPlanCandidate>& three_d,
                                                         double sequence) {
  std::vector<double> xs;  // every crossing of two plans' lines, 1 / tokens
  std::vector<LlmPlanCandidate> all = dp;
  all.insert(all.end(), three_d.begin(), three_d.end());
  for (std::size_t i = 0; i < all.size(); ++i)
    for (std::size_t j = i + 1; j < all.size(); ++j) {
      const double ai = 1 / all[i].tokens_per_second, aj = 1 / all[j].tokens_per_second;
      const double si = static_cast<double>(all[i].layout.global_batch) * sequence * ai;
      const double sj = static_cast<double>(all[j].layout.global_batch) * sequence * aj;
      if (const double x = (aj - ai) / (si - sj); std::isfinite(x) && x > 0) xs.push_back(x);
    }
  std::ranges::sort(xs);
  std::vector<std::pair<int, double>> stretches;
  for (std::size_t k = xs.size() + 1; k-- > 0;) {  // from the largest x, the smallest B_crit
    const double lo = k == 0 ? 0 : xs[k - 1], hi = k == xs.size() ? INFINITY : xs[k];
    const double mid = k == xs.size() ? (xs.empty() ? 1e-6 : 2 * lo) : k == 0 ? hi / 2 : (lo + hi) / 2;
    const double dp_time = envelope_at(dp, sequence, mid),
                 lead = dp_time - envelope_at(three_d, sequence, mid);
    const int winner = std::abs(lead) <= 1e-9 * dp_time ? 0 : lead > 0 ? 1 : -1;
    if (stretches.empty() || stretches.back().first != winner) stretches.emplace_back(winner, 0.0);
    stretches.back().second = lo > 0 ? 1 / lo : INFINITY;
  }
  return stretches;
}

// Where the families train at different batches (DP-heavy past its replicas' batch, 3D at its best of
// the same batches), the critical batches at which the faster one changes, each family at its fastest
// plan at every critical batch (with one plan each: the family with more tokens/s wins above the one
// crossing, the one with the shorter step below it).
void print_break_even(const LlmStudyResult& r, std::ostream& out) {
  const auto who = [](int w) {
    return w > 0 ? "3D trains faster" : w < 0 ? "DP-heavy trains faster" : "both train alike";
  };
  const auto tokens = [](double t) { return format_count(std::llround(t)); };
  for (const LlmStudyCell& c : r.cells) {
    if (!c.dp_heavy || !c.three_d || c.ib != r.config.ib_bandwidths.front()) continue;
    const std::vector<LlmPlanCandidate> dp = options_of(c.dp_heavy_options, c.dp_heavy);
    const std::vector<LlmPlanCandidate> td = options_of(c.three_d_options, c.three_d);
    std::vector<double> batches;  // tokens
    for (const auto* family : {&dp, &td})
      for (const LlmPlanCandidate& p : *family)
        batches.push_back(static_cast<double>(p.layout.global_batch * c.sequence));
    std::ranges::sort(batches);
    if (batches.front() == batches.back()) continue;  // one batch: the critical batch moves both alike
    const auto stretches = break_even_stretches(dp, td, static_cast<double>(c.sequence));
    out << "break-even, " << c.model << " on " << c.gpus << " GPUs of " << c.cluster;
    if (dp.size() == 1 && td.size() == 1)
      out << " (DP-heavy at " << tokens(static_cast<double>(dp[0].layout.global_batch * c.sequence))
          << " tokens a batch, 3D at " << tokens(static_cast<double>(td[0].layout.global_batch * c.sequence))
          << "): ";
    else
      out << " (each family at its fastest of the batches it was planned at, " << tokens(batches.front())
          << " to " << tokens(batches.back()) << " tokens): ";
    if (stretches.size() == 1) {
      out << who(stretches[0].first) << " at every critical batch\n";
    } else if (stretches.size() == 2) {
      const int below = stretches[0].first;
      out << "critical batch " << tokens(stretches[0].second) << " tokens; " << who(stretches[1].first)
          << " above it, "
          << (below > 0   ? "3D"
              : below < 0 ? "DP-heavy"
                          : "both train alike")
          << " below\n";
    } else {
      out << "critical batches";
      for (std::size_t k = 0; k + 1 < stretches.size(); ++k)
        out << (k ? ", " : " ") << tokens(stretches[k].second);
      out << " tokens;";
      for (std::size_t k = 0; k < stretches.size(); ++k)
        out << (k ? "," : "") << " " << who(stretches[k].first)
            << (k == 0 ? " below " + tokens(stretches[0].second)
                : k + 1 == stretches.size()
                    ? " above " + tokens(stretches[k - 1].second)
                    : " from " + tokens(stretches[k - 1].second) + " to " + tokens(stretches[k].second));
      out << "\n";
    }
  }
}

}  // namespace

// Time to train at the headline critical batch when one is stated (it prices a larger batch), else
// tokens/s: how much faster the best 3D plan is than the best DP-heavy one (0: not both).
double llm_three_d_advantage(const LlmStudyResult& r, const LlmStudyCell& c) {
  if (!c.dp_heavy || !c.three_d) return 0;
  if (!r.config.critical_batch_tokens.empty() && c.three_d_ttt[0] > 0 && c.dp_heavy_ttt[0] > 0)
    return c.dp_heavy_ttt[0] / c.three_d_ttt[0];
  return c.three_d->tokens_per_second / c.dp_heavy->tokens_per_second;
}

void print_llm_table(const LlmStudyResult& r, std::ostream& out) {
  out << r.config.title << "\n"
      << "tokens/s of each family's best plan by the planner, each model at its published global batch (\"B "
         "n\": above it where none of the family's layouts takes it: of the smallest batches each replica "
         "count takes, where 3D is planned too, the one the family trains fastest at by the first critical "
         "batch, or of the shortest step where none is stated; at each critical batch below, each family "
         "at its fastest of them)\n"
      << "sim: simulated; est: estimated, not simulated (its step would simulate past the planner's events "
         "budget), the closed form's tokens/s\n"
      << "3D/DP: time to train at the first critical batch, DP-heavy's over 3D's (tokens/s when none is "
         "stated)\n"
      << "IB port: InfiniBand per NIC port (the study file's ib_bandwidths); IB/GPU: what it carries for a "
         "GPU when all send at once, the machine's NICs, each at the lesser of its port and its PCIe link, "
         "over its GPUs\n\n";
  const ColumnWidths w = column_widths(r);
  // The families' headers span their three columns: 11 for tokens/s, 4 for the basis, the layout.
  out << padded("model", w.model) << " " << padded("machine", w.machine) << " " << padded("IB port", w.ib)
      << " " << padded("IB/GPU", w.ib_per_gpu) << " " << padded("GPUs", 6, true) << "  "
      << padded("DP-heavy: tokens/s, basis, layout", 17 + w.dp_heavy) << " "
      << padded("3D: tokens/s, basis, layout", 17 + w.three_d) << " " << padded("3D/DP", 5, true) << "\n";
  for (const LlmStudyCell& c : r.cells) {
    const double advantage = llm_three_d_advantage(r, c);
    out << padded(c.model, w.model) << " " << padded(c.cluster, w.machine) << " " << padded(c.ib, w.ib) << " "
        << padded(c.ib_per_gpu, w.ib_per_gpu) << " " << padded(std::to_string(c.gpus), 6, true) << "  "
        << family(c, c.dp_heavy, c.dp_heavy_refusal, w.dp_heavy) << " "
        << family(c, c.three_d, c.three_d_refusal, w.three_d) << " "
        << padded(advantage > 0 ? format_fixed(advantage, 2) : "-", 5, true) << "\n";
  }
  out << "\n";
  for (const LlmStudyCell& c : r.cells) {
    if (c.ib != r.config.ib_bandwidths.front()) continue;
    if (!c.dp_heavy_note.empty())
      out << "DP-heavy, " << c.model << " on " << c.gpus << " GPUs of " << c.cluster << ": "
          << c.dp_heavy_note << "\n";
    if (!c.three_d_note.empty())
      out << "3D, " << c.model << " on " << c.gpus << " GPUs of " << c.cluster << ": " << c.three_d_note
          << "\n";
  }
  print_same_share(r, out);
  print_faster_estimates(r, out);
  print_stops_paying(r, out);
  print_break_even(r, out);
  print_times_to_train(r, out);
}

void print_llm_study(const LlmStudyResult& r, std::ostream& out) {
  print_llm_table(r, out);
  std::size_t simulated = 0, estimated = 0;
  for (const LlmStudyCell& c : r.cells)
    for (const auto* f : {&c.dp_heavy, &c.three_d})
      if (*f) ++((*f)->simulated() ? simulated : estimated);
  // No wall time here (the goldens pin these bytes): the study command prints it with the progress.
  out << "study: " << r.cells.size() << " cells, " << simulated << " best plans simulated, " << estimated
      << " estimated\n";
}

}  // namespace hybridsim::analysis
