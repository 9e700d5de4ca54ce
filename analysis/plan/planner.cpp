#include "analysis/plan/planner.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <ostream>

#include "analysis/plan/nothing_fits.h"
#include "analysis/platform/platform.h"
#include "analysis/step/memory_report.h"
#include "analysis/study/study_config.h"
#include "analysis/study/study_report.h"
#include "sim/error.h"
#include "sim/yaml/input_file.h"
#include "sim/yaml/schema.h"
#include "topology/preset_registry.h"
#include "workloads/generators/gpu_choice.h"
#include "workloads/generators/profile_gen.h"
#include "workloads/generators/transformer_model.h"
#include "workloads/gpu/gpu.h"
#include "workloads/gpu/gpu_part_note.h"
#include "workloads/profile/profile_io.h"
#include "workloads/program/strategy_label.h"

namespace hybridsim::analysis {
namespace {

std::string ms(sim::Time t) { return format_fixed(t.to_ms(), 1); }

// The largest GPU's peak memory of a candidate, in GiB ("4.96"), "-" when not modelled.
std::string peak_gib(const PlanCandidate& c) {
  const auto& peaks = c.step.memory_peaks;
  if (peaks.empty()) return "-";
  std::string s = workloads::format_gib(workloads::largest_peak(peaks));
  return s.substr(0, s.size() - 4);
}

std::string label(const StepLabel& k) {
  std::string s = std::to_string(k.dp()) + " x " + std::to_string(k.mp);
  if (k.mp > 1) s += " " + std::string(workloads::partitioner_name(k.partitioner));
  s += ", " + sim::human_bytes(sim::Bytes::of(k.bucket_bytes)) + " buckets, " +
       std::string(workloads::algorithm_name(k.algorithm));
  return s;
}

bool better(const PlanCandidate& a, const PlanCandidate& b, PlanObjective o) {
  if (o == PlanObjective::TimeToTrain && a.ttt && b.ttt) return a.ttt->seconds < b.ttt->seconds;
  return a.samples_per_second > b.samples_per_second;
}

// Time to train (lower is better) or seconds per sample, so that ratios read the same way.
double score(const PlanCandidate& c, PlanObjective o) {
  if (o == PlanObjective::TimeToTrain && c.ttt) return c.ttt->seconds;
  return 1.0 / c.samples_per_second;
}

std::string differences(const StepLabel& a, const StepLabel& b) {
  std::string s;
  auto add = [&](const char* what) { s += (s.empty() ? "" : ", ") + std::string(what); };
  if (a.mp != b.mp) add("dp x mp");
  if (a.mp == b.mp && a.mp > 1 && a.partitioner != b.partitioner) add("placement");
  if (a.bucket_bytes != b.bucket_bytes) add("bucket size");
  if (a.algorithm != b.algorithm) add("algorithm");
  return s.empty() ? "nothing searched" : s;
}

std::string breakdown(const PlanCandidate& c) {
  const auto& m = c.step.critical;
  std::string s = "step " + ms(c.step.step_time) + " ms (critical GPU: " + ms(m.compute) + " compute, " +
                  ms(m.exposed_communication) + " exposed communication, " + ms(m.idle) + " idle)";
  s += ", global batch " + format_count(c.step.global_batch);
  if (c.ttt)
    s += ", " + format_fixed_nonzero(c.ttt->epochs, 2) + (c.ttt->extrapolated ? "* " : " ") + "epochs of " +
         format_steps_per_epoch(*c.ttt) + " steps";
  return s;
}

// Why `a` ranks above `b`: for time to train, the exact split into epochs and epoch time.
std::string versus(const PlanCandidate& a, const PlanCandidate& b, PlanObjective o) {
  if (o == PlanObjective::TimeToTrain && a.ttt && b.ttt) {
    const double epochs = b.ttt->epochs / a.ttt->epochs;
    const double epoch_a = a.ttt->steps_per_epoch * a.step.step_time.to_seconds();
    const double epoch_b = b.ttt->steps_per_epoch * b.step.step_time.to_seconds();
    return "vs " + label(b.step.label) + " (" + format_duration(b.ttt->seconds) + "): that one needs x" +
           format_fixed(epochs, 2) + " the epochs and x" + format_fixed(epoch_b / epoch_a, 2) +
           " the time per epoch, so it takes " +
           format_fixed(100 * (b.ttt->seconds / a.ttt->seconds - 1), 1) + "% longer to train";
  }
  return "vs " + label(b.step.label) + ": x" + format_fixed(a.samples_per_second / b.samples_per_second, 3) +
         " its throughput (exposed communication " + ms(a.step.critical.exposed_communication) + " vs " +
         ms(b.step.critical.exposed_communication) + " ms, idle " + ms(a.step.critical.idle) + " vs " +
         ms(b.step.critical.idle) + " ms)";
}

}  // namespace

std::string_view objective_name(PlanObjective o) {
  return o == PlanObjective::TimeToTrain ? "time-to-train" : "throughput";
}

PlanObjective parse_objective(std::string_view text) {
  if (text == "time-to-train" || text == "time_to_train" || text == "ttt") return PlanObjective::TimeToTrain;
  if (text == "throughput") return PlanObjective::Throughput;
  throw InputError("unknown objective \"" + std::string(text) + "\": expected time-to-train or throughput");
}

std::vector<int> plan_mp_values(const PlanRequest& r) {
  std::vector<int> out;
  if (!r.search.mp.empty()) {
    for (const int m : r.search.mp)
      if (m >= 1 && r.gpus % m == 0) out.push_back(m);
    return out;
  }
  const int limit = std::min({8, gpus_per_machine(r.cluster), static_cast<int>(r.profile.ops.size())});
  for (int m = 1; m <= limit; ++m)
    if (r.gpus % m == 0) out.push_back(m);
  return out;
}

namespace {

// The placements searched at `mp`: each partitioner whose placement is valid, uses every GPU of the
// worker and differs from the ones before it (only one at mp 1). What is left out, and why, goes
// to `skipped`.
std::vector<workloads::Partitioner> distinct_partitioners(const PlanRequest& request, int mp,
                                                          std::vector<std::string>& skipped) {
  std::vector<std::pair<workloads::Partitioner, std::vector<std::uint32_t>>> accepted;
  const auto partitioners = mp == 1 ? std::vector<workloads::Partitioner>{workloads::Partitioner::Layers}
                                    : request.search.partitioners;
  for (const auto p : partitioners) {
    const std::string what = "mp = " + std::to_string(mp) + " " + std::string(workloads::partitioner_name(p));
    workloads::MpPlacement placement;
    try {
      placement = worker_placement(request.profile, mp, p);
    } catch (const InputError& e) {
      skipped.push_back(what + ": " + e.what());
      continue;
    }
    if (!placement.uses_every_gpu()) {
      skipped.push_back(what + ": " + placement.idle_gpus_text());
      continue;
    }
    const auto same = std::find_if(accepted.begin(), accepted.end(),
                                   [&](const auto& a) { return a.second == placement.gpu_of_op; });
    if (same != accepted.end()) {
      skipped.push_back(what + ": the same placement as " +
                        std::string(workloads::partitioner_name(same->first)));
      continue;
    }
    accepted.emplace_back(p, placement.gpu_of_op);
  }
  std::vector<workloads::Partitioner> out;
  for (const auto& a : accepted) out.push_back(a.first);
  return out;
}

// The configurations to simulate, as scenario overlays: each distinct placement with each bucket
// size and algorithm (one of each when there is a single worker: no gradient exchange).
std::vector<StepRequest> candidate_requests(const PlanRequest& request, const std::vector<int>& mp_values,
                                            std::vector<std::string>& skipped) {
  const std::string name = request.profile.meta.network;
  const sim::Bandwidth ib = topology::ib_bandwidth_of(request.cluster);
  std::vector<StepRequest> requests;
  for (const int mp : mp_values) {
    const bool single_worker = request.gpus == mp;
    for (const auto p : distinct_partitioners(request, mp, skipped))
      for (const auto bucket : request.search.bucket_sizes)
        for (const auto algorithm : request.search.algorithms) {
          StepRequest r{name, cluster_overlay(request.cluster, request.gpus, ib)};
          for (auto& o : workload_overlay(name, request.profile_file, {}))
            r.overlay.push_back(std::move(o));
          const std::string placement = mp == 1 ? "auto" : std::string(workloads::partitioner_name(p));
          for (auto& o : parallelism_overlay(request.gpus / mp, mp, placement))
            r.overlay.push_back(std::move(o));
          for (auto& o :
               communication_overlay(single_worker ? workloads::AllReduceAlgorithm::Ring : algorithm,
                                     single_worker ? workloads::StepOptions{}.bucket_size : bucket,
                                     request.message_size, request.fast_path))
            r.overlay.push_back(std::move(o));
          r.overlay.insert(r.overlay.end(), request.limits.begin(), request.limits.end());
          if (std::find(requests.begin(), requests.end(), r) == requests.end())
            requests.push_back(std::move(r));
        }
  }
  return requests;
}

// The simulated steps as candidates (failures skipped, with why), best first by the objective;
// those that do not fit in request.memory go to `unfit` and, unless shown, no further.
std::vector<PlanCandidate> rank_candidates(const PlanRequest& request, const std::vector<StepRef>& ids,
                                           const StepCache& steps, std::vector<std::string>& skipped,
                                           std::vector<PlanResult::Unfit>& unfit,
                                           std::vector<PlanResult::Unfit>& as_ring,
                                           std::vector<PlanResult::NotSimulated>& not_simulated) {
  std::vector<PlanCandidate> ranked;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (const StepFailure* f = steps.failure(ids[i].id)) {
      if (f->over_budget) {  // past its caps: said apart as not simulated, by the refusal's own words
        not_simulated.push_back({ids[i].label, f->over_budget->words});
        continue;
      }
      const std::string who = (f->overlay.empty() ? describe(ids[i].label) : f->overlay) + ": ";
      skipped.push_back(f->why.starts_with(who) ? f->why : who + f->why);  // a budget names it already
      continue;
    }
    PlanCandidate c;
    c.step = steps.point(ids[i]);
    // The hierarchical all-reduce where its GPUs cannot run it (one machine, unequal machines) is the
    // ring under another label: ranked, it tied with its ring row "differing in algorithm", with more
    // NCCL buffers counted (GNMT on 8 GPUs: 22 of 44 rows), where `collective` and `validate` refuse it.
    if (!c.step.hierarchical_as_ring.empty()) {
      as_ring.push_back({c.step.label, c.step.hierarchical_as_ring, {}, {}});
      continue;
    }
    c.samples_per_second = static_cast<double>(c.step.global_batch) / c.step.step_time.to_seconds();
    if (request.curve && request.dataset)
      c.ttt = time_to_train(c.step.step_time, c.step.global_batch, request.dataset->samples,
                            request.curve->efficiency);
    c.does_not_fit = does_not_fit_text(c.step.memory_peaks, {}, request.memory);
    if (!c.does_not_fit.empty()) {
      const LargestNeed need = largest_need(c.step.memory_peaks, {});
      unfit.push_back({c.step.label, c.does_not_fit, need.bytes, need.text});
      if (!request.show_unfit) continue;
    }
    ranked.push_back(std::move(c));
  }
  // Those that fit first (the planner never recommends one that does not), each part by objective.
  std::stable_sort(ranked.begin(), ranked.end(), [&](const PlanCandidate& a, const PlanCandidate& b) {
    if (a.does_not_fit.empty() != b.does_not_fit.empty()) return a.does_not_fit.empty();
    return better(a, b, request.objective);
  });
  return ranked;
}

// Why the best few win: their breakdown, and the comparison with the best candidate of another
// kind (best DP alone for a hybrid winner, best hybrid for a DP winner) and with the next one.
void explain_winners(std::vector<PlanCandidate>& ranked, PlanObjective objective) {
  const auto best_of = [&](auto pred) -> const PlanCandidate* {
    for (const auto& c : ranked)
      if (pred(c)) return &c;
    return nullptr;
  };
  for (std::size_t i = 0; i < ranked.size() && i < 5; ++i) {
    PlanCandidate& c = ranked[i];
    c.why = breakdown(c);
    const PlanCandidate* other = nullptr;
    if (i == 0) {
      const bool dp = c.step.label.mp == 1;
      other = best_of(
          [&](const PlanCandidate& o) { return (o.step.label.mp == 1) != dp && o.does_not_fit.empty(); });
      if (other)
        c.why += "; best " + std::string(dp ? "hybrid" : "DP alone") + ": " + versus(c, *other, objective);
    }
    if (i + 1 < ranked.size() && &ranked[i + 1] != other) {
      const PlanCandidate& next = ranked[i + 1];
      const double ratio = score(next, objective) / score(c, objective);
      if (std::abs(ratio - 1) < 0.005)
        c.why += "; ties with #" + std::to_string(i + 2) + " (within 0.5%; it differs in " +
                 differences(c.step.label, next.step.label) + ")";
      else
        c.why += "; next: " + versus(c, next, objective);
    }
  }
}

// An empty ranking is no answer: say why nothing is ranked (nothing fits in memory: what the first
// candidate needs and the option to change; or every candidate failed) instead of printing an empty table.
[[noreturn]] void refuse_empty_ranking(const PlanRequest& request, const PlanResult& result,
                                       std::size_t placements_skipped) {
  const std::string what = request.model + " on " + workloads::gpus_text(request.gpus);
  if (!result.unfit.empty()) {
    const auto least = std::min_element(
        result.unfit.begin(), result.unfit.end(),
        [](const PlanResult::Unfit& a, const PlanResult::Unfit& b) { return a.need < b.need; });
    const OptionSpelling& o = request.spelling;
    throw InputError(nothing_fits_text(
        {.lead = request.memory->origin == workloads::MemoryCapacity::Origin::Option ? o.name("memory")
                                                                                     : std::string(),
         .count = result.unfit.size(),
         .kind = "configurations",
         .what = what,
         .capacity = workloads::format_gib(request.memory->bytes) + " (" + request.memory->source + ")",
         .least = label(least->label),
         .needs = least->needs,
         .expected = "a larger " + o.name("memory") + " or more " + o.name("gpus"),
         .aside = o.switched_on("show-unfit") + " ranks them anyway"}));
  }
  // The first candidate past its caps, with the cap to raise, tells more than a placement left out; then
  // the first failure of a simulated candidate.
  if (!result.not_simulated.empty())
    throw InputError("no configuration of " + what + " could be simulated: " +
                     describe(result.not_simulated[0].label) + ": " + result.not_simulated[0].why);
  const std::size_t first = placements_skipped < result.skipped.size() ? placements_skipped : 0;
  throw InputError("no configuration of " + what + " could be simulated" +
                   (result.skipped.empty() ? std::string() : ": " + result.skipped[first]));
}

}  // namespace

