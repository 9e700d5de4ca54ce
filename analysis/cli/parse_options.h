// The one way subcommands read their options: parse, print the help and stop on --help, else check
// required options. Returns false when the help was printed (the command then exits 0).
//   if (!parse_options(argc, argv, options, positional, vm)) return 0;
#pragma once
#include <boost/program_options.hpp>
#include <iostream>

namespace hybridsim::cli {

inline bool parse_options(int argc, const char* const* argv,
                          const boost::program_options::options_description& options,
                          const boost::program_options::positional_options_description& positional,
                          boost::program_options::variables_map& vm) {
  namespace po = boost::program_options;
  po::store(po::command_line_parser(argc, argv).options(options).positional(positional).run(), vm);
  if (vm.count("help")) {
    std::cout << options << "\n";
    return false;
  }
  po::notify(vm);
  return true;
}

}  // namespace hybridsim::cli
