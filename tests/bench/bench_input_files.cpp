// Reading the input files users give: the committed profiles (gnmt.yaml, 1,700 lines, is the largest
// shipped input), every shipped scenario, the study files and a custom topology of 64 GPUs. Loading
// must stay well under the time of a simulated step (bench_step: about 10 ms for GNMT on 8 GPUs).
#include <benchmark/benchmark.h>
#include "tests/paths/paths.h"

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "analysis/study/study_config.h"
#include "scenarios/loader/scenario.h"
#include "topology/yaml_loader.h"
#include "workloads/profile/profile_io.h"

using namespace hybridsim;

namespace {

const std::filesystem::path kSource = HYBRIDSIM_SOURCE_DIR;

void BM_LoadProfile(benchmark::State& state, const char* name) {
  const std::string path = (kSource / "workloads/profiles/v100" / name).string();
  std::size_t ops = 0;
  for (auto _ : state) ops = workloads::load_profile(path).ops.size();
  state.counters["ops"] = static_cast<double>(ops);
}
BENCHMARK_CAPTURE(BM_LoadProfile, gnmt, "gnmt.yaml")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_LoadProfile, inception_v3, "inception_v3.yaml")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_LoadProfile, biglstm, "biglstm.yaml")->Unit(benchmark::kMillisecond);

// Every shipped scenario but the study files, in a fixed order.
std::vector<std::string> shipped_scenarios() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(kSource / "scenarios"))
    if (e.path().extension() == ".yaml" && e.path().parent_path().filename() != "study")
      out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

void BM_LoadShippedScenarios(benchmark::State& state) {
  const auto files = shipped_scenarios();
  for (auto _ : state)
    for (const auto& f : files) benchmark::DoNotOptimize(scenarios::load_scenario(f));
  state.counters["files"] = static_cast<double>(files.size());
}
BENCHMARK(BM_LoadShippedScenarios)->Unit(benchmark::kMillisecond);

void BM_LoadStudyFile(benchmark::State& state, const char* name) {
  const auto path = kSource / "scenarios/study" / name;
  for (auto _ : state) benchmark::DoNotOptimize(analysis::load_study_config(path));
}
BENCHMARK_CAPTURE(BM_LoadStudyFile, ci, "ci.yaml")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_LoadStudyFile, hybrid_vs_dp, "hybrid-vs-dp.yaml")->Unit(benchmark::kMillisecond);

// 8 machines of 8 GPUs on 2 PCIe switches each, a NIC per switch and one InfiniBand switch.
std::string custom_topology_text() {
  std::string t = "name: bench-box\nnodes:\n  - {name: IB, kind: switch}\n";
  std::string links = "links:\n";
  for (int n = 0; n < 8; ++n) {
    const std::string m = std::to_string(n);
    for (int s = 0; s < 2; ++s) {
      const std::string plx = "PLX" + m + "_" + std::to_string(s), nic = "NIC" + m + "_" + std::to_string(s);
      t += "  - {name: " + plx + ", kind: pcie-switch, node: " + m + "}\n";
      t += "  - {name: " + nic + ", kind: nic, node: " + m + "}\n";
      links += "  - {a: " + nic + ", b: " + plx + ", kind: pcie, bandwidth: 12 GB/s, latency: 500 ns}\n";
      links += "  - {a: " + nic + ", b: IB, kind: infiniband, bandwidth: 100 Gb/s, latency: 500 ns}\n";
      for (int g = 0; g < 4; ++g) {
        const std::string gpu = "GPU" + m + "_" + std::to_string(s * 4 + g);
        t += "  - {name: " + gpu + ", kind: gpu, node: " + m + "}\n";
        links += "  - {a: " + gpu + ", b: " + plx + ", kind: pcie, bandwidth: 12 GB/s, latency: 500 ns}\n";
      }
    }
  }
  return t + links;
}

void BM_ParseCustomTopology(benchmark::State& state) {
  const std::string text = custom_topology_text();
  for (auto _ : state) benchmark::DoNotOptimize(topology::parse_topology_yaml(text, "bench.yaml"));
  state.counters["bytes"] = static_cast<double>(text.size());
}
BENCHMARK(BM_ParseCustomTopology)->Unit(benchmark::kMillisecond);

}  // namespace