PlanResult plan(const PlanRequest& request, StepCache* cache) {
  if (request.gpus < 1)
    throw InputError("plan: expected at least 1 GPU, got " + std::to_string(request.gpus));
  if (request.objective == PlanObjective::TimeToTrain && (!request.curve || !request.dataset))
    throw InputError(
        "plan: the time-to-train objective needs a statistical-efficiency curve and a dataset for " +
        request.model + "; use the throughput objective");
  StepCache own;
  StepCache& steps = cache ? *cache : own;
  PlanResult result;
  result.model = request.model;
  result.gpus = request.gpus;
  result.cluster = request.cluster;
  result.objective = request.objective;
  result.curve = request.curve;
  result.dataset = request.dataset;
  result.mp_searched = plan_mp_values(request);
  const std::vector<StepRequest> requests = candidate_requests(request, result.mp_searched, result.skipped);

  StepRunContext context{.profiles = {{request.profile.meta.network, &request.profile}}};
  StepRunOptions run;
  run.threads = request.threads;
  run.keep_going = true;
  if (request.progress) run.on_progress = progress_printer(*request.progress, "plan");
  run.progress = request.progress;  // the whole run's estimate and progress with an estimated end
  run.label = "plan";
  run.started = run.clock();  // its parts' lines count from here, so "in all" is the plan's
  run.budget_knobs = study_budget_knobs(request.spelling);
  const std::size_t before = steps.simulated();
  const std::vector<StepRef> ids = steps.simulate(requests, context, run);
  result.simulated = steps.simulated() - before;
  result.memory = request.memory;
  result.spelling = request.spelling;
  // Said where the kernels are not the calibrated V100's (as run's "GPU, precision" line), or a
  // machine of another part of that chip (pcie-server, dgx2) runs them: whose kernel times ran.
  const auto part = workloads::preset_part_note(request.cluster.preset, request.profile.meta.gpu);
  if (part || request.profile.meta.gpu != workloads::gpu_table().front().model)
    result.kernel_times = workloads::kernel_times_note(request.profile) + (part ? "; " + *part : "");
  result.show_unfit = request.show_unfit;
  const std::size_t placements_skipped = result.skipped.size();
  result.events_cap = request.events_cap;
  result.ranked = rank_candidates(request, ids, steps, result.skipped, result.unfit, result.as_ring,
                                  result.not_simulated);
  if (result.ranked.empty()) refuse_empty_ranking(request, result, placements_skipped);
  explain_winners(result.ranked, request.objective);
  // The verdict is of the simulated rows: one past its caps could be faster, and is said to exist.
  if (!result.ranked.empty() && !result.not_simulated.empty())
    result.ranked[0].why += "; best of the simulated (" + std::to_string(result.not_simulated.size()) +
                            " not simulated, listed below)";
  // A winner with no rival of the other kind because none of those fits says so.
  if (!result.ranked.empty() && result.ranked[0].does_not_fit.empty()) {
    PlanCandidate& best = result.ranked[0];
    const bool dp = best.step.label.mp == 1;
    const auto other_kind = [&](const StepLabel& k) { return (k.mp == 1) != dp; };
    const bool rival = std::any_of(result.ranked.begin(), result.ranked.end(), [&](const PlanCandidate& c) {
      return c.does_not_fit.empty() && other_kind(c.step.label);
    });
    const auto unfit = std::count_if(result.unfit.begin(), result.unfit.end(),
                                     [&](const PlanResult::Unfit& u) { return other_kind(u.label); });
    if (!rival && unfit > 0)
      best.why += "; " + std::string(dp ? "no hybrid" : "DP alone does not") + " fit in " +
                  workloads::format_gib(request.memory->bytes) + " (" + std::to_string(unfit) +
                  // --show-unfit ranks them (last, marked !): "left out" contradicted the rows.
                  (request.show_unfit ? " ranked last, marked !)" : " left out)");
  }
  return result;
}

