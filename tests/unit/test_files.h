// File helpers shared by the tests: read a whole file, get an empty scratch folder.
#pragma once
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace hybridsim::testing {

// The file's bytes; empty if it cannot be opened (tests then fail on the contents).
inline std::string read_whole_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// <temp>/hybridsim-test-<name>, removed if it was there (not created). Each test case runs in its
// own process under CTest, so names only need to differ between test cases.
inline std::filesystem::path fresh_temp_dir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("hybridsim-test-" + name);
  std::filesystem::remove_all(dir);
  return dir;
}

}  // namespace hybridsim::testing
