// The catalogue of bad scenarios (tests/scenarios/bad/NN-what.yaml): each must be rejected with the
// InputError recorded in tests/scenarios/bad/expected.txt — and no YAML input, however broken (every
// truncation and many mutations of the shipped examples), may end in any other exception or a crash.
#include <doctest/doctest.h>
#include "tests/paths/paths.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <typeinfo>
#include <string>
#include <vector>

#include "scenarios/loader/resolve.h"
#include "scenarios/loader/sweep.h"
#include "sim/error.h"
#include "tests/unit/test_files.h"

using namespace hybridsim;
using namespace hybridsim::scenarios;

using hybridsim::testing::read_whole_file;

namespace {

const std::filesystem::path kBadDir = std::filesystem::path(HYBRIDSIM_SOURCE_DIR) / "tests/scenarios/bad";

struct Expectation {
  bool prefix = false;  // the message must start with `message` (it contains a machine's path)
  std::string message;
};

// expected.txt: "NN-what.yaml | exact | message" or "NN-what.yaml | prefix | message"; # comments.
std::map<std::string, Expectation> read_expectations() {
  std::map<std::string, Expectation> out;
  std::istringstream lines(read_whole_file(kBadDir / "expected.txt"));
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    const auto a = line.find(" | ");
    const auto b = line.find(" | ", a + 3);
    REQUIRE_MESSAGE((a != std::string::npos && b != std::string::npos), "malformed line: " << line);
    const std::string mode = line.substr(a + 3, b - a - 3);
    REQUIRE((mode == "exact" || mode == "prefix"));
    out[line.substr(0, a)] = {mode == "prefix", line.substr(b + 3)};
  }
  return out;
}

// Parse and resolve; the InputError's message, or a description of what else happened.
std::string outcome(const std::string& text, const std::string& name, const std::filesystem::path& base) {
  try {
    resolve(parse_scenario(text, name, {}, base));
    return "<accepted>";
  } catch (const InputError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("<wrong exception: ") + e.what() + ">";
  }
}

// Parsing (with sweep expansion) must either succeed or throw InputError.
void check_only_input_errors(const std::string& text, const std::string& what) {
  try {
    const Scenario s = parse_scenario(text, "fuzz.yaml");
    expand_sweep(s);
  } catch (const InputError&) {
  } catch (const std::exception& e) {
    FAIL_CHECK(what << ": " << typeid(e).name() << ": " << e.what());
  }
}

}  // namespace

TEST_CASE("bad scenarios: each file of the catalogue gives its recorded error") {
  const auto expected = read_expectations();
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(kBadDir))
    if (entry.path().extension() == ".yaml") files.push_back(entry.path().filename().string());
  std::sort(files.begin(), files.end());
  CHECK(files.size() >= 30);
  CHECK(expected.size() == files.size());  // no expectation without its file
  for (const auto& name : files) {
    CAPTURE(name);
    const auto it = expected.find(name);
    const std::string got = outcome(read_whole_file(kBadDir / name), name, kBadDir);
    if (it == expected.end()) {
      FAIL_CHECK("no expectation recorded; got: " << got);
      continue;
    }
    if (it->second.prefix) CHECK_MESSAGE(got.starts_with(it->second.message), "got: " << got);
    else CHECK(got == it->second.message);
  }
}

TEST_CASE(
    "bad scenarios: truncations and mutations of the examples give InputError or a scenario, never a crash") {
  std::vector<std::filesystem::path> examples;
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(HYBRIDSIM_SOURCE_DIR) /
                                                               "scenarios/examples"))
    if (entry.path().extension() == ".yaml") examples.push_back(entry.path());
  std::sort(examples.begin(), examples.end());
  REQUIRE_FALSE(examples.empty());
  std::mt19937 rng(20240229);  // fixed seed: the same inputs on every run
  const std::string specials = "{}[]:,-#&*!|>'\"%@` \n\t0x9.";
  for (const auto& path : examples) {
    const std::string text = read_whole_file(path);
    // Every truncation.
    for (std::size_t n = 0; n < text.size(); ++n)
      check_only_input_errors(text.substr(0, n), path.filename().string() + " cut at " + std::to_string(n));
    // 300 mutations: a byte replaced by a YAML special character, or a line dropped or doubled.
    for (int i = 0; i < 300; ++i) {
      std::string m = text;
      const std::size_t at = rng() % m.size();
      switch (rng() % 3) {
        case 0: m[at] = specials[rng() % specials.size()]; break;
        case 1: m.erase(at, std::min(m.size() - at, static_cast<std::size_t>(rng() % 12))); break;
        default: m.insert(at, m.substr(at, std::min<std::size_t>(m.size() - at, 20))); break;
      }
      check_only_input_errors(m, path.filename().string() + " mutation " + std::to_string(i));
    }
  }
  // Odd --set texts: each is an InputError or a valid override, never anything else.
  const std::string base = read_whole_file(examples.front());
  for (const std::string o : {"=", "==", "=4", ".=1", "cluster..nodes=2", "cluster.=1", "cluster.nodes==4",
                              "cluster.nodes=[", "cluster=~", "cluster.links.nvlink={bandwidth: [1]}",
                              "parallelism.mapping=[[[0]]]", "sweep.parameters=[{path: x}]", "name={a: b}",
                              "outputs.trace.window=1 s:", "training.efficiency.table=[[1, 2], [1, 3]]"}) {
    try {
      parse_scenario(base, "s.yaml", std::vector<std::string>{o});
    } catch (const InputError&) {
    } catch (const std::exception& e) {
      FAIL_CHECK("--set " << o << ": " << e.what());
    }
  }
}
