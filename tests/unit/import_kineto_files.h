// Files shared by the Kineto importer's tests: the traces under tests/data/kineto, temporary files
// that remove themselves, and text surgery on a trace.
//   TempFile f("x.json", replace_nth(read_whole_file(kineto_data("ddp_rank1.json")), "a", "b", 2));
#pragma once
#include <doctest/doctest.h>
#include <unistd.h>
#include "tests/paths/paths.h"

#include <filesystem>
#include <fstream>
#include <string>

namespace hybridsim::testing {

inline std::string kineto_data(const std::string& name) {
  return std::string(HYBRIDSIM_SOURCE_DIR) + "/tests/data/kineto/" + name;
}

// A file in the temporary directory, removed when the test is done with it.
struct TempFile {
  std::string path;
  TempFile(const std::string& name, const std::string& text)
      : path((std::filesystem::temp_directory_path() /
              ("hybridsim_import_" + std::to_string(getpid()) + "_" + name))
                 .string()) {
    std::ofstream(path, std::ios::binary) << text;
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() { std::filesystem::remove(path); }
};

// `text` with the n-th (0-based) occurrence of `from` replaced by `to`.
inline std::string replace_nth(std::string text, const std::string& from, const std::string& to, int n) {
  std::size_t at = text.find(from);
  for (int i = 0; i < n && at != std::string::npos; ++i) at = text.find(from, at + 1);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

}  // namespace hybridsim::testing
