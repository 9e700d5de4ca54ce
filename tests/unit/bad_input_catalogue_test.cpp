// The bad-input catalogue (tests/bad_inputs/catalogue.txt): every case runs the real hybridsim in a
// scratch folder and must exit with its code, print its exact first error line, and leave the
// folder as it found it.
#include <doctest/doctest.h>
#include "tests/paths/paths.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>
#include <sys/wait.h>

#include "sim/limits.h"
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

// Whether `line` is `expected`, where each $ANY of `expected` stands for any text (a figure that
// moves with the model, such as a step time).
bool matches(const std::string& line, const std::string& expected) {
  static const std::string kAny = "$ANY";
  std::vector<std::string> parts;
  for (std::size_t at = 0;;) {
    const auto next = expected.find(kAny, at);
    parts.push_back(expected.substr(at, next == std::string::npos ? std::string::npos : next - at));
    if (next == std::string::npos) break;
    at = next + kAny.size();
  }
  if (parts.size() == 1) return line == expected;
  if (!line.starts_with(parts.front()) || !line.ends_with(parts.back()) ||
      line.size() < parts.front().size() + parts.back().size())
    return false;
  std::size_t at = parts.front().size();
  const std::size_t end = line.size() - parts.back().size();
  for (std::size_t i = 1; i + 1 < parts.size(); ++i) {
    at = line.find(parts[i], at);
    if (at == std::string::npos || at + parts[i].size() > end) return false;
    at += parts[i].size();
  }
  return true;
}

}  // namespace

TEST_CASE("catalogue lines match with $ANY for a moving figure") {
  CHECK(matches("ends at 305 ms: nothing", "ends at $ANY: nothing"));
  CHECK(matches("a 1 b 2 c", "a $ANY b $ANY c"));
  CHECK_FALSE(matches("a 1 c", "a $ANY b $ANY c"));
  CHECK_FALSE(matches("ends at 305 ms", "ends at $ANY: nothing"));
  CHECK(matches("exact", "exact"));
}

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
    std::ofstream(scratch.path / "big.yaml").close();  // sparse: one byte over the input-file limit
    fs::resize_file(scratch.path / "big.yaml", hybridsim::sim::limits::kInputFile.value + 1);
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
    const std::string expected = replace_all(replace_all(f[3], "$SRC", src), "$TMP", tmp);
    CAPTURE(first);
    CHECK(matches(first, expected));
    CHECK(listing(scratch.path) == before);
    ++cases;
  }
  CHECK(cases >= 10);
}
