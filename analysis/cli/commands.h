// The hybridsim command-line tool: one function per subcommand, each in its own file. They parse
// options with Boost.Program_options and call the library; errors propagate as exceptions to main.
#pragma once

namespace hybridsim::cli {

// Each takes the arguments after the subcommand name (argv[0] is the subcommand) and returns the
// process exit code.
int run_command(int argc, const char* const* argv);
int topology_command(int argc, const char* const* argv);
int collective_command(int argc, const char* const* argv);
int sweep_command(int argc, const char* const* argv);
int merge_command(int argc, const char* const* argv);
int study_command(int argc, const char* const* argv);
int plan_command(int argc, const char* const* argv);
int import_command(int argc, const char* const* argv);
int validate_command(int argc, const char* const* argv);

}  // namespace hybridsim::cli
