// Sweeps: product and zip expansion, their order and labels, loading a point, and sweep errors.
#include <doctest/doctest.h>


#include <filesystem>
#include <string>
#include <vector>

#include "scenarios/loader/sweep.h"
#include "sim/error.h"

using namespace hybridsim;
using namespace hybridsim::scenarios;

namespace {

constexpr const char* kBase =
    "cluster: {preset: dgx1-v100}\nworkload: {network: gnmt}\nparallelism: {dp: 8}\n";

std::string error_of(const std::string& text) {
  try {
    parse_scenario(text, "s.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("sweep: product expands in the listed order, the last parameter varying fastest") {
  const Scenario s = parse_scenario(std::string(kBase) + R"(sweep:
  parameters:
    - {path: cluster.links.nvlink.bandwidth, values: [25 GB/s, 50 GB/s, 100 GB/s]}
    - {path: parallelism, values: [{dp: 8, mp: 1}, {dp: 4, mp: 2}]}
)", "s.yaml");
  const auto points = expand_sweep(s);
  // 3 × 2 = 6 points: bandwidth is the outer loop, parallelism the inner one.
  REQUIRE(points.size() == 6);
  const std::vector<std::string> labels = {"nvlink.bandwidth=25 GB/s, parallelism={dp: 8, mp: 1}",
                                           "nvlink.bandwidth=25 GB/s, parallelism={dp: 4, mp: 2}",
                                           "nvlink.bandwidth=50 GB/s, parallelism={dp: 8, mp: 1}",
                                           "nvlink.bandwidth=50 GB/s, parallelism={dp: 4, mp: 2}",
                                           "nvlink.bandwidth=100 GB/s, parallelism={dp: 8, mp: 1}",
                                           "nvlink.bandwidth=100 GB/s, parallelism={dp: 4, mp: 2}"};
  for (std::size_t i = 0; i < points.size(); ++i) {
    CHECK(points[i].index == i);
    CHECK(points[i].label == labels[i]);
  }
  CHECK(points[3].assignments ==
        std::vector<std::pair<std::string, std::string>>{{"cluster.links.nvlink.bandwidth", "50 GB/s"},
                                                         {"parallelism", "{dp: 4, mp: 2}"}});
  CHECK(points[3].overrides() ==
        std::vector<std::string>{"cluster.links.nvlink.bandwidth=50 GB/s", "parallelism={dp: 4, mp: 2}"});
  CHECK(expand_sweep(s) == points);  // deterministic

  // Three parameters of sizes 2, 1, 3: the odometer order (a, b, c) with c fastest.
  SweepSettings three;
  three.parameters = {
      {"cluster.nodes", {"1", "2"}}, {"workload.network", {"gnmt"}}, {"parallelism.dp", {"1", "2", "4"}}};
  const auto p3 = expand_sweep(three);
  REQUIRE(p3.size() == 6);
  CHECK(p3[0].label == "cluster.nodes=1, workload.network=gnmt, parallelism.dp=1");
  CHECK(p3[2].label == "cluster.nodes=1, workload.network=gnmt, parallelism.dp=4");
  CHECK(p3[3].label == "cluster.nodes=2, workload.network=gnmt, parallelism.dp=1");
  CHECK(expand_sweep(SweepSettings{}).empty());
}

TEST_CASE("sweep: zip pairs the i-th values, and needs equal lengths") {
  const Scenario s = parse_scenario(std::string(kBase) + R"(sweep:
  mode: zip
  parameters:
    - {path: parallelism.dp, values: [8, 4, 2]}
    - {path: parallelism.mp, values: [1, 2, 4]}
)", "s.yaml");
  const auto points = expand_sweep(s);
  REQUIRE(points.size() == 3);
  CHECK(points[1].label == "parallelism.dp=4, parallelism.mp=2");
  CHECK(points[2].overrides() == std::vector<std::string>{"parallelism.dp=2", "parallelism.mp=4"});

  CHECK(error_of(std::string(kBase) + R"(sweep:
  mode: zip
  parameters:
    - {path: parallelism.dp, values: [8, 4, 2]}
    - {path: parallelism.mp, values: [1, 2]}
)") == "s.yaml:8:38: sweep.parameters[1].values: zip mode needs equal lengths, but this parameter has 2 "
       "values "
       "and sweep.parameters[0] has 3; expected the same number of values for every parameter (or mode: "
       "product)");
  SweepSettings bad{.mode = SweepSettings::Mode::Zip,
                    .parameters = {{"parallelism.dp", {"1", "2"}}, {"parallelism.mp", {"1"}}}};
  CHECK_THROWS_WITH_AS(
      expand_sweep(bad),
      "sweep (zip): parameter parallelism.mp has 1 values but parallelism.dp has 2; expected equal lengths",
      InputError);
}

TEST_CASE("sweep: a point is the scenario with the point's assignments, without the sweep block") {
  const std::string text = std::string(kBase) + R"(sweep:
  parameters:
    - {path: cluster.links.nvlink.bandwidth, values: [25 GB/s, 50 GB/s]}
    - {path: parallelism, values: [{dp: 8, mp: 1}, {dp: 4, mp: 2}]}
)";
  const Scenario s = parse_scenario(text, "s.yaml");
  const auto points = expand_sweep(s);
  const Scenario p =
      parse_sweep_point(text, "s.yaml", points[3], std::vector<std::string>{"cluster.nodes=2"});
  CHECK(p.cluster.links[sim::LinkKind::NVLink].bandwidth == sim::Bandwidth::gb_per_second(50));
  CHECK(p.parallelism.dp == 4);
  CHECK(p.parallelism.mp == 2);
  CHECK(p.cluster.nodes == 2);  // the user's own --set still applies
  CHECK(p.sweep.parameters.empty());
  CHECK(p.provenance.overrides == std::vector<std::string>{"cluster.nodes=2",
                                                           "cluster.links.nvlink.bandwidth=50 GB/s",
                                                           "parallelism={dp: 4, mp: 2}"});
  CHECK(location_of(p, "parallelism.mp") == "sweep value parallelism={dp: 4, mp: 2}");
  CHECK(location_of(p, "cluster.nodes") == "--set cluster.nodes=2");
  // Every point loads and differs from the others.
  for (const auto& point : points) CHECK_NOTHROW(parse_sweep_point(text, "s.yaml", point));

  // Values that need YAML quoting ("*" alone would be an alias) survive the trip through text.
  const std::string rules =
      "cluster: {preset: dgx1-v100}\nworkload: {network: gnmt}\nparallelism: {dp: 4, mp: 2}\n"
      "sweep: {parameters: [{path: parallelism.placement, values: [[{match: \"*\", gpu: 1}], "
      "layers, [{match: \"[ed]*\", gpu: 0}, {match: \"*\", gpu: 1}]]}]}\n";
  const auto rule_points = expand_sweep(parse_scenario(rules, "s.yaml"));
  REQUIRE(rule_points.size() == 3);
  const Scenario r0 = parse_sweep_point(rules, "s.yaml", rule_points[0]);
  CHECK(r0.parallelism.placement.rules == std::vector<PlacementRuleSetting>{{"*", 1}});
  CHECK(parse_sweep_point(rules, "s.yaml", rule_points[1]).parallelism.placement.kind ==
        PlacementSettings::Kind::Layers);
  CHECK(parse_sweep_point(rules, "s.yaml", rule_points[2]).parallelism.placement.rules ==
        std::vector<PlacementRuleSetting>{{"[ed]*", 0}, {"*", 1}});
}

TEST_CASE("sweep: every value is checked against the scenario when the file is loaded") {
  // A bad value is reported where it is written (line 6, column 73: the third value).
  CHECK(error_of(std::string(kBase) + R"(sweep:
  parameters:
    - {path: cluster.links.nvlink.bandwidth, values: [25 GB/s, 50 GB/s, fast]}
)") == "s.yaml:6:73: cluster.links.nvlink.bandwidth: got \"fast\"; expected a bandwidth such as \"25 GB/s\" "
       "or "
       "\"100 Gb/s\", > 0");
  // A value valid alone but not with the rest: mp = 1 leaves the placement rule for GPU 1 out of
  // range; the message says which sweep value, then what went wrong where.
  CHECK(error_of(R"(cluster: {preset: dgx1-v100}
workload: {network: gnmt}
parallelism: {dp: 4, mp: 2, placement: [{match: "*", gpu: 1}]}
sweep:
  parameters:
    - {path: parallelism.mp, values: [2, 1]}
)") == "s.yaml:6:42: sweep.parameters[0].values[1]: with parallelism.mp = 1 the scenario is invalid: "
       "s.yaml:3:59: "
       "parallelism.placement[0].gpu: GPU 1 is outside a worker's GPUs 0..0 (parallelism.mp = 1); expected a "
       "worker-local GPU from 0 to mp - 1");
  CHECK(error_of(std::string(kBase) + R"(sweep:
  parameters:
    - {path: cluster.links.nvlink.bandwith, values: [25 GB/s]}
)") == "s.yaml:6:14: sweep.parameters[0].path: unknown field 'cluster.links.nvlink.bandwith' (did you mean "
       "'cluster.links.nvlink.bandwidth'?); expected a field path as for --set, e.g. cluster.nodes");
  CHECK(error_of(std::string(kBase) + R"(sweep:
  parameters:
    - {path: parallelism, values: [{dp: 8}]}
    - {path: parallelism.dp, values: [8]}
)") == "s.yaml:7:14: sweep.parameters[1].path: 'parallelism.dp' overlaps sweep.parameters[0].path "
       "'parallelism'; "
       "expected each field varied by one parameter only");
  CHECK(error_of(std::string(kBase) + "sweep: {parameters: [{path: sweep.mode, values: [zip]}]}\n") ==
        "s.yaml:4:29: sweep.parameters[0].path: a sweep cannot vary its own settings; expected a field "
        "outside sweep");
  CHECK(error_of(std::string(kBase) + "sweep: {parameters: []}\n") ==
        "s.yaml:4:21: sweep.parameters: got 0 items; expected at least 1: a list of {path, values}");
}