namespace {

// What was not ranked and why: the candidates past their caps, those left out (placements, failures)
// and the hierarchical ones that ran as rings, one line per reason.
void print_left_out(const PlanResult& r, std::ostream& out) {
  if (!r.not_simulated.empty()) {
    out << "not simulated: " << r.not_simulated.size() << " configuration"
        << (r.not_simulated.size() == 1 ? "" : "s")
        << " past their caps (each line says which, and by how much); the ranking above is of the simulated "
           "ones only"
        << (r.events_cap.empty() ? std::string() : " (events: " + r.events_cap + ")") << "\n";
    for (const auto& n : r.not_simulated) out << "not simulated: " << label(n.label) << ": " << n.why << "\n";
  }
  for (const auto& s : r.skipped) out << "left out: " << s << "\n";
  // The hierarchical candidates that ran as rings, one line per reason: "8 x 1, 4 x 2 layers, ..."
  // (each with every bucket size searched).
  std::vector<std::string> reasons;
  for (const auto& a : r.as_ring)
    if (std::find(reasons.begin(), reasons.end(), a.why) == reasons.end()) reasons.push_back(a.why);
  for (const std::string& why : reasons) {
    std::vector<std::string> shapes;
    std::size_t count = 0;
    for (const auto& a : r.as_ring) {
      if (a.why != why) continue;
      ++count;
      std::string shape = std::to_string(a.label.dp()) + " x " + std::to_string(a.label.mp);
      if (a.label.mp > 1) shape += " " + std::string(workloads::partitioner_name(a.label.partitioner));
      if (std::find(shapes.begin(), shapes.end(), shape) == shapes.end()) shapes.push_back(shape);
    }
    std::string listed;
    for (const std::string& shape : shapes) listed += (listed.empty() ? "" : ", ") + shape;
    out << "left out: " << count << " hierarchical configuration" << (count == 1 ? "" : "s") << " (" << listed
        << "), the same steps as their ring rows: each ran its all-reduces as the ring, their GPUs being "
        << why << " (hierarchical needs the same number, 2 or more, on each of two machines or more)\n";
  }
}

// Whose data-parallel wrapper the candidates' steps model: PyTorch DDP, `hybridsim run`'s default, so
// that a row's layout run as a scenario gives its step. The study runs a network under its own
// framework's (study_ddp: apex for GNMT), and its steps differ: said where they do.
std::string data_parallel_wrapper_line(const PlanResult& r) {
  std::string line = "data parallelism as PyTorch DDP (communication.ddp torch, as hybridsim run's default)";
  const std::string network = r.curve ? r.curve->network : r.model;
  if (study_ddp(network) != workloads::Ddp::Torch)
    line += "; hybridsim study runs " + network + " under " +
            std::string(workloads::ddp_name(study_ddp(network))) +
            " DDP, its framework's (networks[].communication.ddp), whose steps differ";
  return line;
}

}  // namespace

