// `hybridsim validate [--cases DIR] [--format table|csv]`: simulates every reference case of the
// folder's YAML files (scenarios/validate/ by default), prints simulated vs published and the
// error, and exits 1 when a case is outside its tolerance.
#include <boost/program_options.hpp>
#include <iostream>
#include <string>

#include "analysis/cli/commands.h"
#include "analysis/cli/parse_options.h"
#include "analysis/study/study_steps.h"
#include "analysis/validate/validate_run.h"
#include "sim/budget.h"
#include "sim/error.h"
#include "sim/text.h"
#include "sim/units.h"

namespace po = boost::program_options;

namespace hybridsim::cli {

int validate_command(int argc, const char* const* argv) {
  po::options_description options(
      "hybridsim validate [options]\n\n"
      "Simulates the reference cases (calibrations on one GPU, NCCL's own cost model, measured\n"
      "figures) of every .yaml file in a folder and compares each with its published figure; exits\n"
      "1 when a case is outside its tolerance. Case format: scenarios/README.md.\n\noptions");
  std::string dir = "scenarios/validate", format = "table", max_events, max_sim_memory;
  options.add_options()("help,h", "show this help")("cases,c",
                                                    po::value(&dir)->default_value("scenarios/validate"),
                                                    "folder of case files, or one case file")(
      "format,f", po::value(&format)->default_value("table"), "table | csv")(
      "max-events", po::value(&max_events),
      "cap on the events each case may simulate, 0 or unlimited = none (default 2e9)")(
      "max-sim-memory", po::value(&max_sim_memory),
      "cap on each case's simulation state, 0 B or unlimited = none (default 4 GiB)")(
      "quiet,q", "no progress lines (every few seconds on stderr while cases run)");
  po::variables_map vm;
  if (!parse_options(argc, argv, options, {}, vm)) return 0;
  if (format != "table" && format != "csv")
    throw InputError("--format must be table or csv (got \"" + format + "\")");
  analysis::ValidateBudget budget;
  budget.sets = analysis::limit_overlay(max_events, max_sim_memory);
  // limit_overlay has read both texts (and refused a bad one naming its option).
  if (!max_events.empty()) budget.collective.max_events = sim::parse_events_cap(max_events);
  if (!max_sim_memory.empty()) budget.collective.max_memory = sim::parse_memory_cap(max_sim_memory);
  const auto results = analysis::run_validate_cases(analysis::load_validate_cases(dir), budget,
                                                    vm.count("quiet") ? nullptr : &std::cerr);
  std::cout << (format == "csv" ? analysis::validate_csv(results) : analysis::validate_table(results));
  if (!analysis::all_within(results)) {
    std::cerr << "hybridsim validate: some cases are outside their tolerance\n";
    return 1;
  }
  return 0;
}

}  // namespace hybridsim::cli
