// What `hybridsim topology` prints (analysis/platform/topology_report.h): each link kind in its own
// column, and a count of channels in the number it takes.
#include <doctest/doctest.h>

#include <string>

#include "analysis/platform/topology_report.h"
#include "topology/preset_registry.h"
#include "topology/presets.h"

using namespace hybridsim;

namespace {

// The line of the report that starts with `first` after its two spaces of indent.
std::string row_of(const std::string& report, const std::string& first) {
  const auto at = report.find("\n  " + first);
  REQUIRE(at != std::string::npos);
  return report.substr(at + 1, report.find('\n', at + 1) - at - 1);
}

}  // namespace

TEST_CASE("topology report: Generic links have a column of their own, not NVLink's") {
  // ideal-ring's 25 GB/s links each way are Generic: their 50 GB/s a GPU was printed under NVLink.
  const std::string ring = analysis::topology_report(topology::presets::ideal_ring({.gpus = 4}));
  const std::string header = row_of(ring, "GPU           NVLink");
  CHECK(header.find("Generic") != std::string::npos);
  const std::string gpu0 = row_of(ring, "GPU0 ");
  // NVLink, NVSwitch and PCIe columns empty; the Generic column holds both ring neighbours' links.
  CHECK(gpu0.find("-             -             -             50 GB/s") != std::string::npos);
  // A machine without Generic links keeps its columns as they were.
  const std::string dgx1 = analysis::topology_report(topology::presets::dgx1_v100());
  CHECK(row_of(dgx1, "GPU           NVLink").find("Generic") == std::string::npos);
}

TEST_CASE("topology report: one channel is \"1 channel\"") {
  const std::string one = analysis::topology_report(
      topology::presets::pcie_server({.gpus = 3, .gpus_per_pcie_switch = 3}), {.rings = true});
  CHECK(one.find(": 1 channel\n") != std::string::npos);
  CHECK(one.find("1 channels") == std::string::npos);
  const std::string many = analysis::topology_report(topology::presets::dgx1_v100(), {.rings = true});
  CHECK(many.find(" channels\n") != std::string::npos);
}

TEST_CASE("topology report: a GPU's network share is topology::ib_share_per_gpu's, NICs capped by PCIe") {
  // DGX-1: 4 EDR NICs of 12.5 GB/s, each on a 12 GB/s PCIe Gen3 link, for 8 GPUs: 6 GB/s a GPU, where
  // the report summed the ports alone (6.25 GB/s) and the planner and LLM study said 6.
  const auto network_cell = [](const topology::ClusterSpec& spec) {
    const std::string report = analysis::topology_report(topology::build_cluster(spec));
    const std::string gpu0 = row_of(report, "n0.GPU0 ");
    return gpu0.substr(gpu0.find_last_of(' ', gpu0.size() - 6) + 1);  // "6 GB/s": the last two words
  };
  CHECK(network_cell({.preset = "dgx1-v100", .nodes = 2}) == "6 GB/s");
  for (const auto& preset : topology::presets_list()) {
    if (!preset.forms_clusters) continue;
    const topology::ClusterSpec spec{.preset = std::string(preset.name), .nodes = 2};
    INFO(preset.name);
    CHECK(network_cell(spec) == sim::format_bandwidth(topology::ib_share_per_gpu(spec)));
    // A port faster than its PCIe link (50 GB/s) and one slower (1 GB/s).
    for (const char* port : {"50 GB/s", "1 GB/s"}) {
      topology::ClusterSpec set = spec;
      set.links[sim::LinkKind::InfiniBand].bandwidth = sim::parse_bandwidth(port);
      INFO(port);
      CHECK(network_cell(set) == sim::format_bandwidth(topology::ib_share_per_gpu(set)));
    }
  }
}