void print_plan(const PlanResult& r, std::ostream& out, int top) {
  out << "plan: " << r.model << " on " << workloads::gpus_text(r.gpus) << " of " << r.cluster.preset
      << " machines (" << infiniband_words(r.cluster) << "), objective " << objective_name(r.objective);
  if (r.curve) out << ", curve " << r.curve->network << "/" << r.curve->variant;
  if (r.dataset) out << ", " << r.dataset->name << " (" << format_count(r.dataset->samples) << " samples)";
  out << "\nGPU memory " << (r.memory ? workloads::format_gib(r.memory->bytes) + " (" + r.memory->source + ")"
                                      : std::string("unknown: every configuration counted as fitting"));
  if (!r.kernel_times.empty()) out << "\nGPU, precision " << r.kernel_times;
  out << "\n"
      << data_parallel_wrapper_line(r) << "\n"
      << r.ranked.size() << (r.ranked.size() == 1 ? " configuration" : " configurations") << " ranked (mp in";
  for (const int m : r.mp_searched) out << " " << m;
  out << "; " << r.simulated << (r.simulated == 1 ? " step" : " steps") << " simulated); "
      << r.skipped.size() + r.as_ring.size() << " left out";
  if (!r.not_simulated.empty())
    out << "; " << r.not_simulated.size() << " not simulated (over their caps; listed below, not ranked)";
  if (!r.unfit.empty())
    out << "; " << r.unfit.size()
        << (r.show_unfit ? " do not fit in memory (ranked last, marked !)"
                         : " do not fit in memory (left out; " + r.spelling.switched_on("show-unfit") +
                               " ranks them)");
  out << "\n\n";
  char line[512];
  std::snprintf(line, sizeof line, "%-4s %-9s %-9s %-9s %-13s %9s %9s %21s %8s %14s %12s %9s\n", "rank",
                "dp x mp", "placement", "bucket", "algorithm", "batch", "step ms", "compute/exposed/idle",
                "epochs", "time to train", "samples/s", "peak GiB");
  out << line;
  const std::size_t n = std::min<std::size_t>(r.ranked.size(), static_cast<std::size_t>(std::max(top, 0)));
  for (std::size_t i = 0; i < n; ++i) {
    const PlanCandidate& c = r.ranked[i];
    const StepLabel& k = c.step.label;
    const std::string split = ms(c.step.critical.compute) + "/" + ms(c.step.critical.exposed_communication) +
                              "/" + ms(c.step.critical.idle);
    std::snprintf(
        line, sizeof line, "%-4zu %-9s %-9s %-9s %-13s %9s %9s %21s %8s %14s %12s %9s\n", i + 1,
        (std::to_string(k.dp()) + " x " + std::to_string(k.mp)).c_str(),
        k.mp > 1 ? std::string(workloads::partitioner_name(k.partitioner)).c_str() : "-",
        sim::human_bytes(sim::Bytes::of(k.bucket_bytes)).c_str(),
        std::string(workloads::algorithm_name(k.algorithm)).c_str(),
        format_count(c.step.global_batch).c_str(), ms(c.step.step_time).c_str(), split.c_str(),
        c.ttt ? (format_fixed_nonzero(c.ttt->epochs, 2) + (c.ttt->extrapolated ? "*" : "")).c_str() : "-",
        c.ttt ? format_duration(c.ttt->seconds).c_str() : "-",
        format_count(std::llround(c.samples_per_second)).c_str(),
        (peak_gib(c) + (c.does_not_fit.empty() ? "" : "!")).c_str());
    out << line;
  }
  out << "\n";
  for (std::size_t i = 0; i < n && i < 5; ++i)
    out << "#" << i + 1 << " "
        << (r.ranked[i].does_not_fit.empty() ? "" : "(" + r.ranked[i].does_not_fit + ") ") << r.ranked[i].why
        << "\n";
  // The footnote explains a mark of the rows printed: over every ranked row, it stood under a
  // table without any * (gnmt on 16 GPUs: the top 5 at 2,048, the marked ones ranked lower).
  const auto shown = r.ranked.begin() + static_cast<std::ptrdiff_t>(n);
  if (std::any_of(r.ranked.begin(), shown,
                  [](const PlanCandidate& c) { return c.ttt && c.ttt->extrapolated; }))
    out << "* epochs extrapolated outside the curve's supported batch range\n";
  print_left_out(r, out);
  for (const auto& u : r.unfit)
    out << (r.show_unfit ? "does not fit: " : "left out: ") << label(u.label) << ": " << u.why << "\n";
}

