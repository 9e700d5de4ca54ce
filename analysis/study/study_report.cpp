// The study's Markdown summary and the terminal headline table; the report folder they go in is
// study_report_folder.cpp's.
#include "analysis/study/study_report.h"

#include <algorithm>
#include <ostream>
#include <sstream>

#include "analysis/study/study_report_detail.h"
#include "scenarios/loader/scenario.h"
#include "workloads/gpu/gpu.h"

namespace hybridsim::analysis {
namespace {

using study_detail::strategy;

std::string ms(sim::Time t) { return format_fixed(t.to_ms(), 1); }

std::string row_cell(const StudyRow& r) {
  return std::to_string(r.gpus) + " GPUs, " + (r.is_dp() ? "DP" : "dp " + std::to_string(r.dp) + " x mp " +
                                                                       std::to_string(r.mp)) +
         ": " + format_duration(r.ttt.seconds);
}

// What stands where there is no best of a kind: "none fits" only when the grid holds
// configurations of that kind and memory leaves all of them out; "none in the grid" when it holds
// none (odd GPU counts, an mp that divides none of them: the network's notes say why).
std::string none_cell(const StudyVariant& v, bool hybrid) {
  const bool any =
      std::any_of(v.rows.begin(), v.rows.end(), [&](const StudyRow& r) { return r.is_dp() != hybrid; });
  return any ? "none fits" : "none in the grid";
}

std::string crossover_cell(const StudyHeadline& h) {
  return h.crossover ? std::to_string(*h.crossover) + " GPUs" : "not in the grid";
}

// "inception-v3: torch, gnmt: apex, biglstm: torch": each network's networks[].communication.ddp.
std::string ddp_list(const StudyConfig& c) {
  std::string s;
  for (const auto& n : c.networks)
    s += (s.empty() ? "" : ", ") + n.name + ": " + std::string(workloads::ddp_name(n.ddp));
  return s;
}

std::string epochs_cell(const TimeToTrain& t) {
  return format_fixed_nonzero(t.epochs, 1) + (t.extrapolated ? "*" : "");
}

// Where memory leaves no best DP or no best hybrid, the answer were memory no limit (so a reader sees
// what the verdict rests on, and how far it is from the one without memory): empty otherwise.
std::string unlimited_memory_line(const StudyResult& result, const NetworkStudy& ns) {
  const StudyVariant& v = ns.main();
  if (v.headline.best_dp >= 0 && v.headline.best_hybrid >= 0) return {};
  const StudyHeadline h = compute_headline(v, /*respect_memory=*/false);
  if (h.best_dp < 0 || h.best_hybrid < 0) return {};
  const StudyRow& dp = v.row(h.best_dp);
  const StudyRow& hy = v.row(h.best_hybrid);
  const auto [dp_time, hybrid_time] = format_durations_alike(dp.ttt.seconds, hy.ttt.seconds);
  return result.network(ns).name + ": were memory no limit, best DP " + std::to_string(dp.gpus) + " GPUs " +
         dp_time + ", best hybrid " + std::to_string(hy.dp) + " x " + std::to_string(hy.mp) + " " +
         hybrid_time + ": hybrid gain " + format_percent(h.gain_best) + " (" +
         result.spelling.quoted("memory", "32 GiB") + " checks it on GPUs of that size)";
}

void headline_section(const StudyResult& result, std::ostream& md) {
  const int max_gpus = result.config.gpus.back();
  md << "## Headline\n\n"
     << "| network | best DP | best hybrid | hybrid gain over best DP | gain at N = " << max_gpus
     << " | hybrid overtakes DP from | published (Pal et al. 2019) |\n|---|---|---|---|---|---|---|\n";
  for (const auto& ns : result.networks) {
    const StudyVariant& v = ns.main();
    const StudyHeadline& h = v.headline;
    const auto pub = published_gain(result.network(ns).name);
    // No best DP or hybrid (none fits in the GPU's memory, or none in the grid): no gain.
    const bool both = h.best_dp >= 0 && h.best_hybrid >= 0;
    md << "| " << result.network(ns).name << " | "
       << (h.best_dp >= 0 ? row_cell(v.row(h.best_dp)) : none_cell(v, false)) << " | "
       << (h.best_hybrid >= 0 ? row_cell(v.row(h.best_hybrid)) : none_cell(v, true)) << " | "
       << (both ? "**" + format_percent(h.gain_best) + "**" : std::string("-")) << " | "
       << (h.dp_at_max >= 0 && h.hybrid_at_max >= 0 ? format_percent(h.gain_at_max) : std::string("-"))
       << " | " << (both ? crossover_cell(h) : std::string("-")) << " | "
       << (pub ? "at least " + format_percent(*pub) : std::string("-")) << " |\n";
  }
  for (const auto& ns : result.networks)
    if (const std::string line = unlimited_memory_line(result, ns); !line.empty())
      md << "\n" << line << ".\n";
  md << "\n**Definitions.** Time to train = epochs(B) x ceil(dataset / B) x step time, with B = dp x the "
        "per-worker batch of the profile (a hybrid worker of mp GPUs processes that same batch, so at the "
        "same GPU count hybrid's global batch is mp times smaller). *Best DP* is DP's shortest time to "
        "train over every N of the grid, *best hybrid* the shortest over every N and mp >= 2. "
        "**Hybrid gain over best DP = best-DP time / best-hybrid time - 1** (positive: hybrid trains "
        "faster than DP alone can on at most "
     << max_gpus
     << " GPUs). *Gain at N* compares DP and the best hybrid on the same largest GPU count. "
        "*Hybrid overtakes DP from* is the smallest N from which the best hybrid beats DP at that N "
        "and at every larger N of the grid. Epochs marked * lie outside the curve's supported batch "
        "range (an extrapolation). A configuration whose peak memory on some GPU exceeds the GPU's ("
     << (result.memory ? workloads::format_gib(result.memory->bytes) + ", " + result.memory->source
                       : std::string("unknown here"))
     << "; workloads/README.md, \"Memory per GPU\") is never best: each network's notes list them.\n\n";
}

void break_even_section(const StudyResult& result, std::ostream& md) {
  md << "## Where DP stops paying, and how far the answer is from flipping\n\n"
     << "| network | DP alone | hybrid at DP's best | break-even: hybrid's step time | "
        "break-even: DP's epochs at its best batch |\n|---|---|---|---|---|\n";
  std::vector<std::string> unlimited_lines;
  for (const auto& ns : result.networks) {
    const StudyVariant& v = ns.main();
    const auto t = study_detail::break_even_text(result, v, v.break_even);
    auto cell = [](const std::string& s) { return s.empty() ? std::string("-") : s; };
    md << "| " << result.network(ns).name << " | " << t.peak << " | " << cell(t.gain) << " | " << cell(t.step)
       << " | " << cell(t.epochs) << " |\n";
    if (!study_detail::memory_shapes_break_even(v)) continue;
    const StudyBreakEven unlimited = compute_break_even(v, /*respect_memory=*/false);
    if (unlimited.best_dp < 0) continue;
    const auto u = study_detail::break_even_text(result, v, unlimited);
    std::string line = result.network(ns).name + ", were memory no limit: " + u.peak;
    if (!u.gain.empty()) line += "; " + u.gain;
    if (!u.step.empty()) line += "; break-even: " + u.step + "; or " + u.epochs;
    unlimited_lines.push_back(line + ".");
  }
  for (const auto& line : unlimited_lines) md << "\n" << line << "\n";
  md << "\n**Definitions** (derivation: analysis/README.md, \"Break-even\"). *DP's end-to-end speedup stops "
        "growing* at the best DP's GPU count when a larger DP count of the grid trains no faster; *still "
        "improving at the grid's edge* when the best DP is at the largest N. *Hybrid's gain there* = "
        "best-DP time / time of the best hybrid on at most that many GPUs - 1. Time to train is a product "
        "(step time x steps per epoch x epochs), so: **(a)** with every hybrid step time multiplied by "
        "s, the best hybrid ties the best DP at s = best-DP time / best-hybrid time (below it hybrid "
        "wins); **(b)** with the epochs at the best DP's global batch B multiplied by f (every "
        "configuration of that batch), the answer flips at the f given (in the usual case the best "
        "hybrid's time over the best DP's, 1 / s), unless DP on another GPU count, or a hybrid of batch B, "
        "decides first. Configurations that do not fit in memory take part in none of it.\n\n";
}

void sensitivity_section(const StudyResult& result, std::ostream& md) {
  std::vector<std::string> labels;
  for (const auto& ns : result.networks)
    for (const auto& v : ns.variants)
      if (std::find(labels.begin(), labels.end(), v.label) == labels.end()) labels.push_back(v.label);
  if (labels.size() < 2) return;
  md << "## Sensitivity of the headline\n\nHybrid gain over best DP (best DP N / best hybrid N x mp) "
        "under each statistical-efficiency variant and with faster InfiniBand (the headline curve, "
        "steps simulated again on the faster fabric). A variant that only scales every epoch count by "
        "a constant (another E_min, the same B_noise) cannot move a ratio of times to train, so it "
        "leaves the gain unchanged; variants with another B_noise, and the faster fabric, can.\n\n"
        "| network |";
  for (const auto& l : labels) md << " " << l << " |";
  md << "\n|---|";
  for (std::size_t i = 0; i < labels.size(); ++i) md << "---|";
  md << "\n";
  for (const auto& ns : result.networks) {
    md << "| " << result.network(ns).name << " |";
    for (const auto& l : labels) {
      const auto it = std::find_if(ns.variants.begin(), ns.variants.end(),
                                   [&](const StudyVariant& v) { return v.label == l; });
      if (it == ns.variants.end() || it->headline.best_dp < 0 || it->headline.best_hybrid < 0) {
        md << " - |";
        continue;
      }
      const StudyRow& d = it->row(it->headline.best_dp);
      const StudyRow& h = it->row(it->headline.best_hybrid);
      md << " " << format_percent(it->headline.gain_best) << " (" << d.gpus << " / " << h.gpus << " x "
         << h.mp << ") |";
    }
    md << "\n";
  }
  md << "\n";
}

void network_section(const StudyResult& result, const NetworkStudy& ns, std::ostream& md) {
  const StudyNetwork& net = result.network(ns);
  const StudyVariant& v = ns.main();
  md << "## " << net.name << "\n\n"
     << "Per-worker batch " << format_count(net.profile.meta.batch_per_gpu) << " samples (a sample: "
     << net.dataset.sample << "); 1-GPU step " << ms(v.baseline.step.step_time) << " ms; MP placement: "
     << workloads::partitioner_name(net.partitioner) << " partitioner; curve " << v.curve.network << "/"
     << v.curve.variant << "; dataset " << net.dataset.name << " (" << format_count(net.dataset.samples)
     << " samples per epoch); 1-GPU time to train " << format_duration(v.baseline.ttt.seconds) << ".\n\n"
     << "### Why\n\n" << study_detail::why_text(ns) << "\n";
  for (const auto& note : ns.notes) md << "Note: " << note << "\n\n";
  md << "### Every configuration (headline curve)\n\n"
     << "| N | dp x mp | global batch | step ms | compute / exposed comm / idle ms (critical GPU) | "
        "per-step speedup | epochs | steps per epoch | time to train | end-to-end speedup |\n"
     << "|---|---|---|---|---|---|---|---|---|---|\n";
  auto line = [&](const StudyRow& r, const std::string& label) {
    md << "| " << label << " | " << r.dp << " x " << r.mp << " | " << format_count(r.ttt.global_batch)
       << " | " << ms(r.step.step_time) << " | " << ms(r.step.critical.compute) << " / "
       << ms(r.step.critical.exposed_communication) << " / " << ms(r.step.critical.idle) << " | x"
       << format_fixed(r.step_speedup, 2) << " | " << epochs_cell(r.ttt) << " | "
       << format_steps_per_epoch(r.ttt) << " | " << format_duration(r.ttt.seconds) << " | x"
       << format_fixed(r.e2e_speedup, 2) << " |\n";
  };
  line(v.baseline, "1 (baseline)");
  for (const auto& m : v.mp_alone) line(m, std::to_string(m.gpus) + " (MP alone)");
  for (const auto& r : v.rows) line(r, std::to_string(r.gpus) + (r.is_dp() ? " DP" : " hybrid"));
  md << "\n";
}

void assumptions_section(const StudyResult& result, std::ostream& md) {
  const StudyConfig& c = result.config;
  md << "## Assumptions\n\n"
     << "- **Cluster**: " << c.cluster.preset << " machines (" << gpus_per_machine(c.cluster)
     << " GPUs each); a GPU count that fits one machine runs on one machine without InfiniBand, larger "
        "ones on ceil(N / "
     << gpus_per_machine(c.cluster) << ") machines joined by InfiniBand at "
     << sim::format_bandwidth(topology::ib_bandwidth_of(c.cluster)) << " per link and direction"
     << (topology::ib_bandwidth_of(c.cluster) == topology::presets::kEdrBandwidth ? " (EDR = 100 Gb/s), "
                                                                                  : ", ")
     << topology::presets::fabric_name(c.cluster.fabric) << " fabric, oversubscription "
     << format_fixed(c.cluster.oversubscription, 2) << ", "
     << sim::format_time(topology::presets::kDefaultIbLatency) << " per InfiniBand hop, "
     << topology::presets::kDefaultLeafRadix << " NIC ports per leaf (topology/cluster.h defaults).\n"
     << "- **Mapping**: a worker's mp GPUs sit together on the fastest links of one machine (an NVLink "
        "pair for mp = 2, an NVLink quad for mp = 4); the data-parallel groups span the machines "
        "(workloads/program/mapping.h default_mapping).\n"
     << "- **Communication**: gradients all-reduced with the " << workloads::algorithm_name(c.algorithm)
     << " algorithm in buckets of "
     << (c.bucket_size ? sim::human_bytes(*c.bucket_size)
                       : std::string("the DDP's default (25 MB torch, 10 M elements apex)"))
     << " under each network's framework's data-parallel wrapper (" << ddp_list(c)
     << "; workloads/README.md), each launched as soon as backward has produced it (overlapping the rest of "
        "backward); "
        "sparse embedding gradients all-gathered where the profile says so; collective messages of "
     << sim::format_bytes(c.message_size)
     << (c.fast_path == scenarios::kDefaultFastPath
             ? std::string()
             : " (collectives simulated with communication.fast_path " +
                   std::string(sim::fast_path_name(c.fast_path)) + ", sim/README.md \"Folding\")")
     << "; reductions at a quarter of the simulated GPU's HBM peak ("
     << sim::format_bandwidth(workloads::reduction_bandwidth(&workloads::gpu_by_key("v100")))
     << " on a V100, "
     << sim::format_bandwidth(workloads::reduction_bandwidth(&workloads::gpu_by_key("a100")))
     << " on an A100 80GB)"
     << "; compute is not slowed by concurrent communication. Model-parallel "
        "activations and their gradients are sent point to point between a worker's GPUs.\n"
     << "- **Step**: one simulated training step per configuration (forward, backward, gradient "
        "exchange, optimizer), repeated identically for every step of training; no input pipeline, "
        "checkpointing or evaluation time (MLPerf's GNMT runs evaluate once per epoch, but no "
        "reference gives an evaluation's duration, so none is invented).\n";
  for (const auto& ns : result.networks) {
    const StudyNetwork& net = result.network(ns);
    md << "- **" << net.name << "**: profile " << net.profile_source << " (" << net.profile.meta.gpu << " "
       << net.profile.meta.precision << ", " << format_count(net.profile.meta.batch_per_gpu)
       << " samples per worker, " << net.profile.ops.size() << " ops, "
       << sim::human_bytes(net.profile.parameter_bytes()) << " of parameters; " << net.profile.meta.source
       << "). Curve " << ns.main().curve.network << "/" << ns.main().curve.variant << ": "
       << ns.main().curve.source << (ns.main().curve.is_estimate ? " (an ESTIMATE)" : "")
       << " Dataset: " << net.dataset.source << "\n";
    for (const auto& s : net.sensitivity_curves)
      md << "  - sensitivity curve " << s.network << "/" << s.variant << ": " << s.source << "\n";
  }
  md << "\n";
}

}  // namespace

std::string study_markdown(const StudyResult& result, const std::vector<std::string>& plots,
                           const std::vector<std::string>& problems, const std::string& command) {
  std::ostringstream md;
  md << "# " << result.config.title << "\n\n"
     << "Computed by hybridsim from simulated training steps and statistical-efficiency curves; study "
        "file `"
     << result.config.source << "`" << (command.empty() ? "" : ", run as `" + command + "`")
     << ". GPU counts "
     << "N: ";
  for (std::size_t i = 0; i < result.config.gpus.size(); ++i) md << (i ? ", " : "") << result.config.gpus[i];
  md << "; hybrid workers of mp = ";
  for (std::size_t i = 0; i < result.config.mp.size(); ++i) md << (i ? ", " : "") << result.config.mp[i];
  md << " GPUs; " << result.steps_simulated << " training steps simulated.\n\n";
  headline_section(result, md);
  break_even_section(result, md);
  sensitivity_section(result, md);
  md << "## Figures\n\n";
  for (const auto& p : plots) md << "![" << p << "](" << p << ")\n\n";
  if (plots.empty()) md << "No pictures were drawn.\n\n";
  for (const auto& p : problems) md << "- " << p << "\n";
  if (!problems.empty()) md << "\nThe CSV files hold every number the pictures would show.\n\n";
  for (const auto& ns : result.networks) network_section(result, ns, md);
  assumptions_section(result, md);
  md << "## Files\n\n- `steps.csv`: every simulated step (critical GPU breakdown)\n"
        "- `time_to_train.csv`: every configuration under every variant\n"
        "- `headline.csv`: best DP, best hybrid, gains, crossover and break-even per network and variant\n"
        "- `epochs.csv`: the efficiency curves sampled at powers of two\n";
  // What is there: --no-plots writes neither pictures nor scripts; gnuplot missing (or failing), the
  // scripts alone.
  if (!plots.empty())
    md << "- `*.png` with their gnuplot scripts `*.png.gp` (data inline)\n";
  else if (std::find(problems.begin(), problems.end(), kPicturesNotRequested) == problems.end())
    md << "- `*.png.gp`: the pictures' gnuplot scripts (data inline), none drawn: `gnuplot FILE` draws "
          "one\n";
  return md.str();
}

void print_headline_table(const StudyResult& result, std::ostream& out) {
  const int max_gpus = result.config.gpus.back();
  out << "hybrid vs data parallelism, end to end (time to train = epochs(B) x steps per epoch x step time)\n";
  char line[512];
  std::snprintf(line, sizeof line, "%-14s %-24s %-30s %12s %10s %11s %s\n", "network", "best DP",
                "best hybrid (dp x mp)", "gain vs best", ("at N=" + std::to_string(max_gpus)).c_str(),
                "overtakes", "sensitivity range");
  out << line;
  for (const auto& ns : result.networks) {
    const StudyVariant& v = ns.main();
    const StudyHeadline& h = v.headline;
    double lo = h.gain_best, hi = h.gain_best;
    for (const auto& s : ns.variants) {
      lo = std::min(lo, s.headline.gain_best);
      hi = std::max(hi, s.headline.gain_best);
    }
    const std::string dp = h.best_dp >= 0 ? std::to_string(v.row(h.best_dp).gpus) + " GPUs " +
                                                format_duration(v.row(h.best_dp).ttt.seconds)
                                          : "-";
    const std::string hy = h.best_hybrid >= 0 ? std::to_string(v.row(h.best_hybrid).dp) + " x " +
                                                    std::to_string(v.row(h.best_hybrid).mp) + " " +
                                                    format_duration(v.row(h.best_hybrid).ttt.seconds)
                                              : "-";
    const std::string cross = h.crossover ? "N=" + std::to_string(*h.crossover) : "never";
    const std::string range = format_percent(lo) + " .. " + format_percent(hi);
    // Without a best DP or hybrid (none fits in memory) there is no gain to state.
    const bool both = h.best_dp >= 0 && h.best_hybrid >= 0;
    const bool both_at_max = h.dp_at_max >= 0 && h.hybrid_at_max >= 0;
    std::snprintf(line, sizeof line, "%-14s %-24s %-30s %12s %10s %11s %s\n", result.network(ns).name.c_str(),
                  h.best_dp >= 0 ? dp.c_str() : none_cell(v, false).c_str(),
                  h.best_hybrid >= 0 ? hy.c_str() : none_cell(v, true).c_str(),
                  both ? format_percent(h.gain_best).c_str() : "-",
                  both_at_max ? format_percent(h.gain_at_max).c_str() : "-", both ? cross.c_str() : "-",
                  both ? range.c_str() : "-");
    out << line;
  }
  out << "gain vs best = best-DP time / best-hybrid time - 1 over every N <= " << max_gpus
      << "; sensitivity range over the efficiency variants and faster InfiniBand.\n";
  // Whose DDP: plan and run default to torch, so a study's GNMT (apex) differs from their steps.
  out << "data parallelism as each network's framework's wrapper (networks[].communication.ddp): "
      << ddp_list(result.config) << "; hybridsim plan and run default to torch\n";
  for (const auto& ns : result.networks) {
    const auto& rows = ns.main().rows;
    const auto unfit =
        std::count_if(rows.begin(), rows.end(), [](const StudyRow& r) { return !r.does_not_fit.empty(); });
    if (unfit > 0 && result.memory)
      out << result.network(ns).name << ": " << unfit << " of " << rows.size()
          << " configurations do not fit in " << workloads::format_gib(result.memory->bytes) << " ("
          << result.memory->source << ") and are left out of best (the report's notes list them)\n";
    // The headline's steps, then the faster InfiniBand's (the efficiency curves share the headline's).
    for (const auto& v : ns.variants)
      if (&v == &ns.main() || v.ib_factor != 1.0)
        for (const auto& n : v.not_simulated)
          out << result.network(ns).name << ": " << n.configuration
              << (&v == &ns.main() ? "" : " (" + v.label + ")")
              << " not simulated (refused during its run) and left out of every figure (the report's notes "
                 "say why)\n";
    if (const std::string line = unlimited_memory_line(result, ns); !line.empty()) out << line << "\n";
    if (!ns.no_hybrid.empty()) out << result.network(ns).name << ": " << ns.no_hybrid << "\n";
    if (!ns.kernel_note.empty()) out << result.network(ns).name << ": " << ns.kernel_note << "\n";
  }
  out << "where DP stops paying, and how far the answer is from flipping (headline curve; "
         "analysis/README.md, "
         "\"Break-even\"):\n";
  for (const auto& ns : result.networks) {
    const StudyVariant& v = ns.main();
    auto print = [&](const std::string& lead, const StudyBreakEven& be) {
      const auto t = study_detail::break_even_text(result, v, be);
      out << lead << t.peak;
      if (!t.gain.empty()) out << "; " << t.gain;
      out << "\n";
      if (!t.step.empty()) out << "  break-even: " << t.step << ";\n  or " << t.epochs << "\n";
    };
    print(result.network(ns).name + ": ", v.break_even);
    if (study_detail::memory_shapes_break_even(v)) {
      const StudyBreakEven unlimited = compute_break_even(v, /*respect_memory=*/false);
      if (unlimited.best_dp >= 0) print("  were memory no limit: ", unlimited);
    }
  }
}

}  // namespace hybridsim::analysis
