// The `hybridsim study SCENARIO` command as one library call: load the study file, run it (progress
// on stderr), write the report folder and print the headline table. The CLI only parses options.
//   StudyCommandOptions o{.scenario = "scenarios/study/quick.yaml"};
//   const std::filesystem::path report = run_study_command(o, std::cout, &std::cerr);
#pragma once
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>

#include "analysis/output/option_spelling.h"

namespace hybridsim::analysis {

struct StudyCommandOptions {
  std::filesystem::path scenario;               // the study file (hybridsim-study/1)
  std::optional<std::filesystem::path> output{};  // overrides the file's `output`
  std::optional<int> threads{};                   // overrides the file's `threads`
  bool plots = true;                            // false: no gnuplot pictures
  bool ib_sensitivity = true;                   // false: skip the faster-InfiniBand re-simulation
  std::optional<std::string> memory{};            // each GPU's memory, e.g. "32 GiB" (a what-if)
  std::string command_line;                     // quoted in the report ("hybridsim study ...")
  std::string max_events{};                     // --max-events for every step (empty: the default)
  std::string max_sim_memory{};                 // --max-sim-memory likewise
  // The language refusals name these options in: the command line's (--memory) or Python's (memory=).
  OptionSpelling spelling{};
};

// Returns the report folder; errors are thrown (InputError for bad input).
std::filesystem::path run_study_command(const StudyCommandOptions& options, std::ostream& out,
                                        std::ostream* progress);

}  // namespace hybridsim::analysis