void check_plan_gpus(const ClusterSpec& cluster, int gpus, const OptionSpelling& spelling) {
  const int per_machine = topology::gpus_per_machine(cluster);
  if (static_cast<long long>(gpus) > static_cast<long long>(per_machine) * topology::kMaxNodes)
    throw InputError(spelling.said_number("gpus", std::to_string(gpus)) + ": more than " +
                     std::to_string(topology::kMaxNodes) + " " + cluster.preset + " machines of " +
                     std::to_string(per_machine) + " GPUs hold; expected at most " +
                     std::to_string(static_cast<long long>(per_machine) * topology::kMaxNodes));
}

std::string plan_cluster_preset(const std::string& cluster, const OptionSpelling& spelling) {
  if (names_topology_file(cluster))
    throw InputError(spelling.said("cluster", cluster) + ": a topology file, which plan does not take: it " +
                     "sizes a preset's machines to " + spelling.name("gpus") + "; expected a preset (" +
                     topology::preset_name_list() +
                     "); a file's machines are simulated by hybridsim run (its cluster.topology) and "
                     "collective -t");
  return look_up_named(spelling, "cluster", cluster, [](const std::string& c) {
    topology::preset_by_name(c);
    return c;
  });
}

sim::Bandwidth ib_bandwidth_option(const std::string& text, const OptionSpelling& spelling) {
  // 0 was refused only once a candidate's scenario was built, in the words of a --set overlay.
  return option_value(
      spelling, "ib-bandwidth", text, [](const std::string& s) { return sim::parse_bandwidth(s); },
      [](sim::Bandwidth b) { return b.bytes_per_second() > 0; }, "a rate above 0");
}

