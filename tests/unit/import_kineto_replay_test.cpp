// Imported Kineto profiles replayed with their recorded all-reduces: a scenario keeps them as the
// buckets unless it sets communication.bucket_size, and the profile format checks that recorded
// buckets cover every dense gradient (tests/data/kineto/ddp_rank0.json; sizes from make_traces.py).
#include <doctest/doctest.h>

#include <filesystem>

#include "analysis/step/step_runner.h"
#include "scenarios/loader/resolve.h"
#include "sim/error.h"
#include "tests/unit/import_kineto_files.h"
#include "workloads/import/import_kineto.h"
#include "workloads/profile/profile_io.h"

using namespace hybridsim;
using hybridsim::testing::replace_nth;
using hybridsim::testing::TempFile;
using sim::Bytes;
using workloads::import_kineto;

namespace {

std::string data(const std::string& name) { return hybridsim::testing::kineto_data(name); }

}  // namespace

TEST_CASE("kineto: a scenario replays the recorded buckets unless it sets communication.bucket_size") {
  const auto r = import_kineto(data("ddp_rank0.json"), {});
  const TempFile profile("ddp_profile.yaml", workloads::profile_to_yaml(r.profile));
  const std::filesystem::path dir = std::filesystem::path(profile.path).parent_path();
  const std::string yaml = "cluster: {preset: ideal-ring, gpus_per_node: 2}\n"
                           "workload: {profile: " + std::filesystem::path(profile.path).filename().string() +
                           "}\nparallelism: {dp: 2}\n";
  auto collectives = [&](std::vector<std::string> overrides) {
    const auto resolved = scenarios::resolve(scenarios::parse_scenario(yaml, "s.yaml", overrides, dir));
    analysis::StepSetup s;
    s.profile = &resolved.profile;
    s.topology = &resolved.topology;
    s.placement = resolved.placement;
    s.mapping = resolved.mapping;
    s.step = resolved.step;
    std::vector<Bytes> sizes;
    for (const auto& c : analysis::build_program(s).collectives) sizes.push_back(c.size);
    return sizes;
  };
  // Not written: as recorded. Written (even at its default, 25 MB): packed by that size.
  CHECK(collectives({}) == std::vector<Bytes>{Bytes::of(525312), Bytes::of(2099200)});
  CHECK(collectives({"communication.bucket_size=25 MB"}) == std::vector<Bytes>{Bytes::of(2624512)});
}

TEST_CASE("profile format: recorded buckets must cover every dense gradient and sum to its bytes") {
  const auto r = import_kineto(data("ddp_rank0.json"), {});
  const std::string yaml = workloads::profile_to_yaml(r.profile);
  CHECK(yaml.find("gradient: {bytes: 525312 B, exchange: dense-allreduce, buckets: [525312 B]}") !=
        std::string::npos);
  auto error = [](const std::string& text) {
    try {
      workloads::parse_profile(text, "p.yaml");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  CHECK(error(replace_nth(yaml, "buckets: [525312 B]", "buckets: [525311 B]", 0))
            .find("the buckets sum to 525311 B; expected the gradient's 525312 B") != std::string::npos);
  CHECK(error(replace_nth(yaml, ", buckets: [525312 B]", "", 0))
            .find("for every dense-allreduce gradient or for none") != std::string::npos);
  // Without any, a profile reads as before (the default packing).
  std::string none = replace_nth(yaml, ", buckets: [525312 B]", "", 0);
  none = replace_nth(none, ", buckets: [2099200 B]", "", 0);
  CHECK_FALSE(workloads::parse_profile(none, "p.yaml").has_recorded_buckets());
}
