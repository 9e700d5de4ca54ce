// The bad-input catalogue (tests/bad_inputs/catalogue.txt): every case runs the real hybridsim in a
// scratch folder and must exit with its code, print its exact first error line, and leave the
// folder as it found it.
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <sys/wait.h>

#include "tests/unit/test_files.h"

namespace fs = std::filesystem;
using hybridsim::testing::ScratchDir;

namespace {

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(' ');
  const auto e = s.find_last_not_of(' ');
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

std::set<std::string> listing(const fs::path& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    out.insert(fs::relative(e.path(), dir).string());
  return out;
}

}  // namespace

TEST_CASE("bad-input catalogue: exit code, first error line, nothing left behind") {
  const std::string src = HYBRIDSIM_SOURCE_DIR;
  std::ifstream catalogue(fs::path(src) / "tests/bad_inputs/catalogue.txt");
  REQUIRE(catalogue);
  int cases = 0;
  for (std::string line; std::getline(catalogue, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f;
    std::istringstream parts(line);
    for (std::string p; std::getline(parts, p, '|');) f.push_back(trim(p));
    REQUIRE(f.size() == 4);
    CAPTURE(f[0]);
    ScratchDir scratch;
    const std::string tmp = scratch.path.string();
    std::ofstream(scratch.path / "file").close();
    fs::create_directories(scratch.path / "dir");
    const auto before = listing(scratch.path);
    const fs::path err = scratch.path.parent_path() / (scratch.path.filename().string() + ".stderr");
    const std::string args = replace_all(replace_all(f[1], "$SRC", src), "$TMP", tmp);
    const std::string command = "cd '" + tmp + "' && '" + std::string(HYBRIDSIM_CLI) + "' " + args +
                                " > /dev/null 2> '" + err.string() + "'";
    const int status = std::system(command.c_str());
    std::ifstream in(err);
    std::string first;
    std::getline(in, first);
    fs::remove(err);
    CHECK(WEXITSTATUS(status) == std::stoi(f[2]));
    CHECK(first == replace_all(replace_all(f[3], "$SRC", src), "$TMP", tmp));
    CHECK(listing(scratch.path) == before);
    ++cases;
  }
  CHECK(cases >= 10);
}