void refuse_ib_bandwidth_on_one_machine(const std::string& text, const ClusterSpec& cluster, int gpus,
                                        const OptionSpelling& spelling) {
  // Every candidate on one machine: the rate would change nothing (as topology --fabric refuses).
  const int per_machine = topology::gpus_per_machine(cluster);
  if (gpus <= per_machine)
    throw InputError(spelling.said("ib-bandwidth", text) + ": " +
                     spelling.said_number("gpus", std::to_string(gpus)) + " fit one " + cluster.preset +
                     " machine of " + std::to_string(per_machine) +
                     " GPUs, so no step crosses InfiniBand; expected it left out, or " +
                     spelling.name("gpus") + " above " + std::to_string(per_machine));
}

namespace {

// A name that reads as a path: a folder in it, or a file's suffix.
bool looks_like_path(const std::string& model) {
  for (const char* suffix : {".yaml", ".yml", ".csv", ".json"})
    if (model.ends_with(suffix)) return true;
  return model.find('/') != std::string::npos;
}

InputError unknown_model(const PlanCommandOptions& o) {
  // `plan -m /nonexistent.yaml` said the model was "unknown": a path that is not a file is refused
  // with why it cannot be read, in run's and study's words (read_input_file's).
  if (looks_like_path(o.model)) try {
      (void)yaml::read_input_file(o.model, "profile file");
    } catch (const InputError& e) {
      return InputError(o.spelling.name("model") + ": " + e.what());
    }
  auto names = workloads::builtin_profile_names();
  for (const auto& name : workloads::transformer_model_names()) names.push_back(name);
  // A named transformer never reaches this planner: the command line and Python's plan() hand it to
  // the transformer planner first (api::plan_llm).
  return InputError(o.spelling.quoted("model", o.model) + ": unknown" + yaml::did_you_mean(o.model, names) +
                    "; expected a built-in profile (inception-v3, gnmt, biglstm), a profile file or a named "
                    "transformer (gpt3-175b, llama3-70b, ...; workloads/README.md)");
}

enum class PlanModel { Builtin, File, Transformer };

// What --model names, in the order this planner looks: a built-in profile, a profile file, a named
// transformer (which the command line and Python hand to the transformer planner before: api::plan_llm);
// InputError (unknown_model) for none of them.
PlanModel plan_model(const PlanCommandOptions& o) {
  const auto names = workloads::builtin_profile_names();
  if (std::find(names.begin(), names.end(), o.model) != names.end()) return PlanModel::Builtin;
  if (std::filesystem::is_regular_file(o.model)) return PlanModel::File;
  if (workloads::is_transformer_model_name(o.model)) return PlanModel::Transformer;
  throw unknown_model(o);
}

}  // namespace

