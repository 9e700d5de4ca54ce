// `hybridsim sweep SCENARIO` runs every point of the scenario's sweep: block in parallel, writing
// results as they complete; `hybridsim merge` joins the folders of `--shard K/N` runs.
#include <boost/program_options.hpp>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "analysis/api/hybridsim.h"
#include "analysis/cli/commands.h"
#include "analysis/cli/parse_options.h"
#include "analysis/study/study_steps.h"
#include "analysis/output/output_folder.h"
#include "sim/error.h"
#include "sim/text.h"
#ifdef HYBRIDSIM_WITH_MPI
#include "analysis/sweep/mpi/mpi_sweep_team.h"
#endif

namespace po = boost::program_options;

namespace hybridsim::cli {

namespace {

// Whether an MPI launcher (mpirun/mpiexec of Open MPI or MPICH, srun with PMI) started more than
// one copy of this process.
bool launched_as_mpi_job() {
  for (const char* variable : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"}) {
    const char* value = std::getenv(variable);
    if (value && std::atoi(value) > 1) return true;
  }
  return false;
}

int refused_status(const analysis::SweepOutcome& r);

// Prints the outcome; returns the exit status (refused_status).
int print_outcome(const analysis::SweepOutcome& r, const analysis::SweepOptions& o) {
  std::cout << "sweep: " << r.points_run << (r.points_run == 1 ? " point run" : " points run");
  if (r.points_not_simulated > 0)
    std::cout << ", " << r.points_not_simulated << " not simulated (they do not fit memory: see the notes)";
  if (r.points_refused > 0) std::cout << ", " << r.points_refused << " refused (see the notes)";
  if (r.points_failed > 0) std::cout << ", " << r.points_failed << " failed once run (see the notes)";
  if (r.points_in_shard != r.points_total)
    std::cout << " (shard " << o.shard.first << "/" << o.shard.second << ": " << r.points_in_shard << " of "
              << r.points_total << ")";
  if (r.points_by_rank.size() > 1) {
    std::cout << " by " << r.points_by_rank.size() << " MPI ranks (";
    for (std::size_t i = 0; i < r.points_by_rank.size(); ++i)
      std::cout << (i ? ", " : "") << "rank " << i << ": " << r.points_by_rank[i];
    std::cout << ")";
  }
  for (const auto& note : r.notes) std::cout << "\n  note: " << note;
  std::cout << "\n  results   " << (r.directory / "results.csv").string() << "\n  summary   "
            << (r.directory / "summary.json").string() << "\n";
  if (r.traces)
    std::cout << "  traces    " << r.traces->string()
              << ", ... (one per point, the point's index in the name)\n";
  if (r.plot) std::cout << "  plot      " << r.plot->string() << "\n";
  else if (!r.plot_note.empty()) std::cout << "  " << r.plot_note << "\n";
  return refused_status(r);
}

// A sweep with points the loader refused, or that failed once run, wrote the others' results, but is
// not whole: said last, on stderr, with exit status 1 (a script reading results.csv learns that rows
// lack figures).
int refused_status(const analysis::SweepOutcome& r) {
  if (r.points_refused == 0 && r.points_failed == 0) return 0;
  // "1 of 4 points refused", "1 of 3 points failed once run", "1 of 4 points refused, 1 failed once run".
  std::string counts;
  const auto count = [&](std::size_t n, const char* what) {
    if (n == 0) return;
    counts += counts.empty() ? std::to_string(n) + " of " + std::to_string(r.points_in_shard) + " points "
                             : ", " + std::to_string(n) + " ";
    counts += what;
  };
  count(r.points_refused, "refused");
  count(r.points_failed, "failed once run");
  // One write, after stdout's: std::cerr writes each << at once, and under mpirun the report's
  // stdout, forwarded on a channel of its own, landed between them (the MPI test's grep failed).
  std::cout.flush();
  std::cerr << ("hybridsim sweep: error: " + counts +
                " (named in the notes above and in results.csv's not_simulated); the others' results are "
                "written\n");
  return 1;
}

}  // namespace

int sweep_command(int argc, const char* const* argv) {
  po::options_description options(
      "hybridsim sweep SCENARIO [options]\n\n"
      "Runs every point of the scenario's sweep: block (cartesian product or zip of the listed\n"
      "values), N at a time. Each finished point is appended to points.partial.csv; at the end\n"
      "results.csv (one row per point, in point order), summary.json and, for one- or two-parameter\n"
      "sweeps, a plot are written to the output directory. Under `mpirun -n R` (a build with\n"
      "-DHYBRIDSIM_MPI=ON) the R ranks share the points and rank 0 writes the results.\n\noptions");
  std::vector<std::string> sets;
  std::string out, shard = "1/1", metric = "step_time_ms", memory, max_events, max_sim_memory, model_threads;
  int jobs = 0;
  options.add_options()("help,h", "show this help")("scenario", po::value<std::string>(), "scenario file")(
      "set,s", po::value(&sets)->composing(), "override a field of every point (repeatable)")(
      "memory", po::value(&memory),
      "each GPU's memory, a what-if: --memory \"32 GiB\" (= --set cluster.gpu_memory=...)")(
      "max-events", po::value(&max_events),
      "cap on the events each point's step may simulate, 0 or unlimited = none (= --set "
      "simulation.max_events=...)")(
      "max-sim-memory", po::value(&max_sim_memory),
      "cap on each point's simulation state, 0 B or unlimited = none (= --set simulation.max_memory=...)")(
      "model-threads", po::value(&model_threads),
      "threads for a folded step's tree model runs, per point (= --set simulation.model_threads=...)")(
      "out,o", po::value(&out), "output directory (default: the scenario's outputs.directory)")(
      "jobs,j", po::value(&jobs)->default_value(0), "points run at once (per MPI rank); 0 = all cores")(
      "resume", "skip points already finished in the output directory")(
      "shard", po::value(&shard)->default_value("1/1"),
      "run only the K-th of N disjoint slices (K/N), e.g. for Slurm job arrays; join with `merge`")(
      "plot-metric", po::value(&metric)->default_value("step_time_ms"),
      "results.csv column to plot (step_time_ms, samples_per_second, exposed_comm_share, "
      "time_to_train_hours, ...)")("quiet,q", "no progress line");
  po::positional_options_description positional;
  positional.add("scenario", 1);
  po::variables_map vm;
  if (!parse_options(argc, argv, options, positional, vm)) return 0;
  if (!vm.count("scenario")) throw InputError("give a scenario file with a sweep: block");
  analysis::SweepOptions o;
  scenarios::OverrideOrigin origin;
  // The shorthands run takes, so that a sweep of the run's command line does not stop at them.
  add_shorthand(sets, origin, "memory", "cluster.gpu_memory", memory);
  // Read as study, plan and collective read them, so that all refuse a bad cap in one text.
  analysis::limit_overlay(max_events, max_sim_memory);
  add_shorthand(sets, origin, "max-events", "simulation.max_events", max_events);
  add_shorthand(sets, origin, "max-sim-memory", "simulation.max_memory", max_sim_memory);
  add_shorthand(sets, origin, "model-threads", "simulation.model_threads", model_threads);
  if (!out.empty()) o.out = out;
  o.jobs = jobs;
  o.resume = vm.count("resume") > 0;
  o.progress = vm.count("quiet") == 0;
  o.plot_metric = metric;
  const auto slash = shard.find('/');
  const auto k = sim::parse_whole<int>(shard.substr(0, slash));
  const auto n = slash == std::string::npos ? std::nullopt : sim::parse_whole<int>(shard.substr(slash + 1));
  if (!k || !n)
    throw InputError("--shard must look like K/N with whole numbers, e.g. 2/8 (got \"" + shard + "\")");
  o.shard = {*k, *n};
  const api::ScenarioInput scenario{
      .path = vm["scenario"].as<std::string>(), .set = sets, .set_origin = origin};
  if (!launched_as_mpi_job()) return print_outcome(api::sweep(scenario, o), o);
#ifdef HYBRIDSIM_WITH_MPI
  analysis::MpiSweepTeam team;
  o.team = &team;
  o.progress = o.progress && team.rank() == 0;
  try {
    const auto r = api::sweep(scenario, o);
    if (team.rank() == 0) return print_outcome(r, o);
  } catch (const std::exception& e) {
    // One failed rank would leave the others waiting for it: report, then end the whole job.
    std::cerr << "hybridsim sweep (MPI rank " << team.rank() << "): error: " << e.what() << "\n";
    team.abort(1);
  }
  return 0;
#else
  throw InputError(
      "started by an MPI launcher, but this hybridsim was built without MPI: every rank would run "
      "the whole sweep into the same files. Rebuild with cmake -DHYBRIDSIM_MPI=ON, or use --shard K/N");
#endif
}

int merge_command(int argc, const char* const* argv) {
  po::options_description options(
      "hybridsim merge SHARD_DIR... --out DIR\n\nJoins the results of `hybridsim sweep --shard K/N` "
      "runs into one results.csv (identical to a single run's) and summary.json.\n\noptions");
  std::vector<std::string> dirs;
  std::string out;
  // Named as the user knows it: `merge ""` said "the dirs argument is empty".
  options.add_options()("help,h", "show this help")("shard-folder", po::value(&dirs), "shard output folders")(
      "out,o", po::value(&out)->required(), "where the merged results go")(
      "allow-incomplete", "merge even when some of the sweep's points are in no shard (they are listed)");
  po::positional_options_description positional;
  positional.add("shard-folder", -1);
  po::variables_map vm;
  if (!parse_options(argc, argv, options, positional, vm)) return 0;
  if (dirs.empty()) throw InputError("give the shard folders to merge, e.g. hybridsim merge s1 s2 --out all");
  std::vector<std::filesystem::path> paths(dirs.begin(), dirs.end());
  // A file given as the folder is refused before the shards are read (it failed after them, with
  // "f: Not a directory" naming no option).
  analysis::check_output_folder(out, "--out " + out);
  // Writing into a shard's own folder would replace that shard's results.csv with the merge.
  for (const auto& dir : paths)
    if (std::filesystem::weakly_canonical(dir) == std::filesystem::weakly_canonical(out))
      throw InputError("--out " + out + " is the shard folder " + dir.string() +
                       ": the merge would overwrite that shard's results; expected another folder");
  const auto r =
      analysis::merge_sweep_outputs(paths, out, {.allow_incomplete = vm.count("allow-incomplete") > 0});
  std::cout << "merge: " << r.points_total << " points from " << dirs.size() << " shards into "
            << (r.directory / "results.csv").string() << "\n";
  for (const auto& note : r.notes) std::cout << "  note: " << note << "\n";
  return 0;
}

}  // namespace hybridsim::cli
