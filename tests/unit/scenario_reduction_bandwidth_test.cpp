// communication.reduction_bandwidth's default follows the GPU simulated: a quarter of its HBM peak
// (workloads::reduction_bandwidth), where every GPU got the V100's 225 GB/s (900 GB/s / 4) before;
// a rate or off written still wins. `collective` and validate's collective cases take the preset's GPU.
#include <doctest/doctest.h>

#include <string>

#include "analysis/api/collective_request.h"
#include "scenarios/loader/resolve.h"
#include "workloads/gpu/gpu.h"

using namespace hybridsim;

namespace {

sim::Bandwidth resolved_rate(const std::string& text) {
  return scenarios::resolve(scenarios::parse_scenario(text, "r.yaml")).collective.reduction_bandwidth;
}

sim::Bandwidth gb(double v) { return sim::Bandwidth::bytes_per_second(static_cast<std::int64_t>(v * 1e9)); }

}  // namespace

TEST_CASE("reduction bandwidth: auto is the simulated GPU's HBM peak / 4, and a written rate wins") {
  using workloads::gpu_by_key;
  CHECK(workloads::reduction_bandwidth(&gpu_by_key("v100")) == gb(225));
  CHECK(workloads::reduction_bandwidth(&gpu_by_key("a100")) == gb(509.75));
  CHECK(workloads::reduction_bandwidth(&gpu_by_key("a100-40gb")) == gb(388.75));
  CHECK(workloads::reduction_bandwidth(&gpu_by_key("h100")) == gb(837.5));
  CHECK(workloads::reduction_bandwidth(&gpu_by_key("h200")) == gb(1200));
  CHECK(workloads::reduction_bandwidth(nullptr) == gb(225));  // an unknown GPU: the V100's, as before

  const std::string gnmt = "workload: {network: gnmt}\nparallelism: {dp: 8}\n";
  CHECK(resolved_rate("cluster: {preset: dgx1-v100}\n" + gnmt) == gb(225));
  // The GPU whose kernels run: the preset's under gpu auto, or the one workload.gpu names.
  CHECK(resolved_rate("cluster: {preset: dgx-a100}\n" + gnmt) == gb(509.75));
  CHECK(resolved_rate("cluster: {preset: dgx-a100}\nworkload: {network: gnmt, gpu: a100-40gb}\n"
                      "parallelism: {dp: 8}\n") == gb(388.75));
  const std::string llama =
      "cluster: {preset: dgx-h100}\nworkload: {network: llama3-8b, model: "
      "{layers_simulated: 2}}\nparallelism: {dp: 8}\n";
  CHECK(resolved_rate(llama) == gb(837.5));  // main: 225 GB/s, the V100's
  CHECK(resolved_rate(llama + "communication: {reduction_bandwidth: auto}\n") == gb(837.5));
  CHECK(resolved_rate(llama + "communication: {reduction_bandwidth: 100 GB/s}\n") == gb(100));
  CHECK(resolved_rate(llama + "communication: {reduction_bandwidth: off}\n") == sim::Bandwidth());
  // What the run's settings line says: the figure, and whose it is.
  const std::string text =
      scenarios::describe(scenarios::resolve(scenarios::parse_scenario(llama, "r.yaml")));
  CHECK(text.find(", reduction 837.5 GB/s (auto: H100's HBM / 4), ") != std::string::npos);
}

TEST_CASE("reduction bandwidth: collective's auto is the preset's GPU's, as a rate written alike") {
  const auto time_of = [](const std::string& reduction) {
    api::CollectiveRequest r{.topology = "dgx-h100", .reduction = reduction};
    r.min_bytes = r.max_bytes = "4 MiB";  // larger, the reduction hides behind the links (Simple)
    r.protocol = "simple";
    const api::CollectiveReport report = api::collective(r);
    REQUIRE(report.rows.size() == 1);
    return report.rows[0].time;
  };
  const sim::Time automatic = time_of("auto");
  CHECK(automatic == time_of("837.5 GB/s"));
  CHECK(automatic < time_of("225 GB/s"));  // main's default on every preset
}

TEST_CASE("reduction bandwidth: collective takes the scenario key's off, the same as 0 B/s") {
  // communication.reduction_bandwidth: off turns the reduction off; --reduction-bandwidth off was
  // refused as "bad bandwidth", only "0 B/s" meaning it.
  const auto time_of = [](const std::string& reduction) {
    api::CollectiveRequest r{.topology = "dgx-h100", .reduction = reduction};
    r.min_bytes = r.max_bytes = "4 MiB";
    r.protocol = "simple";
    return api::collective(r).rows.at(0).time;
  };
  const sim::Time off = time_of("off");
  CHECK(off == time_of("0 B/s"));
  CHECK(off < time_of("auto"));
  CHECK(resolved_rate("cluster: {preset: dgx-h100}\nworkload: {network: gnmt}\n"
                      "communication: {reduction_bandwidth: off}\n") == sim::Bandwidth());
}