void check_plan_model(const PlanCommandOptions& o) { (void)plan_model(o); }

PlanRequest make_plan_request(const PlanCommandOptions& o) {
  PlanRequest r;
  switch (plan_model(o)) {
    case PlanModel::Builtin:
      r.profile = workloads::builtin_profile(o.model);
      break;
    case PlanModel::File:
      r.profile = workloads::load_profile(o.model);
      r.profile_file = o.model;
      break;
    case PlanModel::Transformer:  // this planner takes profiles: the transformer one is plan_llm's
      throw unknown_model(o);
  }
  r.model = r.profile.meta.network;
  const std::string eff = workloads::canonical_network_name(r.model);
  if (find_training_dataset(eff)) {
    r.curve = look_up_named(o.spelling, "variant", o.variant,
                            [&](const std::string& v) { return efficiency_curve_by_name(eff, v); });
    r.dataset = training_dataset_by_name(eff);
  }
  if (o.gpus < 1)
    throw InputError(o.spelling.said_number("gpus", std::to_string(o.gpus)) + ": expected 1 GPU or more");
  r.gpus = o.gpus;
  r.cluster.preset = plan_cluster_preset(o.cluster, o.spelling);
  build_cluster(r.cluster, 1, topology::ib_bandwidth_of(r.cluster));
  // A built-in network is priced for the preset's GPU, as run and study price it under gpu: auto:
  // plan -m gnmt -c dgx-h100 ran the V100's kernel times (304.6 ms a step where run says 35.6 ms)
  // and checked them against the H100's 80 GiB.
  if (r.profile_file.empty())
    r.profile = workloads::builtin_profile(
        o.model, workloads::builtin_options({}, topology::preset_by_name(r.cluster.preset).gpu));
  check_plan_gpus(r.cluster, o.gpus, o.spelling);
  if (o.ib_bandwidth) {
    r.cluster.links[sim::LinkKind::InfiniBand].bandwidth = ib_bandwidth_option(*o.ib_bandwidth, o.spelling);
    refuse_ib_bandwidth_on_one_machine(*o.ib_bandwidth, r.cluster, r.gpus, o.spelling);
  }
  r.memory = o.memory ? std::optional<workloads::MemoryCapacity>(memory_what_if(*o.memory, o.spelling))
                      : workloads::preset_gpu_capacity(o.cluster);
  r.show_unfit = o.show_unfit;
  r.objective = look_up_named(o.spelling, "objective", o.objective, parse_objective);
  if (r.objective == PlanObjective::TimeToTrain && !r.curve)
    throw InputError("no built-in statistical-efficiency curve for network \"" + r.model +
                     "\": use " + o.spelling.said("objective", "throughput"));
  if (o.threads < 0)
    throw InputError(o.spelling.said_number("threads", std::to_string(o.threads)) +
                     ": expected 0 (all cores) or positive");
  r.threads = o.threads;
  // The plan's own default cap (kPlanStepEvents), so that no candidate runs for hours unasked.
  const std::string events = o.max_events.empty() ? std::to_string(kPlanStepEvents) : o.max_events;
  r.limits = limit_overlay(events, o.max_sim_memory, o.spelling);
  r.events_cap =
      o.spelling.said_number("max-events", events) + (o.max_events.empty() ? ", the plan's default" : "");
  r.spelling = o.spelling;
  return r;
}

}  // namespace hybridsim::analysis
