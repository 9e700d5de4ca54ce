// Worker mappings: the default one groups a worker's GPUs on the fastest links, data-parallel
// groups take the same MP rank of every worker; custom mappings are checked.
#include <doctest/doctest.h>

#include "sim/error.h"
#include "topology/preset_registry.h"
#include "topology/presets.h"
#include "workloads/program/mapping.h"

using namespace hybridsim;
using namespace hybridsim::workloads;

using Rows = std::vector<std::vector<int>>;

TEST_CASE("default mapping on a DGX-1: mp 2 takes the doubled-NVLink pairs, mp 1 consecutive GPUs") {
  const topology::Topology t = topology::build_cluster({.preset = "dgx1-v100"});
  // The doubled pairs 0-3, 1-2, 4-7, 5-6 give 4 × 50 GB/s, the most any pairing can (0-4, 1-5,
  // 2-3, 6-7 ties; the search keeps the first found, which starts with GPU 0's lowest best partner).
  const WorkerMapping m = default_mapping(t, 4, 2);
  CHECK(m.gpu_rank == Rows{{0, 3}, {1, 2}, {4, 7}, {5, 6}});
  CHECK(m.dp_group(1) == std::vector<int>{3, 2, 7, 6});
  CHECK(default_mapping(t, 8, 1).gpu_rank == Rows{{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}});
  CHECK(default_mapping(t, 3, 2).gpu_rank == Rows{{0, 3}, {1, 2}, {4, 7}});  // the first dp groups
}

TEST_CASE("default mapping: workers that straddle two machines are said in its description") {
  // Two DGX-1 (8 GPUs each), mp 3: workers of consecutive GPUs {0,1,2} {3,4,5} {6,7,8} {9,10,11}
  // {12,13,14}; worker 2 holds GPUs 6 and 7 of machine 0 and GPU 8 of machine 1, and worker 5 would
  // be 15-17. Main described them as "workers on consecutive GPUs" and nothing more.
  const topology::Topology t = topology::build_cluster({.preset = "dgx1-v100", .nodes = 2});
  const WorkerMapping m = default_mapping(t, 5, 3);
  CHECK(m.gpu_rank[2] == std::vector<int>{6, 7, 8});
  CHECK(m.description ==
        "workers on consecutive GPUs; 1 worker spans machines (worker 2 first: mp 3 does not divide a "
        "machine's GPUs), their model-parallel transfers over the network");
  // mp 2 and 4 divide the 8 GPUs: the description is as it was.
  CHECK(default_mapping(t, 8, 2).description == "workers on the fastest-linked GPU groups of each machine");
  CHECK(default_mapping(t, 2, 3).description == "workers on consecutive GPUs");
}

TEST_CASE("default mapping with equal links keeps rank order") {
  const topology::Topology t = topology::presets::fully_connected({.gpus = 4});
  CHECK(default_mapping(t, 2, 2).gpu_rank == Rows{{0, 1}, {2, 3}});
  CHECK_THROWS_WITH_AS(default_mapping(t, 3, 2), doctest::Contains("3 × 2 = 6 GPUs"), InputError);
  CHECK_THROWS_AS(default_mapping(t, 0, 1), InputError);
}

TEST_CASE("custom mapping: sizes, ranges and duplicates are checked") {
  const topology::Topology t = topology::presets::fully_connected({.gpus = 4});
  CHECK(custom_mapping(t, 2, 2, {{3, 0}, {1, 2}}).dp_group(0) == std::vector<int>{3, 1});
  CHECK_THROWS_WITH_AS(custom_mapping(t, 2, 2, {{0, 1}}), doctest::Contains("lists 1 workers"), InputError);
  CHECK_THROWS_WITH_AS(custom_mapping(t, 2, 2, {{0, 1}, {2}}), doctest::Contains("worker 1 lists 1 GPUs"),
                       InputError);
  CHECK_THROWS_WITH_AS(custom_mapping(t, 2, 2, {{0, 1}, {2, 4}}), doctest::Contains("names GPU 4"),
                       InputError);
  CHECK_THROWS_WITH_AS(custom_mapping(t, 2, 2, {{0, 1}, {1, 2}}), doctest::Contains("GPU 1 twice"),
                       InputError);
}
