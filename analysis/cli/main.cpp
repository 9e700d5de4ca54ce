// hybridsim — entry point: picks the subcommand, catches errors once, prints them, exits non-zero.
#include <boost/program_options/errors.hpp>
#include <cstring>
#include <exception>
#include <filesystem>
#include <new>
#include <iostream>
#include <string_view>

#include "analysis/cli/commands.h"
#include "analysis/cli/huge_pages.h"
#include "analysis/output/temp_files.h"
#include "sim/error.h"

namespace {

struct Subcommand {
  std::string_view name;
  std::string_view summary;
  int (*function)(int, const char* const*);
};

constexpr Subcommand kSubcommands[] = {
    {"run", "simulate one training step of a scenario and project its time to train",
     hybridsim::cli::run_command},
    {"topology", "describe a platform: devices, links, routes", hybridsim::cli::topology_command},
    {"collective", "nccl-tests for the simulator: a collective's time, algbw and busbw by size",
     hybridsim::cli::collective_command},
    {"sweep", "run a scenario's sweep: block in parallel, to CSV, JSON and a plot",
     hybridsim::cli::sweep_command},
    {"merge", "join the results of sharded sweeps", hybridsim::cli::merge_command},
    {"study", "hybrid vs DP end to end: time to train at scale, with a report folder",
     hybridsim::cli::study_command},
    {"plan", "the best dp × mp, placement, buckets and algorithm for a model and GPU count",
     hybridsim::cli::plan_command},
    {"import", "turn a PyTorch profiler (Kineto) trace or a PipeDream graph into a profile",
     hybridsim::cli::import_command},
    {"validate", "simulated vs published: one-GPU calibrations, NCCL's model, measured figures",
     hybridsim::cli::validate_command},
};

void print_help(std::ostream& out) {
  out << "hybridsim " HYBRIDSIM_VERSION
         " — discrete-event simulator of multi-GPU deep-learning training clusters\n\n"
         "usage: hybridsim <command> [options]    (hybridsim <command> --help for its options)\n\n"
         "commands:\n";
  for (const auto& s : kSubcommands) {
    out << "  " << s.name;
    for (std::size_t i = s.name.size(); i < 12; ++i) out << ' ';
    out << s.summary << "\n";
  }
  out << "\noptions:\n  --help       this text\n  --version    print the version\n";
}

}  // namespace

int main(int argc, char** argv) {
  hybridsim::cli::use_huge_pages(argv);  // re-executes once, before anything else happens
  // Ctrl-C or a kill mid-write removes the temporary files of outputs not yet renamed into place.
  hybridsim::analysis::remove_temp_files_on_signals();
  if (argc < 2) {
    print_help(std::cerr);
    return 2;
  }
  const std::string_view first = argv[1];
  if (first == "--help" || first == "-h" || first == "help") {
    print_help(std::cout);
    return 0;
  }
  if (first == "--version" || first == "-V") {
    std::cout << "hybridsim " HYBRIDSIM_VERSION "\n";
    return 0;
  }
  for (const auto& s : kSubcommands) {
    if (first != s.name) continue;
    try {
      return s.function(argc - 1, argv + 1);
    } catch (const boost::program_options::error& e) {
      std::cerr << "hybridsim " << s.name << ": " << e.what() << "\n(see hybridsim " << s.name
                << " --help)\n";
      return 2;
    } catch (const hybridsim::InputError& e) {
      std::cerr << "hybridsim " << s.name << ": error: " << e.what() << "\n";
      return 1;
    } catch (const std::filesystem::filesystem_error& e) {
      // A file or folder the user named cannot be made, read or written: say which and why.
      std::cerr << "hybridsim " << s.name << ": error: " << e.path1().string()
                << (e.path2().empty() ? std::string() : " → " + e.path2().string()) << ": "
                << e.code().message() << "\n";
      return 1;
    } catch (const std::bad_alloc&) {
      std::cerr << "hybridsim " << s.name << ": error: out of memory: the input asks for more than this "
                << "machine has (see README.md, Limits)\n";
      return 1;
    } catch (const std::exception& e) {
      std::cerr << "hybridsim " << s.name << ": internal error: " << e.what() << "\n";
      return 3;
    }
  }
  std::cerr << "hybridsim: unknown command \"" << first << "\"; commands are:";
  for (const auto& s : kSubcommands) std::cerr << " " << s.name;
  std::cerr << "\n(see hybridsim --help)\n";
  return 2;
}
