// The run summary's "GPU, precision" line: present when a scenario names workload.gpu or
// workload.precision or runs on a newer preset, absent for the V100 scenarios that name neither
// (their summaries stay byte-identical), and in the JSON settings alike.
#include <doctest/doctest.h>

#include <string>

#include "analysis/run/run_outputs.h"
#include "analysis/run/scenario_run.h"
#include "scenarios/loader/resolve.h"

using namespace hybridsim;

namespace {

analysis::RunSummary summary_of(const std::string& yaml) {
  const scenarios::ResolvedScenario r = scenarios::resolve(scenarios::parse_scenario(yaml, "s.yaml"));
  return analysis::run_summary(analysis::run_scenario(r, {}), r.scenario);
}

}  // namespace

TEST_CASE("run summary: the GPU, precision line says what priced the kernels") {
  const std::string amp = summary_of(
                              "cluster: {preset: dgx1-v100}\nworkload: {network: gnmt, precision: amp}\n"
                              "parallelism: {dp: 1}\n")
                              .table;
  // The second line, after the scenario's: the key padded to the summary's key column.
  const auto second = amp.substr(amp.find('\n') + 1);
  CHECK(second.starts_with("  GPU, precision"));
  CHECK(second.find("V100 (V100-SXM2-16GB), amp: kernel times calibrated on one V100") != std::string::npos);
  const analysis::RunSummary h100 =
      summary_of("cluster: {preset: dgx-h100}\nworkload: {network: gnmt}\nparallelism: {dp: 1}\n");
  CHECK(h100.table.find("H100 (H100-SXM5-80GB), fp32: kernel times are an ESTIMATE") != std::string::npos);
  CHECK(h100.json.find("\"GPU, precision\"") != std::string::npos);
  const analysis::RunSummary plain =
      summary_of("cluster: {preset: dgx1-v100}\nworkload: {network: gnmt}\nparallelism: {dp: 1}\n");
  CHECK(plain.table.find("GPU, precision") == std::string::npos);
  CHECK(plain.json.find("GPU, precision") == std::string::npos);
}
