// File helpers shared by the tests: read a whole (or gzipped) file, get an empty scratch folder.
#pragma once
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include <unistd.h>
#include <zlib.h>

namespace hybridsim::testing {

// The file's bytes; empty if it cannot be opened (tests then fail on the contents).
inline std::string read_whole_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A gzip file's uncompressed bytes; throws if it cannot be opened or is corrupt or truncated.
inline std::string read_gzip_file(const std::filesystem::path& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) throw std::runtime_error("cannot open " + path.string());
  std::string out;
  char buf[4096];
  int n = 0;
  while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
  gzclose(f);
  if (n < 0) throw std::runtime_error("corrupt or truncated gzip file " + path.string());
  return out;
}

// <temp>/hybridsim-test-<name>-<pid>, removed if it was there (not created). Each test case runs in
// its own process under CTest; the process id keeps two test runs at once (two build folders, two
// checkouts) out of each other's folders.
inline std::filesystem::path fresh_temp_dir(const std::string& name) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("hybridsim-test-" + name + "-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  return dir;
}

// A new, empty folder under the system temp directory (a random name, so test processes running at
// once never share one), removed with everything in it when the object goes.
struct ScratchDir {
  std::filesystem::path path;
  ScratchDir() {
    std::random_device rd;
    path = std::filesystem::temp_directory_path() /
           ("hybridsim-scratch-" + std::to_string(rd()) + std::to_string(rd()));
    std::filesystem::create_directories(path);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  // The names of what is in it, sorted.
  std::vector<std::string> entries() const {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(path))
      out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }
};

}  // namespace hybridsim::testing
