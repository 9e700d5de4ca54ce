#include "analysis/study/study_command.h"

#include <ostream>

#include "analysis/output/output_folder.h"
#include "analysis/study/llm_study.h"
#include "analysis/study/study.h"
#include "analysis/study/study_config.h"
#include "analysis/study/study_report.h"
#include "sim/error.h"
#include "sim/units.h"

namespace hybridsim::analysis {

namespace {

// The report folder as it was named: --out DIR (out='DIR'), else the study file's output key.
std::string output_given(const StudyCommandOptions& options, const std::filesystem::path& output) {
  return options.output ? options.spelling.said("out", output.string())
                        : options.scenario.string() + ": output " + output.string();
}

}  // namespace

std::filesystem::path run_study_command(const StudyCommandOptions& options, std::ostream& out,
                                        std::ostream* progress) {
  // The command line refuses it as it parses (its 0 is "the file's"); Python's threads=-1 ran.
  if (options.threads && *options.threads < 0)
    throw InputError(options.spelling.said_number("threads", std::to_string(*options.threads)) +
                     ": expected None (the file's or all cores) or positive");
  if (is_llm_study_file(options.scenario)) {
    LlmStudyConfig llm = load_llm_study_config(options.scenario);
    // Nothing to skip: the option was accepted and changed nothing.
    if (!options.ib_sensitivity)
      throw InputError(options.spelling.switched_off("ib-sensitivity") + ": " + options.scenario.string() +
                       " is a transformer study, whose InfiniBand sensitivity is its ib_bandwidths list "
                       "(every rate is planned); expected the option left out, and one rate in the list");
    if (options.output) llm.output = *options.output;
    check_output_folder(llm.output, output_given(options, llm.output));
    const LlmStudyResult result = run_llm_study(
        llm, {.progress = progress,
              .threads = options.threads,
              .max_events = options.max_events,
              .max_sim_memory = options.max_sim_memory,
              .memory = options.memory,
              .spelling = options.spelling});
    print_llm_study(result, out);
    if (progress) *progress << "llm study: " << format_fixed(result.wall_seconds, 1) << " s\n";
    const StudyReportFiles files =
        write_llm_study_report(result, llm.output, {.plots = options.plots, .command = options.command_line});
    for (const auto& p : files.plot_problems) out << "plots: " << p << "\n";
    out << "report: " << files.summary.string() << "\n";
    return llm.output;
  }
  StudyConfig config = load_study_config(options.scenario);
  if (!options.ib_sensitivity && config.ib_factors.empty())
    throw InputError(options.spelling.switched_off("ib-sensitivity") + ": " + options.scenario.string() +
                     " has no sensitivity.ib_factors, so there is no faster-InfiniBand re-simulation to "
                     "skip; expected the option left out");
  if (options.output) config.output = *options.output;
  check_output_folder(config.output, output_given(options, config.output));
  StudyRunOptions run;
  run.progress = progress;
  run.threads = options.threads;
  run.ib_sensitivity = options.ib_sensitivity;
  if (options.memory) run.memory = memory_what_if(*options.memory, options.spelling);
  run.limits = limit_overlay(options.max_events, options.max_sim_memory, options.spelling);
  run.spelling = options.spelling;
  const StudyResult result = run_study(config, run);
  StudyReportOptions report;
  report.plots = options.plots;
  report.command = options.command_line;
  const StudyReportFiles files = write_study_report(result, config.output, report);
  print_headline_table(result, out);
  out << "report: " << files.summary.string() << " (" << files.files.size() << " files";
  if (!files.plots_drawn) out << "; no pictures";
  out << ")\n";
  for (const auto& p : files.plot_problems) out << "note: " << p << "\n";
  if (progress)
    *progress << "study: " << result.steps_simulated << " steps simulated in " << result.wall_seconds
              << " s\n";
  return config.output;
}

}  // namespace hybridsim::analysis
