// Where the tests find the checkout and the built command. CMake sets both in paths.cpp alone, so
// that every other test source compiles to the same object in any checkout (ccache then shares a
// worktree's test objects with the main checkout's, instead of recompiling them all).
//   load_scenario(HYBRIDSIM_SOURCE_DIR + "/scenarios/examples/dgx1-gnmt-dp8.yaml", {});
#pragma once
#include <string>

namespace hybridsim::testing {

const std::string& source_dir();  // the checkout's root, absolute
const std::string& cli_path();    // the hybridsim command built with the tests

}  // namespace hybridsim::testing

#define HYBRIDSIM_SOURCE_DIR (::hybridsim::testing::source_dir())
#define HYBRIDSIM_CLI (::hybridsim::testing::cli_path())
