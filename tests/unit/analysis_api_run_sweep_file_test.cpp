// `run` of a scenario with a sweep: block simulates the scenario as written, once, and says in a note
// that the sweep's points are not run; `sweep` refuses a --set of a field its points set (no point
// would keep it). Documented commands (README's performance table) run such a file with --set.
#include <doctest/doctest.h>
#include "tests/paths/paths.h"
#include <string>
#include "analysis/api/hybridsim.h"
#include "sim/error.h"

namespace api = hybridsim::api;

namespace {
const std::string kSweepFile =
    std::string(HYBRIDSIM_SOURCE_DIR) + "/scenarios/examples/dgx1-nvlink-sweep.yaml";
}

TEST_CASE("run of a sweep file: the scenario as written, and a note that its points are not run") {
  const api::RunReport r =
      api::run({.path = kSweepFile, .set = {"parallelism.dp=4"}}, {.write_outputs = false});
  REQUIRE(r.notes.size() == 1);
  CHECK(r.notes[0].find(kSweepFile + ":") == 0);
  CHECK(r.notes[0].find("sweep block (6 points) is not run") != std::string::npos);
  CHECK(r.scenario.parallelism.dp == 4);  // the --set of a swept field is what the run simulates
  CHECK(r.run.step.per_gpu.size() == 4);
  const api::RunReport plain =
      api::run({.path = kSweepFile, .set = {"sweep=null"}}, {.write_outputs = false});
  CHECK(plain.notes.empty());
}

TEST_CASE("sweep of the same file refuses a --set of a field its points set") {
  CHECK_THROWS_WITH_AS(api::sweep({.path = kSweepFile, .set = {"parallelism.dp=4"}}),
                       doctest::Contains("the sweep sets parallelism at every point"),
                       hybridsim::InputError);
}
