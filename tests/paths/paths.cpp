#include "tests/paths/paths.h"

namespace hybridsim::testing {

const std::string& source_dir() {
  static const std::string dir = HYBRIDSIM_SOURCE_DIR_VALUE;
  return dir;
}

const std::string& cli_path() {
  static const std::string path = HYBRIDSIM_CLI_VALUE;
  return path;
}

}  // namespace hybridsim::testing
