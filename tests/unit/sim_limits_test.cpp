// The one table of limits (sim/limits.h): README's Limits table is that table, each limit's shown
// value is its value, and every command listed for a limit has a bad-input catalogue case that
// passes it ("<command>-limit-<name>", run by bad_input_catalogue_test.cpp).
#include <doctest/doctest.h>
#include "tests/paths/paths.h"

#include <filesystem>
#include <set>
#include <sstream>
#include <string>

#include "sim/limits.h"
#include "sim/time.h"
#include "sim/units.h"
#include "tests/unit/test_files.h"

namespace fs = std::filesystem;
namespace limits = hybridsim::sim::limits;
using hybridsim::testing::read_whole_file;

namespace {

// The lines of `text` from the one starting with `first` to the next blank line.
std::string block_from(const std::string& text, const std::string& first) {
  const auto start = text.find("\n" + first);
  if (start == std::string::npos) return {};
  const auto end = text.find("\n\n", start + 1);
  return text.substr(start + 1, end == std::string::npos ? std::string::npos : end - start);
}

std::set<std::string> catalogue_names() {
  std::istringstream in(read_whole_file(fs::path(HYBRIDSIM_SOURCE_DIR) / "tests/bad_inputs/catalogue.txt"));
  std::set<std::string> out;
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') out.insert(line.substr(0, line.find(' ')));
  return out;
}

// Limits a command applies only once work has started, so that a refusal keeps what was done: a sweep
// point refused mid-sweep leaves points.partial.csv for --resume, against the catalogue's rule that
// nothing is left behind. Each is the same check as run's (the point runs as `run` does). A sweep's
// events and simulation state are estimated for every point before any runs (analysis/step/
// step_estimate.h), so their cases are in the catalogue.
const std::set<std::string> kAppliedMidWork = {"sweep-limit-step-time"};

}  // namespace

TEST_CASE("README's Limits table is the code's") {
  const std::string readme = read_whole_file(fs::path(HYBRIDSIM_SOURCE_DIR) / "README.md");
  CHECK(block_from(readme, "| limit | value |") == limits::markdown_table());
}

TEST_CASE("each limit's shown value is its value") {
  using hybridsim::sim::Bytes;
  for (const limits::Limit* l : {&limits::kInputFile, &limits::kCollectiveSize, &limits::kTensorSize,
                                 &limits::kSimMemory}) {
    CAPTURE(l->name);
    CHECK(l->unit == "bytes");
    CHECK(hybridsim::sim::parse_bytes(l->shown).count() == l->value);
  }
  CHECK(hybridsim::sim::parse_time(limits::kLinkLatency.shown).ps() == limits::kLinkLatency.value);
  CHECK(limits::kImportedTime.value == std::int64_t{1} << 62);
  CHECK(limits::kEvents.value == 2'000'000'000);
  CHECK(limits::kEpochs.value == 1'000'000);
  CHECK(limits::kEpochs.shown == "1,000,000 epochs");
  CHECK(limits::kLayerFlop.value == std::int64_t{1} << 60);
  CHECK(limits::kLayerFlop.shown.starts_with("2^60 FLOPs"));
  CHECK(limits::kYamlNodes.shown == "250,000 nodes");
  CHECK(limits::kMachines.shown == "8,192 machines");
  CHECK(limits::kCollectiveRows.shown == "1,000 rows");
  CHECK(limits::kYamlDepth.shown == std::to_string(limits::kYamlDepth.value) + " levels");
  CHECK(limits::kChannels.shown == std::to_string(limits::kChannels.value) + " channels");
}

TEST_CASE("every command that applies a limit has a catalogue case past it") {
  const std::set<std::string> names = catalogue_names();
  std::set<std::string> seen;
  for (const limits::Limit* l : limits::kAll) {
    CHECK(seen.insert(std::string(l->name)).second);
    std::istringstream commands{std::string(l->commands)};
    int count = 0;
    for (std::string command; std::getline(commands, command, ',');) {
      command.erase(0, command.find_first_not_of(' '));
      const std::string prefix = command + "-limit-" + std::string(l->name);
      CAPTURE(prefix);
      const auto it = names.lower_bound(prefix);
      CHECK((kAppliedMidWork.contains(prefix) || (it != names.end() && it->starts_with(prefix))));
      ++count;
    }
    CHECK(count >= 1);
  }
}
